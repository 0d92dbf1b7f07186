//! Exact integer matrix-vector products on int16 activation mantissas
//! (docs/Q15.md#kernels-and-instructions).
//!
//! Integer sums are associative, so the kernels below add in whatever order
//! is cheapest and still give [`matvec_q_naive`]'s bits on every target:
//!
//! - **Tables** (Trit2 with whole bytes per row, at least [`TABLE_MIN_ROWS`]
//!   rows; every target without AVX2): for each position and each chunk of
//!   16 columns, eight 16-entry tables hold `w0*x0 + w1*x1` for every 4-bit
//!   pair of 2-bit codes (code `10` reads as 0, as in the decoder). Every
//!   row then reads one 32-bit word of codes and adds eight table entries:
//!   two weights per load and add, no decode, no multiply. The tables
//!   (512 bytes of stack) are built once per position and chunk and read by
//!   every row.
//! - **Decode once** (every other shape and packing): a row's codes are
//!   decoded once per block of columns and used for all `n` positions.
//! - **AVX2** (x86-64, detected at run time): four rows decoded to int16,
//!   then `vpmaddwd` by each position's activations (16 terms per
//!   instruction), int32 lanes.
//!
//! When the output vectors overlap (`n > 1` and `ostride < rows`), the
//! later writes of the naive loop order win: that case goes to
//! [`matvec_q_naive`] itself.
use super::super::isa::Accel;
use crate::format::{Packing, Tensor};

#[cfg(all(target_arch = "x86_64", not(atome_portable)))]
mod avx2;

/// Columns decoded per step (the decode buffer lives on the stack).
const BLOCK: usize = 32;

/// Columns per table chunk: one 32-bit word of Trit2 codes per row.
const CHUNK: usize = 16;
/// 2-column tables per chunk.
const PAIRS: usize = CHUNK / 2;

/// Fewest rows for which the tables pay for their building (about 180
/// instructions per chunk and position against about 2 per weight saved).
pub const TABLE_MIN_ROWS: usize = 8;

/// For b < n and j < W.rows: `out[b*ostride + j] = sum_i W[j][i] * xs[b*xstride + i]`,
/// the exact integer sum (any order gives the same value). Inputs past the end
/// of `xs` read as 0; outputs past the end of `out` are not written.
///
/// Precondition for the i32 result (docs/Q15.md#integer-widths): every
/// |x| <= 32767 and `cols * max|w| * 32767 < 2^31` (ternary: cols <= 65537;
/// P3: cols <= 7281). The sum wraps (never panics) when it is broken.
///
/// Asks the CPU for AVX2 on x86-64 (cpuid); a caller that keeps an
/// [`Accel`] calls [`matvec_q_accel`] instead.
pub fn matvec_q(w: &Tensor, xs: &[i16], xstride: usize, n: usize, out: &mut [i32], ostride: usize) {
    if n == 0 || w.rows == 0 {
        return;
    }
    matvec_q_accel(Accel::detect(), w, xs, xstride, n, out, ostride)
}

/// [`matvec_q`] with the instruction set already chosen.
pub fn matvec_q_accel(acc: Accel, w: &Tensor, xs: &[i16], xstride: usize, n: usize, out: &mut [i32], ostride: usize) {
    if n == 0 || w.rows == 0 {
        return;
    }
    if n > 1 && ostride < w.rows {
        return matvec_q_naive(w, xs, xstride, n, out, ostride);
    }
    #[cfg(all(target_arch = "x86_64", not(atome_portable)))]
    if acc.avx2() {
        // SAFETY: `Accel::avx2` is true only when cpuid and xgetbv showed
        // AVX2 with the YMM state enabled by the OS.
        unsafe { avx2::matvec(w, xs, xstride, n, out, ostride) };
        return;
    }
    let _ = acc;
    matvec_q_portable(w, xs, xstride, n, out, ostride)
}

/// The kernels every target has (the tables, else decode-once), without
/// the AVX2 path: what microcontrollers run, callable on any host.
pub fn matvec_q_portable(w: &Tensor, xs: &[i16], xstride: usize, n: usize, out: &mut [i32], ostride: usize) {
    if n == 0 || w.rows == 0 {
        return;
    }
    if n > 1 && ostride < w.rows {
        return matvec_q_naive(w, xs, xstride, n, out, ostride);
    }
    if w.packing == Packing::Trit2 && w.cols.is_multiple_of(4) && w.rows >= TABLE_MIN_ROWS {
        trit2_tables(w, xs, xstride, n, out, ostride)
    } else {
        decode_once(w, xs, xstride, n, out, ostride)
    }
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

/// Position b's inputs, cut to `cols` (shorter when `xs` ends first).
#[inline]
fn x_row(xs: &[i16], b: usize, xstride: usize, cols: usize) -> &[i16] {
    let row = b.checked_mul(xstride).and_then(|s| xs.get(s..)).unwrap_or(&[]);
    &row[..row.len().min(cols)]
}

/// Position b's outputs: `out[b*ostride..]`, at most `rows` long (empty
/// when `out` ends first).
#[inline]
fn out_row(out: &mut [i32], b: usize, ostride: usize, rows: usize) -> &mut [i32] {
    let row = match b.checked_mul(ostride).and_then(|s| out.get_mut(s..)) {
        Some(r) => r,
        None => return &mut [],
    };
    let m = row.len().min(rows);
    &mut row[..m]
}

/// Decode-once kernel: any packing, any shape (outputs must not overlap).
fn decode_once(w: &Tensor, xs: &[i16], xstride: usize, n: usize, out: &mut [i32], ostride: usize) {
    let cols = w.cols;
    let mut codes = [0i8; BLOCK];
    for j in 0..w.rows {
        let mut c0 = 0;
        loop {
            let len = (cols - c0).min(BLOCK);
            w.decode(j * cols + c0, &mut codes[..len]);
            for b in 0..n {
                let o = match out_row(out, b, ostride, w.rows).get_mut(j) {
                    Some(o) => o,
                    None => continue,
                };
                let x = x_row(xs, b, xstride, cols).get(c0..).unwrap_or(&[]);
                let mut s = 0i32;
                for (&c, &v) in codes[..len].iter().zip(x) {
                    s = s.wrapping_add(i32::from(c) * i32::from(v));
                }
                *o = if c0 == 0 { s } else { o.wrapping_add(s) };
            }
            c0 += len;
            if c0 >= cols {
                break;
            }
        }
    }
}

/// Eight pair tables: `t[p][c0 + 4*c1] = w(c0)*x[2p] + w(c1)*x[2p+1]` with
/// the Trit2 code values w = [0, 1, 0, -1].
type Tables = [[i32; 16]; PAIRS];

/// The tables of columns c0..c0+16 of one position (x past its end: 0, so
/// codes read past a row's last column add nothing).
#[inline]
fn build_tables(t: &mut Tables, x: &[i16], c0: usize) {
    for (p, tp) in t.iter_mut().enumerate() {
        let x0 = x.get(c0 + 2 * p).map_or(0, |&v| i32::from(v));
        let x1 = x.get(c0 + 2 * p + 1).map_or(0, |&v| i32::from(v));
        let v0 = [0, x0, 0, x0.wrapping_neg()];
        let v1 = [0, x1, 0, x1.wrapping_neg()];
        for (i1, &y) in v1.iter().enumerate() {
            for (i0, &z) in v0.iter().enumerate() {
                tp[i0 + 4 * i1] = z.wrapping_add(y);
            }
        }
    }
}

/// Sixteen Trit2 codes (lowest first) against the tables.
#[inline(always)]
fn lookup(t: &Tables, word: u32) -> i32 {
    let mut s = 0i32;
    for (p, tp) in t.iter().enumerate() {
        s = s.wrapping_add(tp[((word >> (4 * p)) & 15) as usize]);
    }
    s
}

/// The little-endian word at byte `off` (bytes past the end of `data`: 0,
/// the zero code).
#[inline(always)]
fn word_at(data: &[u8], off: usize) -> u32 {
    match data.get(off..off + 4) {
        Some(&[a, b, c, d]) => u32::from_le_bytes([a, b, c, d]),
        _ => {
            let byte = |k: usize| u32::from(data.get(off + k).copied().unwrap_or(0));
            byte(0) | byte(1) << 8 | byte(2) << 16 | byte(3) << 24
        }
    }
}

/// Table kernel: Trit2, `cols % 4 == 0` (every row starts on a byte),
/// outputs not overlapping.
fn trit2_tables(w: &Tensor, xs: &[i16], xstride: usize, n: usize, out: &mut [i32], ostride: usize) {
    let cols = w.cols;
    let bpr = cols / 4;
    let mut t: Tables = [[0; 16]; PAIRS];
    for b in 0..n {
        let ob = out_row(out, b, ostride, w.rows);
        if ob.is_empty() {
            continue;
        }
        let x = x_row(xs, b, xstride, cols);
        for o in ob.iter_mut() {
            *o = 0;
        }
        let mut c0 = 0;
        while c0 < cols {
            build_tables(&mut t, x, c0);
            let mut off = c0 / 4;
            for o in ob.iter_mut() {
                *o = o.wrapping_add(lookup(&t, word_at(w.data, off)));
                off += bpr;
            }
            c0 += CHUNK;
        }
    }
}
