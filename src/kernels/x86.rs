//! x86-64 fast paths (chosen at run time). Returns false when not applicable.
use crate::format::Tensor;

/// AVX2 batched matvec; false when the CPU or the shape does not allow it.
pub fn matvec_batch(_w: &Tensor, _xs: &[f32], _xstride: usize, _n: usize, _out: &mut [f32], _ostride: usize) -> bool {
    false
}
