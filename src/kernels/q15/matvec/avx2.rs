//! x86-64 AVX2 integer matvec: four rows decoded once to int16 per block
//! of columns, then for every position one `vpmaddwd` per row and 16
//! columns (int32 lanes, wrapping adds: the same sum mod 2^32 as any
//! order). Outputs must not overlap (the caller checks).
use core::arch::x86_64::*;

use crate::format::{Packing, Tensor};

/// Rows per pass (one accumulator each).
const R: usize = 4;
/// Columns per block (the decoded rows: R * CB * 2 = 2 KiB of stack, a
/// host-only kernel).
const CB: usize = 256;

/// Byte of four Trit2 codes -> four int16 weights (code `10` reads as 0).
static TRIT2_I16: [[i16; 4]; 256] = {
    let mut t = [[0i16; 4]; 256];
    let val = [0i16, 1, 0, -1];
    let mut b = 0;
    while b < 256 {
        let mut k = 0;
        while k < 4 {
            t[b][k] = val[(b >> (2 * k)) & 3];
            k += 1;
        }
        b += 1;
    }
    t
};

/// Weights start..start+dst.len() of `w` as int16.
#[inline(always)]
fn decode_i16(w: &Tensor, start: usize, dst: &mut [i16]) {
    if w.packing == Packing::Trit2 && start.is_multiple_of(4) {
        let off = start / 4;
        for (k, q) in dst.chunks_mut(4).enumerate() {
            let byte = w.data.get(off + k).copied().unwrap_or(0);
            let v = &TRIT2_I16[byte as usize];
            for (d, &s) in q.iter_mut().zip(v) {
                *d = s;
            }
        }
        return;
    }
    let mut codes = [0i8; 32];
    for (k, q) in dst.chunks_mut(32).enumerate() {
        let c = &mut codes[..q.len()];
        w.decode(start + 32 * k, c);
        for (d, &s) in q.iter_mut().zip(c.iter()) {
            *d = i16::from(s);
        }
    }
}

/// Sums of the eight int32 lanes of a, b, c, d.
#[target_feature(enable = "avx2")]
#[inline]
fn hsum4(a: __m256i, b: __m256i, c: __m256i, d: __m256i) -> [i32; 4] {
    let ab = _mm256_hadd_epi32(a, b);
    let cd = _mm256_hadd_epi32(c, d);
    let s = _mm256_hadd_epi32(ab, cd);
    let v = _mm_add_epi32(_mm256_castsi256_si128(s), _mm256_extracti128_si256::<1>(s));
    let mut o = [0i32; 4];
    // SAFETY: o is 16 bytes; storeu has no alignment requirement.
    unsafe { _mm_storeu_si128(o.as_mut_ptr().cast(), v) };
    o
}

/// See the module text; same contract as `matvec_q` (outputs not
/// overlapping).
///
/// # Safety
/// The CPU must have AVX2 (and the OS must save the YMM state).
#[target_feature(enable = "avx2")]
pub(super) unsafe fn matvec(w: &Tensor, xs: &[i16], xstride: usize, n: usize, out: &mut [i32], ostride: usize) {
    let (rows, cols) = (w.rows, w.cols);
    let mut wb = [[0i16; CB]; R];
    let mut j0 = 0;
    while j0 < rows {
        let r = (rows - j0).min(R);
        let mut c0 = 0;
        loop {
            let len = (cols - c0).min(CB);
            for (q, row) in wb.iter_mut().enumerate() {
                if q < r {
                    decode_i16(w, (j0 + q) * cols + c0, &mut row[..len]);
                } else {
                    row[..len].fill(0);
                }
            }
            for b in 0..n {
                let obase = match b.checked_mul(ostride) {
                    Some(o) if o < out.len() => o,
                    _ => continue,
                };
                let x = super::x_row(xs, b, xstride, cols).get(c0..).unwrap_or(&[]);
                let x = &x[..x.len().min(len)];
                let vec_len = x.len() & !15;
                let mut acc = [_mm256_setzero_si256(); R];
                let mut k = 0;
                while k < vec_len {
                    // SAFETY: k + 16 <= vec_len <= x.len() and k + 16 <= len <= CB:
                    // every load is inside its slice; loadu needs no alignment.
                    unsafe {
                        let xv = _mm256_loadu_si256(x.as_ptr().add(k).cast());
                        for (a, row) in acc.iter_mut().zip(wb.iter()) {
                            let wv = _mm256_loadu_si256(row.as_ptr().add(k).cast());
                            *a = _mm256_add_epi32(*a, _mm256_madd_epi16(wv, xv));
                        }
                    }
                    k += 16;
                }
                let mut s = hsum4(acc[0], acc[1], acc[2], acc[3]);
                for (i, &v) in x.iter().enumerate().skip(vec_len) {
                    for (sq, row) in s.iter_mut().zip(wb.iter()) {
                        *sq = sq.wrapping_add(i32::from(row[i]) * i32::from(v));
                    }
                }
                for (q, &sq) in s.iter().enumerate().take(r) {
                    if let Some(o) = obase.checked_add(j0 + q).and_then(|i| out.get_mut(i)) {
                        *o = if c0 == 0 { sq } else { o.wrapping_add(sq) };
                    }
                }
            }
            c0 += len;
            if c0 >= cols {
                break;
            }
        }
        j0 += r;
    }
}
