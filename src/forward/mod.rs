//! The forward passes: predict_next, generate and classify over a model view
//! and caller-provided memory.
//!
//! Layer-major, in chunks of positions: for each layer, each chunk of up to
//! `chunk` positions is normalized, projected by batched matvecs (each weight
//! decoded once per chunk), then conv, state and sparse pathways are mixed into
//! the residual stream. Every value keeps its own contract expression, so the
//! result is the same bits as the reference's position-by-position order.
//!
//! Two memory plans share this code: `lean` (one layer's caches, recomputed each
//! call) and `cached` (every layer's caches kept, so a call that extends the
//! previous token list computes only the new positions).
//!
//! Modules: [`tokens`] (the token list), [`mem`] (layer memory, scratch,
//! entropies), [`layers`] (the layer loop), [`mod@head`] (final norm and heads);
//! the arithmetic is in [`crate::kernels`].

pub mod cached;
pub mod head;
pub mod layers;
pub mod lean;
pub mod mem;
pub mod sample;
pub mod tokens;

pub use head::{classify_head, final_norm, head};
pub use layers::run_layers;
pub use mem::{take, Entropy, LayerMem, Layers, Scratch};
pub use tokens::Tokens;
