//! The AVX2 matvec loops: passes over input vectors, column chunks, row
//! groups and columns (see the module above for the method).
use core::arch::x86_64::*;
use core::mem::MaybeUninit;

use super::packers::{shift, Offsets, Packer};
use super::{Cx, MAXJ};

/// Input vectors per pass (accumulators live in registers).
const MAXB: usize = 8;
/// Column tables per chunk (32 bytes each: 16 KiB on the stack).
const TABS: usize = 512;

/// All n vectors, in passes of 8, 4, 2, 1 vectors.
///
/// # Safety
/// AVX2 available; the shape checks of `matvec_batch` hold.
#[target_feature(enable = "avx2")]
pub(super) unsafe fn run<P: Packer>(cx: &mut [Cx], n: usize) {
    let mut b0 = 0;
    while b0 < n {
        let left = n - b0;
        // SAFETY: forwarded preconditions; b0 + B <= n in each arm.
        unsafe {
            if left >= 8 {
                pass::<P, 1, 8>(cx, b0);
                b0 += 8;
            } else if left >= 4 {
                pass::<P, 1, 4>(cx, b0);
                b0 += 4;
            } else if left >= 2 {
                pass::<P, 2, 2>(cx, b0);
                b0 += 2;
            } else {
                pass::<P, 4, 1>(cx, b0);
                b0 += 1;
            }
        }
    }
}

/// Vectors b0..b0+B, all rows: column chunks outside, row groups inside.
/// Partial sums of whole groups wait in `out`; the last, partial group's in
/// `tail`. R groups are interleaved to hide the add latency.
///
/// # Safety
/// As `run`, and b0 + B <= n.
#[target_feature(enable = "avx2")]
unsafe fn pass<P: Packer, const R: usize, const B: usize>(cxs: &mut [Cx], b0: usize) {
    let Some(first) = cxs.first() else { return };
    let (xs, xstride, cols) = (first.xs, first.xstride, first.cols);
    let mut tabs = [const { MaybeUninit::<__m256>::uninit() }; TABS];
    let mut tails = [[[0.0f32; 8]; MAXB]; MAXJ];
    let chunk = (TABS / B) / P::STEP * P::STEP;
    let mut c0 = 0;
    while c0 < cols {
        let clen = chunk.min(cols - c0);
        let tw = tabs.as_mut_ptr() as *mut __m256;
        for b in 0..B {
            // SAFETY: b0 + b < n, c0 + clen <= cols and (n-1)*xstride + cols
            // <= xs.len(): inputs base..base+clen are readable. clen * B <=
            // TABS: every table index c * B + b is inside `tabs`. AVX2 available.
            unsafe {
                let xp = xs.as_ptr().add((b0 + b) * xstride + c0);
                for c in 0..clen {
                    tw.add(c * B + b).write(P::table(*xp.add(c)));
                }
            }
        }
        let ph = Phase {
            c0,
            clen,
            first: c0 == 0,
            last: c0 + clen == cols,
            b0,
        };
        let tp = tabs.as_ptr() as *const __m256;
        for (cx, tail) in cxs.iter_mut().zip(tails.iter_mut()) {
            let groups = cx.rows.div_ceil(8);
            let mut g = 0;
            while g + R <= groups {
                // SAFETY: tables 0..clen*B written above; forwarded preconditions.
                unsafe { block::<P, R, B>(cx, g, tp, &ph, tail) };
                g += R;
            }
            while g < groups {
                // SAFETY: as above.
                unsafe { block::<P, 1, B>(cx, g, tp, &ph, tail) };
                g += 1;
            }
        }
        c0 += clen;
    }
    for (cx, tail) in cxs.iter_mut().zip(tails.iter()) {
        let j0 = cx.rows / 8 * 8;
        if j0 < cx.rows {
            for (b, t) in tail.iter().enumerate().take(B) {
                let o = (b0 + b) * cx.ostride + j0;
                if let Some(dst) = cx.out.get_mut(o..o + (cx.rows - j0)) {
                    dst.copy_from_slice(&t[..cx.rows - j0]);
                }
            }
        }
    }
}

/// Where a chunk is: columns c0..c0+clen of vectors b0..b0+B.
struct Phase {
    c0: usize,
    clen: usize,
    first: bool,
    last: bool,
    b0: usize,
}

/// Row groups g0..g0+R (8 rows each) over one column chunk.
///
/// # Safety
/// As `pass`; `tp` points to clen * B initialised tables (column-major:
/// table of column c, vector b at c * B + b).
// acc[r][b], wv[r], lanes[r]: parallel arrays, indexed together.
#[allow(clippy::needless_range_loop)]
#[target_feature(enable = "avx2")]
unsafe fn block<P: Packer, const R: usize, const B: usize>(cx: &mut Cx, g0: usize, tp: *const __m256, ph: &Phase, tail: &mut [[f32; 8]; MAXB]) {
    let data = cx.data;
    let iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    let lastrow = _mm256_set1_epi32((cx.rows - 1) as i32);
    let colsv = _mm256_set1_epi32(cx.cols as i32);
    let c0v = _mm256_set1_epi32(ph.c0 as i32);
    let mut lanes = [Offsets {
        offs: iota,
        s1: iota,
        s2: iota,
    }; R];
    // Byte offset of the last lane (the largest) for each group.
    let mut last = [0usize; R];
    let mut acc = [[_mm256_setzero_ps(); B]; R];
    for r in 0..R {
        let j0 = (g0 + r) * 8;
        let rowv = _mm256_min_epi32(_mm256_add_epi32(_mm256_set1_epi32(j0 as i32), iota), lastrow);
        // SAFETY: AVX2 available.
        lanes[r] = unsafe { P::lanes(_mm256_add_epi32(_mm256_mullo_epi32(rowv, colsv), c0v)) };
        last[r] = _mm256_extract_epi32::<7>(lanes[r].offs) as u32 as usize;
        if !ph.first {
            for b in 0..B {
                // SAFETY: `partial` gives 8 floats inside `out` or `tail`.
                acc[r][b] = unsafe { _mm256_loadu_ps(partial(cx, tail, ph.b0, b, j0)) };
            }
        }
    }
    let stride = _mm256_set1_epi32(P::STRIDE);
    let mut col = 0;
    while col < ph.clen {
        let mut wv = [_mm256_setzero_si256(); R];
        for r in 0..R {
            let raw = if last[r] + 4 <= data.len() {
                // SAFETY: all offsets are <= last[r] and last[r] + 4 <= len:
                // every lane reads 4 bytes inside `data`.
                unsafe { _mm256_i32gather_epi32::<1>(data.as_ptr() as *const i32, lanes[r].offs) }
            } else {
                // SAFETY: AVX2 available.
                unsafe { gather_tail(data, lanes[r].offs) }
            };
            // SAFETY: AVX2 available.
            wv[r] = unsafe { P::word(raw, &lanes[r]) };
            lanes[r].offs = _mm256_add_epi32(lanes[r].offs, stride);
            last[r] += P::STRIDE as usize;
        }
        // SAFETY: col < clen, so the tables col*B.. are initialised.
        let t = unsafe { tp.add(col * B) };
        let k = ph.clen - col;
        if k >= P::STEP {
            // Fixed count: fully unrolled.
            macro_rules! rep {
                ($($i:literal)*) => {$(
                    if $i < P::STEP {
                        // SAFETY: column col + $i < clen; AVX2 available.
                        unsafe {
                            column::<R, B>(&mut acc, &mut wv, t.add($i * B));
                            wv = shift_all::<R>(wv, P::BITS);
                        }
                    }
                )*};
            }
            rep!(0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15);
            col += P::STEP;
        } else {
            for i in 0..k {
                // SAFETY: column col + i < clen; AVX2 available.
                unsafe {
                    column::<R, B>(&mut acc, &mut wv, t.add(i * B));
                    wv = shift_all::<R>(wv, P::BITS);
                }
            }
            col = ph.clen;
        }
    }
    let scale = _mm256_set1_ps(cx.scale);
    for r in 0..R {
        let j0 = (g0 + r) * 8;
        for b in 0..B {
            let v = if ph.last { _mm256_mul_ps(acc[r][b], scale) } else { acc[r][b] };
            // SAFETY: `partial` gives 8 floats inside `out` or `tail`.
            unsafe { _mm256_storeu_ps(partial(cx, tail, ph.b0, b, j0), v) };
        }
    }
}

/// Where the partial sums of rows j0..j0+8 of vector b0+b wait: in `out`
/// for a whole group, else in `tail` (only the last group can be partial).
///
/// # Safety
/// As `pass` (b0 + b < n, j0 < rows); the pointer is valid for 8 floats.
#[inline]
unsafe fn partial(cx: &mut Cx, tail: &mut [[f32; 8]; MAXB], b0: usize, b: usize, j0: usize) -> *mut f32 {
    if j0 + 8 <= cx.rows {
        // SAFETY: (b0+b)*ostride + j0 + 8 <= (n-1)*ostride + rows <= out.len().
        unsafe { cx.out.as_mut_ptr().add((b0 + b) * cx.ostride + j0) }
    } else {
        tail[b % MAXB].as_mut_ptr()
    }
}

/// One column for R groups and B vectors: acc += table[code].
///
/// # Safety
/// `t` points to B initialised tables.
// acc[r][b], wv[r], lanes[r]: parallel arrays, indexed together.
#[allow(clippy::needless_range_loop)]
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn column<const R: usize, const B: usize>(acc: &mut [[__m256; B]; R], wv: &mut [__m256i; R], t: *const __m256) {
    for r in 0..R {
        for b in 0..B {
            // SAFETY: b < B tables readable at t (aligned: __m256 array).
            let tab = unsafe { *t.add(b) };
            acc[r][b] = _mm256_add_ps(acc[r][b], _mm256_permutevar8x32_ps(tab, wv[r]));
        }
    }
}

/// Every group's word shifted right by `bits` (2 or 3; a constant).
///
/// # Safety
/// AVX2 available.
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn shift_all<const R: usize>(mut wv: [__m256i; R], bits: u32) -> [__m256i; R] {
    for w in wv.iter_mut() {
        // SAFETY: AVX2 available.
        *w = unsafe {
            if bits == 3 {
                shift::<3>(*w)
            } else {
                shift::<2>(*w)
            }
        };
    }
    wv
}

/// The 4 bytes at each lane offset, bytes past the end of `data` as 0.
///
/// # Safety
/// AVX2 available.
#[cold]
#[inline(never)]
#[target_feature(enable = "avx2")]
unsafe fn gather_tail(data: &[u8], offs: __m256i) -> __m256i {
    let mut o = [0u32; 8];
    // SAFETY: 32 writable bytes.
    unsafe { _mm256_storeu_si256(o.as_mut_ptr() as *mut __m256i, offs) };
    let mut v = [0u32; 8];
    for (d, &off) in v.iter_mut().zip(o.iter()) {
        let at = |k: u32| data.get((off + k) as usize).copied().unwrap_or(0);
        *d = u32::from_le_bytes([at(0), at(1), at(2), at(3)]);
    }
    // SAFETY: 32 readable bytes.
    unsafe { _mm256_loadu_si256(v.as_ptr() as *const __m256i) }
}
