//! Exact integer matrix-vector products on int16 activation mantissas
//! (docs/PERFORMANCE.md#the-q15-engine-what-each-core-runs).
//!
//! Integer sums are associative, so the kernels below add in whatever order
//! is cheapest and still give [`matvec_q_naive`]'s bits on every target:
//!
//! - **Tables** (Trit2 with whole bytes per row, at least [`TABLE_MIN_ROWS`]
//!   rows; Cortex-M0/M3, M33, RISC-V, and x86-64 without AVX2; the row
//!   loop in asm on ARMv6-M (`t1.rs`) and on Armv7-M/v8-M Mainline
//!   (`thumb2.rs`)): for each
//!   position and each chunk of 8 columns (16 on ARMv6-M), four (eight)
//!   16-entry tables hold `w0*x0 + w1*x1` for every 4-bit pair of 2-bit
//!   codes (code `10` reads as 0, as in the decoder). Every row then reads
//!   its bytes of codes and adds a table entry per nibble: two weights per
//!   load and add, no decode, no multiply. The tables (256 bytes of stack,
//!   512 on ARMv6-M) are built once per position
//!   and chunk and read by every row, of every matrix of a
//!   [`matvec_q_multi`] call.
//! - **Byte tables** (one position with many rows, in memory the caller
//!   lends: [`matvec_q_bytes`], `bytes.rs`; the q15 cached plan on
//!   Cortex-M0, Thumb-2 and RV32, in asm): a 256-entry table per four
//!   columns, one load and add per four weights.
//! - **SMLAD** (Trit2, Armv7E-M: Cortex-M4/M7, cfg `atome_dsp`): a byte of
//!   codes becomes four packed int16 weights by one table load, two `SMLAD`s
//!   add their products with the activations (asm, `dsp.rs`).
//! - **Decode once** (every other shape and packing): a row's codes are
//!   decoded once per block of columns and used for all `n` positions.
//! - **AVX2** (x86-64, detected at run time; `avx2.rs`): Trit2 without the
//!   unused code `10` (one pass checks, or the caller once:
//!   [`matvec_q_multi_checked`]) is decoded by shifts, and `vpmaddwd` adds
//!   16 terms into int32 lanes. One or two positions: decode fused with
//!   the products, eight rows a pass; 16 weights in two instructions from
//!   one 32-byte load per 128 when the rows are a multiple of 128 columns,
//!   else in three from a broadcast word. More: twelve rows decoded once,
//!   then used for every position. Other shapes: rows decoded by a byte
//!   table, then `vpmaddwd`.
//!
//! Instructions per weight term (`scripts/q15_kernel_bench.sh`, S3's
//! shapes; x86-64: `tests/q15_matvec_cost.rs` under callgrind) are in
//! docs/PERFORMANCE.md; every kernel is checked against
//! [`matvec_q_naive`] by tests/q15_matvec_diff.rs (host kernels) and by equal
//! checksums on M0, M3 and M4F (the bench).
//!
//! When the output vectors overlap (`n > 1` and `ostride < rows`), the
//! later writes of the naive loop order win: that case goes to
//! [`matvec_q_naive`] itself.
use super::super::isa::Accel;
use crate::format::{Packing, Tensor};

#[cfg(atome_x86)]
mod avx2;
#[cfg(all(atome_dsp, not(atome_small)))]
mod dsp;
#[cfg(all(all(atome_thumb2, not(atome_small)), not(all(atome_dsp, not(atome_small)))))]
mod thumb2;
#[cfg(all(atome_armv6m, not(atome_small)))]
mod t1;
mod bytes;
pub use bytes::{bytes_pay, matvec_q_bytes, BYTES_HERE};
#[cfg(all(atome_armv6m, not(atome_small)))]
use t1::{build_tables_t1, rows_thumb};

/// Byte of four Trit2 codes -> its four int16 weights, lowest first, in a
/// u64 (code `10` reads as 0): the table of the AVX2 decode and of the
/// DSP kernel's `LDRD`s (each keeps its own aligned static copy).
#[cfg(any(atome_x86, all(atome_dsp, not(atome_small))))]
const TRIT2_I16X4: [u64; 256] = {
    let mut t = [0u64; 256];
    let val = [0u64, 1, 0, 0xFFFF];
    let mut b = 0;
    while b < 256 {
        t[b] = val[b & 3] | val[(b >> 2) & 3] << 16 | val[(b >> 4) & 3] << 32 | val[(b >> 6) & 3] << 48;
        b += 1;
    }
    t
};

/// Columns decoded per step (the decode buffer lives on the stack).
const BLOCK: usize = 32;

/// Columns per table chunk: two bytes of Trit2 codes per row (four on
/// ARMv6-M). Eight, not sixteen, where the row loop keeps its table bases
/// in registers (Thumb-2's paged layout) and on the hosts: the tables take
/// 256 bytes of stack instead of 512. On Cortex-M0 the row loop's fixed
/// cost (sum load and store, pointer step, loop test: 5 of 26 instructions
/// per chunk of 8) is spread over sixteen weights (48 instructions); the
/// q15 build's peak stack there stays within 2 KiB (cortex_bench checks).
const CHUNK: usize = if cfg!(all(atome_armv6m, not(atome_small))) { 16 } else { 8 };
/// Bytes of codes per row and chunk.
const CBYTES: usize = CHUNK / 4;
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
    accel_checked(acc, w, xs, xstride, n, out, ostride, false)
}

/// Whether `w` is Trit2 and no code of its payload (the first
/// ceil(rows * cols / 4) bytes) is `10`. A caller that runs the same
/// matrix many times checks it once and passes the answer to
/// [`matvec_q_multi_checked`]: the AVX2 shift decode needs it and would
/// otherwise check at every call (S1 q15: 2.0M of 30.1M instructions).
pub fn trit2_no_code10(acc: Accel, w: &Tensor) -> bool {
    if w.packing != Packing::Trit2 {
        return false;
    }
    let len = w.rows.saturating_mul(w.cols).div_ceil(4);
    let d = w.data.get(..len).unwrap_or(w.data);
    #[cfg(atome_x86)]
    if acc.avx2() {
        // SAFETY: `Accel::avx2` is true only when cpuid and xgetbv showed
        // AVX2 with the YMM state enabled by the OS.
        return !unsafe { avx2::has_code10(d) };
    }
    let _ = acc;
    !super::has_code10(d)
}

/// [`matvec_q_accel`]; `no_code10` as [`matvec_q_multi_checked`]'s.
#[allow(clippy::too_many_arguments)]
fn accel_checked(acc: Accel, w: &Tensor, xs: &[i16], xstride: usize, n: usize, out: &mut [i32], ostride: usize, no_code10: bool) {
    if n == 0 || w.rows == 0 {
        return;
    }
    // Size-first: the plain loop for every matrix (no tables).
    if cfg!(atome_small) {
        return matvec_q_small(w, xs, xstride, n, out, ostride);
    }
    if n > 1 && ostride < w.rows {
        return matvec_q_naive(w, xs, xstride, n, out, ostride);
    }
    #[cfg(atome_x86)]
    if acc.avx2() {
        // SAFETY: `Accel::avx2` is true only when cpuid and xgetbv showed
        // AVX2 with the YMM state enabled by the OS.
        unsafe { avx2::matvec(w, xs, xstride, n, out, ostride, no_code10) };
        return;
    }
    let _ = (acc, no_code10);
    matvec_q_portable(w, xs, xstride, n, out, ostride)
}

/// One matrix of a [`matvec_q_multi`] call: `out[b*ostride + j] = (W x_b)[j]`.
pub struct MvJobQ<'a> {
    /// The matrix.
    pub w: &'a Tensor<'a>,
    /// Where its results go.
    pub out: &'a mut [i32],
    /// Distance between the results of consecutive vectors.
    pub ostride: usize,
}

/// Several matrices over the same inputs: for each job, exactly
/// [`matvec_q_accel`]`(acc, job.w, xs, xstride, n, job.out, job.ostride)`.
/// Trit2 matrices of the same width (whole bytes per row, outputs not
/// overlapping) share one set of tables per position and chunk, so the
/// tables are built once for all their rows (Wq, Wk, Wv and the router of
/// a block: 99 rows in the default configuration instead of 16 or 3).
pub fn matvec_q_multi(acc: Accel, jobs: &mut [MvJobQ], xs: &[i16], xstride: usize, n: usize) {
    matvec_q_multi_checked(acc, jobs, xs, xstride, n, false)
}

/// [`matvec_q_multi`], where `no_code10` says that the caller found no
/// code `10` in any job's payload ([`trit2_no_code10`] true for each), so
/// that no kernel checks again. The results are the same unless that is
/// false (then a code `10` may read as -2 instead of 0: wrong sums, no
/// undefined behaviour).
pub fn matvec_q_multi_checked(acc: Accel, jobs: &mut [MvJobQ], xs: &[i16], xstride: usize, n: usize, no_code10: bool) {
    // (Armv7E-M: the SMLAD kernel needs no tables, and nothing is shared.)
    // (Size-first: one matrix at a time, no tables.)
    if cfg!(any(atome_dsp, atome_small)) {
        for j in jobs.iter_mut() {
            matvec_q_accel(acc, j.w, xs, xstride, n, j.out, j.ostride);
        }
        return;
    }
    let shared = match jobs.first() {
        Some(j0) => jobs.iter().all(|j| {
            j.w.packing == Packing::Trit2
                && j.w.cols == j0.w.cols
                && j.w.cols.is_multiple_of(4)
                && (n <= 1 || j.ostride >= j.w.rows)
        }),
        None => return,
    };
    let rows: usize = jobs.iter().map(|j| j.w.rows).fold(0, usize::saturating_add);
    if shared && !acc.avx2() && rows >= TABLE_MIN_ROWS && n > 0 {
        return trit2_tables(jobs, xs, xstride, n);
    }
    for j in jobs.iter_mut() {
        accel_checked(acc, j.w, xs, xstride, n, j.out, j.ostride, no_code10);
    }
}

/// The kernels every target has (the tables, else decode-once), without
/// the AVX2 path: what microcontrollers run, callable on any host.
pub fn matvec_q_portable(w: &Tensor, xs: &[i16], xstride: usize, n: usize, out: &mut [i32], ostride: usize) {
    if n == 0 || w.rows == 0 {
        return;
    }
    if cfg!(atome_small) {
        return matvec_q_small(w, xs, xstride, n, out, ostride);
    }
    if n > 1 && ostride < w.rows {
        return matvec_q_naive(w, xs, xstride, n, out, ostride);
    }
    #[cfg(all(atome_dsp, not(atome_small)))]
    if w.packing == Packing::Trit2 && w.cols.is_multiple_of(4) && dsp::trit2(w, xs, xstride, n, out, ostride) {
        return;
    }
    if w.packing == Packing::Trit2 && w.cols.is_multiple_of(4) && w.rows >= TABLE_MIN_ROWS {
        trit2_tables(&mut [MvJobQ { w, out, ostride }], xs, xstride, n)
    } else {
        decode_once(w, xs, xstride, n, out, ostride)
    }
}

/// Size-first's matvec: Trit2 rows of whole bytes by a pair table per
/// byte of columns (t[c] = w(c & 3) x0 + w(c >> 2) x1 for each pair of
/// the byte's four columns, shared by every row), any other shape or
/// packing by [`matvec_q_naive`]. Out of line: one copy for every caller.
#[cfg_attr(not(atome_small), allow(dead_code))]
#[inline(never)]
fn matvec_q_small(w: &Tensor, xs: &[i16], xstride: usize, n: usize, out: &mut [i32], ostride: usize) {
    let cols = w.cols;
    let rb = cols / 4;
    if w.packing != Packing::Trit2 || rb == 0 || !cols.is_multiple_of(4) || w.data.len() < w.rows * rb || (n > 1 && ostride < w.rows) {
        return matvec_q_naive(w, xs, xstride, n, out, ostride);
    }
    const W: [i32; 4] = [0, 1, 0, -1];
    for b in 0..n {
        let x = xs.get(b * xstride..).unwrap_or(&[]);
        let o = out.get_mut(b * ostride..).unwrap_or(&mut []);
        let m = o.len().min(w.rows);
        let o = &mut o[..m];
        o.fill(0);
        for q in 0..rb {
            let mut t = [0i32; 32];
            for (p, tp) in t.chunks_exact_mut(16).enumerate() {
                let xv = |i: usize| i32::from(x.get(4 * q + 2 * p + i).copied().unwrap_or(0));
                let (x0, x1) = (xv(0), xv(1));
                for (c, e) in tp.iter_mut().enumerate() {
                    *e = W[c & 3] * x0 + W[c >> 2] * x1;
                }
            }
            for (oj, row) in o.iter_mut().zip(w.data.chunks_exact(rb)) {
                let by = usize::from(row.get(q).copied().unwrap_or(0));
                *oj = oj.wrapping_add(t[by & 15]).wrapping_add(t[16 + (by >> 4)]);
            }
        }
    }
}

/// The plain definition of [`matvec_q`]: the oracle of its differential tests.
/// (Out of line: the fast kernels' fallback, its buffer not in their frames.)
#[inline(never)]
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

/// How many of the positions 0..n start inside a buffer of `len` values
/// (`stride` apart): b * stride cannot overflow for those, so the loops
/// below multiply without a checked (on ARMv6-M: library) multiply.
#[inline]
fn inside(n: usize, stride: usize, len: usize) -> usize {
    if len == 0 {
        return 0;
    }
    // One position (the usual call) starts at 0: no division (a library
    // call on ARMv6-M, several per matvec call).
    if n <= 1 {
        return n;
    }
    match (len - 1).checked_div(stride) {
        Some(q) => n.min(q + 1),
        None => n, // stride 0: every position starts at 0
    }
}

/// `a.checked_mul(b)`. On ARMv6-M a checked multiply is a 64-bit library
/// product, so a plain one is taken when both are below 2^16; elsewhere it
/// is one `UMULL` or `MULHU` and a test.
#[inline]
pub(super) fn mul_small(a: usize, b: usize) -> Option<usize> {
    if cfg!(atome_armv6m) && (a | b) >> 16 == 0 {
        Some(a * b)
    } else {
        a.checked_mul(b)
    }
}

/// Position b's inputs, cut to `cols` (shorter when `xs` ends first); `xn`
/// = [`inside`]`(n, xstride, xs.len())`.
#[inline]
fn x_row(xs: &[i16], b: usize, xstride: usize, cols: usize, xn: usize) -> &[i16] {
    if b >= xn {
        return &[];
    }
    let row = xs.get(b * xstride..).unwrap_or(&[]);
    &row[..row.len().min(cols)]
}

/// Position b's outputs: `out[b*ostride..]`, at most `rows` long (empty
/// when `out` ends first); `on` = [`inside`]`(n, ostride, out.len())`.
#[inline]
fn out_row(out: &mut [i32], b: usize, ostride: usize, rows: usize, on: usize) -> &mut [i32] {
    if b >= on {
        return &mut [];
    }
    let row = match out.get_mut(b * ostride..) {
        Some(r) => r,
        None => return &mut [],
    };
    let m = row.len().min(rows);
    &mut row[..m]
}

/// Decode-once kernel: any packing, any shape (outputs must not overlap).
fn decode_once(w: &Tensor, xs: &[i16], xstride: usize, n: usize, out: &mut [i32], ostride: usize) {
    let cols = w.cols;
    let (xn, on) = (inside(n, xstride, xs.len()), inside(n, ostride, out.len()));
    let mut codes = [0i8; BLOCK];
    for j in 0..w.rows {
        let mut c0 = 0;
        loop {
            let len = (cols - c0).min(BLOCK);
            w.decode(j * cols + c0, &mut codes[..len]);
            for b in 0..on {
                let o = match out_row(out, b, ostride, w.rows, on).get_mut(j) {
                    Some(o) => o,
                    None => continue,
                };
                let x = x_row(xs, b, xstride, cols, xn).get(c0..).unwrap_or(&[]);
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

/// Four pair tables, code-major: `t[c0 + 4*c1][p] = w(c0)*x[2p] + w(c1)*x[2p+1]`
/// with the Trit2 code values w = [0, 1, 0, -1]. Code-major, so that the
/// entries a row reads for one byte are `base + 16*nibble + constant`: one
/// base register for all four tables (ARMv6-M has eight low registers).
type Tables = [[i32; PAIRS]; 16];

/// The tables of columns c0..c0+CHUNK of one position (x past its end: 0, so
/// codes read past a row's last column add nothing). `t` must start all
/// zero (entries 0, 2, 8, 10 are never written).
#[inline]
fn build_tables(t: &mut Tables, x: &[i16], c0: usize) {
    #[cfg(all(atome_armv6m, not(atome_small)))]
    if let Some(xc) = x.get(c0..c0 + CHUNK) {
        build_tables_t1(t, xc);
        return;
    }
    // p indexes both the columns of x and the tables.
    #[allow(clippy::needless_range_loop)]
    for p in 0..PAIRS {
        let x0 = x.get(c0 + 2 * p).map_or(0, |&v| i32::from(v));
        let x1 = x.get(c0 + 2 * p + 1).map_or(0, |&v| i32::from(v));
        let (n0, n1) = (x0.wrapping_neg(), x1.wrapping_neg());
        let (a, b, c, d) = (x0.wrapping_add(x1), n0.wrapping_add(x1), x0.wrapping_add(n1), n0.wrapping_add(n1));
        let put = |t: &mut Tables, nib: usize, v: i32| {
            let (r, c) = slot(nib, p);
            t[r][c] = v;
        };
        // Spelled out: the size profile does not unroll loops. Index
        // c0 + 4*c1; codes 0 and 2 are the weight 0, so entries 0, 2, 8
        // and 10 are 0 for every x: set once by the caller.
        put(t, 1, x0);
        put(t, 3, n0);
        put(t, 4, x1);
        put(t, 5, a);
        put(t, 6, x1);
        put(t, 7, b);
        put(t, 9, x0);
        put(t, 11, n0);
        put(t, 12, n1);
        put(t, 13, c);
        put(t, 14, n1);
        put(t, 15, d);
    }
}

/// Whether the row loop stores (rather than adds to) the sums of a
/// position's first chunk, so that the caller need not zero the outputs
/// first (ARMv6-M, whose zeroing is a library call per job).
const STORE_FIRST: bool = cfg!(all(atome_armv6m, not(atome_small)));

/// Four Trit2 codes (one payload byte, byte K of a chunk) against pair
/// tables 2K and 2K+1.
#[inline(always)]
fn byte_sum<const K: usize>(t: &Tables, b: u8) -> i32 {
    let (r0, c0) = slot((b & 15) as usize, 2 * K);
    let (r1, c1) = slot((b >> 4) as usize, 2 * K + 1);
    t[r0][c0].wrapping_add(t[r1][c1])
}

/// The Thumb-2 row loop (`thumb2::rows_jobs`: Cortex-M3, M33) reads the
/// paged layout, the others the code-major one.
const PAGED: bool = cfg!(all(all(atome_thumb2, not(atome_small)), not(all(atome_dsp, not(atome_small)))));

/// Where the entry of nibble `nib` (codes c0 + 4*c1) of pair table `p`
/// lives. Code-major: `t[nib][p]`, byte offset 16*nib + 4*p (ARMv6-M's
/// loop adds a nibble times 16 to one base and reads at a small
/// immediate). Paged: the two tables of byte K (pairs 2K, 2K+1) in 128
/// bytes, offset 128*K + 8*nib + 4*(p % 2), so that Thumb-2's
/// `LDR r, [base, nib, LSL #3]` reads an entry right after `UBFX`.
#[inline(always)]
const fn slot(nib: usize, p: usize) -> (usize, usize) {
    if PAGED {
        let f = (p / 2) * 32 + nib * 2 + p % 2;
        (f / 4, f % 4)
    } else {
        (nib, p)
    }
}

/// The CHUNK codes of a row from its CBYTES bytes (the bounds-checked
/// path; the row loops below spell the bytes out).
#[inline(always)]
fn chunk_sum(t: &Tables, b: [u8; CBYTES]) -> i32 {
    if CBYTES == 2 {
        return byte_sum::<0>(t, b[0]).wrapping_add(byte_sum::<1>(t, b[CBYTES - 1]));
    }
    let mut s = 0i32;
    for (k, &v) in b.iter().enumerate() {
        let (r0, c0) = slot((v & 15) as usize, 2 * k);
        let (r1, c1) = slot((v >> 4) as usize, 2 * k + 1);
        s = s.wrapping_add(t[r0][c0]).wrapping_add(t[r1][c1]);
    }
    s
}

/// Adds, for every output row, its next CHUNK codes (CBYTES bytes from
/// `data[at..]`, then `step` bytes further per row; bytes past the end of
/// `data`: the zero code) against the tables.
///
/// `whole`: the caller checked, once per call, that every row's bytes of
/// every chunk are inside `data` (a multiply per chunk is a library call
/// on ARMv6-M).
#[inline(always)]
fn add_rows(t: &Tables, data: &[u8], at: usize, step: usize, out: &mut [i32], whole: bool, first: bool) {
    let step = step.max(1);
    // All rows inside the payload (the usual case): no per-row checks.
    if let (true, Some(d)) = (whole, data.get(at..)) {
        #[cfg(all(atome_armv6m, not(atome_small)))]
        if first {
            rows_thumb::<true>(t, d, step, out);
        } else {
            rows_thumb::<false>(t, d, step, out);
        }
        #[cfg(all(all(atome_thumb2, not(atome_small)), not(all(atome_dsp, not(atome_small)))))]
        if d.len() >= CBYTES {
            let mut descs = [thumb2::RowsDesc::new(out, d.as_ptr()), thumb2::RowsDesc::END];
            // SAFETY: out is one slice; row j < out.len() reads CBYTES
            // bytes at d + j * step, inside d (the caller's `whole` check:
            // d holds (out.len() - 1) * step + CBYTES bytes); the outputs
            // are initialized (zeroed by the caller on this target).
            unsafe { thumb2::rows_jobs(t, &mut descs, step, false) };
        }
        #[cfg(not(all(all(target_arch = "arm", not(atome_small)), not(all(atome_dsp, not(atome_small))))))]
        rows_whole(t, d, step, out);
        return;
    }
    if STORE_FIRST && first && whole {
        // (Not zeroed by the caller; never so in fact: `whole` keeps
        // data.get(at..) inside.)
        out.fill(0);
    }
    let mut rest = data.get(at..).unwrap_or(&[]);
    for o in out.iter_mut() {
        let byte = |k: usize| rest.get(k).copied().unwrap_or(0);
        *o = o.wrapping_add(chunk_sum(t, core::array::from_fn(byte)));
        rest = rest.get(step..).unwrap_or(&[]);
    }
}

/// [`add_rows`]'s usual case: `d` holds (out.len() - 1) * step + 2 bytes
/// at least.
#[cfg(not(all(all(target_arch = "arm", not(atome_small)), not(all(atome_dsp, not(atome_small))))))]
#[inline(always)]
fn rows_whole(t: &Tables, d: &[u8], step: usize, out: &mut [i32]) {
    let mut p = d.as_ptr();
    for o in out.iter_mut() {
        // SAFETY: row j (< out.len()) reads d[j*step .. j*step + 2], inside
        // d (the caller's `whole` check). Checked slices would add compares
        // per row to a loop of about 30 instructions.
        let (a, b) = unsafe { (*p, *p.add(1)) };
        // Bytes, not a halfword: a byte splits into two 4-bit indexes for
        // free.
        *o = o.wrapping_add(byte_sum::<0>(t, a).wrapping_add(byte_sum::<1>(t, b)));
        p = p.wrapping_add(step);
    }
}

/// `t` zeroed in place. On ARMv6-M and Thumb-2 by `STMIA` of four zero
/// registers, 16 bytes an instruction (the library's memset took about 130
/// instructions for ARMv6-M's 512 bytes, on every table matvec call).
#[inline(always)]
fn zero_tables(t: &mut core::mem::MaybeUninit<Tables>) -> &mut Tables {
    // (Named registers: the list must be in ascending order.)
    #[cfg(any(all(atome_thumb2, not(atome_small)), all(atome_armv6m, not(atome_small))))]
    {
        const STEPS: usize = core::mem::size_of::<Tables>() / 64;
        // SAFETY: writes STEPS * 64 bytes = the whole of t (512 or 256
        // bytes: a multiple of 64), word aligned (an i32 array), four STMIA of 16
        // zero bytes a step. Only the named registers and the flags
        // change; no stack use.
        unsafe {
            core::arch::asm!(
                "movs r1, #0",
                "movs r2, #0",
                "movs r3, #0",
                "movs r4, #0",
                "2:",
                "stmia r0!, {{r1, r2, r3, r4}}",
                "stmia r0!, {{r1, r2, r3, r4}}",
                "stmia r0!, {{r1, r2, r3, r4}}",
                "stmia r0!, {{r1, r2, r3, r4}}",
                "subs r5, #1",
                "bne 2b",
                inout("r0") t.as_mut_ptr() => _,
                out("r1") _,
                out("r2") _,
                out("r3") _,
                out("r4") _,
                inout("r5") STEPS => _,
                options(nostack),
            );
            // SAFETY: every byte was written (zero: a valid i32 array).
            t.assume_init_mut()
        }
    }
    #[cfg(not(any(all(atome_thumb2, not(atome_small)), all(atome_armv6m, not(atome_small)))))]
    t.write([[0; PAIRS]; 16])
}

/// Jobs sharing one set of tables per pass (their output counts live on
/// the stack, in the deepest frame of a q15 position): the engine's
/// largest group, the key, value, router and query projections.
const MAX_JOBS: usize = 4;

/// Table kernel: Trit2 matrices of one width, `cols % 4 == 0` (every row
/// starts on a byte), outputs not overlapping. Not inlined: the tables
/// stay out of the frames of its callers (on Armv7E-M the SMLAD kernel
/// runs instead, and `matvec_q_portable` need not carry them).
#[inline(never)]
fn trit2_tables(jobs: &mut [MvJobQ], xs: &[i16], xstride: usize, n: usize) {
    for group in jobs.chunks_mut(MAX_JOBS) {
        trit2_tables_group(group, xs, xstride, n);
    }
}

/// [`trit2_tables`] for at most [`MAX_JOBS`] jobs.
fn trit2_tables_group(jobs: &mut [MvJobQ], xs: &[i16], xstride: usize, n: usize) {
    let cols = match jobs.first() {
        Some(j) => j.w.cols,
        None => return,
    };
    let mut tm = core::mem::MaybeUninit::<Tables>::uninit();
    let t = zero_tables(&mut tm);
    let xn = inside(n, xstride, xs.len());
    let mut on = [0usize; MAX_JOBS];
    for (o, j) in on.iter_mut().zip(jobs.iter()) {
        *o = inside(n, j.ostride, j.out.len());
    }
    // Whether every row of a job is inside its payload: row j reads bytes
    // j*bpr + at .. + CBYTES for chunk offsets at <= last (the last chunk's).
    let (bpr, last_at) = (cols / 4, cols.saturating_sub(1) / CHUNK * CBYTES);
    let mut whole = [false; MAX_JOBS];
    for (f, j) in whole.iter_mut().zip(jobs.iter()) {
        let need = j.w.rows.checked_sub(1).and_then(|r| mul_small(r, bpr)).and_then(|v| v.checked_add(last_at + CBYTES));
        *f = need.is_some_and(|e| e <= j.w.data.len());
    }
    // Positions past every job's outputs write nothing.
    let last = on.iter().copied().max().unwrap_or(0);
    // Armv7-M / Armv8-M Mainline, every row whole, every position's
    // inputs there and every chunk full: tables and rows in asm, one row
    // loop call per chunk for all the jobs.
    #[cfg(all(all(atome_thumb2, not(atome_small)), not(all(atome_dsp, not(atome_small)))))]
    if cols.is_multiple_of(CHUNK)
        && whole.iter().take(jobs.len()).all(|&f| f)
        && last.checked_sub(1).is_none_or(|b| b.checked_mul(xstride).and_then(|v| v.checked_add(cols)).is_some_and(|e| e <= xs.len()))
    {
        for b in 0..last {
            let x = x_row(xs, b, xstride, cols, xn);
            let mut descs = [thumb2::RowsDesc::END; MAX_JOBS + 1];
            for ((d, j), &jn) in descs.iter_mut().zip(jobs.iter_mut()).zip(&on) {
                *d = thumb2::RowsDesc::new(out_row(j.out, b, j.ostride, j.w.rows, jn), j.w.data.as_ptr());
            }
            for (k, xc) in x.chunks_exact(CHUNK).enumerate() {
                thumb2::build_tables(t, xc);
                // SAFETY: each job's rows are out_row's slice of its own
                // `out` (distinct jobs: distinct slices), at most w.rows
                // long, and `whole` showed every row's bytes of every
                // chunk inside w.data; the descriptors advance the codes
                // by one chunk per call, and this loop makes cols / CHUNK
                // calls, the first with `first` (nothing read).
                unsafe { thumb2::rows_jobs(t, &mut descs, bpr, k == 0) };
            }
        }
        return;
    }
    for b in 0..last {
        let x = x_row(xs, b, xstride, cols, xn);
        for ((j, &jn), &f) in jobs.iter_mut().zip(&on).zip(&whole) {
            // (The ARMv6-M row loop stores the first chunk's sums.)
            if !(STORE_FIRST && f) {
                for o in out_row(j.out, b, j.ostride, j.w.rows, jn) {
                    *o = 0;
                }
            }
        }
        let mut c0 = 0;
        while c0 < cols {
            build_tables(t, x, c0);
            for ((j, &jn), &f) in jobs.iter_mut().zip(&on).zip(&whole) {
                let ob = out_row(j.out, b, j.ostride, j.w.rows, jn);
                add_rows(t, j.w.data, c0 / 4, bpr, ob, f, c0 == 0);
            }
            c0 += CHUNK;
        }
    }
}
