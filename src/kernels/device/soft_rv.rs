//! The matvec's accumulate loop ([`super::soft::run_words`]) in RV32
//! assembly for riscv32imc/imac (no FPU). The Rust twin (`fast_words`)
//! compiles to about 60 instructions per step there; this loop keeps the
//! accumulator, the constants and the loop state in the 15 caller-saved
//! registers and takes a common step in 20 (21 for a negated term). It
//! takes the cases `fast_words` takes (see its comment for the cases and
//! their rounding; here also a in [2^30 - 32, 2^30), below), and hands
//! every other case back to the Rust step, one entry at a time, with the
//! same contract as the Thumb-1 loop (soft_t1.rs).

#[cfg(atome_rv32)]
extern "C" {
    #[link_name = "atome_soft_vec_rv"]
    pub(crate) fn soft_vec(o: *mut f32, nv: usize, ents_end: *const u8, words: *const i32, soft: u32, ostride: usize, neg_rem: i32) -> u64;
    #[link_name = "atome_soft_run_rv"]
    pub(crate) fn soft_run(st: *mut i32, neg_rem: i32, ents_end: *const u8, words: *const i32) -> i32;
    #[link_name = "atome_soft_acc_rv"]
    pub(crate) fn soft_acc(o: *mut f32, neg_rem: i32, ents_end: *const u8, words: *const i32) -> u64;
}

// Registers: a0 = st, a1 = the next entry, a2 = end of the entries,
// a3 = the words, t0 = m6 (accumulator mantissa << 6, signed), t1 = its
// exponent - WB, t2 = t, t3 = 6, t4 = 32, t5 = 2^29, t6 = 2^29 - 32,
// a4-a7 scratch (a7 = the term's exponent - WB, a6 = |d| through a step).
// An entry is column * 4 | negate << 7 (soft::ent): a sign-extending
// load gives the word's offset, minus 128 for a negated term, and its
// sign picks one of two copies of the steps (`atome_rv_side`), so the
// common step takes 20 instructions (21 negated). The cases, with a = |t|
// (one's complement for negative t), as in `fast_words`:
//   a in [2^29, 2^30 - 32): round at bit 6, big's exponent;
//   a >= 2^30 - 32:         round at bit 7, exponent + 1;
//   a in [2^28, 2^29 - 32): round at bit 5, exponent - 1;
//   a < 2^28: d <= 1, t exact: shifted up into [2^29, 2^30);
// each unless the rounding bits are exactly a half and d > 6 (bits were
// shifted out, so the exact sum is above the half: Rust decides), or the
// exponent leaves [0, 155]. At a half with d <= 6 (nothing shifted out:
// the words' low six bits are zero) the tie goes to even. m6 and the
// exponent change only when a step is taken, so a case handed back to
// Rust leaves the sum before it in place.
#[cfg(atome_rv32)]
core::arch::global_asm!(
    // Next entry, or done.
    ".macro atome_rv_next k",
    "addi a1, a1, 1",
    "bne a1, a2, .Lrv_top\\k",
    "j .Lrv_out\\k",
    ".endm",
    // The exit when d (a6) > 6: the half's tie is not exact.
    ".macro atome_rv_d6 k",
    "bgt a6, t3, .Lrv_out\\k",
    ".endm",
    // t (t2) off big's binade, big's exponent in \eb (t1 or a7); a4 = a,
    // a5 = a - 2^29.
    ".macro atome_rv_off eb, sfx, k",
    "bltz a5, .Lrv_dn\\sfx",
    // a >= 2^30 - 32. Round at bit 7, exponent + 1 (<= 95: d <= 31
    // here, so big's exponent - WB is at most 63 + 31); off a half, m6 =
    // ((t + 64) >> 1) & -64. (a in [2^30 - 32, 2^30), which rounds at bit
    // 6 to 2^30, gets the same m6 = +-2^29 this way: t's low seven bits
    // are never a half there.)
    "addi a5, t2, 64",
    "andi a4, a5, 127",
    "beqz a4, .Lrv_uh\\sfx",
    "srai a5, a5, 1",
    "andi t0, a5, -64",
    "addi t1, \\eb, 1",
    "atome_rv_next \\k",
    // At a half: to even (t + 64 when bit 7 is set, else t - 64).
    ".Lrv_uh\\sfx:",
    "atome_rv_d6 \\k",
    "andi a4, t2, 128",
    "add a5, t2, a4",
    "addi a5, a5, -64",
    "srai t0, a5, 1",
    "addi t1, \\eb, 1",
    "atome_rv_next \\k",
    // a < 2^29; only [2^28, 2^29 - 32) rounds at bit 5, exponent - 1
    // (>= 0); off a half, m6 = ((t + 16) << 1) & -64.
    ".Lrv_dn\\sfx:",
    "bgeu a4, t6, .Lrv_out\\k",
    "srli a5, a4, 28",
    "beqz a5, .Lrv_c\\sfx",
    "beqz \\eb, .Lrv_out\\k",
    "addi a5, t2, 16",
    "andi a4, a5, 31",
    "beqz a4, .Lrv_dh\\sfx",
    "slli a5, a5, 1",
    "andi t0, a5, -64",
    "addi t1, \\eb, -1",
    "atome_rv_next \\k",
    ".Lrv_dh\\sfx:",
    "atome_rv_d6 \\k",
    "andi a4, t2, 32",
    "add a5, t2, a4",
    "addi a5, a5, -16",
    "slli t0, a5, 1",
    "addi t1, \\eb, -1",
    "atome_rv_next \\k",
    // a < 2^28: more than one leading bit cancelled, so d <= 1 and t is
    // exact: |t| shifted up into [2^29, 2^30) (it is below 2^28, so at
    // least two shifts); x + (-x) = +0.0.
    ".Lrv_c\\sfx:",
    "beqz t2, .Lrv_zero\\k",
    "mv a4, \\eb",
    "srai a7, t2, 31",
    "xor a5, t2, a7",
    "sub a5, a5, a7",
    ".Lrv_cl\\sfx:",
    "slli a5, a5, 1",
    "addi a4, a4, -1",
    "srli a6, a5, 29",
    "beqz a6, .Lrv_cl\\sfx",
    "bltz a4, .Lrv_out\\k",
    "xor a5, a5, a7",
    "sub t0, a5, a7",
    "mv t1, a4",
    "atome_rv_next \\k",
    ".endm",
    // The steps of one sign (neg 1: the term is subtracted), after the
    // term's word was loaded into a5.
    ".macro atome_rv_side neg, sfx, k",
    "andi a7, a5, 63",
    "andi a5, a5, -64",
    "sub a6, t1, a7",
    // d < 0 or d > 31: 2f.
    "bgeu a6, t4, 2f",
    // d in [0, 31]: the accumulator is big; t = m6 + floor(+-x / 2^d).
    ".if \\neg",
    "neg a5, a5",
    ".endif",
    "sra t2, a5, a6",
    "add t2, t0, t2",
    // a in [2^29, 2^30 - 32): below or above an exact half (t's low six
    // bits not 32) nearest is (t + 32) & -64 (the shifted-out bits, below
    // t's bit 0, cannot move the sum across the half).
    round6!("t0", ".Lrv_ao\\sfx", "1f"),
    "atome_rv_next \\k",
    // At a half: to even (t + 32 when bit 6 is set, else t - 32).
    "1:",
    "atome_rv_d6 \\k",
    "andi a4, t2, 64",
    "add t0, t2, a4",
    "addi t0, t0, -32",
    "atome_rv_next \\k",
    ".Lrv_ao\\sfx:",
    "atome_rv_off t1, a\\sfx, \\k",
    // d > 31: the term is below a quarter of the accumulator's bit 0, the
    // sum rounds to it.
    "2:",
    "bgez a6, .Lrv_skip\\k",
    // d < 0: the term is big (its negation is exact). d < -31: the
    // accumulator is zero, or below a quarter of the term's bit 0.
    "neg a6, a6",
    "bgeu a6, t4, 3f",
    "sra t2, t0, a6",
    ".if \\neg",
    "sub t2, t2, a5",
    ".else",
    "add t2, t2, a5",
    ".endif",
    round6!("t0", ".Lrv_bo\\sfx", "4f"),
    "mv t1, a7",
    "atome_rv_next \\k",
    "4:",
    "atome_rv_d6 \\k",
    "andi a4, t2, 64",
    "add t0, t2, a4",
    "addi t0, t0, -32",
    "mv t1, a7",
    "atome_rv_next \\k",
    "3:",
    ".if \\neg",
    "neg t0, a5",
    ".else",
    "mv t0, a5",
    ".endif",
    "mv t1, a7",
    "atome_rv_next \\k",
    ".Lrv_bo\\sfx:",
    "atome_rv_off a7, b\\sfx, \\k",
    ".endm",
    // The float in a4 as the accumulator (t0, t1), as soft::acc_words:
    // +-0 is (0, -96); biased exponents 96 to 254 give e - WB in [0, 158],
    // m6 = +-(1 << 23 | fraction) << 6; anything else goes to \bad.
    ".macro atome_rv_unpack bad",
    "li t0, 0",
    "li t1, -96",
    "slli a5, a4, 1",
    "beqz a5, 1f",
    "srli a5, a5, 24",
    "addi t1, a5, -96",
    "li a6, 159",
    "bgeu t1, a6, \\bad",
    "slli t0, a4, 8",
    "lui a6, 0x80000",
    "or t0, t0, a6",
    "srli t0, t0, 2",
    "bgez a4, 1f",
    "neg t0, t0",
    "1:",
    ".endm",
    // The sum (t0, t1) packed into a5 (exact; zero is +0.0).
    ".macro atome_rv_pack",
    "li a5, 0",
    "beqz t0, 1f",
    "srai a4, t0, 31",
    "xor a5, t0, a4",
    "sub a5, a5, a4",
    "srli a5, a5, 6",
    "addi a6, t1, 95",
    "slli a6, a6, 23",
    "add a5, a5, a6",
    "slli a4, a4, 31",
    "or a5, a5, a4",
    "1:",
    ".endm",
    // The loop of the entry points: from the first entry (a1) on, to
    // .Lrv_out\k when done (a1 = a2) or at an entry left to Rust (a1).
    ".macro atome_rv_body k",
    ".Lrv_top\\k:",
    "lb a4, 0(a1)",
    "add a5, a3, a4",
    "bltz a4, .Lrv_neg\\k",
    "lw a5, 0(a5)",
    "atome_rv_side 0, p\\k, \\k",
    ".Lrv_neg\\k:",
    "lw a5, 128(a5)",
    "atome_rv_side 1, n\\k, \\k",
    ".Lrv_zero\\k:",
    "li t0, 0",
    "li t1, -96",
    ".Lrv_skip\\k:",
    "atome_rv_next \\k",
    ".endm",
    ".section .text.atome_soft_run_rv,\"ax\",@progbits",
    ".global atome_soft_run_rv",
    ".hidden atome_soft_run_rv",
    ".type atome_soft_run_rv,@function",
    ".p2align 2",
    "atome_soft_run_rv:",
    "lw t0, 0(a0)",
    "lw t1, 4(a0)",
    "add a1, a2, a1",
    rv_consts!(),
    "atome_rv_body s",
    // Done (a1 = a2) or handing the entry at a1 to Rust: minus the count
    // left.
    ".Lrv_outs:",
    "sw t0, 0(a0)",
    "sw t1, 4(a0)",
    "sub a0, a1, a2",
    "ret",
    ".size atome_soft_run_rv, . - atome_soft_run_rv",
    ".section .text.atome_soft_acc_rv,\"ax\",@progbits",
    ".global atome_soft_acc_rv",
    ".hidden atome_soft_acc_rv",
    ".type atome_soft_acc_rv,@function",
    ".p2align 2",
    "atome_soft_acc_rv:",
    // *o as the accumulator; not one: returns 1 << 32.
    "lw a4, 0(a0)",
    "atome_rv_unpack .Lrv_bad",
    "add a1, a2, a1",
    rv_consts!(),
    "atome_rv_body a",
    ".Lrv_outa:",
    "bne a1, a2, 2f",
    // Done: the sum packed back into *o, returns 0.
    "atome_rv_pack",
    "sw a5, 0(a0)",
    "li a0, 0",
    "li a1, 0",
    "ret",
    // An entry left to Rust: (e - WB) << 32 | m6 | (count left), *o
    // untouched.
    "2:",
    "sub a1, a2, a1",
    "or a0, t0, a1",
    "mv a1, t1",
    "ret",
    ".Lrv_bad:",
    "li a0, 0",
    "li a1, 1",
    "ret",
    ".size atome_soft_acc_rv, . - atome_soft_acc_rv",
    // The vectors of a row block (`soft::step::asm_run_vecs`). Frame: [sp] the soft bits
    // of the vectors left (the current one's at bit 0; none past nv, so
    // a clear bit also ends the row block), [sp, 4] ostride, [sp, 8] the
    // first entry, [sp, 12] the first vector's words (k = the words'
    // advance / 128).
    ".section .text.atome_soft_vec_rv,\"ax\",@progbits",
    ".global atome_soft_vec_rv",
    ".hidden atome_soft_vec_rv",
    ".type atome_soft_vec_rv,@function",
    ".p2align 2",
    "atome_soft_vec_rv:",
    "addi sp, sp, -16",
    "li a7, 1",
    "sll a7, a7, a1",
    "addi a7, a7, -1",
    "and a4, a4, a7",
    "sw a4, 0(sp)",
    "sw a5, 4(sp)",
    "add a6, a2, a6",
    "sw a6, 8(sp)",
    "sw a3, 12(sp)",
    rv_consts!(),
    "andi a4, a4, 1",
    "beqz a4, .Lrv_vstop",
    ".Lrv_vacc:",
    "lw a4, 0(a0)",
    "atome_rv_unpack .Lrv_vstop",
    "lw a1, 8(sp)",
    "atome_rv_body v",
    ".Lrv_outv:",
    "bne a1, a2, .Lrv_vleft",
    // The vector's sum into its float, then the next vector, if taken.
    "atome_rv_pack",
    "sw a5, 0(a0)",
    "lw a4, 0(sp)",
    "srli a4, a4, 1",
    "sw a4, 0(sp)",
    "lw a6, 4(sp)",
    "add a0, a0, a6",
    "addi a3, a3, 128",
    "andi a4, a4, 1",
    "bnez a4, .Lrv_vacc",
    // Stop before vector k: 0, k << 16.
    ".Lrv_vstop:",
    "lw a1, 12(sp)",
    "sub a1, a3, a1",
    "slli a1, a1, 9",
    "li a0, 0",
    "addi sp, sp, 16",
    "ret",
    // Entries of vector k left: m6 | count, k << 16 | (e - WB) as u16.
    ".Lrv_vleft:",
    "sub a4, a2, a1",
    "or a0, t0, a4",
    "lw a1, 12(sp)",
    "sub a1, a3, a1",
    "slli a1, a1, 9",
    "slli t1, t1, 16",
    "srli t1, t1, 16",
    "or a1, a1, t1",
    "addi sp, sp, 16",
    "ret",
    ".size atome_soft_vec_rv, . - atome_soft_vec_rv",
    ".purgem atome_rv_next",
    ".purgem atome_rv_d6",
    ".purgem atome_rv_off",
    ".purgem atome_rv_side",
    ".purgem atome_rv_body",
    ".purgem atome_rv_unpack",
    ".purgem atome_rv_pack",
);

/// The words of a block's inputs (`soft::word`, the layout without
/// WORD_HI): out[k] = (signed mantissa << 6) | (e - WB) for the n <= SB
/// floats at `x`, 0 for a zero; returns false when one is outside the
/// words' window (its word not written), true otherwise.
///
/// # Safety
/// `x` readable for n floats, `out` writable for n words.
#[cfg(atome_rv32)]
pub(super) unsafe fn block_words(x: *const f32, n: usize, out: *mut i32) -> bool {
    // SAFETY: the caller's contract; the routine touches only those
    // floats and words and caller-saved registers.
    unsafe { atome_words_rv(x, n, out) != 0 }
}

#[cfg(atome_rv32)]
extern "C" {
    fn atome_words_rv(x: *const f32, n: usize, out: *mut i32) -> u32;
}

// a0 = the next float, a1 = the end, a2 = the next word, a3 = ok; a4 =
// 63, a5 = 2^31; two floats a round (t0-t2, a6, a7 scratch).
#[cfg(atome_rv32)]
core::arch::global_asm!(
    // The float in \F as its word into \W (\T scratch); outside the
    // window: \W = 0 when it is a zero, else a3 = 0 and \W unchanged.
    ".macro atome_word F, W, T, k",
    "slli \\T, \\F, 1",
    "srli \\T, \\T, 24",
    "addi \\T, \\T, -96",
    "bltu a4, \\T, .Lw_out\\k",
    "slli \\W, \\F, 8",
    "or \\W, \\W, a5",
    "srli \\W, \\W, 2",
    "bgez \\F, 1f",
    "neg \\W, \\W",
    "1:",
    "or \\W, \\W, \\T",
    ".Lw_done\\k:",
    ".endm",
    ".macro atome_word_out F, W, off, k",
    ".Lw_out\\k:",
    "slli \\W, \\F, 1",
    "beqz \\W, .Lw_done\\k",
    "li a3, 0",
    "lw \\W, \\off(a2)",
    "j .Lw_done\\k",
    ".endm",
    ".section .text.atome_words_rv,\"ax\",@progbits",
    ".global atome_words_rv",
    ".hidden atome_words_rv",
    ".type atome_words_rv,@function",
    ".p2align 2",
    "atome_words_rv:",
    "li a3, 1",
    "li a4, 63",
    "lui a5, 0x80000",
    "slli a1, a1, 2",
    "add a1, a0, a1",
    // An odd count: one float first.
    "andi t0, a1, 4",
    "andi t1, a0, 4",
    "beq t0, t1, 2f",
    "lw a6, 0(a0)",
    "atome_word a6, t0, t1, p",
    "sw t0, 0(a2)",
    "addi a0, a0, 4",
    "addi a2, a2, 4",
    "2:",
    "beq a0, a1, 3f",
    "4:",
    "lw a6, 0(a0)",
    "lw a7, 4(a0)",
    "atome_word a6, t0, t1, a",
    "atome_word a7, t2, t1, b",
    "sw t0, 0(a2)",
    "sw t2, 4(a2)",
    "addi a0, a0, 8",
    "addi a2, a2, 8",
    "bne a0, a1, 4b",
    "3:",
    "mv a0, a3",
    "ret",
    "atome_word_out a6, t0, 0, p",
    "atome_word_out a6, t0, 0, a",
    "atome_word_out a7, t2, 4, b",
    ".size atome_words_rv, . - atome_words_rv",
    ".purgem atome_word",
    ".purgem atome_word_out",
);
