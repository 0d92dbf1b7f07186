//! The operands of a multi-matrix matvec call, shared by the portable
//! kernels ([`mod@super::matvec`]) and the x86-64 ones.
use crate::format::Tensor;

/// One matrix of a [`super::matvec::matvec_multi_accel`] call:
/// `out[b*ostride + j] = (W x_b)[j]`.
pub struct MvJob<'a> {
    /// The matrix.
    pub w: &'a Tensor<'a>,
    /// Where its results go.
    pub out: &'a mut [f32],
    /// Distance between the results of consecutive vectors.
    pub ostride: usize,
}
