//! Exact integer matrix-vector products on int16 activation mantissas
//! (docs/Q15.md#kernels-and-instructions).
use crate::format::Tensor;

/// Columns decoded per step (the decode buffer lives on the stack).
const BLOCK: usize = 32;

/// For b < n and j < W.rows: `out[b*ostride + j] = sum_i W[j][i] * xs[b*xstride + i]`,
/// the exact integer sum (any order gives the same value). Inputs past the end
/// of `xs` read as 0; outputs past the end of `out` are not written.
///
/// Precondition for the i32 result (docs/Q15.md#integer-widths): every
/// |x| <= 32767 and `cols * max|w| * 32767 < 2^31` (ternary: cols <= 65537;
/// P3: cols <= 7281). The sum wraps (never panics) when it is broken.
pub fn matvec_q(w: &Tensor, xs: &[i16], xstride: usize, n: usize, out: &mut [i32], ostride: usize) {
    matvec_q_naive(w, xs, xstride, n, out, ostride)
}

/// The plain definition of [`matvec_q`]: the oracle of its differential tests.
pub fn matvec_q_naive(w: &Tensor, xs: &[i16], xstride: usize, n: usize, out: &mut [i32], ostride: usize) {
    let cols = w.cols;
    let mut codes = [0i8; BLOCK];
    for j in 0..w.rows {
        for b in 0..n {
            let mut acc = 0i32;
            let mut c0 = 0;
            while c0 < cols {
                let len = (cols - c0).min(BLOCK);
                w.decode(j * cols + c0, &mut codes[..len]);
                for (i, &c) in codes[..len].iter().enumerate() {
                    let x = xs.get(b * xstride + c0 + i).copied().unwrap_or(0);
                    acc = acc.wrapping_add(i32::from(c) * i32::from(x));
                }
                c0 += len;
            }
            if let Some(o) = out.get_mut(b * ostride + j) {
                *o = acc;
            }
        }
    }
}
