//! The table kernel's Armv7-M / Armv8-M Mainline code (Cortex-M3, M33:
//! Thumb-2 without the DSP kernel), in asm: the tables of a chunk built by
//! stores at fixed offsets, and every row of every job of a position read
//! against them in one asm loop over job descriptors.
//!
//! Tables use [`super::slot`]'s paged layout: the two pair tables of code
//! byte K in 128 bytes at `t + 128 K`, the entry of nibble `nib` of the
//! even pair at `+ 8 nib`, of the odd pair at `+ 8 nib + 4`, so that one
//! `STRD` writes both and `LDR r, [base, nib, LSL #3]` reads one right
//! after `UBFX`.
use super::{Tables, CBYTES, CHUNK};

/// One job's rows at one position, as the row loop reads them (`LDMIA`
/// loads the first three words): the outputs, the codes of the next chunk
/// (advanced by the loop), where the row pairs end and where the rows end.
/// A descriptor with a null `out` ends the list.
#[repr(C)]
#[derive(Clone, Copy)]
pub(super) struct RowsDesc {
    out: *mut i32,
    codes: *const u8,
    pair_end: *mut i32,
    end: *mut i32,
}

impl RowsDesc {
    /// The end of a descriptor list.
    pub(super) const END: RowsDesc = RowsDesc { out: core::ptr::null_mut(), codes: core::ptr::null(), pair_end: core::ptr::null_mut(), end: core::ptr::null_mut() };

    /// The rows `out` of a job whose codes start at `codes` (row j's chunk
    /// c at `codes + j * step + c * CBYTES`).
    pub(super) fn new(out: &mut [i32], codes: *const u8) -> RowsDesc {
        let n = out.len();
        let o = out.as_mut_ptr();
        RowsDesc { out: o, codes, pair_end: o.wrapping_add(n & !1), end: o.wrapping_add(n) }
    }
}

/// The tables of one chunk (`x`: its CHUNK activations; shorter: nothing
/// written, the caller does not take this path). Per code byte: four
/// activations, their negations and sums, twelve `STRD`s (28 instructions
/// a byte where LLVM's loop took about 100, computing each address).
/// Entries 0, 2, 8 and 10 (weight 0 for both columns) are not written.
#[inline(always)]
pub(super) fn build_tables(t: &mut Tables, x: &[i16]) {
    if x.len() < CHUNK {
        return;
    }
    // SAFETY: reads x[0..8] (CHUNK = 8 int16, checked above); writes the
    // words at t + 128K + 8 nib + {0, 4} for K in 0..2 and the twelve
    // nibbles other than 0, 2, 8, 10: inside the 256-byte tables, word
    // aligned (STRD needs 4). Only the named registers and the flags
    // change; no stack use.
    unsafe {
        core::arch::asm!(
            ".irp k, 0, 1",
            // Pair 2k: (a0, a1), pair 2k + 1: (b0, b1).
            "ldrsh {a0}, [{xp}, #8*\\k]",
            "ldrsh {a1}, [{xp}, #8*\\k+2]",
            "ldrsh {b0}, [{xp}, #8*\\k+4]",
            "ldrsh {b1}, [{xp}, #8*\\k+6]",
            // nib = c0 + 4 c1, weights [0, 1, 0, -1]: 1 and 9 = x0, 4 and
            // 6 = x1, 5 = x0 + x1, 7 = x1 - x0, 13 = x0 - x1.
            "strd {a0}, {b0}, [{tp}, #128*\\k+8]",
            "strd {a0}, {b0}, [{tp}, #128*\\k+72]",
            "strd {a1}, {b1}, [{tp}, #128*\\k+32]",
            "strd {a1}, {b1}, [{tp}, #128*\\k+48]",
            "add {s0}, {a0}, {a1}",
            "add {s1}, {b0}, {b1}",
            "strd {s0}, {s1}, [{tp}, #128*\\k+40]",
            "sub {s0}, {a1}, {a0}",
            "sub {s1}, {b1}, {b0}",
            "strd {s0}, {s1}, [{tp}, #128*\\k+56]",
            "sub {s0}, {a0}, {a1}",
            "sub {s1}, {b0}, {b1}",
            "strd {s0}, {s1}, [{tp}, #128*\\k+104]",
            // 3 and 11 = -x0, 12 and 14 = -x1, 15 = -x0 - x1.
            "rsb {a0}, {a0}, #0",
            "rsb {b0}, {b0}, #0",
            "strd {a0}, {b0}, [{tp}, #128*\\k+24]",
            "strd {a0}, {b0}, [{tp}, #128*\\k+88]",
            "rsb {a1}, {a1}, #0",
            "rsb {b1}, {b1}, #0",
            "strd {a1}, {b1}, [{tp}, #128*\\k+96]",
            "strd {a1}, {b1}, [{tp}, #128*\\k+112]",
            "add {s0}, {a0}, {a1}",
            "add {s1}, {b0}, {b1}",
            "strd {s0}, {s1}, [{tp}, #128*\\k+120]",
            ".endr",
            xp = in(reg) x.as_ptr(),
            tp = in(reg) t.as_mut_ptr(),
            a0 = out(reg) _,
            a1 = out(reg) _,
            b0 = out(reg) _,
            b1 = out(reg) _,
            s0 = out(reg) _,
            s1 = out(reg) _,
            options(nostack),
        );
    }
}

/// Nibbles 1 and 2 of the code halfword in r5 (byte 0's odd pair table at
/// r3, byte 1's even pair table at lr), added to the sum register `$acc`.
macro_rules! mid_nibbles {
    ($acc:literal) => {
        concat!(
            "ubfx r12, r5, #4, #4\n",
            "ldr r12, [r3, r12, lsl #3]\n",
            "add ", $acc, ", r12\n",
            "ubfx r12, r5, #8, #4\n",
            "ldr r12, [lr, r12, lsl #3]\n",
            "add ", $acc, ", r12\n",
        )
    };
}

/// Adds (`FIRST` = 1: stores) every row's next chunk of codes against the
/// tables, for every job of the list at `dp`, and advances each job's
/// codes to its next chunk. `STEP`: the bytes between rows as an
/// immediate (then `r8` is the fourth table base, `tp + 132`), or 0 for
/// `step` in `r8` (one more add per row and chunk).
///
/// # Safety
/// [`rows_jobs`]' contract, with `step` = `STEP` when that is not 0.
#[inline(always)]
unsafe fn rows_jobs_n<const FIRST: usize, const STEP: usize>(tp: *const i32, dp: *mut RowsDesc, step: usize) {
    let r8 = if STEP == 0 { step } else { tp.wrapping_add(33) as usize };
    // SAFETY: the caller's (see rows_jobs).
    unsafe {
        core::arch::asm!(
            // One job: its outputs, codes and pair end; null out: done.
            "1:",
            "ldmia r11!, {{r0, r1, r10}}",
            "cmp r0, #0",
            "beq 9f",
            // The next chunk's codes, for the next call.
            "add r12, r1, #{cb}",
            "str r12, [r11, #-8]",
            "cmp r0, r10",
            "beq 3f",
            // Two rows a pass (codes at r1 and r1 + step): per nibble UBFX
            // (or AND, LSR) and LDR from its table, added to the sum.
            "2:",
            ".if {first}",
            "ldrh r5, [r1]",
            "and r12, r5, #15",
            "ldr r4, [r2, r12, lsl #3]",
            ".else",
            "ldrd r4, r9, [r0]",
            "ldrh r5, [r1]",
            "and r12, r5, #15",
            "ldr r12, [r2, r12, lsl #3]",
            "add r4, r12",
            ".endif",
            mid_nibbles!("r4"),
            "lsr r12, r5, #12",
            ".if {st}",
            "ldr r12, [r8, r12, lsl #3]",
            "add r4, r12",
            "ldrh r5, [r1, #{st}]",
            ".else",
            "add r12, lr, r12, lsl #3",
            "ldr r12, [r12, #4]",
            "add r4, r12",
            "ldrh r5, [r1, r8]",
            ".endif",
            "and r12, r5, #15",
            ".if {first}",
            "ldr r9, [r2, r12, lsl #3]",
            ".else",
            "ldr r12, [r2, r12, lsl #3]",
            "add r9, r12",
            ".endif",
            mid_nibbles!("r9"),
            "lsr r12, r5, #12",
            ".if {st}",
            "ldr r12, [r8, r12, lsl #3]",
            ".else",
            "add r12, lr, r12, lsl #3",
            "ldr r12, [r12, #4]",
            ".endif",
            "add r9, r12",
            "strd r4, r9, [r0], #8",
            ".if {st}",
            "add r1, #2*{st}",
            ".else",
            "add r1, r1, r8, lsl #1",
            ".endif",
            "cmp r0, r10",
            "bne 2b",
            // An odd last row.
            "3:",
            "ldr r12, [r11], #4",
            "cmp r0, r12",
            "beq 1b",
            "ldrh r5, [r1]",
            "and r12, r5, #15",
            ".if {first}",
            "ldr r4, [r2, r12, lsl #3]",
            ".else",
            "ldr r4, [r0]",
            "ldr r12, [r2, r12, lsl #3]",
            "add r4, r12",
            ".endif",
            mid_nibbles!("r4"),
            "lsr r12, r5, #12",
            "add r12, lr, r12, lsl #3",
            "ldr r12, [r12, #4]",
            "add r4, r12",
            "str r4, [r0]",
            "b 1b",
            "9:",
            // r0 out, r1 codes, r2/r3 byte 0's tables (t, t + 4), lr (and
            // r8 with STEP) byte 1's (t + 128, t + 132), r4/r9 sums, r5
            // codes, r8 step (STEP 0), r10 pair end, r11 descriptors, r12
            // scratch.
            cb = const CBYTES,
            first = const FIRST,
            st = const STEP,
            out("r0") _,
            out("r1") _,
            in("r2") tp,
            in("r3") tp.wrapping_add(1),
            inout("lr") tp.wrapping_add(32) => _,
            out("r4") _,
            out("r5") _,
            in("r8") r8,
            out("r9") _,
            out("r10") _,
            inout("r11") dp => _,
            out("r12") _,
            options(nostack),
        );
    }
}

/// Adds (`first`: stores) every row's next chunk of codes against the
/// tables, for every job of `descs` (ended by [`RowsDesc::END`]), and
/// advances each job's codes to its next chunk: per row and chunk of 8
/// weights 15.5 instructions (16.5 for a step other than 8, 16 or 64
/// bytes, the rows of D = 32, 64 and 256), about 8 per job.
///
/// # Safety
/// For every descriptor before the end: its `out..end` is a valid,
/// writable (and, unless `first`, initialized) int32 range, not
/// overlapping the others' nor `descs`; for each of its rows j, the
/// CBYTES bytes at `codes + j * step` are readable. `t` holds the tables.
#[inline(always)]
pub(super) unsafe fn rows_jobs(t: &Tables, descs: &mut [RowsDesc], step: usize, first: bool) {
    if !descs.last().is_some_and(|d| d.out.is_null()) {
        return;
    }
    let tp = t.as_ptr().cast::<i32>();
    let dp = descs.as_mut_ptr();
    // SAFETY: the caller's contract; the list ends at the null descriptor
    // (checked above, inside the slice), whose three words are read. Each
    // descriptor's codes word is rewritten (inside `descs`); the tables
    // are read at t + 8 nib + {0, 4} and t + 128 + 8 nib + {0, 4} (nib <
    // 16: inside the 256 bytes). Only the named registers and the flags
    // change; no stack use.
    unsafe {
        match (first, step) {
            (true, 16) => rows_jobs_n::<1, 16>(tp, dp, step),
            (false, 16) => rows_jobs_n::<0, 16>(tp, dp, step),
            (true, 8) => rows_jobs_n::<1, 8>(tp, dp, step),
            (false, 8) => rows_jobs_n::<0, 8>(tp, dp, step),
            (true, 64) => rows_jobs_n::<1, 64>(tp, dp, step),
            (false, 64) => rows_jobs_n::<0, 64>(tp, dp, step),
            (true, _) => rows_jobs_n::<1, 0>(tp, dp, step),
            (false, _) => rows_jobs_n::<0, 0>(tp, dp, step),
        }
    }
}
