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
mod avx8;
mod kernel;
mod packers;

pub use avx8::with_avx8;
use core::arch::x86_64::*;
use kernel::run;
use packers::{Base3, Trit2Aligned, Trit2Any, P3};

use crate::format::{Packing, Tensor};
use crate::kernels::job::MvJob;

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
            Packing::Trit2 if cols.is_multiple_of(4) => run::<Trit2Aligned>(core::slice::from_mut(&mut cx), n),
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
pub fn matvec_multi_with(cpu: Avx2, jobs: &mut [MvJob], xs: &[f32], xstride: usize, n: usize) -> bool {
    let _ = cpu;
    let Some(first) = jobs.first() else { return true };
    let (packing, cols) = (first.w.packing, first.w.cols);
    if jobs.len() > MAXJ
        || !jobs.iter().all(|j| j.w.packing == packing && j.w.cols == cols && supported(j.w, xs, xstride, n, j.out.len(), j.ostride))
    {
        return false;
    }
    fn cx<'a, 'b>(j: &'b mut MvJob<'a>, xs: &'b [f32], xstride: usize) -> Cx<'a, 'b> {
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
                    Packing::Trit2 if cols.is_multiple_of(4) => run::<Trit2Aligned>(cxs, n),
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
