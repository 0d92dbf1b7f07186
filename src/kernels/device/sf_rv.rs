//! [`super::sf`]'s add and multiply in RV32 assembly (riscv32imc/imac, no FPU). The
//! Rust `add_int` keeps the sticky bit and the three rounding positions on
//! every call (about 48 instructions a call there, 17% of the RV32 bench);
//! this routine takes the common case in about 31: with |a| >= |b| and s
//! = floor(+-mb / 2^d) (the smaller mantissa with six guard bits, signed
//! by the signs' product), when the sum stays in a's binade its bits are
//! a's bits plus floor((s + 32) / 64), the rounding carried by the float
//! format itself (nearest; at a half, s's low six bits exactly 32, a tie
//! to even unless bits were shifted out). A sum that leaves the binade is rounded
//! at bit 7 or 5 from t = ma + s, as `add_int`; a cancellation of more
//! than one bit is exact and shifted back into place. Zeros, subnormals,
//! infinities, NaN and results at the edges of the range
//! tail-call the compiler-builtins add (`__addsf3`, the code `a + b`
//! compiles to on these targets) with the caller's operands in their
//! order, so those bits are the plain code's.

/// The rare cases of `atome_sf_mul_add_rv` (an operand zero-or-finite
/// rules do not settle, or a product at the range's edges): the builtin's
/// product, then the add.
#[cfg(all(atome_rv32, atome_device))]
extern "C" fn mul_add_slow(acc: f32, a: f32, b: f32) -> f32 {
    super::sf::add_dev(acc, a * b)
}

// The routines (called from sf.rs).
#[cfg(all(atome_rv32, atome_device))]
extern "C" {
    #[link_name = "atome_sf_add_rv"]
    pub(super) fn sf_add(a: u32, b: u32) -> u32;
    #[link_name = "atome_sf_mul_rv"]
    pub(super) fn sf_mul(a: u32, b: u32) -> u32;
    #[link_name = "atome_sf_mul_add_rv"]
    pub(super) fn sf_mul_add(acc: u32, a: u32, b: u32) -> u32;
}

/// The rounded sum t1 (t2 = the rounding bits, 0 at a half) at a half:
/// a tie, to even, unless bits were shifted out (a7 << a4 != a6: the exact
/// sum is above the half and t1 was rounded up already).
#[cfg(all(atome_rv32, atome_device))]
macro_rules! half_to_even {
    () => {
        "bnez t2, 1f\nsll t2, a7, a4\nbne t2, a6, 1f\nandi t1, t1, -2\n1:"
    };
}

// a0 = a, a1 = b (kept for the builtin); \A, \B: the larger and the
// smaller magnitude (one copy of the body per order), \A2 = \A << 1,
// \B2 = \B << 1; a4 = eb then d, a5 = ea, a6 = x (+-mb), a7 = s, t0 =
// 2^29, t1 = r or t, t2 scratch.
#[cfg(all(atome_rv32, atome_device))]
core::arch::global_asm!(
    ".macro atome_rv_add A, B, A2, B2, sfx, fma, bn, af",
    "srli a4, \\B2, 24",
    // (\\bn: \\B is known normal; \\af: \\A is known finite.)
    ".if \\bn == 0",
    "beqz a4, .Lsfz\\sfx",
    ".endif",
    "srli a5, \\A2, 24",
    // a infinite or NaN: the builtin.
    ".if \\af == 0",
    "li a6, 255",
    "beq a5, a6, .Lsff\\fma",
    ".endif",
    "sub a4, a5, a4",
    // d >= 26: |b| is below a quarter of a's last bit, the sum is a.
    "li a6, 26",
    "bgeu a4, a6, .Lsfa\\sfx",
    // mb: the implicit bit at bit 29, six guard bits.
    "lui t0, 0x20000",
    "slli a6, \\B2, 8",
    "srli a6, a6, 3",
    "or a6, a6, t0",
    "xor a7, \\A, \\B",
    "bltz a7, .Lsfn\\sfx",
    // Same signs: t = ma + s >= 2^29. In a's binade (no carry out of the
    // fraction field) the sum is a + round(s / 64).
    "srl a7, a6, a4",
    "addi t1, a7, 32",
    "andi t2, t1, 63",
    "srli t1, t1, 6",
    "add t1, \\A, t1",
    "beqz t2, .Lsfh\\sfx",
    ".Lsfk\\sfx:",
    "xor t2, t1, \\A",
    "srli t2, t2, 23",
    "bnez t2, .Lsfu\\sfx",
    "mv a0, t1",
    "ret",
    // s's low six bits are a half: rounded up above when bits were
    // shifted out (the exact sum is above the half), else a tie: to even.
    ".Lsfh\\sfx:",
    "sll t2, a7, a4",
    "bne t2, a6, .Lsfk\\sfx",
    "andi t1, t1, -2",
    "j .Lsfk\\sfx",
    // The next binade (t >= 2^30 - 32): round t at bit 7; its implicit
    // bit (or the carry at 2^24) adds 1 to a's exponent field. Exponent
    // 254: it may overflow, the builtin.
    ".Lsfu\\sfx:",
    // (\\af: a product's exponent field is at most 253.)
    ".if \\af == 0",
    "li t2, 254",
    "beq a5, t2, .Lsff\\fma",
    ".endif",
    "slli t1, \\A2, 8",
    "srli t1, t1, 3",
    "or t1, t1, t0",
    "add t1, t1, a7",
    "addi t1, t1, 64",
    "andi t2, t1, 127",
    "srli t1, t1, 7",
    // (At a half: a tie unless bits were shifted out; ties to even.)
    half_to_even!(),
    "srli a0, \\A, 23",
    "slli a0, a0, 23",
    "add a0, a0, t1",
    "ret",
    // Opposite signs: s < 0; a's binade holds the sum when r - 1 keeps
    // a's exponent (r's fraction nonzero: t >= 2^29 surely).
    ".Lsfn\\sfx:",
    "neg a6, a6",
    "sra a7, a6, a4",
    "addi t1, a7, 32",
    "andi t2, t1, 63",
    "srai t1, t1, 6",
    "add t1, \\A, t1",
    // (At a half, as above.)
    half_to_even!(),
    "addi t2, t1, -1",
    "xor t2, t2, \\A",
    "srli t2, t2, 23",
    "bnez t2, .Lsfd\\sfx",
    "mv a0, t1",
    "ret",
    // t = ma + s below 2^29 + 32. Exponent field <= 2 (a result near or
    // below the subnormals): the builtin.
    ".Lsfd\\sfx:",
    "li t2, 2",
    "bgeu t2, a5, .Lsff\\fma",
    "slli t1, \\A2, 8",
    "srli t1, t1, 3",
    "or t1, t1, t0",
    "add t1, t1, a7",
    // t >= 2^29 (it rounds to 2^29, a's binade with a zero fraction): r.
    "bgeu t1, t0, .Lsfr\\sfx",
    "srli t2, t1, 28",
    "beqz t2, .Lsfc\\sfx",
    // t in [2^28, 2^29): round at bit 5, exponent - 1 (its implicit bit
    // adds 1 back to a's exponent field - 2).
    "addi t1, t1, 16",
    "andi t2, t1, 31",
    "srli t1, t1, 5",
    // (At a half, as above.)
    half_to_even!(),
    "srli a0, \\A, 23",
    "addi a0, a0, -2",
    "slli a0, a0, 23",
    "add a0, a0, t1",
    "ret",
    ".Lsfr\\sfx:",
    "srli a0, \\A, 23",
    "slli a0, a0, 23",
    "ret",
    // t < 2^28: more than one leading bit cancelled, so d <= 1 and t is
    // exact; x + (-x) = +0.0. Shifted up by k into [2^29, 2^30) (eight at
    // a time first, then one), its low seven bits zero, it is the result
    // at exponent field ea - k (>= 1, else the builtin).
    ".Lsfc\\sfx:",
    "beqz t1, .Lsf0\\fma",
    "lui t2, 0x200",
    ".Lsfc8\\sfx:",
    "bgeu t1, t2, .Lsfc1\\sfx",
    "slli t1, t1, 8",
    "addi a5, a5, -8",
    "j .Lsfc8\\sfx",
    ".Lsfc1\\sfx:",
    "bgeu t1, t0, .Lsfce\\sfx",
    "slli t1, t1, 1",
    "addi a5, a5, -1",
    "j .Lsfc1\\sfx",
    ".Lsfce\\sfx:",
    "blez a5, .Lsff\\fma",
    "srli t1, t1, 6",
    "addi a5, a5, -1",
    "slli a5, a5, 23",
    "add t1, t1, a5",
    "srli a0, \\A, 31",
    "slli a0, a0, 31",
    "or a0, a0, t1",
    "ret",
    // b is a zero or subnormal: a + (+-0) = a for finite nonzero a.
    ".Lsfz\\sfx:",
    "bnez \\B2, .Lsff\\fma",
    "srli a5, \\A2, 24",
    "addi a5, a5, -1",
    "li a6, 254",
    "bgeu a5, a6, .Lsff\\fma",
    ".Lsfa\\sfx:",
    "mv a0, \\A",
    "ret",
    ".endm",
    ".section .text.atome_sf_add_rv,\"ax\",@progbits",
    ".global atome_sf_add_rv",
    ".hidden atome_sf_add_rv",
    ".type atome_sf_add_rv,@function",
    ".p2align 2",
    "atome_sf_add_rv:",
    "slli a2, a0, 1",
    "slli a3, a1, 1",
    "bltu a2, a3, .Lsfsw",
    "atome_rv_add a0, a1, a2, a3, n, 0, 0, 0",
    ".Lsfsw:",
    "atome_rv_add a1, a0, a3, a2, s, 0, 0, 0",
    ".Lsf00:",
    "li a0, 0",
    "ret",
    // The builtin, with the caller's operands in the caller's order.
    ".Lsff0:",
    "tail __addsf3",
    ".size atome_sf_add_rv, . - atome_sf_add_rv",
    // The multiply of \A and \B into \R: `mul_int`'s cases and rounding,
    // with the low word of the 64-bit product (its sticky bits) computed
    // only at a half. a3 = ea, a4 = eb, a5 = e = ea + eb - 128, a6, a7 =
    // the mantissas top-aligned, t1 = h (the product's top word, in
    // [2^30, 2^32)), a3 = sign | e << 23 once ea is no longer needed.
    // fma 0: returns the product (a0), the rare cases through __mulsf3;
    // fma 1: the product (a1) goes on to the add with a0, the rare cases
    // to `mul_add_slow`.
    ".macro atome_rv_mul A, B, R, fma, sfx",
    "slli a3, \\A, 1",
    "srli a3, a3, 24",
    "slli a4, \\B, 1",
    "srli a4, a4, 24",
    "li a6, 253",
    "addi a5, a3, -1",
    "bgtu a5, a6, .Lsmz\\sfx",
    "addi a5, a4, -1",
    "bgtu a5, a6, .Lsmz\\sfx",
    // Both normal; e in [0, 250]: the product is normal and finite.
    "add a5, a3, a4",
    "addi a5, a5, -128",
    "li a6, 250",
    "bgtu a5, a6, .Lsmf\\sfx",
    "lui t0, 0x80000",
    "slli a6, \\A, 8",
    "or a6, a6, t0",
    "slli a7, \\B, 8",
    "or a7, a7, t0",
    "mulhu t1, a6, a7",
    "xor a3, \\A, \\B",
    "and a3, a3, t0",
    "slli a5, a5, 23",
    "or a3, a3, a5",
    "bltz t1, .Lsm8\\sfx",
    // Product below 2: nearest at bit 7; its implicit bit (or the carry
    // at 2^24) adds 1 to the exponent field.
    "addi t1, t1, 64",
    "andi t2, t1, 127",
    "srli t1, t1, 7",
    "beqz t2, .Lsmh\\sfx",
    ".Lsmr\\sfx:",
    "add \\R, a3, t1",
    "atome_rv_mul_end \\fma",
    // At a half: above it when the low word is nonzero (rounded up
    // already), else a tie: to even.
    ".Lsmh\\sfx:",
    "mul t2, a6, a7",
    "bnez t2, .Lsmr\\sfx",
    "andi t1, t1, -2",
    "j .Lsmr\\sfx",
    // A zero, subnormal, infinite or NaN operand: a zero times a finite
    // value is the zero of the signs' product; the rest the builtin.
    ".Lsmz\\sfx:",
    "li a6, 255",
    "slli t0, \\A, 1",
    "bnez t0, 1f",
    "bne a4, a6, .Lsm0\\sfx",
    "1:",
    "slli t0, \\B, 1",
    "bnez t0, .Lsmf\\sfx",
    "beq a3, a6, .Lsmf\\sfx",
    ".Lsm0\\sfx:",
    "xor \\R, \\A, \\B",
    "srli \\R, \\R, 31",
    "slli \\R, \\R, 31",
    // (A zero product: the add's general entry.)
    "atome_rv_mul_end \\fma, 1",
    ".Lsmf\\sfx:",
    ".if \\fma",
    "tail {slow}",
    ".else",
    "tail __mulsf3",
    ".endif",
    // Product >= 2: nearest at bit 8, exponent + 1 (last: with fma 1 it falls
    // through to the add).
    ".Lsm8\\sfx:",
    "addi t1, t1, 128",
    "andi t2, t1, 255",
    "srli t1, t1, 8",
    "lui t3, 0x800",
    "add a3, a3, t3",
    "beqz t2, .Lsmh\\sfx",
    "add \\R, a3, t1",
    "atome_rv_mul_end \\fma, 2",
    ".endm",
    // kind 0: a product; 1: a zero product; 2: a product, the macro's
    // last line.
    ".macro atome_rv_mul_end fma, kind=0",
    ".if \\fma && \\kind == 1",
    "j atome_sf_add_rv",
    ".elseif \\fma && \\kind == 0",
    "j .Lsfma",
    ".elseif \\fma",
    ".else",
    "ret",
    ".endif",
    ".endm",
    // (MUL and MULHU: the M extension of riscv32imc/imac; the assembler of
    // global_asm! is not told the target's extensions.)
    ".option push",
    ".option arch, +m",
    ".section .text.atome_sf_mul_rv,\"ax\",@progbits",
    ".global atome_sf_mul_rv",
    ".hidden atome_sf_mul_rv",
    ".type atome_sf_mul_rv,@function",
    ".p2align 2",
    "atome_sf_mul_rv:",
    "atome_rv_mul a0, a1, a0, 0, m",
    ".size atome_sf_mul_rv, . - atome_sf_mul_rv",
    // acc + a * b: the product (its rounding first) handed to the add in
    // registers, acc staying in a0.
    ".section .text.atome_sf_mul_add_rv,\"ax\",@progbits",
    ".global atome_sf_mul_add_rv",
    ".hidden atome_sf_mul_add_rv",
    ".type atome_sf_mul_add_rv,@function",
    ".p2align 2",
    "atome_sf_mul_add_rv:",
    "atome_rv_mul a1, a2, a1, 1, f",
    // The add with a normal product (exponent field 1 to 253) in a1: its
    // checks for a zero or subnormal b (the product the smaller) or an
    // infinite or NaN a (the product the larger) left out.
    ".Lsfma:",
    "slli a2, a0, 1",
    "slli a3, a1, 1",
    "bltu a2, a3, .Lsfmsw",
    "atome_rv_add a0, a1, a2, a3, fn, 1, 1, 0",
    ".Lsfmsw:",
    "atome_rv_add a1, a0, a3, a2, fs, 1, 0, 1",
    ".Lsf01:",
    "li a0, 0",
    "ret",
    // The builtin with (acc, the product).
    ".Lsff1:",
    "tail __addsf3",
    ".size atome_sf_mul_add_rv, . - atome_sf_mul_add_rv",
    ".option pop",
    ".purgem atome_rv_mul",
    ".purgem atome_rv_mul_end",
    ".purgem atome_rv_add",
    slow = sym mul_add_slow,
);
