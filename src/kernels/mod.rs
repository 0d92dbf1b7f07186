//! Kernels: the float arithmetic of docs/ARITHMETIC.md, each in its exact order.
//!
//! All of them are safe Rust on slices and work for any dimensions; they
//! never panic (short inputs are read as far as they go).
//!
//! The build's choices (size profile, key-cache layout, instruction set)
//! are named in [`choice`]; how to add an instruction set: [`isa`].

pub mod attention;
pub mod choice;
pub mod conv;
pub mod isa;
pub mod job;
pub mod keys;
pub mod lanes;
pub mod matvec;
pub mod norm;
pub mod q15;
pub mod softmax;

#[cfg(atome_x86)]
pub mod x86;

/// Device matvec kernels (compiled everywhere, so host tests check them).
pub mod device;

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
        if device::sf::gt(f, m) {
            m = f;
            best = i;
        }
    }
    best
}

/// `dst[i] = src[i]` for the common length (copy_from_slice would link a
/// panic path for a length mismatch that cannot happen here).
#[inline]
pub fn copy(dst: &mut [f32], src: &[f32]) {
    for (d, &s) in dst.iter_mut().zip(src) {
        *d = s;
    }
}
