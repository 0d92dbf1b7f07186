//! The matvec's accumulate loop ([`super::soft::run_words`]) in RV32
//! assembly for riscv32imc/imac (no FPU). The Rust twin (`fast_words`)
//! compiles to about 60 instructions per step there; this loop keeps the
//! accumulator, the constants and the loop state in the 15 caller-saved
//! registers and takes a common step in 24. It does exactly what
//! `fast_words` does, case for case (see its comment for the cases and
//! their rounding), and hands every other case back to the Rust step, one
//! entry at a time, with the same contract as the Thumb-1 loop
//! (soft_t1.rs).

/// Runs entries `ents[len-rem ..]` (rem = -neg_rem) on the accumulator
/// `st` = [m6, e - WB] with the input words `words` (see `soft::word`);
/// returns 0 when all are done, else minus the count left, the first of
/// which needs the Rust step. `st` is updated to the sum before it.
///
/// # Safety
/// `ents_end` - rem .. `ents_end` are readable entries (k << 3 | neg, k <
/// SB), `words` has SB readable words, `st` two writable words, rem >= 1;
/// the accumulator holds the invariant of `soft::run_words` (zero, or a
/// normal m6 with e - WB >= 0).
#[cfg(target_arch = "riscv32")]
pub(super) unsafe fn run(st: &mut [i32; 2], neg_rem: i32, ents_end: *const u8, words: &[i32; super::soft::SB]) -> i32 {
    // SAFETY: the caller's contract above; the routine reads only those
    // bytes and words, writes only `st`, uses no stack and only
    // caller-saved registers (the RISC-V calling convention).
    unsafe { atome_soft_run_rv(st.as_mut_ptr(), neg_rem, ents_end, words.as_ptr()) }
}

#[cfg(target_arch = "riscv32")]
extern "C" {
    fn atome_soft_run_rv(st: *mut i32, neg_rem: i32, ents_end: *const u8, words: *const i32) -> i32;
}

// Registers: a0 = st, a1 = the next entry, a2 = end of the entries,
// a3 = the words, t0 = m6 (accumulator mantissa << 6, signed), t1 = its
// exponent - WB, t2 = t, t3 = the exponent of big (off the common path),
// t4 = 31, t5 = 2^29, t6 = 2^29 - 32, a4-a7 scratch (a6 = d through a
// step). m6 and the exponent change only when a step is taken, so a case
// handed back to Rust leaves the sum before it in place. The common step
// (the accumulator big, the sum in its binade, not at a half) falls
// through: 24 instructions.
#[cfg(target_arch = "riscv32")]
core::arch::global_asm!(
    ".section .text.atome_soft_run_rv,\"ax\",@progbits",
    ".global atome_soft_run_rv",
    ".hidden atome_soft_run_rv",
    ".type atome_soft_run_rv,@function",
    ".p2align 2",
    "atome_soft_run_rv:",
    "lw t0, 0(a0)",
    "lw t1, 4(a0)",
    "add a1, a2, a1",
    "li t4, 31",
    "lui t5, 0x20000",
    "addi t6, t5, -32",
    "1:",
    // en = *a1: column << 3 | negate; its word at words + (en >> 1)
    // (bits 1-2 of en are zero, so en >> 1 is column * 4).
    "lbu a4, 0(a1)",
    "srli a5, a4, 1",
    "add a5, a3, a5",
    "lw a5, 0(a5)",
    "andi a7, a5, 63",
    "andi a5, a5, -64",
    "andi a4, a4, 1",
    "beqz a4, 2f",
    "neg a5, a5",
    "2:",
    "sub a6, t1, a7",
    "bltz a6, 3f",
    // d >= 0: the accumulator is big; d > 31: the term is below a quarter
    // of its bit 0, the sum rounds to it.
    "bgt a6, t4, 9f",
    "sra t2, a5, a6",
    "add t2, t0, t2",
    // a = |t| (one's complement for negative t).
    "srai a4, t2, 31",
    "xor a4, t2, a4",
    "sub a5, a4, t5",
    "bgeu a5, t6, 4f",
    // a in [2^29, 2^30 - 32): round at bit 6, the same exponent. Below
    // or above an exact half (t's low six bits not 32), nearest is
    // (t + 32) & -64 (the shifted-out bits, below t's bit 0, cannot move
    // the sum across the half); at a half, ties to even (15:), and a half
    // with bits shifted out (d > 6) goes to Rust.
    "andi a5, t2, 63",
    "addi a5, a5, -32",
    "beqz a5, 15f",
    "addi a5, t2, 32",
    "andi t0, a5, -64",
    "9:",
    "addi a1, a1, 1",
    "bne a1, a2, 1b",
    "j 90f",
    "15:",
    "li a7, 6",
    "bgt a6, a7, 90f",
    "srli a5, t2, 6",
    "andi a5, a5, 1",
    "addi a5, a5, 31",
    "add a5, t2, a5",
    "andi t0, a5, -64",
    "j 9b",
    // d < 0: the term is big (exponent t3); d > 31: the accumulator is zero.
    "3:",
    "neg a6, a6",
    "bgt a6, t4, 8f",
    "sra t2, t0, a6",
    "add t2, a5, t2",
    "mv t3, a7",
    "srai a4, t2, 31",
    "xor a4, t2, a4",
    "sub a5, a4, t5",
    "bgeu a5, t6, 5f",
    // (Rounding as at 15: above.)
    "andi a5, t2, 63",
    "addi a5, a5, -32",
    "beqz a5, 16f",
    "addi a5, t2, 32",
    "andi t0, a5, -64",
    "mv t1, t3",
    "j 9b",
    "16:",
    "li a7, 6",
    "bgt a6, a7, 90f",
    "srli a5, t2, 6",
    "andi a5, a5, 1",
    "addi a5, a5, 31",
    "add a5, t2, a5",
    "andi t0, a5, -64",
    "mv t1, t3",
    "j 9b",
    "8:",
    "mv t0, a5",
    "mv t1, a7",
    "j 9b",
    "4:",
    "mv t3, t1",
    // Off the binade (t3 = big's exponent, a4 = a, t2 = t, a6 = d).
    "5:",
    "srli a5, a4, 30",
    "bnez a5, 6f",
    "srli a5, a4, 28",
    "beqz a5, 7f",
    // a in [2^28, 2^29 - 32): round at bit 5, exponent - 1 (>= 0).
    // (Off a half, nearest is round-half-up: m6 = ((t + 16) << 1) & -64;
    // at a half, 11: as at 15: above.)
    "li a7, 1",
    "bne a5, a7, 90f",
    "bgeu a4, t6, 90f",
    "blez t3, 90f",
    "andi a5, t2, 31",
    "addi a5, a5, -16",
    "beqz a5, 11f",
    "addi a5, t2, 16",
    "slli a5, a5, 1",
    "andi t0, a5, -64",
    "addi t1, t3, -1",
    "j 9b",
    "11:",
    "li a7, 6",
    "bgt a6, a7, 90f",
    "srli a5, t2, 5",
    "andi a5, a5, 1",
    "addi a5, a5, 15",
    "add a5, t2, a5",
    "srai a5, a5, 5",
    "slli t0, a5, 6",
    "addi t1, t3, -1",
    "j 9b",
    // a >= 2^30: round at bit 7, exponent + 1 (<= 155); off a half,
    // m6 = ((t + 64) >> 1) & -64; at a half, 12:.
    "6:",
    "li a7, 154",
    "bgt t3, a7, 90f",
    "andi a5, t2, 127",
    "addi a5, a5, -64",
    "beqz a5, 12f",
    "addi a5, t2, 64",
    "srai a5, a5, 1",
    "andi t0, a5, -64",
    "addi t1, t3, 1",
    "j 9b",
    "12:",
    "li a7, 6",
    "bgt a6, a7, 90f",
    "srli a5, t2, 7",
    "andi a5, a5, 1",
    "addi a5, a5, 63",
    "add a5, t2, a5",
    "srai a5, a5, 7",
    "slli t0, a5, 6",
    "addi t1, t3, 1",
    "j 9b",
    // a < 2^28: more than one leading bit cancelled, so d <= 1 and t is
    // exact: |t| shifted up into [2^29, 2^30) (it is at most 2^28, so at
    // least one shift), x + (-x) = +0.0.
    "7:",
    "beqz t2, 13f",
    "srai a7, t2, 31",
    "xor a5, t2, a7",
    "sub a5, a5, a7",
    "mv a4, t3",
    "14:",
    "slli a5, a5, 1",
    "addi a4, a4, -1",
    "srli a6, a5, 29",
    "beqz a6, 14b",
    "bltz a4, 90f",
    "xor a5, a5, a7",
    "sub t0, a5, a7",
    "mv t1, a4",
    "j 9b",
    "13:",
    "li t0, 0",
    "li t1, -96",
    "j 9b",
    // Done (a1 = a2) or handing the entry at a1 to Rust: minus the count
    // left.
    "90:",
    "sw t0, 0(a0)",
    "sw t1, 4(a0)",
    "sub a0, a1, a2",
    "ret",
    ".size atome_soft_run_rv, . - atome_soft_run_rv",
);
