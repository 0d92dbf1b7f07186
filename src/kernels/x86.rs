//! x86-64 fast paths (chosen at run time). Returns false when not applicable.
//!
//! AVX2 batched matvec, bit-exact with the portable path: every (row, vector)
//! pair still adds its terms one at a time in column order; the SIMD lanes are
//! 8 different ROWS, never 8 columns of one row.
//!
//! * For each column i and input vector x, an 8-float table is built on the
//!   stack (column chunks, 16 KiB at most) with the value each weight code
//!   selects: Trit2/Base3 `[+0, x, +0, -x, +0, x, +0, -x]` (2-bit code; bit 2
//!   of the index is the next code's low bit, hence the duplicated half), P3
//!   `[+0, x, -x, 3x, -(3x), 9x, -(9x), +0]` (3-bit code, P3_WEIGHTS order).
//!   Adding +0.0 for a zero weight is the same as skipping it (the
//!   accumulator starts at +0.0 and so is never -0.0), and `acc + (-x)`
//!   equals `acc - x` (up to the sign of a NaN); `-(3x)` is `(-3.0) * x`.
//! * For 8 rows at a time, one 32-bit word per row holds the codes of the next
//!   STEP columns, lowest bits first: a byte gather (vpgatherdd) at each row's
//!   own offset, then per-lane shifts for rows that do not start on a byte
//!   (Trit2 with cols % 4 != 0, P3) or a base-3 to 2-bit expansion through a
//!   256-entry table (Base3). Per column: `vpermps(table, word)` gives each
//!   row's term, one `vaddps` per input vector, `word >>= bits`.
//! * Rows past the end of the matrix (last group) repeat the last row and are
//!   not written back; a word that would be read past the end of the payload
//!   is assembled from single bytes instead (its bytes past the end only hold
//!   codes of columns that are never used).
//!
//! The CPU check (cpuid, xgetbv) is done on every call (no global state), or
//! once by the caller through [`Avx2`].
use core::arch::x86_64::*;
use core::mem::MaybeUninit;

use crate::format::{Packing, Tensor};

/// Input vectors per pass (accumulators live in registers).
const MAXB: usize = 8;
/// Column tables per chunk (32 bytes each: 16 KiB on the stack).
const TABS: usize = 512;
/// Matrices sharing one set of tables.
const MAXJ: usize = 4;

/// AVX2 batched matvec; false when the CPU or the shape does not allow it.
///
/// Detects the CPU on every call (two cpuid and one xgetbv, only once the
/// shape is known to be supported). cpuid is cheap on hardware but traps to
/// the hypervisor in some VMs (tens of microseconds there): a caller with a
/// place to keep it can detect once with [`Avx2::detect`] and call
/// [`matvec_batch_with`].
pub fn matvec_batch(w: &Tensor, xs: &[f32], xstride: usize, n: usize, out: &mut [f32], ostride: usize) -> bool {
    if !supported(w, xs, xstride, n, out.len(), ostride) {
        return false;
    }
    match Avx2::detect() {
        Some(cpu) => matvec_batch_with(cpu, w, xs, xstride, n, out, ostride),
        None => false,
    }
}

/// Proof that AVX2 can be used here: the CPU has it and the OS saves the YMM
/// state. Only [`Avx2::detect`] makes one.
#[derive(Clone, Copy, Debug)]
pub struct Avx2(());

impl Avx2 {
    /// cpuid + xgetbv (cost: see [`matvec_batch`]); None without AVX2.
    pub fn detect() -> Option<Avx2> {
        if has_avx2() {
            Some(Avx2(()))
        } else {
            None
        }
    }
}

/// As [`matvec_batch`], with the CPU already checked.
pub fn matvec_batch_with(cpu: Avx2, w: &Tensor, xs: &[f32], xstride: usize, n: usize, out: &mut [f32], ostride: usize) -> bool {
    let _ = cpu;
    if !supported(w, xs, xstride, n, out.len(), ostride) {
        return false;
    }
    let cols = w.cols;
    let mut cx = Cx {
        data: w.data,
        rows: w.rows,
        cols,
        scale: w.scale,
        xs,
        xstride,
        out,
        ostride,
    };
    // SAFETY: AVX2 is available (the `Avx2` token); `supported` checked the
    // preconditions documented on `run`.
    unsafe {
        match w.packing {
            Packing::Trit2 if cols % 4 == 0 => run::<Trit2Aligned>(core::slice::from_mut(&mut cx), n),
            Packing::Trit2 => run::<Trit2Any>(core::slice::from_mut(&mut cx), n),
            Packing::Base3 => run::<Base3>(core::slice::from_mut(&mut cx), n),
            Packing::P3 => run::<P3>(core::slice::from_mut(&mut cx), n),
        }
    }
    true
}

/// Several matrices of the same packing and column count over the same
/// input vectors (`jobs`, at most 4): the per-column tables are built once
/// for all of them. Each job's results are those of [`matvec_batch_with`].
/// False (nothing done) when the CPU check, the shapes or the count do not allow it.
pub fn matvec_multi_with(cpu: Avx2, jobs: &mut [super::matvec::MvJob], xs: &[f32], xstride: usize, n: usize) -> bool {
    let _ = cpu;
    let Some(first) = jobs.first() else { return true };
    let (packing, cols) = (first.w.packing, first.w.cols);
    if jobs.len() > MAXJ
        || !jobs.iter().all(|j| j.w.packing == packing && j.w.cols == cols && supported(j.w, xs, xstride, n, j.out.len(), j.ostride))
    {
        return false;
    }
    fn cx<'a, 'b>(j: &'b mut super::matvec::MvJob<'a>, xs: &'b [f32], xstride: usize) -> Cx<'a, 'b> {
        Cx {
            data: j.w.data,
            rows: j.w.rows,
            cols: j.w.cols,
            scale: j.w.scale,
            xs,
            xstride,
            out: &mut *j.out,
            ostride: j.ostride,
        }
    }
    // SAFETY: AVX2 is available (the `Avx2` token); `supported` checked the
    // preconditions documented on `run` for every job, and all jobs share
    // the packing, the column count and the inputs.
    unsafe {
        macro_rules! go {
            ($cxs:expr) => {{
                let cxs = &mut $cxs;
                match packing {
                    Packing::Trit2 if cols % 4 == 0 => run::<Trit2Aligned>(cxs, n),
                    Packing::Trit2 => run::<Trit2Any>(cxs, n),
                    Packing::Base3 => run::<Base3>(cxs, n),
                    Packing::P3 => run::<P3>(cxs, n),
                }
            }};
        }
        match jobs {
            [a] => go!([cx(a, xs, xstride)]),
            [a, b] => go!([cx(a, xs, xstride), cx(b, xs, xstride)]),
            [a, b, c] => go!([cx(a, xs, xstride), cx(b, xs, xstride), cx(c, xs, xstride)]),
            [a, b, c, d] => go!([cx(a, xs, xstride), cx(b, xs, xstride), cx(c, xs, xstride), cx(d, xs, xstride)]),
            _ => return false,
        }
    }
    true
}

/// The shapes the kernel handles exactly like the portable path; the rest
/// (short payload, inputs or outputs, overlapping outputs, empty or huge
/// matrices) is left to it.
fn supported(w: &Tensor, xs: &[f32], xstride: usize, n: usize, out_len: usize, ostride: usize) -> bool {
    let (rows, cols) = (w.rows, w.cols);
    if n == 0 || rows == 0 || cols == 0 {
        return false;
    }
    // Lane arithmetic is 32-bit: weight numbers times 3 must stay below 2^31.
    let total = match rows.checked_mul(cols) {
        Some(t) if t <= (i32::MAX as usize) / 4 => t,
        _ => return false,
    };
    // Every weight of the tensor present (short payloads read as zeros: portable).
    if w.data.len() < w.packing.payload_len(total) {
        return false;
    }
    // Every input vector complete.
    match (n - 1).checked_mul(xstride).and_then(|v| v.checked_add(cols)) {
        Some(need) if need <= xs.len() => {}
        _ => return false,
    }
    // Every output present, and no two outputs overlapping.
    if n > 1 && ostride < rows {
        return false;
    }
    matches!((n - 1).checked_mul(ostride).and_then(|v| v.checked_add(rows)), Some(need) if need <= out_len)
}

/// AVX2 usable: the CPU has it and the OS saves the YMM state.
fn has_avx2() -> bool {
    if cfg!(target_feature = "avx2") {
        return true;
    }
    // SAFETY: cpuid exists on every x86-64 CPU; leaf 1 always exists.
    // (`unsafe` for toolchains before cpuid became a safe function.)
    #[allow(unused_unsafe)]
    let l1 = unsafe { __cpuid(1) };
    const OSXSAVE: u32 = 1 << 27;
    const AVX: u32 = 1 << 28;
    if l1.ecx & (OSXSAVE | AVX) != (OSXSAVE | AVX) {
        return false;
    }
    // SAFETY: OSXSAVE set, so xgetbv is available and XCR0 readable.
    let xcr0 = unsafe { _xgetbv(0) };
    if xcr0 & 6 != 6 {
        return false; // XMM and YMM state not both enabled by the OS
    }
    // SAFETY: XSAVE support implies leaf 0xD exists, so leaf 7 does too.
    #[allow(unused_unsafe)]
    let l7 = unsafe { __cpuid_count(7, 0) };
    l7.ebx & (1 << 5) != 0
}

/// The call's operands (shapes already checked by `matvec_batch`).
struct Cx<'a, 'b> {
    data: &'a [u8],
    rows: usize,
    cols: usize,
    scale: f32,
    xs: &'b [f32],
    xstride: usize,
    out: &'b mut [f32],
    ostride: usize,
}

/// One packing's way to get a word of codes per row lane.
trait Packer {
    /// Columns per word (a step); STEP * BITS / 8 whole bytes for Trit2/P3.
    const STEP: usize;
    /// Bits per code in a word (2 or 3).
    const BITS: u32;
    /// Payload bytes per step.
    const STRIDE: i32;
    /// Lane state from the weight numbers `t` of each lane's next column.
    unsafe fn lanes(t: __m256i) -> Lanes;
    /// The word of codes from the 4 payload bytes read at the lane offsets.
    unsafe fn word(raw: __m256i, l: &Lanes) -> __m256i;
    /// The 8-float table for input value x.
    unsafe fn table(x: f32) -> __m256;
}

/// Per-group state: byte offsets of the next step's 4 bytes and shifts.
#[derive(Clone, Copy)]
struct Lanes {
    offs: __m256i,
    s1: __m256i,
    s2: __m256i,
}

/// Trit2 with cols % 4 == 0: every row starts on a byte, 16 codes a word.
struct Trit2Aligned;
/// Trit2, any cols: 12 codes a word, shifted per lane by 0..6 bits.
struct Trit2Any;
/// Base3: 15 codes from 4 bytes (phase 0..4), expanded to 2-bit codes.
struct Base3;
/// P3: one continuous little-endian stream of 3-bit codes; 8 a word.
struct P3;

impl Packer for Trit2Aligned {
    const STEP: usize = 16;
    const BITS: u32 = 2;
    const STRIDE: i32 = 4;
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn lanes(t: __m256i) -> Lanes {
        let z = _mm256_setzero_si256();
        Lanes {
            offs: _mm256_srli_epi32::<2>(t),
            s1: z,
            s2: z,
        }
    }
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn word(raw: __m256i, _l: &Lanes) -> __m256i {
        raw
    }
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn table(x: f32) -> __m256 {
        // SAFETY: AVX2 available (caller).
        unsafe { table2(x) }
    }
}

impl Packer for Trit2Any {
    const STEP: usize = 12;
    const BITS: u32 = 2;
    const STRIDE: i32 = 3;
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn lanes(t: __m256i) -> Lanes {
        let bit = _mm256_slli_epi32::<1>(t);
        Lanes {
            offs: _mm256_srli_epi32::<3>(bit),
            s1: _mm256_and_si256(bit, _mm256_set1_epi32(7)),
            s2: _mm256_setzero_si256(),
        }
    }
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn word(raw: __m256i, l: &Lanes) -> __m256i {
        _mm256_srlv_epi32(raw, l.s1)
    }
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn table(x: f32) -> __m256 {
        // SAFETY: AVX2 available (caller).
        unsafe { table2(x) }
    }
}

impl Packer for P3 {
    const STEP: usize = 8;
    const BITS: u32 = 3;
    const STRIDE: i32 = 3;
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn lanes(t: __m256i) -> Lanes {
        let bit = _mm256_add_epi32(t, _mm256_slli_epi32::<1>(t));
        Lanes {
            offs: _mm256_srli_epi32::<3>(bit),
            s1: _mm256_and_si256(bit, _mm256_set1_epi32(7)),
            s2: _mm256_setzero_si256(),
        }
    }
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn word(raw: __m256i, l: &Lanes) -> __m256i {
        _mm256_srlv_epi32(raw, l.s1)
    }
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn table(x: f32) -> __m256 {
        // Index = P3 code: [0, 1, -1, 3, -3, 9, -9, 0]. -(3x) == (-3.0) * x.
        let v = _mm256_mul_ps(_mm256_set1_ps(x), _mm256_setr_ps(1.0, 1.0, 1.0, 3.0, 3.0, 9.0, 9.0, 1.0));
        let v = _mm256_xor_ps(v, _mm256_setr_ps(0.0, 0.0, -0.0, 0.0, -0.0, 0.0, -0.0, 0.0));
        _mm256_and_ps(v, _mm256_castsi256_ps(_mm256_setr_epi32(0, -1, -1, -1, -1, -1, -1, 0)))
    }
}

impl Packer for Base3 {
    const STEP: usize = 15;
    const BITS: u32 = 2;
    const STRIDE: i32 = 3;
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn lanes(t: __m256i) -> Lanes {
        // m = t / 5 (exact for t < 2^32: (t * 0xCCCCCCCD) >> 34), p = t - 5m.
        let magic = _mm256_set1_epi32(0xCCCC_CCCDu32 as i32);
        let even = _mm256_srli_epi64::<34>(_mm256_mul_epu32(t, magic));
        let odd = _mm256_srli_epi64::<34>(_mm256_mul_epu32(_mm256_srli_epi64::<32>(t), magic));
        let m = _mm256_or_si256(even, _mm256_slli_epi64::<32>(odd));
        let p = _mm256_sub_epi32(t, _mm256_mullo_epi32(m, _mm256_set1_epi32(5)));
        let s1 = _mm256_add_epi32(p, p);
        Lanes {
            offs: m,
            s1,
            s2: _mm256_sub_epi32(_mm256_set1_epi32(30), s1),
        }
    }
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn word(raw: __m256i, l: &Lanes) -> __m256i {
        // vpshufb control: byte k of each dword to the dword's low byte, the
        // other three bytes zero (index with the top bit set).
        let sel = _mm256_setr_epi32(-256, -252, -248, -244, -256, -252, -248, -244);
        let e0 = _mm256_shuffle_epi8(raw, sel);
        let e1 = _mm256_shuffle_epi8(raw, _mm256_add_epi32(sel, _mm256_set1_epi32(1)));
        let e2 = _mm256_shuffle_epi8(raw, _mm256_add_epi32(sel, _mm256_set1_epi32(2)));
        let e3 = _mm256_shuffle_epi8(raw, _mm256_add_epi32(sel, _mm256_set1_epi32(3)));
        // SAFETY: every index is a byte (0..=255); each table has 256 entries.
        let (c0, c1, c2, c3) = unsafe {
            (
                _mm256_i32gather_epi32::<4>(B3_CODES.as_ptr() as *const i32, e0),
                _mm256_i32gather_epi32::<4>(B3_CODES_10.as_ptr() as *const i32, e1),
                _mm256_i32gather_epi32::<4>(B3_CODES_20.as_ptr() as *const i32, e2),
                _mm256_i32gather_epi32::<4>(B3_CODES.as_ptr() as *const i32, e3),
            )
        };
        // 30 bits of codes of bytes 0-2 (digits from the lane's phase on),
        // then byte 3's codes above them.
        let lo = _mm256_or_si256(_mm256_or_si256(c0, c1), c2);
        _mm256_or_si256(_mm256_srlv_epi32(lo, l.s1), _mm256_sllv_epi32(c3, l.s2))
    }
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn table(x: f32) -> __m256 {
        // SAFETY: AVX2 available (caller).
        unsafe { table2(x) }
    }
}

/// Table for 2-bit codes: 00 -> +0, 01 -> x, 10 -> +0, 11 -> -x (twice).
///
/// # Safety
/// AVX2 available.
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn table2(x: f32) -> __m256 {
    let v = _mm256_xor_ps(_mm256_set1_ps(x), _mm256_setr_ps(0.0, 0.0, 0.0, -0.0, 0.0, 0.0, 0.0, -0.0));
    _mm256_and_ps(v, _mm256_castsi256_ps(_mm256_setr_epi32(0, -1, 0, -1, 0, -1, 0, -1)))
}

/// Base-3 byte -> its five digits as 2-bit codes (digit 0 -> 11 (-1),
/// 1 -> 00, 2 -> 01), digit k at bits 2k, shifted left by `shift`. Bytes
/// above 242 decode digit by digit exactly like `matvec::decode`.
const fn base3_codes(shift: u32) -> [u32; 256] {
    let mut t = [0u32; 256];
    let mut b = 0;
    while b < 256 {
        let mut v = b as u32;
        let mut w = 0u32;
        let mut k = 0;
        while k < 5 {
            let code = match v % 3 {
                0 => 3,
                1 => 0,
                _ => 1,
            };
            w |= code << (2 * k);
            v /= 3;
            k += 1;
        }
        t[b] = w << shift;
        b += 1;
    }
    t
}

static B3_CODES: [u32; 256] = base3_codes(0);
static B3_CODES_10: [u32; 256] = base3_codes(10);
static B3_CODES_20: [u32; 256] = base3_codes(20);

/// Shift every lane right by BITS (2 or 3).
///
/// # Safety
/// AVX2 available.
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn shift<const BITS: u32>(v: __m256i) -> __m256i {
    if BITS == 3 {
        _mm256_srli_epi32::<3>(v)
    } else {
        _mm256_srli_epi32::<2>(v)
    }
}

/// All n vectors, in passes of 8, 4, 2, 1 vectors.
///
/// # Safety
/// AVX2 available; the shape checks of `matvec_batch` hold.
#[target_feature(enable = "avx2")]
unsafe fn run<P: Packer>(cx: &mut [Cx], n: usize) {
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
    let mut lanes = [Lanes {
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
