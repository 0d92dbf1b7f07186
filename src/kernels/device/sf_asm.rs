//! [`super::sf`]'s add (and on thumbv6m its multiply) in assembly for the
//! Arm cores without an FPU: Thumb-1 on thumbv6m, Thumb-2 (CLZ, IT) for
//! the add on Armv7-M (thumbv7m, thumbv7em-none-eabi), whose multiply is
//! the Rust routine (one UMULL). In Rust the add keeps more values live
//! than Cortex-M0 has low registers and spills; these take the common case
//! (both operands normal, a normal result) in about 40 instructions (30 in
//! Thumb-2) with no memory access beyond saved registers, and tail-call the
//! compiler-builtins operation (`__aeabi_fadd`, `__aeabi_fmul`: the code
//! `a + b` and `a * b` compile to on these targets) with the caller's
//! operands, in the caller's order, for every other case. The rounding is
//! [`super::sf::add_int`]'s and [`super::sf::mul_int`]'s: nearest, ties to
//! even, on the exact result with every shifted-out bit jammed into a
//! sticky bit below the rounding position.

// The core's routines (called from sf.rs): Thumb-1 on Cortex-M0, Thumb-2
// on the other Arm cores without an FPU.
#[cfg(all(atome_arm_soft, atome_device))]
extern "C" {
    #[cfg_attr(atome_armv6m, link_name = "atome_sf_add_t1")]
    #[cfg_attr(not(atome_armv6m), link_name = "atome_sf_add_t2")]
    pub(super) fn sf_add(a: u32, b: u32) -> u32;
    #[cfg_attr(atome_armv6m, link_name = "atome_sf_mul_t1")]
    #[cfg_attr(not(atome_armv6m), link_name = "atome_sf_mul_t2")]
    pub(super) fn sf_mul(a: u32, b: u32) -> u32;
}

#[cfg(all(atome_t2_soft, atome_device))]
extern "C" {
    #[link_name = "atome_sf_mul_add_t2"]
    pub(super) fn sf_mul_add(acc: u32, a: u32, b: u32) -> u32;
}

// Add. r0 = a, r1 = b, r12 = the caller's a (so the fallback can restore
// the caller's order after the swap). With |a| >= |b| (swapped if not),
// ea >= eb: the fast path needs eb >= 1 (b = +-0 returns a when a is
// finite and nonzero) and ea in [3, 252], so no rounded result leaves the normal
// range. ma, mb = the mantissas with the implicit bit at bit 29 (six guard
// bits), x = +-mb (minus for unlike signs), d = ea - eb, s = floor(x / 2^d)
// (ASR by a register: d >= 32 gives 0 or -1), t = ma + s with bit 0 set
// when s * 2^d != x (LSL by d >= 32 gives 0, so that is every nonzero x):
// every rounding decision at bit 5, 6 or 7 is then the exact sum's.
//   t >= 2^30:       round at bit 7, exponent ea + 1;
//   t in [2^29, 2^30): round at bit 6, exponent ea;
//   t in [2^28, 2^29): round at bit 5, exponent ea - 1;
//   t == 0 (x + (-x)): +0.0; else (more cancellation: d <= 1, t exact)
//   t shifted up into [2^29, 2^30), exponent ea - k (the builtin when
//   that is below 1: a subnormal result).
// q = (t + 2^(p-1) - 1 + bit p of t) >> p is in [2^23, 2^24]: added to
// sign | (e - 1) << 23 its implicit bit (or its carry at 2^24) lands in
// the exponent field.
//
// Multiply. r0 = a, r1 = b. Fast path: ea, eb in [1, 254] and
// ea + eb - 128 in [0, 250] (so the result is normal and finite, rounding
// carry included); a zero times a finite value is the zero of the signs'
// product. The 48-bit product of the mantissas (ah << 16 | al, ah in
// [128, 255]) from four 32-bit multiplies: al*bl + (ah*bl + al*bh) << 16 +
// ah*bh << 32; h = product >> 16 in [2^30, 2^32), bit 0 jammed with the
// low 16 bits. h >= 2^31: round at bit 8, exponent ea + eb - 126; else at
// bit 7, exponent ea + eb - 127.
#[cfg(all(atome_armv6m, atome_device))]
core::arch::global_asm!(
    ".section .text.atome_sf_add_t1,\"ax\",%progbits",
    ".global atome_sf_add_t1",
    ".hidden atome_sf_add_t1",
    ".type atome_sf_add_t1,%function",
    ".syntax unified",
    ".thumb",
    ".thumb_func",
    ".p2align 2",
    "atome_sf_add_t1:",
    "mov r12, r0",
    "lsls r2, r0, #1",
    "lsls r3, r1, #1",
    "cmp r2, r3",
    "bhs 1f",
    "movs r2, r0",
    "movs r0, r1",
    "movs r1, r2",
    "lsls r2, r0, #1",
    "lsls r3, r1, #1",
    "1:",
    "lsrs r3, r3, #24",
    "beq 20f",
    "lsrs r2, r2, #24",
    "subs r3, r2, r3",
    "subs r2, r2, #3",
    "cmp r2, #249",
    "bhi 30f",
    "push {{r4, r5}}",
    "ldr r2, 80f",
    "lsls r4, r1, #9",
    "lsrs r4, r4, #3",
    "adds r4, r4, r2",
    "lsls r5, r0, #9",
    "lsrs r5, r5, #3",
    "adds r2, r2, r5",
    "movs r5, r0",
    "eors r5, r1",
    "bpl 2f",
    "negs r4, r4",
    "2:",
    "movs r5, r4",
    "asrs r5, r3",
    "adds r2, r2, r5",
    "lsls r5, r3",
    "cmp r5, r4",
    "beq 3f",
    "movs r5, #1",
    "orrs r2, r5",
    "3:",
    "lsrs r3, r2, #30",
    "bne 4f",
    "lsrs r3, r2, #29",
    "beq 5f",
    // p = 6, exponent ea.
    "lsrs r3, r2, #7",
    "movs r3, #31",
    "adcs r3, r2",
    "lsrs r3, r3, #6",
    "lsrs r0, r0, #23",
    "subs r0, r0, #1",
    "lsls r0, r0, #23",
    "adds r0, r0, r3",
    "pop {{r4, r5}}",
    "bx lr",
    // p = 7, exponent ea + 1.
    "4:",
    "lsrs r3, r2, #8",
    "movs r3, #63",
    "adcs r3, r2",
    "lsrs r3, r3, #7",
    "lsrs r0, r0, #23",
    "lsls r0, r0, #23",
    "adds r0, r0, r3",
    "pop {{r4, r5}}",
    "bx lr",
    "5:",
    "lsrs r3, r2, #28",
    "beq 6f",
    // p = 5, exponent ea - 1.
    "lsrs r3, r2, #6",
    "movs r3, #15",
    "adcs r3, r2",
    "lsrs r3, r3, #5",
    "lsrs r0, r0, #23",
    "subs r0, r0, #2",
    "lsls r0, r0, #23",
    "adds r0, r0, r3",
    "pop {{r4, r5}}",
    "bx lr",
    // More than one leading bit cancelled (t < 2^28): then d <= 1 and t
    // is exact, so it is shifted up into [2^29, 2^30) (k >= 2 shifts,
    // its low seven bits zero) at exponent ea - k; a subnormal result
    // (ea - k < 1) goes to the builtin; x + (-x) is +0.0.
    "6:",
    "cmp r2, #0",
    "beq 7f",
    "lsls r3, r0, #1",
    "lsrs r3, r3, #24",
    "8:",
    "subs r3, r3, #1",
    "lsls r2, r2, #1",
    "lsrs r4, r2, #29",
    "beq 8b",
    "cmp r3, #1",
    "blt 9f",
    "lsrs r2, r2, #6",
    "subs r3, r3, #1",
    "lsls r3, r3, #23",
    "adds r2, r2, r3",
    "lsrs r0, r0, #31",
    "lsls r0, r0, #31",
    "adds r0, r0, r2",
    "pop {{r4, r5}}",
    "bx lr",
    "7:",
    "pop {{r4, r5}}",
    "movs r0, #0",
    "bx lr",
    "9:",
    "pop {{r4, r5}}",
    "b 30f",
    // b (the smaller) is a zero or subnormal: a + (+-0) = a for finite
    // nonzero a.
    "20:",
    "lsls r3, r1, #1",
    "bne 30f",
    "lsls r2, r0, #1",
    "lsrs r2, r2, #24",
    "subs r2, r2, #1",
    "cmp r2, #253",
    "bhi 30f",
    "bx lr",
    // The builtin, with the caller's operands in the caller's order.
    "30:",
    "mov r2, r12",
    "cmp r2, r0",
    "beq 31f",
    "movs r1, r0",
    "movs r0, r2",
    "31:",
    "ldr r2, 81f",
    "bx r2",
    ".p2align 2",
    "80: .word 0x20000000",
    "81: .word __aeabi_fadd",
    ".size atome_sf_add_t1, . - atome_sf_add_t1",
);

// The multiply: thumbv6m only (Armv7-M uses the Rust routine, one UMULL).
#[cfg(all(atome_armv6m, atome_device))]
core::arch::global_asm!(
    ".section .text.atome_sf_mul_t1,\"ax\",%progbits",
    ".global atome_sf_mul_t1",
    ".hidden atome_sf_mul_t1",
    ".type atome_sf_mul_t1,%function",
    ".syntax unified",
    ".thumb",
    ".thumb_func",
    ".p2align 2",
    "atome_sf_mul_t1:",
    "lsls r2, r0, #1",
    "lsrs r2, r2, #24",
    "subs r2, r2, #1",
    "cmp r2, #254",
    "bhs 20f",
    "lsls r3, r1, #1",
    "lsrs r3, r3, #24",
    "subs r3, r3, #1",
    "cmp r3, #254",
    "bhs 20f",
    "adds r2, r2, r3",
    "subs r2, #126",
    "cmp r2, #250",
    "bhi 30f",
    "push {{r4, r5}}",
    // r2 = sign | (ea + eb - 128) << 23.
    "lsls r2, r2, #23",
    "movs r3, r0",
    "eors r3, r1",
    "lsrs r3, r3, #31",
    "lsls r3, r3, #31",
    "adds r2, r2, r3",
    // r3 = ah, r4 = bh, r0 = al, r1 = bl.
    "lsls r3, r0, #9",
    "lsrs r3, r3, #25",
    "adds r3, #128",
    "lsls r4, r1, #9",
    "lsrs r4, r4, #25",
    "adds r4, #128",
    "uxth r0, r0",
    "uxth r1, r1",
    "movs r5, r4",
    "muls r5, r0",
    "muls r4, r3",
    "muls r3, r1",
    "muls r0, r1",
    "adds r3, r3, r5",
    // product = r4 << 32 + r3 << 16 + r0 (r3 < 2^25).
    "lsls r5, r3, #16",
    "lsrs r3, r3, #16",
    "adds r0, r0, r5",
    "adcs r4, r3",
    // h = product >> 16, bit 0 jammed with the low 16 bits.
    "lsls r4, r4, #16",
    "lsrs r3, r0, #16",
    "adds r4, r4, r3",
    "lsls r0, r0, #16",
    "beq 2f",
    "movs r3, #1",
    "orrs r4, r3",
    "2:",
    "lsrs r3, r4, #31",
    "bne 4f",
    "lsrs r3, r4, #8",
    "movs r3, #63",
    "adcs r3, r4",
    "lsrs r3, r3, #7",
    "adds r0, r2, r3",
    "pop {{r4, r5}}",
    "bx lr",
    "4:",
    "lsrs r3, r4, #9",
    "movs r3, #127",
    "adcs r3, r4",
    "lsrs r3, r3, #8",
    "movs r0, #1",
    "lsls r0, r0, #23",
    "adds r0, r0, r2",
    "adds r0, r0, r3",
    "pop {{r4, r5}}",
    "bx lr",
    // A zero or subnormal, infinity or NaN operand: a zero times a
    // finite value is the zero of the signs' product.
    "20:",
    "lsls r2, r0, #1",
    "beq 21f",
    "lsls r3, r1, #1",
    "bne 30f",
    // b = +-0: a finite?
    "lsrs r2, r2, #24",
    "cmp r2, #255",
    "beq 30f",
    "b 22f",
    "21:",
    // a = +-0: b finite?
    "lsls r3, r1, #1",
    "lsrs r3, r3, #24",
    "cmp r3, #255",
    "beq 30f",
    "22:",
    "eors r0, r1",
    "lsrs r0, r0, #31",
    "lsls r0, r0, #31",
    "bx lr",
    "30:",
    "ldr r2, 82f",
    "bx r2",
    ".p2align 2",
    "82: .word __aeabi_fmul",
    ".size atome_sf_mul_t1, . - atome_sf_mul_t1",
);

// The add in Thumb-2: the same steps as the Thumb-1 one up to t = ma + s
// (t in [2^28, 2^31) unless more than one bit cancelled); then with
// k = clz(t) - 1 in {0, 1, 2}, t << k has its leading bit at bit 30 and
// rounds at bit 7 (bit 7 - k of t; the sticky bit stays below the guard
// bit), and the exponent field is ea - k before the rounded mantissa's
// implicit bit (or carry) adds 1.
#[cfg(all(atome_t2_soft, atome_device))]
core::arch::global_asm!(
    ".section .text.atome_sf_add_t2,\"ax\",%progbits",
    ".global atome_sf_add_t2",
    ".hidden atome_sf_add_t2",
    ".type atome_sf_add_t2,%function",
    ".syntax unified",
    ".thumb",
    ".thumb_func",
    ".p2align 2",
    "atome_sf_add_t2:",
    "mov r12, r0",
    "lsls r2, r0, #1",
    "cmp.w r2, r1, lsl #1",
    "itt lo",
    "movlo r0, r1",
    "movlo r1, r12",
    "ubfx r2, r0, #23, #8",
    "ubfx r3, r1, #23, #8",
    "cbz r3, 20f",
    "subs r3, r2, r3",
    "subs r2, #3",
    "cmp r2, #249",
    "bhi 30f",
    // From here on the operands are finite and normal, so the builtin's
    // sum does not depend on their order (no NaN): r12 is scratch, and no
    // register needs saving.
    // x = +-mb (mantissa, implicit bit at bit 29).
    "lsls r2, r1, #8",
    "orr r2, r2, #0x80000000",
    "lsrs r2, r2, #2",
    "teq r0, r1",
    "it mi",
    "rsbmi r2, r2, #0",
    // s = floor(x / 2^d), bit 0 set when bits were shifted out.
    "asr.w r12, r2, r3",
    "lsl.w r3, r12, r3",
    "cmp r3, r2",
    "it ne",
    "orrne r12, r12, #1",
    // t = ma + s.
    "lsls r2, r0, #8",
    "orr r2, r2, #0x80000000",
    "add.w r2, r12, r2, lsr #2",
    "clz r3, r2",
    "subs r3, #1",
    "cmp r3, #2",
    "bhi 6f",
    "lsls r2, r3",
    "lsrs r12, r2, #8",
    "adc r2, r2, #63",
    "lsrs r2, r2, #7",
    "lsrs r0, r0, #23",
    "subs r0, r0, r3",
    "add.w r0, r2, r0, lsl #23",
    "bx lr",
    // More than one leading bit cancelled (k = clz(t) - 1 >= 3, t < 2^28):
    // then d <= 1 and t is exact, so t << k (its low eight bits zero) is
    // the result at exponent field ea - k + 1 with no rounding; a
    // subnormal result (ea < k) goes to the builtin; x + (-x) is +0.0.
    "6:",
    "cmp r3, #31",
    "beq 7f",
    "ubfx r12, r0, #23, #8",
    "cmp r12, r3",
    "blo 8f",
    "lsls r2, r3",
    "lsrs r2, r2, #7",
    "lsrs r0, r0, #23",
    "subs r0, r0, r3",
    "add.w r0, r2, r0, lsl #23",
    "bx lr",
    "7:",
    "movs r0, #0",
    "bx lr",
    "8:",
    "b.w __aeabi_fadd",
    // b (the smaller) is a zero or subnormal: a + (+-0) = a for finite
    // nonzero a.
    "20:",
    "lsls r3, r1, #1",
    "bne 30f",
    "subs r2, #1",
    "cmp r2, #253",
    "it ls",
    "bxls lr",
    // The builtin, with the caller's operands in the caller's order.
    "30:",
    "cmp r12, r0",
    "itt ne",
    "movne r1, r0",
    "movne r0, r12",
    "b.w __aeabi_fadd",
    ".size atome_sf_add_t2, . - atome_sf_add_t2",
);

// The multiply in Thumb-2: [`super::sf::mul_int`]'s steps (both operands
// normal, e = ea + eb - 128 in [0, 250]; the mantissas top-aligned, their
// 64-bit product by UMULL, the low word jammed into bit 0 of the high one,
// nearest-even at bit 8 or 7) as a leaf routine with no stack; a zero
// times a finite value is the signs' zero (as mul_int's rare path), every
// other case `__aeabi_fmul` with the caller's operands.
// The product macro: a in \ra, b in \rb (both clobbered), scratch \rs
// and r12; the product's bits in \rb; \slow taken before any register
// is written.
#[cfg(all(atome_t2_soft, atome_device))]
core::arch::global_asm!(
    ".macro atome_t2_prod ra, rb, rs, slow",
    "ubfx \\rs, \\ra, #23, #8",
    "ubfx r12, \\rb, #23, #8",
    "sub \\rs, \\rs, #1",
    "cmp \\rs, #253",
    "bhi \\slow",
    "sub r12, r12, #1",
    "cmp r12, #253",
    "bhi \\slow",
    "add \\rs, \\rs, r12",
    "subs \\rs, \\rs, #126",
    "cmp \\rs, #250",
    "bhi \\slow",
    // rs = sign | e << 23 (the base the rounded mantissa is added to).
    "eor r12, \\ra, \\rb",
    "and r12, r12, #0x80000000",
    "orr \\rs, r12, \\rs, lsl #23",
    "lsl \\ra, \\ra, #8",
    "orr \\ra, \\ra, #0x80000000",
    "lsl \\rb, \\rb, #8",
    "orr \\rb, \\rb, #0x80000000",
    "umull r12, \\rb, \\ra, \\rb",
    "cmp r12, #0",
    "it ne",
    "orrne \\rb, \\rb, #1",
    "cmp \\rb, #0",
    "bmi 1f",
    "ubfx r12, \\rb, #7, #1",
    "add \\rb, \\rb, r12",
    "add \\rb, \\rb, #63",
    "add \\rb, \\rs, \\rb, lsr #7",
    "b 2f",
    "1:",
    "ubfx r12, \\rb, #8, #1",
    "add \\rb, \\rb, r12",
    "add \\rb, \\rb, #127",
    "add \\rb, \\rs, \\rb, lsr #8",
    "add \\rb, \\rb, #0x800000",
    "2:",
    ".endm",
    ".section .text.atome_sf_mul_t2,\"ax\",%progbits",
    ".global atome_sf_mul_t2",
    ".hidden atome_sf_mul_t2",
    ".type atome_sf_mul_t2,%function",
    ".syntax unified",
    ".thumb",
    ".thumb_func",
    ".p2align 2",
    "atome_sf_mul_t2:",
    "atome_t2_prod r1, r0, r2, 30f",
    "bx lr",
    // A zero times a finite value: the zero of the signs' product (the
    // forward pass's zero states); the rest, the builtin.
    "30:",
    "lsls r2, r0, #1",
    "beq 31f",
    "lsls r3, r1, #1",
    "bne 32f",
    "cmp r2, #0xff000000",
    "bhs 32f",
    "b 33f",
    "31:",
    "lsls r3, r1, #1",
    "cmp r3, #0xff000000",
    "bhs 32f",
    "33:",
    "eors r0, r1",
    "and r0, r0, #0x80000000",
    "bx lr",
    "32:",
    "b.w __aeabi_fmul",
    ".size atome_sf_mul_t2, . - atome_sf_mul_t2",
    // acc + a * b: r0 = acc (kept), the product into r1, then the add
    // (atome_sf_add_t2, which takes its operands in this order). The rare
    // products: `__aeabi_fmul`, then the add.
    ".section .text.atome_sf_mul_add_t2,\"ax\",%progbits",
    ".global atome_sf_mul_add_t2",
    ".hidden atome_sf_mul_add_t2",
    ".type atome_sf_mul_add_t2,%function",
    ".thumb_func",
    ".p2align 2",
    "atome_sf_mul_add_t2:",
    "atome_t2_prod r2, r1, r3, 30f",
    "b.w atome_sf_add_t2",
    // (A zero product as in atome_sf_mul_t2.)
    "30:",
    "lsls r3, r1, #1",
    "beq 31f",
    "lsls r3, r2, #1",
    "bne 34f",
    "lsls r3, r1, #1",
    "cmp r3, #0xff000000",
    "bhs 34f",
    "b 33f",
    "31:",
    "lsls r3, r2, #1",
    "cmp r3, #0xff000000",
    "bhs 34f",
    "33:",
    "eors r1, r2",
    "and r1, r1, #0x80000000",
    "b.w atome_sf_add_t2",
    "34:",
    "push {{r0, lr}}",
    "mov r0, r1",
    "mov r1, r2",
    "bl __aeabi_fmul",
    "mov r1, r0",
    "pop {{r0, lr}}",
    "b.w atome_sf_add_t2",
    ".size atome_sf_mul_add_t2, . - atome_sf_mul_add_t2",
    ".purgem atome_t2_prod",
);
