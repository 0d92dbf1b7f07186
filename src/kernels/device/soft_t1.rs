//! The matvec's accumulate loop ([`super::soft::run_words`]) in Thumb-1
//! assembly for Cortex-M0/M0+ (thumbv6m; the Thumb-2 cores without an FPU
//! run soft_t2.rs, which has the same contract). In Rust the loop
//! needs more live values than Cortex-M0 has low registers, and spills
//! took about 60 instructions per step; here the common steps take about
//! 30. It does exactly what [`super::soft`]'s `step` does for the cases it
//! takes (same rounding, same exponent rules) and hands every other case
//! (ties, cancellation of more than one bit, exponents near the edges of
//! its range) back to that Rust step, one entry at a time.

#[cfg(atome_arm_soft)]
extern "C" {
    #[link_name = "atome_soft_run_t1"]
    pub(crate) fn soft_run(st: *mut i32, neg_rem: i32, ents_end: *const u8, words: *const i32) -> i32;
}

// Registers: r0 = m6 (accumulator mantissa << 6, signed), r1 = its
// exponent - WB, r2 = end of the entries, r3 = minus the entries left,
// r4 = the words, r5-r7 scratch, r8 = -2^29 and r9 = 2^29 - 32 (the
// binade test), r10 = the exponent before a swapped step (restored when
// such a step goes back to Rust), r12 = d, then the sign in the
// normalising loop. A step: term x (signed mantissa << 6,
// negated for a -1 weight) and its exponent; big = the side of the larger
// exponent, t = big + floor(small / 2^d). With a' = |t| (one's complement
// for negative t):
//   a' in [2^29, 2^30 - 32): round at bit 6, same exponent;
//   a' >= 2^30:              round at bit 7, exponent + 1;
//   a' in [2^28, 2^29 - 32): round at bit 5, exponent - 1;
//   a' < 2^28: d <= 1, t exact: normalised by shifts, exponent - k;
// each unless the rounding bits are a half and d > 6, so bits were shifted
// out (t's floor hides whether the exact sum is above the half: Rust
// decides; with d <= 6 nothing was lost, as the words' low six bits are
// zero, and the half is an exact tie), or the exponent leaves [0, 155]. The bounds keep every accumulator below 2^30 in magnitude, so
// no sum overflows 32 bits. Everything else goes back to Rust.
#[cfg(atome_arm_soft)]
core::arch::global_asm!(
    ".macro atome_soft_tail exit, sfx",
    // r7 = t, r1 = the exponent of big.
    "asrs r6, r7, #31",
    "eors r6, r7",
    "add r6, r8",
    "cmp r6, r9",
    "bhs .Lnb_\\sfx",
    "lsls r5, r7, #26",
    "subs r5, #1",
    "bvc .Lra_\\sfx",
    "mov r5, r12",
    "cmp r5, #6",
    "bgt .Lx_\\sfx",
    ".Lra_\\sfx:",
    "lsrs r6, r7, #7",
    "movs r6, #31",
    "adcs r6, r7",
    "lsrs r6, r6, #6",
    "lsls r0, r6, #6",
    "b 90b",
    ".Lx_\\sfx:",
    "b \\exit",
    ".Lnb_\\sfx:",
    "asrs r6, r7, #31",
    "eors r6, r7",
    "lsrs r5, r6, #30",
    "bne .Lup_\\sfx",
    "lsrs r5, r6, #28",
    "beq .Lm_\\sfx",
    "cmp r5, #1",
    "bne .Lx_\\sfx",
    "cmp r6, r9",
    "bhs .Lx_\\sfx",
    "lsls r5, r7, #27",
    "subs r5, #1",
    "bvc .Lrc_\\sfx",
    "mov r5, r12",
    "cmp r5, #6",
    "bgt .Lx_\\sfx",
    ".Lrc_\\sfx:",
    "cmp r1, #1",
    "blt .Lx_\\sfx",
    "lsrs r6, r7, #6",
    "movs r6, #15",
    "adcs r6, r7",
    "asrs r6, r6, #5",
    "lsls r0, r6, #6",
    "subs r1, #1",
    "b 90b",
    ".Lup_\\sfx:",
    "lsls r5, r7, #25",
    "subs r5, #1",
    "bvc .Lrb_\\sfx",
    "mov r5, r12",
    "cmp r5, #6",
    "bgt .Lx_\\sfx",
    ".Lrb_\\sfx:",
    "cmp r1, #154",
    "bgt .Lx_\\sfx",
    "lsrs r6, r7, #8",
    "movs r6, #63",
    "adcs r6, r7",
    "asrs r6, r6, #7",
    "lsls r0, r6, #6",
    "adds r1, #1",
    "b 90b",
    // a' < 2^28: more than one leading bit cancelled, so d <= 1 and t is
    // exact: shift |t| up into [2^29, 2^30).
    ".Lm_\\sfx:",
    "cmp r7, #0",
    "beq .Lz_\\sfx",
    "asrs r5, r7, #31",
    "eors r7, r5",
    "subs r7, r7, r5",
    "mov r12, r5",
    "mov r5, r1",
    ".Ll_\\sfx:",
    "lsls r7, r7, #1",
    "subs r5, #1",
    "lsrs r6, r7, #29",
    "beq .Ll_\\sfx",
    "cmp r5, #0",
    "blt .Lx_\\sfx",
    "mov r6, r12",
    "eors r7, r6",
    "subs r7, r7, r6",
    "movs r0, r7",
    "movs r1, r5",
    "b 90b",
    // x + (-x) = +0.0.
    ".Lz_\\sfx:",
    "movs r0, #0",
    "movs r1, #95",
    "mvns r1, r1",
    "b 90b",
    ".endm",
    ".section .text.atome_soft_run_t1,\"ax\",%progbits",
    ".global atome_soft_run_t1",
    ".hidden atome_soft_run_t1",
    ".type atome_soft_run_t1,%function",
    ".syntax unified",
    ".thumb",
    ".thumb_func",
    ".p2align 2",
    "atome_soft_run_t1:",
    "push {{r4-r7, lr}}",
    "mov r4, r8",
    "mov r5, r9",
    "mov r6, r10",
    "push {{r0, r4-r6}}",
    "ldr r4, 80f",
    "mov r8, r4",
    "ldr r4, 81f",
    "mov r9, r4",
    "mov r4, r3",
    "mov r3, r1",
    "ldr r1, [r0, #4]",
    "ldr r0, [r0, #0]",
    "b 1f",
    "71:",
    "mov r1, r10",
    "70:",
    "pop {{r2, r4-r6}}",
    "mov r8, r4",
    "mov r9, r5",
    "mov r10, r6",
    "str r0, [r2, #0]",
    "str r1, [r2, #4]",
    "movs r0, r3",
    "pop {{r4-r7, pc}}",
    "90:",
    "adds r3, #1",
    "beq 70b",
    "1:",
    "ldrb r5, [r2, r3]",
    "lsrs r5, r5, #1",
    "ldr r5, [r4, r5]",
    "movs r6, #63",
    "ands r6, r5",
    "bics r5, r6",
    "bcc 2f",
    "negs r5, r5",
    "2:",
    "subs r6, r1, r6",
    "bmi 3f",
    "cmp r6, #31",
    "ble 5f",
    "b 90b",
    "5:",
    "mov r12, r6",
    "asrs r5, r6",
    "adds r7, r0, r5",
    "atome_soft_tail 70b, a",
    "3:",
    "negs r6, r6",
    "cmp r6, #31",
    "bgt 4f",
    "mov r12, r6",
    "mov r10, r1",
    "adds r1, r1, r6",
    "movs r7, r0",
    "asrs r7, r6",
    "adds r7, r7, r5",
    "atome_soft_tail 71b, b",
    "4:",
    "adds r1, r1, r6",
    "movs r0, r5",
    "b 90b",
    ".p2align 2",
    "80: .word 0xe0000000",
    "81: .word 0x1fffffe0",
    ".size atome_soft_run_t1, . - atome_soft_run_t1",
    ".purgem atome_soft_tail",
);

#[cfg(atome_armv6m)]
extern "C" {
    #[link_name = "atome_trit2_ents_t1"]
    pub(crate) fn trit2_ents(bytes: *const u8, n: usize, ents: *mut u8, tabs: *const super::soft::Trit2Tabs) -> usize;
}

// r0 = next byte (two a pass), r1 = end, r2 = where the byte's entries
// go, r3 = the entry table, r4 = the count table, r7 = the column offset
// of the byte in every lane, r12 = 0x20202020 (its step).
#[cfg(atome_armv6m)]
core::arch::global_asm!(
    ".section .text.atome_trit2_ents_t1,\"ax\",%progbits",
    ".global atome_trit2_ents_t1",
    ".hidden atome_trit2_ents_t1",
    ".type atome_trit2_ents_t1,%function",
    ".syntax unified",
    ".thumb",
    ".thumb_func",
    ".p2align 2",
    // One byte (at r0 + off): its four entries plus the column offset
    // stored at r2, r2 advanced by its count, the offset by 32 columns.
    ".macro atome_t2e_byte off",
    "ldrb r5, [r0, #\\off]",
    "lsls r6, r5, #2",
    "ldr r6, [r3, r6]",
    "add r6, r7",
    "strb r6, [r2]",
    "lsrs r6, r6, #8",
    "strb r6, [r2, #1]",
    "lsrs r6, r6, #8",
    "strb r6, [r2, #2]",
    "lsrs r6, r6, #8",
    "strb r6, [r2, #3]",
    "ldrb r5, [r4, r5]",
    "adds r2, r2, r5",
    "add r7, r12",
    ".endm",
    "atome_trit2_ents_t1:",
    "push {{r2, r4-r7, lr}}",
    "adds r1, r0, r1",
    "movs r4, #1",
    "lsls r4, r4, #10",
    "adds r4, r4, r3",
    "movs r7, #0",
    "ldr r5, 80f",
    "mov r12, r5",
    // Two bytes a pass; an odd count enters at the second (r0 one back).
    "subs r5, r1, r0",
    "lsrs r5, r5, #1",
    "bcc 1f",
    "subs r0, #1",
    "b 2f",
    "1:",
    "atome_t2e_byte 0",
    "2:",
    "atome_t2e_byte 1",
    "adds r0, #2",
    "cmp r0, r1",
    "bne 1b",
    "pop {{r1}}",
    "subs r0, r2, r1",
    "pop {{r4-r7, pc}}",
    ".p2align 2",
    "80: .word 0x20202020",
    ".size atome_trit2_ents_t1, . - atome_trit2_ents_t1",
    ".purgem atome_t2e_byte",
);
