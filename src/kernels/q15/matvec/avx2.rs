//! x86-64 AVX2 integer matvec (int32 lanes, wrapping adds: the same sum
//! mod 2^32 as any order). Trit2 with `cols % 16 == 0` and no code `10`
//! ([`trit2_fast`]): weights decoded by shifts (`vpslld`, `vpsraw` from a
//! 32-byte load when `cols % 128 == 0`: [`wide8`]; else broadcast,
//! `vpsllvd`, `vpsraw`), fused with the products for one or two positions, else
//! decoded once per block of twelve rows and used by every position (25
//! instructions per 192 terms in the inner loop). Other shapes: eight rows
//! decoded by a byte table per block of columns, then one `vpmaddwd` per
//! row and 16 columns. Outputs must not overlap (the caller checks); short
//! inputs or outputs go to the portable kernels.
use core::arch::x86_64::*;
use core::mem::MaybeUninit;

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
static TRIT2_I16X4: [u64; 256] = super::TRIT2_I16X4;

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
/// overlapping). `no_code10`: the caller has checked that `w`'s payload
/// holds no code `10` ([`has_code10`]), so the shift decode skips
/// its own pass (if it is wrong, such a code reads as -2 instead of 0).
///
/// # Safety
/// The CPU must have AVX2 (and the OS must save the YMM state).
#[target_feature(enable = "avx2")]
pub(super) unsafe fn matvec(w: &Tensor, xs: &[i16], xstride: usize, n: usize, out: &mut [i32], ostride: usize, no_code10: bool) {
    let (rows, cols) = (w.rows, w.cols);
    let need_x = (n - 1).checked_mul(xstride).and_then(|v| v.checked_add(cols));
    let need_o = (n - 1).checked_mul(ostride).and_then(|v| v.checked_add(rows));
    match (need_x, need_o) {
        (Some(nx), Some(no)) if nx <= xs.len() && no <= out.len() => {}
        _ => return super::matvec_q_portable(w, xs, xstride, n, out, ostride),
    }
    // SAFETY: same CPU requirement as this function's.
    if unsafe { trit2_fast(w, xs, xstride, n, out, ostride, no_code10) } {
        return;
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

/// Widest rows of the Trit2 kernel below: vectors of 16 columns per row
/// (its decoded rows take R * MAXV * 32 = 8 KiB of stack).
const MAXV: usize = 32;

/// Whether any Trit2 code of `d` is `10` (hi bit set, lo bit clear): the
/// kernel below reads a code's two bits as the signed value lo - 2*hi,
/// which is the weight for every other code. One pass, ~0.04 instructions
/// per weight: the blobs' encoders never write `10`.
#[target_feature(enable = "avx2")]
#[inline]
pub(super) fn has_code10(d: &[u8]) -> bool {
    let mut acc = _mm256_setzero_si256();
    let chunks = d.chunks_exact(32);
    let rest = chunks.remainder();
    for c in chunks {
        // SAFETY: c is 32 bytes; loadu needs no alignment.
        let v = unsafe { _mm256_loadu_si256(c.as_ptr().cast()) };
        // Per byte, v + v is v << 1: lo bits moved onto the hi bits.
        acc = _mm256_or_si256(acc, _mm256_andnot_si256(_mm256_add_epi8(v, v), v));
    }
    _mm256_testz_si256(acc, _mm256_set1_epi8(0xAAu8 as i8)) == 0 || super::super::has_code10(rest)
}

/// Sixteen Trit2 codes (one 32-bit word, code k in bits 2k+1:2k) as int16
/// lo - 2*hi (the weight, for codes other than `10`), lane 2k = code k,
/// lane 2k+1 = code k+8: one broadcast, one variable shift per 32-bit lane
/// (lane k by 14 - 2k puts code k on bits 15:14 and code k+8 on bits
/// 31:30), one arithmetic shift. Three instructions for 16 weights; the
/// activations are permuted to match ([`perm16`]).
// (Under Miri, which runs no asm, the fused loop uses it; elsewhere
// [`fused8`] does the same in asm.)
#[cfg_attr(not(miri), allow(dead_code))]
#[target_feature(enable = "avx2")]
#[inline]
fn wvec_perm(word: u32, sh: __m256i) -> __m256i {
    _mm256_srai_epi16::<14>(_mm256_sllv_epi32(_mm256_set1_epi32(word as i32), sh))
}

/// The same sixteen weights in column order (lane k = code k): lane k of
/// 32 bits shifted left by 28 - 4k puts code 2k+1 on bits 31:30 and code
/// 2k on bits 29:28, a shift right by 14 moves the latter to 15:14; one
/// blend takes the odd int16 lanes from the first. Five instructions, for
/// weights decoded once and used for several positions.
#[target_feature(enable = "avx2")]
#[inline]
fn wvec_natural(word: u32, sh: __m256i) -> __m256i {
    let s = _mm256_sllv_epi32(_mm256_set1_epi32(word as i32), sh);
    _mm256_srai_epi16::<14>(_mm256_blend_epi16::<0b1010_1010>(_mm256_srli_epi32::<14>(s), s))
}

/// Columns 0..16 of `x` in [`wvec_perm`]'s order: lane 2k = x[k], lane
/// 2k+1 = x[k+8].
#[target_feature(enable = "avx2")]
#[inline]
fn perm16(x: &[i16; 16]) -> __m256i {
    // SAFETY: x is 16 int16 (32 bytes); loadu needs no alignment.
    let (lo, hi) = unsafe { (_mm_loadu_si128(x.as_ptr().cast()), _mm_loadu_si128(x.as_ptr().add(8).cast())) };
    _mm256_set_m128i(_mm_unpackhi_epi16(lo, hi), _mm_unpacklo_epi16(lo, hi))
}

/// Row sums of a block of up to R rows for one position, written to `o`
/// (at most R long).
#[target_feature(enable = "avx2")]
#[inline]
fn store_rows(acc: &[__m256i; R], o: &mut [i32]) {
    let sums = hsum8(acc);
    if o.len() == R {
        // SAFETY: o holds 8 int32 (32 bytes); storeu needs no alignment.
        unsafe { _mm256_storeu_si256(o.as_mut_ptr().cast(), sums) };
        return;
    }
    let mut s = [0i32; R];
    // SAFETY: s is 32 bytes; storeu needs no alignment.
    unsafe { _mm256_storeu_si256(s.as_mut_ptr().cast(), sums) };
    o.copy_from_slice(&s[..o.len()]);
}

/// Trit2, `cols % 16 == 0`, `16 <= cols <= 16 * MAXV`, the whole payload,
/// inputs and outputs present, no code `10`: decode by shifts (no table,
/// no decode buffer for one or two positions), `vpmaddwd` into int32
/// lanes, eight rows a pass. False (nothing written) otherwise.
///
/// # Safety
/// The CPU must have AVX2.
#[target_feature(enable = "avx2")]
unsafe fn trit2_fast(w: &Tensor, xs: &[i16], xstride: usize, n: usize, out: &mut [i32], ostride: usize, no_code10: bool) -> bool {
    let (rows, cols) = (w.rows, w.cols);
    let (nv, bpr) = (cols / 16, cols / 4);
    if w.packing != Packing::Trit2 || !cols.is_multiple_of(16) || nv == 0 || nv > MAXV {
        return false;
    }
    let data = match rows.checked_mul(bpr).and_then(|len| w.data.get(..len)) {
        Some(d) if no_code10 || !has_code10(d) => d,
        _ => return false,
    };
    // (The caller checked xs and out for n positions.)
    if n <= 2 {
        // (One copy per decode: a branch inside its loops cost S1 0.3%.)
        if cols.is_multiple_of(WIDE) {
            few_positions::<true>(data, bpr, rows, xs, xstride, n, out, ostride);
        } else {
            few_positions::<false>(data, bpr, rows, xs, xstride, n, out, ostride);
        }
        return true;
    }
    // Blocks of 12 rows (12 accumulators, the activation vector and a
    // product in the 16 registers: 25 instructions per 192 terms), the
    // rest in blocks of 4.
    let big = rows / RB * RB;
    let mut wb = [[_mm256_setzero_si256(); MAXV]; RB];
    let mut j0 = 0;
    while j0 < big {
        rows_block(&mut wb, &data[j0 * bpr..(j0 + RB) * bpr], Block { nv, xs, xstride, n, out: &mut *out, ostride, j0 });
        j0 += RB;
    }
    let mut wb4 = [[_mm256_setzero_si256(); MAXV]; 4];
    while j0 < rows {
        let r = (rows - j0).min(4);
        // The rows of a short last block repeat its last row (sums not stored).
        let mut src = [&data[..0]; 4];
        for (q, s) in src.iter_mut().enumerate() {
            *s = &data[(j0 + q.min(r - 1)) * bpr..][..bpr];
        }
        rows_block4(&mut wb4, &src, r, Block { nv, xs, xstride, n, out: &mut *out, ostride, j0 });
        j0 += r;
    }
    true
}

/// Rows per block of the several-position kernel.
const RB: usize = 12;

/// K rows of codes (4 * nv bytes each) decoded, in column order, into `wb`.
#[target_feature(enable = "avx2")]
#[inline]
fn decode_rows<const K: usize>(wb: &mut [[__m256i; MAXV]; K], src: &[&[u8]; K], nv: usize) {
    let sh = _mm256_setr_epi32(28, 24, 20, 16, 12, 8, 4, 0);
    for (row, s) in wb.iter_mut().zip(src) {
        for (d, c) in row.iter_mut().zip(s.chunks_exact(4)).take(nv) {
            *d = wvec_natural(u32::from_le_bytes([c[0], c[1], c[2], c[3]]), sh);
        }
    }
}

/// K row sums of one position over nv vectors of decoded rows.
#[target_feature(enable = "avx2")]
#[inline]
fn dot_rows<const K: usize>(wb: &[[__m256i; MAXV]; K], x: &[i16], nv: usize) -> [__m256i; K] {
    let mut acc = [_mm256_setzero_si256(); K];
    for v in 0..nv.min(MAXV) {
        // SAFETY: 16 * v + 16 <= 16 * nv = x.len() (the callers cut x to
        // cols); loadu needs no alignment.
        let xv = unsafe { _mm256_loadu_si256(x.as_ptr().add(16 * v).cast()) };
        for (a, row) in acc.iter_mut().zip(wb) {
            *a = _mm256_add_epi32(*a, _mm256_madd_epi16(row[v], xv));
        }
    }
    acc
}

/// What a block of rows reads and writes: `nv` 16-column vectors a row,
/// n positions of activations (stride xstride) and of outputs (stride
/// ostride) from output row j0.
struct Block<'a> {
    nv: usize,
    xs: &'a [i16],
    xstride: usize,
    n: usize,
    out: &'a mut [i32],
    ostride: usize,
    j0: usize,
}

/// Rows j0..j0+RB (`src`: their payload, RB * bpr bytes) for n positions.
#[target_feature(enable = "avx2")]
fn rows_block(wb: &mut [[__m256i; MAXV]; RB], src: &[u8], bk: Block) {
    let Block { nv, xs, xstride, n, out, ostride, j0 } = bk;
    let bpr = 4 * nv;
    let rows: [&[u8]; RB] = core::array::from_fn(|q| &src[q * bpr..(q + 1) * bpr]);
    decode_rows(wb, &rows, nv);
    for b in 0..n {
        let acc = dot_rows(wb, &xs[b * xstride..b * xstride + 16 * nv], nv);
        let o = &mut out[b * ostride + j0..b * ostride + j0 + RB];
        let (a8, a4) = acc.split_at(8);
        if let (Ok(a8), Ok(a4)) = (<&[__m256i; 8]>::try_from(a8), <&[__m256i; 4]>::try_from(a4)) {
            let (o8, o4) = o.split_at_mut(8);
            store_rows(a8, o8);
            store4(a4, o4);
        }
    }
}

/// Up to four rows (`r` of them stored; `src` repeats the last).
#[target_feature(enable = "avx2")]
fn rows_block4(wb: &mut [[__m256i; MAXV]; 4], src: &[&[u8]; 4], r: usize, bk: Block) {
    let Block { nv, xs, xstride, n, out, ostride, j0 } = bk;
    decode_rows(wb, src, nv);
    for b in 0..n {
        let acc = dot_rows(wb, &xs[b * xstride..b * xstride + 16 * nv], nv);
        store4(&acc, &mut out[b * ostride + j0..b * ostride + j0 + r]);
    }
}

/// Four row sums (lane sums of `a`) written to `o` (at most 4 long).
#[target_feature(enable = "avx2")]
#[inline]
fn store4(a: &[__m256i; 4], o: &mut [i32]) {
    let h = _mm256_hadd_epi32(_mm256_hadd_epi32(a[0], a[1]), _mm256_hadd_epi32(a[2], a[3]));
    // h = [rows 0-3 of lanes 0-3 | rows 0-3 of lanes 4-7]
    let s = _mm_add_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256::<1>(h));
    let mut t = [0i32; 4];
    // SAFETY: t is 16 bytes; storeu needs no alignment.
    unsafe { _mm_storeu_si128(t.as_mut_ptr().cast(), s) };
    o.copy_from_slice(&t[..o.len()]);
}

/// `asm!` for eight rows of one position, the loop of [`fused8`] and
/// [`wide8`]: each step runs the `$pre` template strings, then `$row!`
/// for each row (pointer `{p0}`..`{p7}` = `$base + $off[q]`, accumulator
/// `{a0}`..`{a7}` = `$acc[q]`), then adds `$step` to the offset `{i}`,
/// from 0 to `{end}` = `$end`; `{xp}` and the scratch `{t}` are common,
/// `$extra` the loop's own operands.
#[cfg(not(miri))]
macro_rules! eight_rows_asm {
    ($row:ident, $step:literal, [$($pre:tt)*], $base:ident, $off:ident, $xp:ident, $end:expr, $acc:ident, $($extra:tt)*) => {
        core::arch::asm!(
            "2:",
            $($pre)*
            $row!("p0", "a0"),
            $row!("p1", "a1"),
            $row!("p2", "a2"),
            $row!("p3", "a3"),
            $row!("p4", "a4"),
            $row!("p5", "a5"),
            $row!("p6", "a6"),
            $row!("p7", "a7"),
            concat!("add {i}, ", $step),
            "cmp {i}, {end}",
            "jne 2b",
            p0 = in(reg) $base.add($off[0]),
            p1 = in(reg) $base.add($off[1]),
            p2 = in(reg) $base.add($off[2]),
            p3 = in(reg) $base.add($off[3]),
            p4 = in(reg) $base.add($off[4]),
            p5 = in(reg) $base.add($off[5]),
            p6 = in(reg) $base.add($off[6]),
            p7 = in(reg) $base.add($off[7]),
            xp = in(reg) $xp,
            i = inout(reg) 0usize => _,
            end = in(reg) $end,
            $($extra)*
            t = out(ymm_reg) _,
            a0 = inout(ymm_reg) $acc[0],
            a1 = inout(ymm_reg) $acc[1],
            a2 = inout(ymm_reg) $acc[2],
            a3 = inout(ymm_reg) $acc[3],
            a4 = inout(ymm_reg) $acc[4],
            a5 = inout(ymm_reg) $acc[5],
            a6 = inout(ymm_reg) $acc[6],
            a7 = inout(ymm_reg) $acc[7],
            options(readonly, nostack),
        )
    };
}

/// One row of [`fused8`]'s step: 16 weights from the word at `{$p} + {i}`
/// by broadcast, `vpsllvd` by `{sh}` and `vpsraw`, against `{x}`, added
/// to `{$a}`.
#[cfg(not(miri))]
macro_rules! fused_row {
    ($p:literal, $a:literal) => {
        concat!(
            "vpbroadcastd {t}, dword ptr [{", $p, "} + {i}]\n",
            "vpsllvd {t}, {t}, {sh}\n",
            "vpsraw {t}, {t}, 14\n",
            "vpmaddwd {t}, {t}, {x}\n",
            "vpaddd {", $a, "}, {", $a, "}, {t}\n",
        )
    };
}

/// The fused loop of [`few_positions`] for one position and eight rows, in
/// asm: LLVM keeps only some of the eight row pointers in registers and
/// reloads the rest every step (52 instructions per 128 terms against 43
/// here). Lane sums as [`wvec_perm`] and `vpmaddwd` give them.
///
/// # Safety
/// The CPU must have AVX2; nv > 0; for each q, `base + off[q]` must be
/// readable for 4 * nv bytes; `xp` points to at least nv initialized
/// vectors.
#[cfg(not(miri))]
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn fused8(base: *const u8, off: &[usize; R], xp: *const __m256i, nv: usize, sh: __m256i) -> [__m256i; R] {
    let mut acc = [_mm256_setzero_si256(); R];
    // SAFETY: the loop reads the words at base + off[q] + 4v and the
    // vectors xp[v] for v < nv (i = 4v; the vector at xp + 8i), inside by
    // the caller's contract; loads need no alignment; only the named
    // registers and the flags change; no stack use.
    unsafe {
        eight_rows_asm!(
            fused_row, 4, ["vmovdqu {x}, ymmword ptr [{xp} + {i}*8]",],
            base, off, xp, 4 * nv, acc,
            sh = in(ymm_reg) sh,
            x = out(ymm_reg) _,
        );
    }
    acc
}

/// Columns per block of the wide decode: one 32-byte load of a row's codes.
const WIDE: usize = 128;

/// Trit2 rows of `bpr` bytes (`16 <= 4 bpr <= 16 MAXV` columns, a
/// multiple of 16) for one or two positions ([`trit2_fast`]'s contract):
/// decode fused with the products, eight rows a pass, the activations
/// permuted once per position to match. Rows of a multiple of [`WIDE`]
/// columns: a row's codes loaded 32 bytes (128 weights) at a time, each
/// of the eight `vpslld` by 14 - 2j (none for j = 7) then `vpsraw` by 14
/// giving 16 weights, codes j and j + 8 of each 32-bit lane ([`wide8`],
/// [`perm128`]): two instructions per 16 weights. Other rows: 16 weights
/// from a broadcast word in three ([`fused8`], [`perm16`]).
#[target_feature(enable = "avx2")]
#[inline]
#[allow(clippy::too_many_arguments)]
fn few_positions<const WIDE_ROWS: bool>(data: &[u8], bpr: usize, rows: usize, xs: &[i16], xstride: usize, n: usize, out: &mut [i32], ostride: usize) {
    // (WIDE_ROWS: the caller found cols a multiple of WIDE.)
    let cols = 4 * bpr;
    let sh = _mm256_setr_epi32(14, 12, 10, 8, 6, 4, 2, 0);
    // Uninitialized: zeroing 2 KiB took more than a small matvec's work
    // (S3 q15: 126 of about 800 instructions a call); the first cols / 16
    // vectors of each position's array are written here, and only they
    // are read.
    let mut xp = [[MaybeUninit::<__m256i>::uninit(); MAXV]; 2];
    for (b, xb) in xp.iter_mut().enumerate().take(n) {
        let x = &xs[b * xstride..b * xstride + cols];
        if WIDE_ROWS {
            for (d, c) in xb.chunks_exact_mut(8).zip(x.chunks_exact(WIDE)) {
                perm128(c, d);
            }
        } else {
            for (d, c) in xb.iter_mut().zip(x.chunks_exact(16)) {
                d.write(perm16(c.try_into().unwrap_or(&[0; 16])));
            }
        }
    }
    let mut j0 = 0;
    while j0 < rows {
        let r = (rows - j0).min(R);
        // One base and row offsets q * bpr (x86 addressing adds them):
        // eight row pointers would not stay in registers. A short last
        // block repeats its last row (sums not stored).
        let base = data[j0 * bpr..].as_ptr();
        let off: [usize; R] = core::array::from_fn(|q| q.min(r - 1) * bpr);
        for (b, xb) in xp.iter().enumerate().take(n) {
            #[cfg(not(miri))]
            // SAFETY: base + off[q] is row j0 + q (< rows) of data, which
            // holds bpr = cols / 4 bytes per row; xb's first cols / 16
            // vectors were written above (x holds cols int16); cols >= 16,
            // so both loops run at least one step.
            let acc = unsafe {
                if WIDE_ROWS {
                    wide8(base, &off, xb.as_ptr().cast(), cols / WIDE)
                } else {
                    fused8(base, &off, xb.as_ptr().cast(), cols / 16, sh)
                }
            };
            #[cfg(miri)]
            let acc = rows_plain(&data[j0 * bpr..], &off, xb, cols, WIDE_ROWS, sh);
            store_rows(&acc, &mut out[b * ostride + j0..b * ostride + j0 + r]);
        }
        j0 += r;
    }
}

/// Columns 0..128 of `x` (shorter: zeros) into `out[0..8]` in [`wide8`]'s
/// order: vector j, 32-bit lane k = (x[16k + j], x[16k + j + 8]). Lane j
/// of [`perm16`] of columns 16k.. is that pair, so an 8 x 8 transpose of
/// 32-bit lanes of the eight perm16 vectors gives it (24 instructions).
#[target_feature(enable = "avx2")]
#[inline]
fn perm128(x: &[i16], out: &mut [MaybeUninit<__m256i>]) {
    let r: [__m256i; 8] = core::array::from_fn(|k| perm16(x.get(16 * k..16 * k + 16).and_then(|c| c.try_into().ok()).unwrap_or(&[0; 16])));
    let t: [__m256i; 8] = core::array::from_fn(|i| {
        let (a, b) = (r[2 * (i % 4 / 2) + 4 * (i / 4)], r[2 * (i % 4 / 2) + 4 * (i / 4) + 1]);
        if i % 2 == 0 { _mm256_unpacklo_epi32(a, b) } else { _mm256_unpackhi_epi32(a, b) }
    });
    // t[0] = lo(r0, r1), t[1] = hi(r0, r1), t[2] = lo(r2, r3), t[3] = hi(r2, r3), t[4..8] likewise for r4..r8.
    let u: [__m256i; 8] = core::array::from_fn(|i| {
        let g = 4 * (i / 4);
        let (a, b) = (t[g + i % 4 / 2], t[g + 2 + i % 4 / 2]);
        if i % 2 == 0 { _mm256_unpacklo_epi64(a, b) } else { _mm256_unpackhi_epi64(a, b) }
    });
    // u[0]: lanes 0 of r0..r3 (and lanes 4 in the upper half), u[1]: lanes 1 (5),
    // u[2]: lanes 2 (6), u[3]: lanes 3 (7); u[4..8] the same of r4..r8.
    for (j, o) in out.iter_mut().enumerate().take(8) {
        let (a, b) = (u[j % 4], u[4 + j % 4]);
        o.write(if j < 4 { _mm256_permute2x128_si256::<0x20>(a, b) } else { _mm256_permute2x128_si256::<0x31>(a, b) });
    }
}

/// [`wide8`] (`wide`) or [`fused8`] in Rust, for Miri (which runs no
/// asm): the rows at `off` in `rows`, cols / 4 bytes each.
#[cfg(miri)]
#[target_feature(enable = "avx2")]
fn rows_plain(rows: &[u8], off: &[usize; R], xb: &[MaybeUninit<__m256i>], cols: usize, wide: bool, sh: __m256i) -> [__m256i; R] {
    let mut acc = [_mm256_setzero_si256(); R];
    for (a, &o) in acc.iter_mut().zip(off) {
        let row = &rows[o..o + cols / 4];
        if wide {
            for (v, c) in row.chunks_exact(32).enumerate() {
                // SAFETY: c is 32 bytes; loadu needs no alignment.
                let c = unsafe { _mm256_loadu_si256(c.as_ptr().cast()) };
                let ws = [
                    _mm256_slli_epi32::<14>(c),
                    _mm256_slli_epi32::<12>(c),
                    _mm256_slli_epi32::<10>(c),
                    _mm256_slli_epi32::<8>(c),
                    _mm256_slli_epi32::<6>(c),
                    _mm256_slli_epi32::<4>(c),
                    _mm256_slli_epi32::<2>(c),
                    c,
                ];
                for (j, w) in ws.into_iter().enumerate() {
                    // SAFETY: the caller wrote the first cols / 16 vectors.
                    let xv = unsafe { xb[8 * v + j].assume_init() };
                    *a = _mm256_add_epi32(*a, _mm256_madd_epi16(_mm256_srai_epi16::<14>(w), xv));
                }
            }
        } else {
            for (v, c) in row.chunks_exact(4).enumerate() {
                // SAFETY: the caller wrote the first cols / 16 vectors.
                let xv = unsafe { xb[v].assume_init() };
                let wv = wvec_perm(u32::from_le_bytes([c[0], c[1], c[2], c[3]]), sh);
                *a = _mm256_add_epi32(*a, _mm256_madd_epi16(wv, xv));
            }
        }
    }
    acc
}

/// One group of 16 weights in [`wide_row`]: the codes `{c}` shifted so
/// that this group's two bits top each 16-bit lane (`$shl`), sign-extended
/// by the arithmetic shift, times the activations at `$off` bytes past the
/// block's, into the accumulator `$a`.
#[cfg(not(miri))]
macro_rules! wide_term {
    ($shl:literal, $off:literal, $a:literal) => {
        concat!(
            "vpslld {t}, {c}, ", $shl, "\n", "vpsraw {t}, {t}, 14\n",
            "vpmaddwd {t}, {t}, ymmword ptr [{xp} + {i}*8", $off, "]\n", "vpaddd {", $a, "}, {", $a, "}, {t}\n",
        )
    };
}

/// One row's 128 weights of a block against the block's eight activation
/// vectors: asm text for [`wide8`] (`$p`: the row's pointer operand, `$a`:
/// its accumulator).
#[cfg(not(miri))]
macro_rules! wide_row {
    ($p:literal, $a:literal) => {
        concat!(
            "vmovdqu {c}, ymmword ptr [{", $p, "} + {i}]\n",
            wide_term!(14, "", $a),
            wide_term!(12, " + 32", $a),
            wide_term!(10, " + 64", $a),
            wide_term!(8, " + 96", $a),
            wide_term!(6, " + 128", $a),
            wide_term!(4, " + 160", $a),
            wide_term!(2, " + 192", $a),
            "vpsraw {t}, {c}, 14\n",
            "vpmaddwd {t}, {t}, ymmword ptr [{xp} + {i}*8 + 224]\n", "vpaddd {", $a, "}, {", $a, "}, {t}\n",
        )
    };
}

/// The wide loop of [`few_positions`] for eight rows and one position, in asm (as
/// [`fused8`]: the eight row pointers stay in registers): 32 instructions
/// per row and 128 weights, 3 per block for the loop.
///
/// # Safety
/// The CPU must have AVX2; nb > 0; for each q, `base + off[q]` must be
/// readable for 32 * nb bytes; `xp` points to at least 8 * nb
/// initialized vectors.
#[cfg(not(miri))]
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn wide8(base: *const u8, off: &[usize; R], xp: *const __m256i, nb: usize) -> [__m256i; R] {
    let mut acc = [_mm256_setzero_si256(); R];
    // SAFETY: the loop reads bytes i..i+32 at base + off[q] and the
    // vectors at xp + 8i bytes (eight per block) for i = 32v, v < nb:
    // inside by the caller's contract; loads need no alignment; only the
    // named registers and the flags change; no stack use.
    unsafe {
        eight_rows_asm!(
            wide_row, 32, [],
            base, off, xp, 32 * nb, acc,
            c = out(ymm_reg) _,
        );
    }
    acc
}
