//! Kernels: the float arithmetic of SPEC section 4, each in its exact order.
//!
//! All of them are safe Rust on slices and work for any dimensions; they
//! never panic (short inputs are read as far as they go).

pub mod attention;
pub mod device;
pub mod matvec;
pub mod norm;
pub mod softmax;

#[cfg(not(atome_portable))]
pub mod x86;

pub use attention::{attend_channel, score_topk};
pub use matvec::{embed_row, matvec, matvec_batch};
pub use norm::{layer_norm, layer_norm_in_place};
pub use softmax::softmax;

/// Index of the first maximum (strict `>` from index 0); 0 for an empty slice.
pub fn argmax(v: &[f32]) -> usize {
    let mut best = 0;
    let mut m = match v.first() {
        Some(&f) => f,
        None => return 0,
    };
    // From the first again (it never beats itself): a plain loop.
    for (i, &f) in v.iter().enumerate() {
        if f > m {
            m = f;
            best = i;
        }
    }
    best
}
