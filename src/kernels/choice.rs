//! The build's choices for the kernels and the forward pass, each named on
//! its own so that one can change without touching the others:
//!
//! * the size profile, [`SIZE_FIRST`]: code size and stack first
//!   (microcontrollers, and any host built with the `portable` feature, so
//!   host tests run the device's code) or speed first;
//! * the key-cache layout, [`KeyCache`] (see [`super::keys`]);
//! * the instruction set, [`Accel`] (see [`super::isa`]): which lane type
//!   and matvec the kernels use, chosen at run time among those the target
//!   was built with.
//!
//! The `atome_portable` cfg (set by build.rs) is the size profile; the
//! other two choices read it only here and in `isa`.

pub use super::isa::Accel;

/// True for the size-first profile: one matrix at a time, small stack
/// buffers, out-of-line helpers.
pub const SIZE_FIRST: bool = cfg!(atome_portable);

/// Lanes of the portable lane type: 8 fill a vector register where the
/// compiler can vectorize plain arrays; one keeps a microcontroller's stack
/// frame small.
pub const SCALAR_LANES: usize = if SIZE_FIRST { 1 } else { 8 };

/// Key-cache layout: S rows of DH on microcontrollers (keys are projected
/// straight into their rows and scored with plain dots, one lane), DH rows
/// of S elsewhere (scores vectorize across keys). Transposed pays off when
/// the lane type is wider than one float.
#[cfg(atome_portable)]
pub type KeyCache = super::keys::Rows;
/// Key-cache layout: see the size-first variant.
#[cfg(not(atome_portable))]
pub type KeyCache = super::keys::Transposed;
