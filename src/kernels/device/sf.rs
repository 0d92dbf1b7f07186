//! Exact binary32 add and multiply in integer arithmetic, for the float
//! work outside the matvec (the mix, LayerNorm, attention dot products) on
//! cores without an FPU.
//!
//! There each `f32 + f32` or `f32 * f32` is a compiler-builtins call that
//! handles every class of operand (on thumbv6m the multiply also calls a
//! 64-bit multiply and a count-leading-zeros routine). [`add`] and [`mul`]
//! take the common case, both operands normal and a normal result (with
//! some margin from the edges of the normal range), in a few dozen integer
//! instructions and round to nearest, ties to even, exactly as IEEE
//! binary32; every other case (a zero, a subnormal, an infinity or NaN
//! among the operands, a result at the edges of the range or below it) is
//! the platform's own float operation, so those bits are the plain code's on each target. Equality
//! with hardware f32 on the host: tests/soft_ops.rs and
//! scripts/soft_add_long.sh. On the Arm cores the add (and on thumbv6m the
//! multiply) is the same steps in assembly (sf_asm.rs); the QEMU parity
//! suite (scripts/qemu_parity.sh) checks those on device.
//!
//! [`add`], [`sub`] and [`mul`] are the integer routines where they measured
//! faster than the compiler-builtins calls (soft-float targets in the
//! default device build; see ADD_ACTIVE and MUL_ACTIVE) and the float
//! operators everywhere else (the same code as before on x86-64 and FPU
//! cores).

/// True on cores without an FPU in the default device build (not
/// size-first): there [`sub`] and [`add`] may run the integer routine.
pub const ACTIVE: bool = cfg!(all(
    atome_device,
    not(any(target_abi = "eabihf", target_arch = "x86_64", target_arch = "aarch64", target_feature = "f"))
));

/// Where [`add`] runs the integer routine: every soft-float core (the
/// Arm ones in Thumb-1 assembly, sf_asm.rs). On riscv32imc, S3 48.7M with
/// the compiler-builtins add and multiply, 47.1M with this multiply, 45.9M
/// with this add too.
const ADD_ACTIVE: bool = ACTIVE;

/// Where [`mul`] runs the integer routine: every soft-float core (thumbv6m:
/// the Thumb-1 routine; Armv7-M: the Thumb-2 one, one UMULL; RV32: the
/// Rust one, MUL and MULHU).
const MUL_ACTIVE: bool = ACTIVE;

/// a - b (= a + (-b) in IEEE arithmetic), bit-exact binary32.
#[inline(always)]
pub fn sub(a: f32, b: f32) -> f32 {
    if ADD_ACTIVE {
        add_dev(a, -b)
    } else {
        a - b
    }
}

/// a + b, bit-exact binary32 (the integer routine where ADD_ACTIVE).
#[inline(always)]
pub fn add(a: f32, b: f32) -> f32 {
    if ADD_ACTIVE {
        add_dev(a, b)
    } else {
        a + b
    }
}

/// a * b, bit-exact binary32 (the integer routine where MUL_ACTIVE).
#[inline(always)]
pub fn mul(a: f32, b: f32) -> f32 {
    if MUL_ACTIVE {
        mul_dev(a, b)
    } else {
        a * b
    }
}

/// a > b (IEEE: false when either is NaN; +0 and -0 are equal): the
/// integer test [`gt_int`] on cores without an FPU, `>` elsewhere.
#[inline(always)]
pub fn gt(a: f32, b: f32) -> bool {
    if ACTIVE {
        gt_int(a, b)
    } else {
        a > b
    }
}

/// a > b on the bits, instead of the compare builtin: false for a NaN or
/// two zeros, else sign-magnitude mapped to an order-preserving unsigned
/// key.
#[inline(always)]
pub fn gt_int(a: f32, b: f32) -> bool {
    let (ua, ub) = (a.to_bits(), b.to_bits());
    if ua << 1 > 0xff00_0000 || ub << 1 > 0xff00_0000 || (ua | ub) << 1 == 0 {
        return false;
    }
    let key = |u: u32| if u >> 31 != 0 { !u } else { u | 0x8000_0000 };
    key(ua) > key(ub)
}

/// c * scale for a ternary code c: the bits of `c as f32 * scale`
/// ([`trit_times_int`] on cores without an FPU).
#[inline(always)]
pub fn trit_times(c: i8, scale: f32) -> f32 {
    if ACTIVE {
        trit_times_int(c, scale)
    } else {
        c as f32 * scale
    }
}

/// c * scale with no conversion or multiply call for c in {-1, 0, +1} and
/// a finite scale: scale, -scale, or the zero of the scale's sign (exact
/// IEEE products); otherwise the float product.
#[inline(always)]
pub fn trit_times_int(c: i8, scale: f32) -> f32 {
    let u = scale.to_bits();
    if u << 1 >= 0xff00_0000 {
        return c as f32 * scale;
    }
    match c {
        1 => scale,
        -1 => f32::from_bits(u ^ 0x8000_0000),
        0 => f32::from_bits(u & 0x8000_0000),
        _ => c as f32 * scale,
    }
}

/// acc + a * b, the product rounded first: exactly `add(acc, mul(a, b))`
/// (on Armv7-M without an FPU and on riscv32 one routine, the product
/// passed to the add in registers).
#[inline(always)]
pub fn mul_add(acc: f32, a: f32, b: f32) -> f32 {
    // SAFETY: as for the add (`dev_op`).
    #[cfg(any(all(atome_t2_soft, atome_device), all(atome_rv32, atome_device)))]
    return f32::from_bits(unsafe { dev::sf_mul_add(acc.to_bits(), a.to_bits(), b.to_bits()) });
    #[allow(unreachable_code)]
    add(acc, mul(a, b))
}

/// The device's assembly routines: sf_asm.rs on the Arm cores without an
/// FPU (Thumb-1 on thumbv6m, Thumb-2 on Armv7-M), sf_rv.rs on riscv32.
#[cfg(all(atome_arm_soft, atome_device))]
use super::sf_asm as dev;
#[cfg(all(atome_rv32, atome_device))]
use super::sf_rv as dev;

/// Defines `$name`, the device's integer binary32 operation: the
/// assembly routine `dev::$op` where there is one, else the portable
/// `$int`.
macro_rules! dev_op {
    ($name:ident, $op:ident, $int:ident) => {
        #[inline(always)]
        pub(super) fn $name(a: f32, b: f32) -> f32 {
            // SAFETY: the routine reads and writes only registers and its
            // own stack slots (RV32: only caller-saved registers, no
            // memory), keeps every callee-saved register (AAPCS, the
            // RISC-V convention), and is total: every input has a result
            // (the builtin's for the cases it does not take).
            #[cfg(any(all(atome_arm_soft, atome_device), all(atome_rv32, atome_device)))]
            return f32::from_bits(unsafe { dev::$op(a.to_bits(), b.to_bits()) });
            #[allow(unreachable_code)]
            $int(a, b)
        }
    };
}
dev_op!(add_dev, sf_add, add_int);
dev_op!(mul_dev, sf_mul, mul_int);

/// The platform's float add (the rare cases of [`add_int`]).
#[inline(never)]
fn add_float(a: f32, b: f32) -> f32 {
    a + b
}

/// The platform's float multiply (the rare cases of [`mul_int`]).
#[inline(never)]
fn mul_float(a: f32, b: f32) -> f32 {
    a * b
}

/// a + b in integer arithmetic when both are normal, the larger exponent
/// is in [3, 252] and the sum is normal (a sum that cancels more than one
/// leading bit is exact: shifted back into place), else the platform's add. A zero operand returns the
/// other one when that is finite and nonzero (x + 0 = x exactly). The same
/// steps as the Thumb-1 routine (sf_asm.rs), which the Arm cores run.
#[inline(never)]
pub fn add_int(a: f32, b: f32) -> f32 {
    let (ua, ub) = (a.to_bits(), b.to_bits());
    // Larger magnitude first (magnitudes order like their bit patterns).
    let (ua, ub) = if ua << 1 >= ub << 1 { (ua, ub) } else { (ub, ua) };
    let (ea, eb) = (ua << 1 >> 24, ub << 1 >> 24);
    if eb == 0 {
        // x + (+-0) = x for finite nonzero x (the smaller one is the zero).
        if ub << 1 == 0 && ea.wrapping_sub(1) < 254 {
            return f32::from_bits(ua);
        }
        return add_float(a, b);
    }
    if ea.wrapping_sub(3) > 249 {
        return add_float(a, b);
    }
    // Mantissas with the implicit bit at bit 29 and six guard bits.
    let ma = ((ua << 9 >> 3) | 1 << 29) as i32;
    let mb = ((ub << 9 >> 3) | 1 << 29) as i32;
    let x = if (ua ^ ub) >> 31 != 0 { -mb } else { mb };
    // floor(x / 2^d) with any nonzero remainder jammed into bit 0: every
    // rounding decision at bit 7, 6 or 5 is the exact sum's (d >= 31 acts
    // as d = 31: 0 or -1, and a nonzero remainder).
    let d = (ea - eb).min(31);
    let s = x >> d;
    // |a| >= |b|, so t >= 0 (0 only for x + (-x)), and t < 2^31.
    let t = (ma + s) | ((s << d) != x) as i32;
    // q = round(t / 2^p) in [2^23, 2^24]; its implicit bit (or the carry
    // at 2^24) adds 1 to the exponent field sign | (e - 1) << 23.
    let (q, base) = if t >= 1 << 30 {
        ((t + 63 + ((t >> 7) & 1)) >> 7, ua >> 23 << 23)
    } else if t >= 1 << 29 {
        ((t + 31 + ((t >> 6) & 1)) >> 6, ((ua >> 23) - 1) << 23)
    } else if t >= 1 << 28 {
        ((t + 15 + ((t >> 5) & 1)) >> 5, ((ua >> 23) - 2) << 23)
    } else {
        // More than one leading bit cancelled (t < 2^28): then d <= 1, so
        // t is exact; shifted up into [2^29, 2^30) (k >= 2, its low seven
        // bits zero) it is the result at exponent field ea - k. x + (-x)
        // is +0.0; a subnormal result (ea - k < 1) the platform's add.
        if t == 0 {
            return 0.0;
        }
        let k = t.leading_zeros() - 2;
        let e = (ea as i32) - k as i32;
        if e < 1 {
            return add_float(a, b);
        }
        let q = (t as u32) << k >> 6;
        return f32::from_bits((ua & 0x8000_0000) | ((((e - 1) as u32) << 23) + q));
    };
    f32::from_bits(base + q as u32)
}

/// a * b in integer arithmetic when both are normal and ea + eb - 128 is in
/// [0, 250] (the product is normal and finite, rounding included), else
/// the platform's multiply; a zero times a finite value is the zero of the
/// signs' product. The 48-bit product of the mantissas is one 32 x 32 ->
/// 64-bit multiply here (UMULL on Armv7-M, MUL and MULHU on RV32); the
/// Thumb-1 routine (sf_asm.rs) builds it from four 16-bit products and
/// rounds the same way.
#[inline(never)]
pub fn mul_int(a: f32, b: f32) -> f32 {
    let (ua, ub) = (a.to_bits(), b.to_bits());
    let (ea, eb) = (ua << 1 >> 24, ub << 1 >> 24);
    let e = ea.wrapping_add(eb).wrapping_sub(128);
    if ea.wrapping_sub(1) >= 254 || eb.wrapping_sub(1) >= 254 || e > 250 {
        // A zero times a finite value: a zero of the signs' product (the
        // forward pass multiplies by zero weights and zero states).
        if (ua << 1 == 0 && eb != 0xff) || (ub << 1 == 0 && ea != 0xff) {
            return f32::from_bits((ua ^ ub) & 0x8000_0000);
        }
        return mul_float(a, b);
    }
    // Mantissas top-aligned: the product is in [2^62, 2^64).
    let p = u64::from(ua << 8 | 1 << 31) * u64::from(ub << 8 | 1 << 31);
    // Its top word with the low word's bits jammed into bit 0.
    let h = (p >> 32) as u32 | (p as u32 != 0) as u32;
    let base = ((ua ^ ub) & 0x8000_0000) | e << 23;
    // Nearest, ties to even, at bit 8 (product >= 2: exponent + 1) or 7.
    if h >= 1 << 31 {
        f32::from_bits(base + (1 << 23) + ((h + 127 + ((h >> 8) & 1)) >> 8))
    } else {
        f32::from_bits(base + ((h + 63 + ((h >> 7) & 1)) >> 7))
    }
}
