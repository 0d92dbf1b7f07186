//! Ternary matvec for cores with a single-precision FPU (Cortex-M4F, M7,
//! M33: `target_abi = "eabihf"`), where an add costs one instruction and the
//! portable loop's decoding and per-weight branching cost the rest.
//!
//! Each weight byte (four 2-bit trits, 81 distinct patterns once the unused
//! code 10 reads as 0) selects straight-line code that adds or subtracts
//! the matching inputs: no per-weight test. Positions go four at a time, so
//! each weight byte is decoded once for four accumulators held in FPU
//! registers along a row ([`dot4_quads`]); a single position goes row by
//! row, two rows sharing each input load ([`rows_quads`]). On the eabihf
//! targets both are assembly routines (fpu_asm.rs: the compiler, at opt-level
//! "s", turns the same arms written in Rust into chains of branches); the
//! Rust arms are their portable twins, which the host tests run. Every
//! (row, vector) pair still adds its nonzero terms one at a time, in column
//! order, from +0.0, then multiplies by the scale: the bits of
//! docs/ARITHMETIC.md. Rows that do not start on a byte, and base-3
//! payloads, are repacked into 2-bit bytes first; P3 goes to the portable
//! loop (the caller's fallback).
use crate::format::{Packing, Tensor};
#[cfg(atome_fpu)]
use super::fpu_asm::{atome_fpu_dot4, atome_fpu_rows};

/// Columns per segment of a row (repacked rows go through a stack buffer).
const COLS: usize = 32;
/// Weight bytes per segment.
const QUADS: usize = COLS / 4;

/// The index (0..81) of a 2-bit byte's pattern: trit k's code (00, 01 or
/// 11; 10 reads as 0) is base-3 digit k (0, 1 or 2) of the index.
const PATTERN: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        let mut idx = 0u8;
        let mut k = 0;
        let mut place = 1u8;
        while k < 4 {
            let digit = match (b >> (2 * k)) & 3 {
                1 => 1,
                3 => 2,
                _ => 0,
            };
            idx += digit * place;
            place *= 3;
            k += 1;
        }
        t[b] = idx;
        b += 1;
    }
    t
};

/// Every pattern index has an arm in the dispatches.
const PATTERN_IN_RANGE: () = {
    let mut b = 0;
    while b < 256 {
        assert!(PATTERN[b] < 81);
        b += 1;
    }
};

/// A base-3 byte's five trits (digit k of the byte, docs/FORMATS.md: 0 -> -1, 1 -> 0,
/// 2 -> +1) as five 2-bit codes, trit k at bits 2k. Bytes above 242 decode
/// with the same arithmetic as the portable decoder.
const BASE3: [u16; 256] = {
    let mut t = [0u16; 256];
    let mut b = 0;
    while b < 256 {
        let mut v = b;
        let mut c = 0u16;
        let mut k = 0;
        while k < 5 {
            let code = match v % 3 {
                0 => 3u16,
                2 => 1,
                _ => 0,
            };
            c |= code << (2 * k);
            v /= 3;
            k += 1;
        }
        t[b] = c;
        b += 1;
    }
    t
};

/// Padding byte of a short base-3 payload: five zero trits.
const BASE3_ZERO: u8 = 121;

/// True when [`matvec`] can run this matrix (2-bit or base-3 packing).
pub fn supports(w: &Tensor) -> bool {
    matches!(w.packing, Packing::Trit2 | Packing::Base3)
}

/// Weight bytes for columns c0..c0+len of row j as aligned 2-bit bytes
/// (trailing trits of the last byte are 0). Borrowed straight from the
/// payload when the row segment starts on a byte, else repacked into `buf`.
#[inline(always)]
fn row_bytes<'a>(w: &'a Tensor, j: usize, c0: usize, len: usize, buf: &'a mut [u8; QUADS]) -> &'a [u8] {
    let n = j * w.cols + c0;
    let nq = len.div_ceil(4);
    let data = w.data;
    match w.packing {
        Packing::Trit2 => {
            if n & 3 == 0 && len & 3 == 0 {
                if let Some(s) = data.get(n >> 2..(n >> 2) + nq) {
                    return s;
                }
            }
            // Two source bytes per output byte, shifted by the row's phase.
            let s = 2 * (n & 3) as u32;
            for (i, o) in (n >> 2..).zip(buf.iter_mut().take(nq)) {
                let lo = data.get(i).copied().unwrap_or(0) as u32;
                let hi = data.get(i + 1).copied().unwrap_or(0) as u32;
                *o = ((lo | hi << 8) >> s) as u8;
            }
        }
        _ => {
            // A bit reservoir: each base-3 byte adds ten bits (five codes).
            let mut m = n / 5;
            let phase = (n % 5) as u32;
            let mut bits = BASE3[data.get(m).copied().unwrap_or(BASE3_ZERO) as usize] as u32 >> (2 * phase);
            let mut have = 10 - 2 * phase;
            for o in buf.iter_mut().take(nq) {
                if have < 8 {
                    m += 1;
                    bits |= (BASE3[data.get(m).copied().unwrap_or(BASE3_ZERO) as usize] as u32) << have;
                    have += 10;
                }
                *o = bits as u8;
                bits >>= 8;
                have -= 8;
            }
        }
    }
    // Trits past len (the next row's) must not count.
    let tail = len & 3;
    if tail != 0 {
        if let Some(last) = buf.get_mut(nq - 1) {
            *last &= (1u8 << (2 * tail)) - 1;
        }
    }
    &buf[..nq.min(QUADS)]
}

/// acc = acc + x (digit 1) or acc - x (digit 2) for column k, lane by
/// lane; the lanes are spelled out so the accumulators stay in registers at
/// any opt-level.
macro_rules! term {
    ($a:ident, $x:ident, $k:expr, $digit:expr) => {
        if $digit == 1 {
            $a[0] += $x[0][$k];
            if B > 1 {
                $a[1] += $x[1][$k];
                $a[2] += $x[2][$k];
                $a[3] += $x[3][$k];
            }
        } else if $digit == 2 {
            $a[0] -= $x[0][$k];
            if B > 1 {
                $a[1] -= $x[1][$k];
                $a[2] -= $x[2][$k];
                $a[3] -= $x[3][$k];
            }
        }
    };
}

/// The four trits of pattern P (base-3 digits) in column order; x[b] holds
/// lane b's four inputs.
#[inline(always)]
#[cfg_attr(atome_fpu, allow(dead_code))]
fn apply<const P: u8, const B: usize>(a: &mut [f32; B], x: [&[f32; 4]; B]) {
    term!(a, x, 0, P % 3);
    term!(a, x, 1, (P / 3) % 3);
    term!(a, x, 2, (P / 9) % 3);
    term!(a, x, 3, (P / 27) % 3);
}

/// Calls `$m!(args; 0 1 ... 80)`: the 81 pattern indices.
#[cfg_attr(atome_fpu, allow(unused_macros))]
macro_rules! with_patterns {
    ($m:ident!($($args:tt)*)) => {
        $m!($($args)*;
            0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29
            30 31 32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 55 56 57
            58 59 60 61 62 63 64 65 66 67 68 69 70 71 72 73 74 75 76 77 78 79 80)
    };
}

/// acc = acc + x (digit 1) or acc - x (digit 2) for one accumulator.
macro_rules! term1 {
    ($a:ident, $x:expr, $digit:expr) => {
        if $digit == 1 {
            *$a += $x;
        } else if $digit == 2 {
            *$a -= $x;
        }
    };
}

/// The four trits of pattern P (base-3 digits) for one accumulator; the
/// inputs come by value (already in registers); the portable twin of the
/// assembly arms of [`rows_quads`].
#[cfg_attr(atome_fpu, allow(dead_code))]
#[inline(always)]
fn apply1<const P: u8>(a: &mut f32, x: [f32; 4]) {
    term1!(a, x[0], P % 3);
    term1!(a, x[1], (P / 3) % 3);
    term1!(a, x[2], (P / 9) % 3);
    term1!(a, x[3], (P / 27) % 3);
}

/// [`apply1`] for the pattern index `$p` (a [`PATTERN`] entry).
#[cfg_attr(atome_fpu, allow(unused_macros))]
macro_rules! dispatch1 {
    ($p:expr, $a:expr, $x:expr; $($v:literal)*) => {
        match $p {
            $($v => apply1::<$v>($a, $x),)*
            // SAFETY: every PATTERN entry is below 81 (checked at compile
            // time by PATTERN_IN_RANGE); telling the compiler so removes a
            // range check from each weight byte's dispatch (cached
            // generation on M4F: measured in BENCHMARKS.md).
            _ => unsafe { core::hint::unreachable_unchecked() },
        }
    };
}

/// [`apply`] for the pattern index `$p` (a [`PATTERN`] entry).
#[cfg_attr(atome_fpu, allow(unused_macros))]
macro_rules! dispatch {
    ($p:expr, $a:expr, $x:expr; $($v:literal)*) => {
        match $p {
            $($v => apply::<$v, B>($a, $x),)*
            // SAFETY: as in dispatch1: PATTERN entries are below 81.
            _ => unsafe { core::hint::unreachable_unchecked() },
        }
    };
}

/// True when whole rows can be read from the payload in place (2-bit
/// packing, nothing missing): rows that start on a byte then need no copy.
#[inline(always)]
fn in_place(w: &Tensor) -> bool {
    w.packing == Packing::Trit2 && w.data.len() >= (w.rows * w.cols).div_ceil(4)
}

/// Input quads of a slice (a tail of fewer than four is left out).
#[inline(always)]
#[cfg_attr(atome_fpu, allow(dead_code))]
fn quads(x: &[f32]) -> core::slice::ChunksExact<'_, f32> {
    x.chunks_exact(4)
}

/// A chunk of [`quads`] as an array (always four long).
#[inline(always)]
#[cfg_attr(atome_fpu, allow(dead_code))]
fn q4(c: &[f32]) -> &[f32; 4] {
    <&[f32; 4]>::try_from(c).unwrap_or(&[0.0; 4])
}

/// The last, partial quad of x (len % 4 columns; the rest reads as 0.0
/// against zero trits).
#[inline(always)]
fn tail(x: &[f32]) -> [f32; 4] {
    let mut t = [0.0f32; 4];
    for (t, &v) in t.iter_mut().zip(x.chunks_exact(4).remainder()) {
        *t = v;
    }
    t
}

/// The trits of the last, partial byte of a segment (cold: once a row
/// segment when cols % 4 != 0), one at a time: no dispatch table of its own.
#[inline(never)]
fn tail_terms<const B: usize>(mut a: [f32; B], byte: u8, t: &[[f32; 4]; B]) -> [f32; B] {
    let mut p = PATTERN[byte as usize];
    for k in 0..4 {
        match p % 3 {
            1 => {
                for (a, t) in a.iter_mut().zip(t) {
                    *a += t[k];
                }
            }
            2 => {
                for (a, t) in a.iter_mut().zip(t) {
                    *a -= t[k];
                }
            }
            _ => {}
        }
        p /= 3;
    }
    a
}

/// x[c0..c0 + len], empty when out of range.
#[inline(always)]
fn part(x: &[f32], c0: usize, len: usize) -> &[f32] {
    x.get(c0..c0 + len).unwrap_or(&[])
}

/// Row j of W against the four input rows xr (W.cols floats each): the sums
/// before scaling. Rows that start on a byte are read in place, others are
/// repacked COLS columns at a time.
#[inline(always)]
fn row_sums4(w: &Tensor, j: usize, xr: [&[f32]; 4], buf: &mut [u8; QUADS]) -> [f32; 4] {
    let cols = w.cols;
    let mut a = [0.0f32; 4];
    let seg = if in_place(w) && cols & 3 == 0 { cols } else { COLS };
    let mut c0 = 0;
    while c0 < cols {
        let len = (cols - c0).min(seg);
        let bytes = row_bytes(w, j, c0, len, buf);
        let [x0, x1, x2, x3] = xr;
        let (x0, x1, x2, x3) = (part(x0, c0, len), part(x1, c0, len), part(x2, c0, len), part(x3, c0, len));
        a = dot4_quads(a, &X4::new([x0, x1, x2, x3]), bytes);
        if len & 3 != 0 {
            let p = bytes.get(len / 4).copied().unwrap_or(0);
            a = tail_terms(a, p, &[tail(x0), tail(x1), tail(x2), tail(x3)]);
        }
        c0 += len;
    }
    a
}

/// Four input vectors for [`dot4_quads`], prepared once for many rows.
#[derive(Clone, Copy)]
struct X4<'a> {
    /// The vectors.
    #[cfg_attr(atome_fpu, allow(dead_code))]
    x: [&'a [f32]; 4],
    /// Whole quads that all four have.
    nq: usize,
    /// Their addresses, as the assembly routine takes them.
    #[cfg(atome_fpu)]
    p: [*const f32; 4],
}

impl<'a> X4<'a> {
    #[inline(always)]
    fn new(x: [&'a [f32]; 4]) -> Self {
        X4 {
            x,
            nq: x.iter().fold(usize::MAX, |n, x| n.min(x.len() / 4)),
            #[cfg(atome_fpu)]
            p: [x[0].as_ptr(), x[1].as_ptr(), x[2].as_ptr(), x[3].as_ptr()],
        }
    }
}

/// a[b] plus the terms of the weight bytes `w` against the input quads of
/// x.x[b], for the quads all of them have, one at a time in column order.
#[inline(always)]
fn dot4_quads(a: [f32; 4], x: &X4, w: &[u8]) -> [f32; 4] {
    let nq = w.len().min(x.nq);
    #[cfg(atome_fpu)]
    {
        // SAFETY: each x.p[b] is the start of x.x[b], which holds at least
        // 4 * x.nq >= 4 * nq floats, and w holds nq bytes; the routine's
        // jump table has an entry for each of the 256 byte values. The
        // routine (fpu_asm.rs) reads only those and the four pointers, saves the callee-saved registers it
        // uses (r4-r7, s16-s23) and returns the sums in s0-s3 (a
        // homogeneous aggregate).
        let r = unsafe { atome_fpu_dot4(a[0], a[1], a[2], a[3], x.p.as_ptr(), w.as_ptr(), nq) };
        [r.a0, r.a1, r.a2, r.a3]
    }
    #[cfg(not(atome_fpu))]
    {
        const B: usize = 4;
        let mut a = a;
        let [x0, x1, x2, x3] = x.x;
        let it = w.iter().zip(quads(x0)).zip(quads(x1)).zip(quads(x2)).zip(quads(x3)).take(nq);
        for ((((&p, x0), x1), x2), x3) in it {
            with_patterns!(dispatch!(PATTERN[p as usize], &mut a, [q4(x0), q4(x1), q4(x2), q4(x3)]));
        }
        a
    }
}

/// Vectors b0..b0+nb (nb <= 4) of the call, four at a time: the missing
/// lanes repeat the last vector and are never stored. The caller checked
/// that every input row is in range and that no two outputs share a slot.
#[inline(never)]
fn group4(w: &Tensor, xs: &[f32], xstride: usize, b0: usize, nb: usize, out: &mut [f32], ostride: usize) {
    let mut buf = [0u8; QUADS];
    // The four input rows, sliced once for the whole matrix.
    let row = |b: usize| {
        let at = (b0 + b.min(nb - 1)) * xstride;
        xs.get(at..at + w.cols).unwrap_or(&[])
    };
    let xr = [row(0), row(1), row(2), row(3)];
    let x4 = X4::new(xr);
    let mut store = |j: usize, a: [f32; 4]| {
        for (b, &a) in a.iter().enumerate().take(nb) {
            if let Some(o) = out.get_mut((b0 + b) * ostride + j) {
                *o = a * w.scale;
            }
        }
    };
    if in_place(w) && w.cols & 3 == 0 {
        // Rows start on a byte (Trit2, cols % 4 == 0): read in place, whole.
        let rows = w.data.chunks_exact((w.cols / 4).max(1)).take(w.rows);
        for (j, r) in rows.enumerate() {
            store(j, dot4_quads([0.0; 4], &x4, r));
        }
        return;
    }
    for j in 0..w.rows {
        store(j, row_sums4(w, j, xr, &mut buf));
    }
}

/// One vector (lane b0 of the call): whole rows in place through
/// [`rows_quads`] (per-byte code, the inputs in FPU registers), other
/// layouts row by row in segments.
#[inline(never)]
fn one_vector(w: &Tensor, xs: &[f32], xstride: usize, b0: usize, out: &mut [f32], ostride: usize) {
    #[allow(clippy::let_unit_value)]
    let () = PATTERN_IN_RANGE;
    let cols = w.cols;
    let mut buf = [0u8; QUADS];
    let slot = b0 * ostride;
    let xrow = xs.get(b0 * xstride..b0 * xstride + cols).unwrap_or(&[]);
    let out = out.get_mut(slot..).unwrap_or(&mut []);
    if in_place(w) && cols & 3 == 0 {
        // Rows start on a byte (Trit2, cols % 4 == 0): read in place, whole;
        // rows without an output slot are not computed.
        let n = w.rows.min(out.len());
        let nq = cols / 4;
        if let (Some(o), Some(wr)) = (out.get_mut(..n), w.data.get(..n * nq)) {
            rows_quads(0.0, w.scale, xrow, wr, nq, o);
        }
        return;
    }
    for j in 0..w.rows {
        let mut a = [0.0f32];
        let mut c0 = 0;
        while c0 < cols {
            let len = (cols - c0).min(COLS);
            let x = xrow.get(c0..c0 + len).unwrap_or(&[]);
            let r = row_bytes(w, j, c0, len, &mut buf);
            // One row from a, unscaled (a * 1.0 is a).
            rows_quads(a[0], 1.0, x, r, len / 4, &mut a);
            if len & 3 != 0 {
                a = tail_terms(a, r.get(len / 4).copied().unwrap_or(0), &[tail(x)]);
            }
            c0 += len;
        }
        if let Some(o) = out.get_mut(j) {
            *o = a[0] * w.scale;
        }
    }
}

/// out[i] = (init plus the terms of row i of `w` against the input quads of
/// x, one at a time in column order) * scale, where row i is the nq weight
/// bytes from i * nq. Rows not all in `w`, or inputs shorter than 4 * nq
/// floats, leave out[i] alone (callers pass whole rows).
#[inline(always)]
fn rows_quads(init: f32, scale: f32, x: &[f32], w: &[u8], nq: usize, out: &mut [f32]) {
    let n = if x.len() / 4 >= nq { out.len().min(w.len().checked_div(nq).unwrap_or(usize::MAX)) } else { 0 };
    let out = out.get_mut(..n).unwrap_or(&mut []);
    if nq == 0 || out.is_empty() {
        for o in out.iter_mut() {
            *o = init * scale;
        }
        return;
    }
    #[cfg(atome_fpu)]
    {
        // SAFETY: x holds at least 4 * nq floats, w at least n * nq bytes
        // and out n floats (n >= 1, nq >= 1: checked above); the routine's
        // jump table has an entry for each of the 256 byte values. The
        // routine (fpu_asm.rs) reads only those, writes only out[..n], saves the
        // callee-saved registers it uses (r4-r8) and clobbers only
        // caller-saved ones.
        unsafe { atome_fpu_rows(init, scale, x.as_ptr(), w.as_ptr(), nq, n, out.as_mut_ptr()) }
    }
    #[cfg(not(atome_fpu))]
    for (o, r) in out.iter_mut().zip(w.chunks_exact(nq)) {
        let mut a = init;
        for (q, &p) in quads(x).zip(r) {
            let q = *q4(q);
            with_patterns!(dispatch1!(PATTERN[p as usize], &mut a, q));
        }
        *o = a * scale;
    }
}

/// Positions per pass.
const NB: usize = 4;

/// For b < n: out[b*ostride + j] = (W x_b)[j], x_b = xs[b*xstride..][..cols],
/// for a 2-bit or base-3 matrix, with every input row in range and
/// ostride >= rows when n > 1 (the caller checks; see `super`).
#[inline(never)]
pub fn matvec(w: &Tensor, xs: &[f32], xstride: usize, n: usize, out: &mut [f32], ostride: usize) {
    let mut b0 = 0;
    while b0 < n {
        let nb = (n - b0).min(NB);
        if nb == 1 {
            one_vector(w, xs, xstride, b0, out, ostride);
        } else {
            group4(w, xs, xstride, b0, nb, out, ostride);
        }
        b0 += nb;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::matvec::matvec_portable;

    /// SplitMix64: enough to vary the shapes and bits.
    struct Mix(u64);
    impl Mix {
        fn next(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        }
        fn below(&mut self, n: u64) -> usize {
            (self.next() % n) as usize
        }
    }

    /// The kernel against the portable loop, bit for bit: both packings
    /// (every byte value, including code 10 and base-3 bytes above 242),
    /// rows that start mid-byte, several column blocks, 1..9 vectors with
    /// padding between inputs and outputs, and inputs holding signed zeros,
    /// subnormals, infinities and NaN.
    #[test]
    fn same_bits_as_portable_loop() {
        let mut r = Mix(11);
        let mut data = [0u8; 2048];
        let mut xs = [0.0f32; 9 * 80];
        let mut got = [0.0f32; 9 * 80];
        let mut want = [0.0f32; 9 * 80];
        let special = [0.0f32, -0.0, 1e-40, -1e-40, f32::INFINITY, f32::NEG_INFINITY, f32::NAN, 3.0e38, -3.0e38];
        for case in 0..3000 {
            let packing = if case % 2 == 0 { Packing::Trit2 } else { Packing::Base3 };
            let rows = 1 + r.below(20);
            let cols = 1 + r.below(70);
            let n = 1 + r.below(9);
            let xstride = cols + r.below(3);
            let ostride = if n == 1 { r.below(3) } else { rows + r.below(3) };
            for b in data.iter_mut() {
                *b = r.next() as u8;
            }
            // Short payloads now and then: missing bytes read as zeros.
            let need = match packing {
                Packing::Base3 => (rows * cols).div_ceil(5),
                _ => (rows * cols).div_ceil(4),
            };
            let len = if case % 7 == 0 { r.below(need as u64 + 1) } else { need };
            let w = Tensor { data: &data[..len], scale: 0.5 + r.below(100) as f32 / 37.0, rows, cols, packing };
            for x in xs.iter_mut() {
                *x = if r.below(50) == 0 {
                    special[r.below(special.len() as u64)]
                } else {
                    (r.next() as i32 as f32) * 2.0f32.powi(r.below(40) as i32 - 50)
                };
            }
            let xs = &xs[..(n - 1) * xstride + cols];
            for (g, w) in got.iter_mut().zip(want.iter_mut()) {
                *g = 7.0;
                *w = 7.0;
            }
            let olen = (n - 1) * ostride + rows;
            assert!(crate::kernels::device::fast_shape(&w, xs, xstride, n, ostride));
            matvec(&w, xs, xstride, n, &mut got[..olen], ostride);
            matvec_portable(&w, xs, xstride, n, &mut want[..olen], ostride);
            for (i, (g, w)) in got.iter().zip(want.iter()).enumerate() {
                // A NaN's sign and payload are not part of Rust's float
                // semantics (LLVM may swap the operands of an add), so
                // NaN results only have to be NaN on both sides.
                let same = g.to_bits() == w.to_bits() || (g.is_nan() && w.is_nan());
                assert!(same, "case {case} ({rows}x{cols}, n {n}, {packing:?}) slot {i}: {g:?} vs {w:?}");
            }
        }
    }
}
