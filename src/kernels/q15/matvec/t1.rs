//! The table kernel's ARMv6-M code (Cortex-M0/M0+), in asm: a chunk's
//! tables built by stores at immediate offsets, and the rows of a chunk
//! read against them (Thumb-1 reaches only eight low registers, which
//! LLVM's loops spill).
use super::{Tables, CBYTES, CHUNK};

/// [`super::build_tables`] for a whole chunk on ARMv6-M, in asm: per pair, the
/// two activations, their sums and negations, and the twelve stores at
/// immediate offsets from four bases (code-major rows of 32 bytes; a
/// Thumb-1 store reaches 124 bytes): 34 instructions a pair where LLVM's
/// loop took 40 computing each address.
#[cfg(all(atome_armv6m, not(atome_small)))]
#[inline(always)]
pub(super) fn build_tables_t1(t: &mut Tables, x: &[i16]) {
    if x.len() < CHUNK {
        return;
    }
    // SAFETY: PAIRS steps: reads x[2p], x[2p + 1] (x holds CHUNK = 2 *
    // PAIRS int16, halfword aligned), writes the words at t + 4p + 32 nib
    // for the twelve nibbles other than 0, 2, 8, 10 (inside the 512-byte
    // tables: 4p + 32 nib <= 28 + 480), stopping when the x pointer
    // reaches x + CHUNK. Only the named registers and the flags change; no
    // stack use.
    unsafe {
        core::arch::asm!(
            "mov r8, r4",
            "2:",
            "ldrh r2, [r0, #0]",
            "sxth r2, r2",
            "ldrh r3, [r0, #2]",
            "sxth r3, r3",
            // Nibbles 0-3 (base t + 4p): 1 = x0, 3 = -x0.
            "str r2, [r1, #32]",
            "negs r4, r2",
            "str r4, [r1, #96]",
            // Nibbles 8-11 (base + 256): 9 = x0, 11 = -x0.
            "movs r5, #255",
            "adds r5, #1",
            "adds r5, r5, r1",
            "str r2, [r5, #32]",
            "str r4, [r5, #96]",
            // Nibbles 4-7 (base + 128): 4 = x1, 5 = x0 + x1, 6 = x1,
            // 7 = x1 - x0.
            "subs r5, #128",
            "str r3, [r5, #0]",
            "str r3, [r5, #64]",
            "adds r4, r2, r3",
            "str r4, [r5, #32]",
            "subs r4, r3, r2",
            "str r4, [r5, #96]",
            // Nibbles 12-15 (base + 384): 12 = -x1, 13 = x0 - x1, 14 = -x1,
            // 15 = -x0 - x1.
            "adds r5, #255",
            "adds r5, #1",
            "negs r4, r3",
            "str r4, [r5, #0]",
            "str r4, [r5, #64]",
            "subs r4, r2, r3",
            "str r4, [r5, #32]",
            "adds r4, r2, r3",
            "negs r4, r4",
            "str r4, [r5, #96]",
            "adds r0, #4",
            "adds r1, #4",
            "cmp r0, r8",
            "bne 2b",
            inout("r0") x.as_ptr() => _,
            inout("r1") t.as_mut_ptr() => _,
            out("r2") _,
            out("r3") _,
            inout("r4") x.as_ptr().wrapping_add(CHUNK) => _,
            out("r5") _,
            out("r8") _,
            options(nostack),
        );
    }
}

/// [`rows_thumb`]'s loop; `$first` "1": the sums start at 0 (the
/// position's first chunk, stored), "0": they are loaded and added to.
#[cfg(all(atome_armv6m, not(atome_small)))]
macro_rules! rows_t1_asm {
    ($first:literal, $o:ident, $d:ident, $t:ident, $n:expr, $step:ident) => {
        core::arch::asm!(
            // Step and end to high registers (six low ones are all the
            // allocator has here; Thumb-1 takes high registers only as
            // clobbers); ADD and CMP read them.
            "mov r8, r5",
            "mov r10, r4",
            "2:",
            // The sum so far (FIRST: none, stored rather than added to).
            concat!(".if ", $first),
            "movs r3, #0",
            ".else",
            "ldr r3, [r0]",
            ".endif",
            // Byte 0's low nibble (pair 0): t + 32*nibble.
            "ldrb r4, [r1]",
            "lsls r5, r4, #28",
            "lsrs r5, r5, #23",
            "ldr r5, [r2, r5]",
            "adds r3, r3, r5",
            ".irp k, 0, 1, 2, 3",
            ".if \\k",
            "ldrb r4, [r1, #\\k]",
            // Low nibble: pair 2k, at t + 32*nibble + 8k.
            "lsls r5, r4, #28",
            "lsrs r5, r5, #23",
            "adds r5, r5, r2",
            "ldr r5, [r5, #8*\\k]",
            "adds r3, r3, r5",
            ".endif",
            // High nibble: pair 2k + 1.
            "lsrs r4, r4, #4",
            "lsls r4, r4, #5",
            "adds r4, r4, r2",
            "ldr r4, [r4, #8*\\k+4]",
            "adds r3, r3, r4",
            ".endr",
            "stmia r0!, {{r3}}",
            "add r1, r8",
            "cmp r0, r10",
            "bne 2b",
            // Registers named (r0 out, r1 codes, r2 tables, r3 sum, r4
            // and r5 scratch): STMIA's Thumb-1 form needs a low base.
            inout("r0") $o => _,
            inout("r1") $d.as_ptr() => _,
            in("r2") $t.as_ptr(),
            out("r8") _,
            out("r10") _,
            out("r3") _,
            inout("r4") $o.wrapping_add($n) => _,
            inout("r5") $step => _,
            options(nostack),
        );
    };
}

/// [`super::add_rows`]'s usual case on ARMv6-M (Cortex-M0/M0+/M1: the Arm cores
/// without 32-bit atomics, hence the cfg): 48 instructions per row and
/// chunk of 16 weights (four bytes, eight table reads) where LLVM's code
/// for the same loop spills and reloads. `d` holds (out.len() - 1) * step
/// + 4 bytes at least.
#[cfg(all(atome_armv6m, not(atome_small)))]
#[inline(always)]
pub(super) fn rows_thumb<const FIRST: bool>(t: &Tables, d: &[u8], step: usize, out: &mut [i32]) {
    if out.is_empty() || d.len() < CBYTES {
        return;
    }
    let o = out.as_mut_ptr();
    let n = out.len();
    // SAFETY: row j (< out.len()) reads bytes d[j*step .. j*step + 4]
    // (j*step + 4 <= d.len(), as the caller cut d), and the table entries
    // at t + 32*nibble + 4*p (nibble < 16, p < 8: inside the 512-byte
    // tables); it reads (unless FIRST) and then writes out[j] (the loop
    // stops when the pointer reaches out's end; out is not empty). Word
    // loads from t and out are aligned (i32 arrays). Only the named
    // registers and the flags change; no stack use.
    unsafe {
        if FIRST {
            rows_t1_asm!("1", o, d, t, n, step);
        } else {
            rows_t1_asm!("0", o, d, t, n, step);
        }
    }
}
