//! Ternary (and P3) matrix-vector products.
//!
//! Row j of W x is `acc = +0.0; for i in order: acc = acc +/- x[i]; acc * scale`
//! (SPEC section 4). Positions are batched so that each weight is decoded once
//! and applied to several input vectors; every (row, vector) pair still adds
//! its terms one at a time in column order, so results are bit-exact.
//! Zero weights are skipped, never added: `acc + 0.0` would equal `acc` too
//! (acc is never -0.0), but skipping costs less on soft-float cores.
use crate::format::{Packing, Tensor, P3_WEIGHTS};

/// Weights decoded per step.
#[cfg(not(atome_portable))]
const BLOCK: usize = 64;
/// Smaller on microcontrollers: it lives on the stack.
#[cfg(atome_portable)]
const BLOCK: usize = 32;
/// Input vectors per pass.
#[cfg(not(atome_portable))]
pub const MAX_BATCH: usize = 16;
/// Input vectors per pass (fewer accumulators on a microcontroller's stack).
#[cfg(atome_portable)]
pub const MAX_BATCH: usize = 8;

/// y = W x for the rows j < min(y.len(), W.rows).
pub fn matvec(w: &Tensor, x: &[f32], y: &mut [f32]) {
    let cols = w.cols;
    matvec_batch(w, x, cols, 1, y, w.rows);
}

/// The vector units this CPU lets the kernels use, found once per call of
/// the API (cpuid can trap to a hypervisor: tens of microseconds).
#[derive(Clone, Copy, Debug, Default)]
pub struct Accel {
    #[cfg(not(atome_portable))]
    avx2: Option<super::x86::Avx2>,
}

impl Accel {
    /// True when AVX2 may be used (x86-64 only).
    #[inline]
    pub fn avx2(&self) -> bool {
        #[cfg(not(atome_portable))]
        {
            self.avx2.is_some()
        }
        #[cfg(atome_portable)]
        {
            false
        }
    }

    /// Asks the CPU.
    pub fn detect() -> Accel {
        Accel {
            #[cfg(not(atome_portable))]
            avx2: super::x86::Avx2::detect(),
        }
    }
}

/// For b < n: out[b*ostride + j] = (W x_b)[j] for j < W.rows, with
/// x_b = xs[b*xstride ..][.. W.cols]. Missing inputs read as nothing added.
/// Detects the CPU on each call; see [`matvec_batch_accel`].
pub fn matvec_batch(w: &Tensor, xs: &[f32], xstride: usize, n: usize, out: &mut [f32], ostride: usize) {
    matvec_batch_accel(Accel::detect(), w, xs, xstride, n, out, ostride)
}

/// As [`matvec_batch`], with the CPU already asked.
pub fn matvec_batch_accel(acc: Accel, w: &Tensor, xs: &[f32], xstride: usize, n: usize, out: &mut [f32], ostride: usize) {
    #[cfg(not(atome_portable))]
    {
        if let Some(cpu) = acc.avx2 {
            if super::x86::matvec_batch_with(cpu, w, xs, xstride, n, out, ostride) {
                return;
            }
        }
    }
    #[cfg(atome_portable)]
    let _ = acc;
    // Cores without an FPU: the bit-exact software accumulate.
    if cfg!(all(atome_portable, not(any(target_arch = "x86_64", target_arch = "aarch64", target_abi = "eabihf", target_feature = "f")))) {
        return super::device::soft::matvec_soft(w, xs, xstride, n, out, ostride);
    }
    let mut b0 = 0;
    while b0 < n {
        let nb = (n - b0).min(MAX_BATCH);
        portable_batch(w, 0, w.rows, xs, xstride, b0, nb, out, ostride);
        b0 += nb;
    }
}

/// One matrix of a [`matvec_multi_accel`] call: out[b*ostride + j] = (W x_b)[j].
pub struct MvJob<'a> {
    /// The matrix.
    pub w: &'a Tensor<'a>,
    /// Where its results go.
    pub out: &'a mut [f32],
    /// Distance between the results of consecutive vectors.
    pub ostride: usize,
}

/// [`matvec_batch_accel`] for each job over the same inputs; on x86-64 with
/// AVX2, matrices of one packing and column count share the per-column
/// tables. Results are those of separate calls.
pub fn matvec_multi_accel(acc: Accel, jobs: &mut [MvJob], xs: &[f32], xstride: usize, n: usize) {
    #[cfg(not(atome_portable))]
    {
        if let Some(cpu) = acc.avx2 {
            if super::x86::matvec_multi_with(cpu, jobs, xs, xstride, n) {
                return;
            }
        }
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
        portable_batch(w, j0 + i, 1, x, cols, 0, 1, &mut tmp, 0);
        *o = tmp[0];
    }
}

/// Decodes weights start..start+out.len() of W into out (0 past the end).
pub fn decode(w: &Tensor, start: usize, out: &mut [i8]) {
    match w.packing {
        // One loop: four weights a byte where aligned, else one at a time.
        Packing::Trit2 => {
            const TRIT: [i8; 4] = [0, 1, 0, -1];
            let mut n = start;
            let mut k = 0;
            while k < out.len() {
                let b = w.data.get(n >> 2).copied().unwrap_or(0);
                match out.get_mut(k..k + 4) {
                    Some([o0, o1, o2, o3]) if n & 3 == 0 => {
                        *o0 = TRIT[(b & 3) as usize];
                        *o1 = TRIT[((b >> 2) & 3) as usize];
                        *o2 = TRIT[((b >> 4) & 3) as usize];
                        *o3 = TRIT[(b >> 6) as usize];
                        k += 4;
                        n += 4;
                    }
                    _ => {
                        out[k] = TRIT[((b >> (2 * (n & 3))) & 3) as usize];
                        k += 1;
                        n += 1;
                    }
                }
            }
        }
        Packing::Base3 => {
            let mut n = start;
            let mut k = 0;
            while k < out.len() {
                let mut b = w.data.get(n / 5).copied().unwrap_or(121);
                let phase = n % 5;
                for _ in 0..phase {
                    b /= 3;
                }
                for _ in phase..5 {
                    if let Some(o) = out.get_mut(k) {
                        *o = (b % 3) as i8 - 1;
                    }
                    b /= 3;
                    k += 1;
                    n += 1;
                }
            }
        }
        Packing::P3 => {
            for (k, o) in out.iter_mut().enumerate() {
                let n = start + k;
                let g = 3 * (n >> 3);
                let word = match w.data.get(g..g + 3) {
                    Some(s) => s[0] as u32 | (s[1] as u32) << 8 | (s[2] as u32) << 16,
                    None => 0,
                };
                *o = P3_WEIGHTS[((word >> (3 * (n & 7))) & 7) as usize];
            }
        }
    }
}

/// Rows row0..row0+nrows for vectors b0..b0+nb; row j of vector b goes to
/// out[b * ostride + j - row0].
#[allow(clippy::too_many_arguments)]
// Not inlined on microcontrollers: one copy of its buffers, not one per call site.
#[cfg_attr(atome_portable, inline(never))]
fn portable_batch(w: &Tensor, row0: usize, nrows: usize, xs: &[f32], xstride: usize, b0: usize, nb: usize, out: &mut [f32], ostride: usize) {
    let cols = w.cols;
    let mut codes = [0i8; BLOCK];
    for j in row0..row0 + nrows {
        let mut acc = [0.0f32; MAX_BATCH];
        let mut c0 = 0;
        while c0 < cols {
            let len = (cols - c0).min(BLOCK);
            let codes = &mut codes[..len];
            decode(w, j * cols + c0, codes);
            for (b, a) in acc.iter_mut().enumerate().take(nb) {
                let base = (b0 + b) * xstride + c0;
                let Some(x) = xs.get(base..base + len) else { continue };
                let mut s = *a;
                for (&c, &v) in codes.iter().zip(x) {
                    s = match c {
                        0 => s,
                        1 => s + v,
                        -1 => s - v,
                        c => s + (c as f32) * v,
                    };
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
        decode(w, tok * d + c0, &mut codes[..len]);
        if let Some(o) = out.get_mut(c0..c0 + len) {
            for (o, &c) in o.iter_mut().zip(codes.iter()) {
                *o = c as f32 * w.scale;
            }
        }
        c0 += len;
    }
}
