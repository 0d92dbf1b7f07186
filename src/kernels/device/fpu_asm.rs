//! The assembly routines of the FPU matvec (fpu.rs) for Cortex-M4F/M7/M33:
//! the four-vector dot product behind `fpu::dot4_quads` and the one-vector
//! rows behind `fpu::rows_quads`. fpu.rs holds their Rust twins, which the
//! host tests run, and the contract each call keeps.


/// After a `tbh [pc, r12, lsl #1]` on a weight byte: the jump table (for
/// each of the 256 bytes the offset of its arm; codes 00 and 10 read as 0,
/// 01 as 1 (add), 11 as 2 (subtract)), then the first of the 81 arms, one
/// per trit pattern, at `.Latome_<p>_<w3><w2><w1><w0>`. The arms' code
/// follows (`\w0`..`\w3` the pattern's digits), closed by [`arms_end`].
macro_rules! trit_arms {
    ($p:literal) => {
        concat!(
            ".Latome_", $p, "_tbl:\n",
            ".irp w3,0,1,0,2\n.irp w2,0,1,0,2\n.irp w1,0,1,0,2\n.irp w0,0,1,0,2\n",
            ".hword (.Latome_", $p, "_\\w3\\w2\\w1\\w0 - .Latome_", $p, "_tbl) / 2\n",
            ".endr\n.endr\n.endr\n.endr\n",
            ".irp w3,0,1,2\n.irp w2,0,1,2\n.irp w1,0,1,2\n.irp w0,0,1,2\n",
            ".Latome_", $p, "_\\w3\\w2\\w1\\w0:",
        )
    };
}

/// Closes the arms of [`trit_arms`] (and the table's repetitions).
macro_rules! arms_end {
    () => {
        ".endr\n.endr\n.endr\n.endr"
    };
}

/// One arm's four terms onto the accumulator `$acc` (the quad in s8-s11).
macro_rules! arm_ops {
    ($acc:literal) => {
        concat!(
            "atome_fpu_op \\w0,", $acc, ",s8\n",
            "atome_fpu_op \\w1,", $acc, ",s9\n",
            "atome_fpu_op \\w2,", $acc, ",s10\n",
            "atome_fpu_op \\w3,", $acc, ",s11",
        )
    };
}

/// Four sums, returned in s0-s3.
/// cbindgen:ignore
#[cfg(atome_fpu)]
#[repr(C)]
pub(super) struct Sums4 {
    pub(super) a0: f32,
    pub(super) a1: f32,
    pub(super) a2: f32,
    pub(super) a3: f32,
}

// Not part of the C API (cbindgen would list it in include/atome.h).
#[allow(unused_doc_comments)]
/// cbindgen:ignore
#[cfg(atome_fpu)]
extern "C" {
    /// s0-s3 = a, r0 = the four input pointers, r1 = w, r2 = nq: see
    /// `fpu::dot4_quads`.
    pub(super) fn atome_fpu_dot4(a0: f32, a1: f32, a2: f32, a3: f32, x: *const *const f32, w: *const u8, nq: usize) -> Sums4;
}

// `fpu::dot4_quads` on Cortex-M4F/M7/M33: as atome_fpu_dot (below) for four
// input vectors at once: per quad one VLDM per vector (s8-s11, s12-s15,
// s16-s19, s20-s23), one weight byte's dispatch, then per nonzero trit four
// VADD/VSUB, one per accumulator (s0-s3).
#[cfg(atome_fpu)]
core::arch::global_asm!(
    ".macro atome_fpu_op4 d, r0, r1, r2, r3",
    ".if \\d == 1",
    "vadd.f32 s0, s0, \\r0",
    "vadd.f32 s1, s1, \\r1",
    "vadd.f32 s2, s2, \\r2",
    "vadd.f32 s3, s3, \\r3",
    ".elseif \\d == 2",
    "vsub.f32 s0, s0, \\r0",
    "vsub.f32 s1, s1, \\r1",
    "vsub.f32 s2, s2, \\r2",
    "vsub.f32 s3, s3, \\r3",
    ".endif",
    ".endm",
    ".section .text.atome_fpu_dot4,\"ax\",%progbits",
    ".global atome_fpu_dot4",
    ".hidden atome_fpu_dot4",
    ".type atome_fpu_dot4,%function",
    ".syntax unified",
    ".thumb",
    ".thumb_func",
    ".fpu fpv4-sp-d16",
    "atome_fpu_dot4:",
    "cbnz r2, 1f",
    "bx lr",
    "1:",
    "push {{r4-r7, lr}}",
    "vpush {{s16-s23}}",
    "ldm r0, {{r4-r7}}",
    "2:",
    "vldmia r4!, {{s8-s11}}",
    "vldmia r5!, {{s12-s15}}",
    "vldmia r6!, {{s16-s19}}",
    "vldmia r7!, {{s20-s23}}",
    "ldrb r12, [r1], #1",
    "tbh [pc, r12, lsl #1]",
    trit_arms!("fpu4"),
    "atome_fpu_op4 \\w0,s8,s12,s16,s20",
    "atome_fpu_op4 \\w1,s9,s13,s17,s21",
    "atome_fpu_op4 \\w2,s10,s14,s18,s22",
    "atome_fpu_op4 \\w3,s11,s15,s19,s23",
    "subs r2, r2, #1",
    "bne 2b",
    "vpop {{s16-s23}}",
    "pop {{r4-r7, pc}}",
    arms_end!(),
    ".size atome_fpu_dot4, . - atome_fpu_dot4",
    ".purgem atome_fpu_op4",
);

// Not part of the C API (cbindgen would list it in include/atome.h).
#[allow(unused_doc_comments)]
/// cbindgen:ignore
#[cfg(atome_fpu)]
extern "C" {
    /// s0 = init, s1 = scale, r0 = x, r1 = w, r2 = nq, r3 = n, then out on
    /// the stack: see `fpu::rows_quads` (n >= 1, nq >= 1).
    pub(super) fn atome_fpu_rows(init: f32, scale: f32, x: *const f32, w: *const u8, nq: usize, n: usize, out: *mut f32);
}

// The one-vector rows of `fpu::rows_quads` on Cortex-M4F/M7/M33, in assembly:
// per weight byte one load of the byte, a TBH on it (256 entries, the
// assembler builds them from the four 2-bit codes: 00 and 10 -> 0, 01 -> +,
// 11 -> -) into 81 arms, one per trit pattern (arm labels name the four
// digits, 0 none, 1 add, 2 subtract, last trit first), and per arm only its
// VADD/VSUB on the accumulator s0 (the quad's inputs in s8-s11, loaded by
// one VLDM), then the loop count; per row the scale and one store. Rows
// go in pairs (arms on s0 for the first, on s1 for the second) sharing the
// input loads and the loop count. Rust
// code for the same arms lets the compiler (opt-level "s") merge their
// common tails into chains of branches, about twice the instructions; and
// rustc gives no register class for a single-precision-only FPU.
// Each VADD.F32/VSUB.F32/VMUL.F32 is the IEEE binary32 operation the
// compiler emits for `a + x` / `a - x` / `a * s`: the same bits, in column
// order.
#[cfg(atome_fpu)]
core::arch::global_asm!(
    ".macro atome_fpu_op d, a, r",
    ".if \\d == 1",
    "vadd.f32 \\a, \\a, \\r",
    ".elseif \\d == 2",
    "vsub.f32 \\a, \\a, \\r",
    ".endif",
    ".endm",
    ".section .text.atome_fpu_rows,\"ax\",%progbits",
    ".global atome_fpu_rows",
    ".hidden atome_fpu_rows",
    ".type atome_fpu_rows,%function",
    ".syntax unified",
    ".thumb",
    ".thumb_func",
    ".fpu fpv4-sp-d16",
    "atome_fpu_rows:",
    "push {{r4-r8, lr}}",
    "ldr r4, [sp, #24]",
    "vmov.f32 s2, s0",
    "vmov.f32 s3, s1",
    "mov r5, r0",
    "mov r6, r3",
    "mov r7, r2",
    // Rows in pairs: row A (s0) from r1, row B (s1) from r8; a last odd
    // row is its own B (that sum is not stored).
    "3:",
    "add r8, r1, r7",
    "cmp r6, #1",
    "it eq",
    "moveq r8, r1",
    "vmov.f32 s0, s2",
    "vmov.f32 s1, s2",
    "mov r0, r5",
    "mov r2, r7",
    "1:",
    "vldmia r0!, {{s8-s11}}",
    "ldrb r12, [r1], #1",
    "tbh [pc, r12, lsl #1]",
    trit_arms!("fpua"),
    arm_ops!("s0"),
    "b 5f",
    arms_end!(),
    "5:",
    "ldrb r12, [r8], #1",
    "tbh [pc, r12, lsl #1]",
    trit_arms!("fpub"),
    arm_ops!("s1"),
    "subs r2, r2, #1",
    "bne 1b",
    "b 4f",
    arms_end!(),
    "4:",
    "vmul.f32 s0, s0, s3",
    "vstmia r4!, {{s0}}",
    "subs r6, r6, #1",
    "beq 6f",
    "vmul.f32 s1, s1, s3",
    "vstmia r4!, {{s1}}",
    "mov r1, r8",
    "subs r6, r6, #1",
    "bne 3b",
    "6:",
    "pop {{r4-r8, pc}}",
    ".size atome_fpu_rows, . - atome_fpu_rows",
    ".purgem atome_fpu_op",
);
