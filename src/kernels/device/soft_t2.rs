//! The matvec's accumulate loop ([`super::soft::run_words`]) in Thumb-2
//! assembly for the Arm cores without an FPU that have Thumb-2 (Cortex-M3,
//! soft-float Cortex-M4/M7: cfg `atome_thumb2`, set by build.rs). The
//! Thumb-1 loop (soft_t1.rs, kept for Cortex-M0) spends its steps on
//! moves between low and high registers, flag tricks and branches; here
//! shifted operands, IT blocks, ADC with an immediate and CLZ take a common
//! step in about 20 instructions. It takes exactly the cases the Thumb-1
//! loop and its Rust twin `fast_words` take, with the same results, and
//! hands every other one back to the Rust step, one entry at a time.

#[cfg(atome_t2_soft)]
extern "C" {
    #[link_name = "atome_soft_run_t2"]
    pub(crate) fn soft_run(st: *mut i32, neg_rem: i32, ents_end: *const u8, words: *const i32) -> i32;
    #[link_name = "atome_soft_acc_t2"]
    pub(crate) fn soft_acc(o: *mut f32, neg_rem: i32, ents_end: *const u8, words: *const i32) -> u64;
    #[link_name = "atome_soft_vec_t2"]
    pub(crate) fn soft_vec(o: *mut f32, nv: usize, ents_end: *const u8, words: *const i32, soft: u32, ostride: usize, neg_rem: i32) -> u64;
}

// Registers: r0 = m6 (accumulator mantissa << 6, signed), r1 = its
// exponent - WB, r2 = end of the entries, r3 = minus the entries left,
// r4 = the words, r5 = the term x (signed mantissa << 6, not negated: see
// below), r8 = its word (its exponent - WB once d < 0), r6 = d (big's
// exponent - small's),
// r7 = t = big + floor(small / 2^d), r9 = 2^29 - 32, r10 = st, r11 = ~63,
// r12 and lr scratch. The entry's sign bit picks one of two copies of the
// steps (`atome_t2_side`), which subtract the term instead of negating it
// where that is exact (d <= 6, or the term big). The cases other than the
// first are dispatched on clz(a) (TBB). The cases, with a = |t| (one's
// complement for negative t), as
// in soft_t1.rs and `fast_words`:
//   a in [2^29, 2^30 - 32): round at bit 6, big's exponent;
//   a >= 2^30:              round at bit 7, exponent + 1;
//   a in [2^28, 2^29 - 32): round at bit 5, exponent - 1;
//   a < 2^28: d <= 1, t exact: shifted up into [2^29, 2^30) (CLZ);
// each unless the rounding bits are exactly a half and d > 6 (bits were
// shifted out, so the exact sum is above the half: Rust decides), or the
// exponent leaves [0, 155]. An exit leaves the accumulator before the step
// in r0, r1 (r0 is written only by a step taken; r1 where noted).
// Steps are split by d: d in [0, 6] (no half test: nothing was shifted out,
// the words' low six bits being zero), d in [7, 31] (a half exits), d > 31
// (the term is below a quarter of the accumulator's bit 0: skipped), d < 0
// (the term is big; a zero accumulator, e - WB = -96, always lands here).
#[cfg(atome_t2_soft)]
core::arch::global_asm!(
    // Next entry, or done.
    ".macro atome_t2_next",
    "adds r3, #1",
    "bne .Lt2_loop",
    "b .Lt2_out",
    ".endm",
    // The half test at rounding bit p (mask = 2^(p+1) - 1, half = 2^p) of
    // t in r7; hm 0: none (d <= 6), 1: exit, 2: exit when d > 6.
    ".macro atome_t2_half hm, mask, half, ok",
    ".if \\hm",
    "and r12, r7, #\\mask",
    "cmp r12, #\\half",
    ".if \\hm - 1",
    "bne \\ok",
    "cmp r6, #6",
    "bgt .Lt2_out",
    ".else",
    "beq .Lt2_out",
    ".endif",
    ".endif",
    ".endm",
    // The tail of a step: t in r7, big's exponent in \eb (r1 or r8).
    ".macro atome_t2_tail eb, hm, sfx",
    "eor r12, r7, r7, asr #31",
    "sub lr, r12, #0x20000000",
    "cmp lr, r9",
    "bhs .Lt2nb_\\sfx",
    "atome_t2_half \\hm, 63, 32, .Lt2ra_\\sfx",
    ".Lt2ra_\\sfx:",
    // floor((t + 31 + bit 6) / 64) * 64: nearest, ties to even.
    "lsrs lr, r7, #7",
    "adc lr, r7, #31",
    "bic r0, lr, #63",
    ".ifnc \\eb, r1",
    "mov r1, \\eb",
    ".endif",
    "atome_t2_next",
    // r12 = a, not in [2^29, 2^30 - 32): by its leading zeros, 1: a >=
    // 2^30; 2: a in [2^30 - 32, 2^30) (Rust); 3: a in [2^28, 2^29); more:
    // a < 2^28.
    ".Lt2nb_\\sfx:",
    "clz lr, r12",
    "tbb [pc, lr]",
    ".Lt2tb_\\sfx:",
    ".byte (.Lt2o_\\sfx - .Lt2tb_\\sfx) / 2",
    ".byte (.Lt2up_\\sfx - .Lt2tb_\\sfx) / 2",
    ".byte (.Lt2o_\\sfx - .Lt2tb_\\sfx) / 2",
    ".byte (.Lt2dn_\\sfx - .Lt2tb_\\sfx) / 2",
    ".rept 29",
    ".byte (.Lt2m_\\sfx - .Lt2tb_\\sfx) / 2",
    ".endr",
    ".p2align 1",
    ".Lt2o_\\sfx:",
    "b .Lt2_out",
    // a in [2^28, 2^29): only [2^28, 2^29 - 32) is taken.
    ".Lt2dn_\\sfx:",
    "cmp r12, r9",
    "bhs .Lt2_out",
    "atome_t2_half \\hm, 31, 16, .Lt2rc_\\sfx",
    ".Lt2rc_\\sfx:",
    // The new exponent goes to r1 first; below 0, .Lt2fx restores it.
    "subs r1, \\eb, #1",
    "bmi .Lt2fx_\\sfx",
    // floor((t + 15 + bit 5) / 32) * 64 (r11 = ~63).
    "lsrs lr, r7, #6",
    "adc lr, r7, #15",
    "and r0, r11, lr, lsl #1",
    "atome_t2_next",
    ".Lt2up_\\sfx:",
    "atome_t2_half \\hm, 127, 64, .Lt2rb_\\sfx",
    ".Lt2rb_\\sfx:",
    // (No test of the exponent against 155: d <= 31 here, so big's
    // exponent - WB is at most 63 + 31.)
    // floor((t + 63 + bit 7) / 128) * 64.
    "lsrs lr, r7, #8",
    "adc lr, r7, #63",
    "and r0, r11, lr, asr #1",
    "add r1, \\eb, #1",
    "atome_t2_next",
    // a < 2^28: more than one leading bit cancelled, so d <= 1 and t is
    // exact: shift it up by k = clz(|t|) - 2 into [2^29, 2^30).
    ".Lt2m_\\sfx:",
    "cbz r7, .Lt2z_\\sfx",
    "eor r12, r7, r7, asr #31",
    "sub r12, r12, r7, asr #31",
    "clz r12, r12",
    "sub r12, r12, #2",
    "subs r1, \\eb, r12",
    "bmi .Lt2fm_\\sfx",
    "lsl r0, r7, r12",
    "atome_t2_next",
    // x + (-x) = +0.0.
    ".Lt2z_\\sfx:",
    "movs r0, #0",
    "mvn r1, #95",
    "atome_t2_next",
    // Exits after r1 was written: back to the accumulator's exponent (in
    // the swapped case e = ex - (-d) = r8 - r6).
    ".ifc \\eb, r1",
    ".Lt2fx_\\sfx:",
    "adds r1, #1",
    "b .Lt2_out",
    ".Lt2fm_\\sfx:",
    "add r1, r1, r12",
    "b .Lt2_out",
    ".else",
    ".Lt2fx_\\sfx:",
    ".Lt2fm_\\sfx:",
    "sub r1, r8, r6",
    "b .Lt2_out",
    ".endif",
    ".endm",
    // The steps of one sign of the weight (neg 1: the term is subtracted),
    // after the head: r5 = x (the word's signed mantissa << 6, not
    // negated), r8 = the word, r6 = d, flags of d - 6.
    // The float in r5 as the accumulator (r0, r1), as soft::acc_words;
    // to `bad` when it is not one, to `zero` (r0, r1 not set) for +-0.
    ".macro atome_t2_unpack bad, zero",
    // C = the sign, Z for +-0.
    "lsls r12, r5, #1",
    "beq \\zero",
    // m6 = (1 << 23 | fraction) << 6, signed.
    "lsl r0, r5, #8",
    "orr r0, r0, #0x80000000",
    "lsr r0, r0, #2",
    "it cs",
    "rsbcs r0, r0, #0",
    // e - WB in [0, 158] (biased exponents 96 to 254, as acc_words),
    // else not taken (below the window, subnormal, infinite, NaN).
    "lsr r1, r12, #24",
    "sub r1, r1, #96",
    "cmp r1, #159",
    "bhs \\bad",
    ".endm",
    ".macro atome_t2_side neg, sfx",
    "bhi 5f",
    // d in [0, 6]: x / 2^d is exact, so t = m6 -+ (x >> d).
    "asr r7, r5, r6",
    ".if \\neg",
    "sub r7, r0, r7",
    ".else",
    "add r7, r7, r0",
    ".endif",
    "atome_t2_tail r1, 0, a\\sfx",
    "5:",
    "blt 3f",
    "cmp r6, #31",
    "bgt 9f",
    // d in [7, 31]: bits are shifted out, floor of the signed term.
    ".if \\neg",
    "rsb r5, r5, #0",
    ".endif",
    "asr r7, r5, r6",
    "add r7, r7, r0",
    "atome_t2_tail r1, 1, b\\sfx",
    "9:",
    "atome_t2_next",
    // d < 0: the term is big.
    "3:",
    "lsr r8, r8, #26",
    "rsb r6, r6, #0",
    "cmp r6, #31",
    "bgt 4f",
    "asr r7, r0, r6",
    ".if \\neg",
    "sub r7, r7, r5",
    ".else",
    "add r7, r7, r5",
    ".endif",
    "atome_t2_tail r8, 2, c\\sfx",
    // d > 31: the accumulator is zero (the invariant): the sum is x.
    "4:",
    ".if \\neg",
    "rsb r0, r5, #0",
    ".else",
    "mov r0, r5",
    ".endif",
    "mov r1, r8",
    "atome_t2_next",
    ".endm",
    ".section .text.atome_soft_run_t2,\"ax\",%progbits",
    ".global atome_soft_run_t2",
    ".hidden atome_soft_run_t2",
    ".type atome_soft_run_t2,%function",
    ".syntax unified",
    ".thumb",
    ".thumb_func",
    ".p2align 2",
    "atome_soft_run_t2:",
    "push {{r4-r11, lr}}",
    "mov r10, r0",
    "mov r4, r3",
    "mov r3, r1",
    "ldrd r0, r1, [r10]",
    "b .Lt2_setup",
    ".global atome_soft_vec_t2",
    ".hidden atome_soft_vec_t2",
    ".type atome_soft_vec_t2,%function",
    ".thumb_func",
    "atome_soft_vec_t2:",
    "push {{r4-r11, lr}}",
    // Frame: [sp] the soft bits (the current vector's at bit 0), [sp, 4]
    // vectors left, [sp, 8] ostride, [sp, 12] neg_rem, [sp, 16] nv.
    "sub sp, sp, #20",
    "ldrd r5, r6, [sp, #56]",
    "ldr r7, [sp, #64]",
    "strd r5, r1, [sp]",
    "strd r6, r7, [sp, #8]",
    "str r1, [sp, #16]",
    // r10 = o + 2: the float's address, tagged for the vector loop's exit.
    "orr r10, r0, #2",
    "mov r4, r3",
    "mov r3, r7",
    // (The loop's constants, as at .Lt2_setup, once for all the vectors.)
    "movw r9, #0xffe0",
    "movt r9, #0x1fff",
    "mvn r11, #63",
    "tst r5, #1",
    "beq .Lt2_vstop",
    ".Lt2_vacc:",
    "ldr r5, [r10, #-2]",
    "atome_t2_unpack .Lt2_vstop, .Lt2_vz",
    "b .Lt2_loop",
    ".Lt2_vz:",
    "movs r0, #0",
    "mvn r1, #95",
    "b .Lt2_loop",
    // The vector's sum into its float, then the next vector, if taken.
    ".Lt2_vst:",
    "str r1, [r10, #-2]",
    ".Lt2_vnext:",
    "ldrd r5, r6, [sp]",
    "lsr r5, r5, #1",
    "subs r6, #1",
    "strd r5, r6, [sp]",
    "beq .Lt2_vstop",
    "ldrd r7, r3, [sp, #8]",
    "add r10, r10, r7",
    "add r4, r4, #128",
    "tst r5, #1",
    "bne .Lt2_vacc",
    // Stop before vector k = nv - left: r0 = 0, r1 = k << 16.
    ".Lt2_vstop:",
    "ldr r0, [sp, #4]",
    "ldr r1, [sp, #16]",
    "sub r1, r1, r0",
    "lsl r1, r1, #16",
    "movs r0, #0",
    "add sp, sp, #20",
    "pop {{r4-r11, pc}}",
    // Entries of vector k left: m6 | count, k << 16 | (e - WB) as u16.
    ".Lt2_vleft:",
    "sub r0, r0, r3",
    "ldr r5, [sp, #4]",
    "ldr r6, [sp, #16]",
    "sub r5, r6, r5",
    "bfi r1, r5, #16, #16",
    "add sp, sp, #20",
    "pop {{r4-r11, pc}}",
    ".global atome_soft_acc_t2",
    ".hidden atome_soft_acc_t2",
    ".type atome_soft_acc_t2,%function",
    ".thumb_func",
    "atome_soft_acc_t2:",
    "push {{r4-r11, lr}}",
    // r10 = o + 1: the float's address, tagged (it is 4-aligned) so that
    // the exit packs the sum into it.
    "orr r10, r0, #1",
    "mov r4, r3",
    "mov r3, r1",
    "ldr r5, [r0]",
    "atome_t2_unpack .Lt2_abad, .Lt2_az",
    ".Lt2_setup:",
    "movw r9, #0xffe0",
    "movt r9, #0x1fff",
    "mvn r11, #63",
    ".Lt2_loop:",
    "ldrb r5, [r2, r3]",
    "lsrs r5, r5, #1",
    // The word: (e - WB) << 26 | mantissa (soft::WORD_HI).
    "ldr r8, [r4, r5]",
    "sub r6, r1, r8, lsr #26",
    "lsl r5, r8, #6",
    // The weight's sign (C, from the entry's bit 0) picks the side.
    "bcs .Lt2_neg",
    "cmp r6, #6",
    "atome_t2_side 0, p",
    ".Lt2_neg:",
    "cmp r6, #6",
    "atome_t2_side 1, n",
    ".Lt2_out:",
    "tst r10, #3",
    "bne .Lt2_aout",
    "strd r0, r1, [r10]",
    "mov r0, r3",
    "pop {{r4-r11, pc}}",
    // The float's exit: all done, pack into it (as soft::pack).
    ".Lt2_aout:",
    "cbnz r3, .Lt2_aleft",
    "cbz r0, .Lt2_apz",
    // |m6| >> 6, minus 1 for negatives (one's complement), plus the
    // exponent field (e - 1) << 23, the 1 back, the sign.
    "eor r12, r0, r0, asr #31",
    "lsl r1, r1, #23",
    "add r1, r1, r12, lsr #6",
    "sub r1, r1, r0, asr #31",
    "add r1, r1, #0x2f800000",
    "and r0, r0, #0x80000000",
    "orr r1, r1, r0",
    ".Lt2_ast:",
    "tst r10, #2",
    "bne .Lt2_vst",
    "str r1, [r10, #-1]",
    "movs r0, #0",
    "movs r1, #0",
    "pop {{r4-r11, pc}}",
    ".Lt2_apz:",
    "movs r1, #0",
    "b .Lt2_ast",
    // Entries left: (e - WB) in r1, m6 | count in r0.
    ".Lt2_aleft:",
    "tst r10, #2",
    "bne .Lt2_vleft",
    "sub r0, r0, r3",
    "pop {{r4-r11, pc}}",
    // +-0: the zero accumulator.
    ".Lt2_az:",
    "movs r0, #0",
    "mvn r1, #95",
    "b .Lt2_setup",
    ".Lt2_abad:",
    "movs r0, #0",
    "movs r1, #1",
    "pop {{r4-r11, pc}}",
    ".size atome_soft_run_t2, . - atome_soft_run_t2",
    ".size atome_soft_acc_t2, . - atome_soft_acc_t2",
    ".size atome_soft_vec_t2, . - atome_soft_vec_t2",
    ".purgem atome_t2_side",
    ".purgem atome_t2_unpack",
    ".purgem atome_t2_tail",
    ".purgem atome_t2_half",
    ".purgem atome_t2_next",
);

#[cfg(atome_t2_soft)]
extern "C" {
    #[link_name = "atome_trit2_ents_t2"]
    pub(crate) fn trit2_ents(bytes: *const u8, n: usize, ents: *mut u8, tabs: *const super::soft::Trit2Tabs) -> usize;
}

// r0 = next byte, r1 = end, r2 = where the byte's entries go, r3 = the
// entry table, r4 = the count table, r7 = the column offset of the byte in
// every lane, r12 = 0x20202020 (its step): 9 instructions a byte.
#[cfg(atome_t2_soft)]
core::arch::global_asm!(
    ".section .text.atome_trit2_ents_t2,\"ax\",%progbits",
    ".global atome_trit2_ents_t2",
    ".hidden atome_trit2_ents_t2",
    ".type atome_trit2_ents_t2,%function",
    ".syntax unified",
    ".thumb",
    ".thumb_func",
    ".p2align 2",
    "atome_trit2_ents_t2:",
    "push {{r2, r4-r7, lr}}",
    "add r1, r0, r1",
    "add r4, r3, #1024",
    "movs r7, #0",
    "mov r12, #0x20202020",
    "1:",
    "ldrb r5, [r0], #1",
    "ldr r6, [r3, r5, lsl #2]",
    "add r6, r6, r7",
    "str r6, [r2]",
    "ldrb r5, [r4, r5]",
    "add r2, r2, r5",
    "add r7, r7, r12",
    "cmp r0, r1",
    "bne 1b",
    "pop {{r1}}",
    "sub r0, r2, r1",
    "pop {{r4-r7, pc}}",
    ".size atome_trit2_ents_t2, . - atome_trit2_ents_t2",
);
