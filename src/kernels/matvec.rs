//! Ternary (and P3) matrix-vector products.
//!
//! Row j of W x is `acc = +0.0; for i in order: acc = acc +/- x[i]; acc * scale`
//! (docs/ARITHMETIC.md). Positions are batched so that each weight is decoded once
//! and applied to several input vectors; every (row, vector) pair still adds
//! its terms one at a time in column order, so results are bit-exact.
//! Zero weights are skipped, never added: `acc + 0.0` would equal `acc` too
//! (acc is never -0.0), but skipping costs less on soft-float cores.
use super::choice::SIZE_FIRST;
pub use super::isa::Accel;
pub use super::job::MvJob;
use crate::format::Tensor;

/// Weights decoded per step (smaller on microcontrollers: it lives on the stack).
const BLOCK: usize = if SIZE_FIRST { 32 } else { 64 };
/// Input vectors per pass (fewer accumulators on a microcontroller's stack).
pub const MAX_BATCH: usize = if SIZE_FIRST { 8 } else { 16 };

/// y = W x for the rows j < min(y.len(), W.rows).
pub fn matvec(w: &Tensor, x: &[f32], y: &mut [f32]) {
    let cols = w.cols;
    matvec_batch(w, x, cols, 1, y, w.rows);
}

/// For b < n: out[b*ostride + j] = (W x_b)[j] for j < W.rows, with
/// x_b = xs[b*xstride ..][.. W.cols]. Missing inputs read as nothing added.
/// Detects the CPU on each call; see [`matvec_batch_accel`].
pub fn matvec_batch(w: &Tensor, xs: &[f32], xstride: usize, n: usize, out: &mut [f32], ostride: usize) {
    matvec_batch_accel(Accel::detect(), w, xs, xstride, n, out, ostride)
}

/// As [`matvec_batch`], with the CPU already asked.
pub fn matvec_batch_accel(acc: Accel, w: &Tensor, xs: &[f32], xstride: usize, n: usize, out: &mut [f32], ostride: usize) {
    if acc.matvec_batch(w, xs, xstride, n, out, ostride) {
        return;
    }
    #[cfg(atome_device)]
    super::device::matvec_device(w, xs, xstride, n, out, ostride);
    #[cfg(any(not(atome_portable), feature = "size-first"))]
    matvec_portable(w, xs, xstride, n, out, ostride);
}

/// The portable loop of [`matvec_batch_accel`] (no vector units).
pub(crate) fn matvec_portable(w: &Tensor, xs: &[f32], xstride: usize, n: usize, out: &mut [f32], ostride: usize) {
    portable_batch(w, 0, w.rows, xs, xstride, n, out, ostride);
}

/// [`matvec_batch_accel`] for each job over the same inputs; on x86-64 with
/// AVX2, matrices of one packing and column count share the per-column
/// tables. Results are those of separate calls.
pub fn matvec_multi_accel(acc: Accel, jobs: &mut [MvJob], xs: &[f32], xstride: usize, n: usize) {
    if acc.matvec_multi(jobs, xs, xstride, n) {
        return;
    }
    for j in jobs.iter_mut() {
        matvec_batch_accel(acc, j.w, xs, xstride, n, j.out, j.ostride);
    }
}

/// out[i] = row j0 + i of W x (rows past W.rows are left alone).
pub fn matvec_rows_at(w: &Tensor, j0: usize, x: &[f32], out: &mut [f32]) {
    let nrows = out.len().min(w.rows.saturating_sub(j0));
    let cols = w.cols;
    // One vector: row j lands at out[j - j0] with ostride 0 and a shifted base.
    let mut tmp = [0.0f32; 1];
    for (i, o) in out.iter_mut().enumerate().take(nrows) {
        portable_batch(w, j0 + i, 1, x, cols, 1, &mut tmp, 0);
        *o = tmp[0];
    }
}

/// Decodes weights start..start+out.len() of W into out (0 past the end):
/// [`Tensor::decode`], the one decoder of each packing.
#[inline(always)]
pub fn decode(w: &Tensor, start: usize, out: &mut [i8]) {
    w.decode(start, out)
}

/// One term of a row's sequential sum (docs/ARITHMETIC.md#ternary-matvec):
/// a zero weight adds nothing, +-1 adds or subtracts the input, a P3 weight
/// w adds the rounded product w * x.
#[inline(always)]
pub fn term(acc: f32, w: i8, x: f32) -> f32 {
    match w {
        0 => acc,
        1 => acc + x,
        -1 => acc - x,
        w => acc + (w as f32) * x,
    }
}

/// Rows row0..row0+nrows for vectors 0..n, MAX_BATCH vectors a pass; row
/// j of vector b goes to out[b * ostride + j - row0].
#[allow(clippy::too_many_arguments)]
// Not inlined on microcontrollers: one copy of its buffers, not one per
// call site. The passes loop here, not in the caller: a caller's frame
// with the loop would sit under this one's.
#[cfg_attr(atome_portable, inline(never))]
fn portable_batch(w: &Tensor, row0: usize, nrows: usize, xs: &[f32], xstride: usize, n: usize, out: &mut [f32], ostride: usize) {
    let mut b0 = 0;
    while b0 < n {
        let nb = (n - b0).min(MAX_BATCH);
        portable_pass(w, row0, nrows, xs, xstride, b0, nb, out, ostride);
        b0 += nb;
    }
}

/// One pass of [`portable_batch`]: vectors b0..b0+nb.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn portable_pass(w: &Tensor, row0: usize, nrows: usize, xs: &[f32], xstride: usize, b0: usize, nb: usize, out: &mut [f32], ostride: usize) {
    let cols = w.cols;
    let mut codes = [0i8; BLOCK];
    for j in row0..row0 + nrows {
        let mut acc = [0.0f32; MAX_BATCH];
        let mut c0 = 0;
        while c0 < cols {
            let len = (cols - c0).min(BLOCK);
            let codes = &mut codes[..len];
            w.decode(j * cols + c0, codes);
            for (b, a) in acc.iter_mut().enumerate().take(nb) {
                let base = (b0 + b) * xstride + c0;
                let Some(x) = xs.get(base..base + len) else { continue };
                let mut s = *a;
                for (&c, &v) in codes.iter().zip(x) {
                    s = term(s, c, v);
                }
                *a = s;
            }
            c0 += len;
        }
        for (b, a) in acc.iter().enumerate().take(nb) {
            if let Some(o) = out.get_mut((b0 + b) * ostride + j - row0) {
                *o = a * w.scale;
            }
        }
    }
}

/// Embedding row: out[i] = (float)w(tok*D + i) * scale.
pub fn embed_row(w: &Tensor, tok: usize, out: &mut [f32]) {
    let d = w.cols;
    let mut codes = [0i8; BLOCK];
    let mut c0 = 0;
    while c0 < d.min(out.len()) {
        let len = (d.min(out.len()) - c0).min(BLOCK);
        w.decode(tok * d + c0, &mut codes[..len]);
        if let Some(o) = out.get_mut(c0..c0 + len) {
            for (o, &c) in o.iter_mut().zip(codes.iter()) {
                // (Integer-only on cores without an FPU: sf::trit_times.)
                *o = super::device::sf::trit_times(c, w.scale);
            }
        }
        c0 += len;
    }
}
