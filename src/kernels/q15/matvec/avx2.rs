//! x86-64 AVX2 integer matvec: eight rows decoded once to int16 per block
//! of columns, then for every position one `vpmaddwd` per row and 16
//! columns (int32 lanes, wrapping adds: the same sum mod 2^32 as any
//! order), eight row sums reduced together and added to the outputs with
//! one 8-lane store. About 17 instructions per 128 weight terms in the
//! inner loop. Outputs must not overlap (the caller checks); short inputs
//! or outputs go to the portable kernels.
use core::arch::x86_64::*;

use crate::format::{Packing, Tensor};

/// Rows per pass (one accumulator register each).
const R: usize = 8;
/// Columns per block: the decoded rows take R * CB * 2 = 2 KiB of stack
/// (a host-only kernel).
const CB: usize = 128;
/// Decoded weights per row and block, four int16 per u64.
const CW: usize = CB / 4;

/// Byte of four Trit2 codes -> four int16 weights, lowest first, in a u64
/// (code `10` reads as 0).
static TRIT2_I16X4: [u64; 256] = {
    let mut t = [0u64; 256];
    let val = [0u64, 1, 0, 0xFFFF];
    let mut b = 0;
    while b < 256 {
        t[b] = val[b & 3] | val[(b >> 2) & 3] << 16 | val[(b >> 4) & 3] << 32 | val[(b >> 6) & 3] << 48;
        b += 1;
    }
    t
};

/// Weights start..start+len of `w` as int16, four per u64 (len <= CB).
#[inline(always)]
fn decode(w: &Tensor, start: usize, len: usize, dst: &mut [u64; CW]) {
    let words = len.div_ceil(4);
    if w.packing == Packing::Trit2 && start.is_multiple_of(4) {
        let off = start / 4;
        match w.data.get(off..off + words) {
            Some(bytes) => {
                for (d, &b) in dst.iter_mut().zip(bytes) {
                    *d = TRIT2_I16X4[b as usize];
                }
            }
            None => {
                for (k, d) in dst.iter_mut().take(words).enumerate() {
                    *d = TRIT2_I16X4[w.data.get(off + k).copied().unwrap_or(0) as usize];
                }
            }
        }
        // Weights past len (the next row's) are never read: the vector
        // loop stops at len / 16 * 16 and the tail at len.
        return;
    }
    let mut codes = [0i8; CB];
    let c = &mut codes[..len];
    w.decode(start, c);
    for (d, q) in dst.iter_mut().zip(c.chunks(4)) {
        let mut v = 0u64;
        for (k, &x) in q.iter().enumerate() {
            v |= u64::from(x as i16 as u16) << (16 * k);
        }
        *d = v;
    }
}

/// Weight i of a decoded row.
#[inline(always)]
fn weight(row: &[u64; CW], i: usize) -> i32 {
    i32::from((row[i / 4] >> (16 * (i % 4))) as u16 as i16)
}

/// The eight row sums: lane q = sum of the eight int32 lanes of a[q].
#[target_feature(enable = "avx2")]
#[inline]
fn hsum8(a: &[__m256i; R]) -> __m256i {
    let h01 = _mm256_hadd_epi32(a[0], a[1]);
    let h23 = _mm256_hadd_epi32(a[2], a[3]);
    let h45 = _mm256_hadd_epi32(a[4], a[5]);
    let h67 = _mm256_hadd_epi32(a[6], a[7]);
    let lo = _mm256_hadd_epi32(h01, h23);
    let hi = _mm256_hadd_epi32(h45, h67);
    // lo = [rows 0-3 of columns 0-3 | rows 0-3 of columns 4-7], hi likewise for rows 4-7.
    _mm256_add_epi32(_mm256_permute2x128_si256::<0x20>(lo, hi), _mm256_permute2x128_si256::<0x31>(lo, hi))
}

/// See the module text; same contract as `matvec_q` (outputs not
/// overlapping).
///
/// # Safety
/// The CPU must have AVX2 (and the OS must save the YMM state).
#[target_feature(enable = "avx2")]
pub(super) unsafe fn matvec(w: &Tensor, xs: &[i16], xstride: usize, n: usize, out: &mut [i32], ostride: usize) {
    let (rows, cols) = (w.rows, w.cols);
    let need_x = (n - 1).checked_mul(xstride).and_then(|v| v.checked_add(cols));
    let need_o = (n - 1).checked_mul(ostride).and_then(|v| v.checked_add(rows));
    match (need_x, need_o) {
        (Some(nx), Some(no)) if nx <= xs.len() && no <= out.len() => {}
        _ => return super::matvec_q_portable(w, xs, xstride, n, out, ostride),
    }
    if cols == 0 {
        for b in 0..n {
            out[b * ostride..b * ostride + rows].fill(0);
        }
        return;
    }
    let mut wb = [[0u64; CW]; R];
    let mut j0 = 0;
    while j0 < rows {
        let r = (rows - j0).min(R);
        let mut c0 = 0;
        while c0 < cols {
            let len = (cols - c0).min(CB);
            for (q, row) in wb.iter_mut().enumerate() {
                if q < r {
                    decode(w, (j0 + q) * cols + c0, len, row);
                } else {
                    *row = [0; CW];
                }
            }
            let nv = len / 16;
            for b in 0..n {
                let x = &xs[b * xstride + c0..b * xstride + c0 + len];
                let mut acc = [_mm256_setzero_si256(); R];
                for v in 0..nv {
                    // SAFETY: 16 * v + 16 <= len = x.len(), and the decoded
                    // rows hold CB >= len int16 (CW u64); loadu needs no
                    // alignment.
                    unsafe {
                        let xv = _mm256_loadu_si256(x.as_ptr().add(16 * v).cast());
                        for (a, row) in acc.iter_mut().zip(wb.iter()) {
                            let wv = _mm256_loadu_si256(row.as_ptr().add(4 * v).cast());
                            *a = _mm256_add_epi32(*a, _mm256_madd_epi16(wv, xv));
                        }
                    }
                }
                let sums = hsum8(&acc);
                if r == R && 16 * nv == len {
                    // The usual case: eight whole rows, no column tail.
                    let o = &mut out[b * ostride + j0..b * ostride + j0 + R];
                    // SAFETY: o holds 8 int32 (32 bytes); loadu/storeu need
                    // no alignment.
                    unsafe {
                        let p = o.as_mut_ptr().cast::<__m256i>();
                        let v = if c0 == 0 { sums } else { _mm256_add_epi32(_mm256_loadu_si256(p), sums) };
                        _mm256_storeu_si256(p, v);
                    }
                    continue;
                }
                let mut s = [0i32; R];
                // SAFETY: s is 32 bytes; storeu needs no alignment.
                unsafe { _mm256_storeu_si256(s.as_mut_ptr().cast(), sums) };
                for (i, &xv) in x.iter().enumerate().skip(16 * nv) {
                    for (sq, row) in s.iter_mut().zip(wb.iter()) {
                        *sq = sq.wrapping_add(weight(row, i) * i32::from(xv));
                    }
                }
                let o = &mut out[b * ostride + j0..b * ostride + j0 + r];
                for (oq, &sq) in o.iter_mut().zip(&s) {
                    *oq = if c0 == 0 { sq } else { oq.wrapping_add(sq) };
                }
            }
            c0 += len;
        }
        j0 += r;
    }
}
