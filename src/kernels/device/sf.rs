//! Exact binary32 add and multiply in integer arithmetic, for the float
//! work outside the matvec (the mix, LayerNorm, attention dot products) on
//! cores without an FPU.
//!
//! There each `f32 + f32` or `f32 * f32` is a compiler-builtins call that
//! handles every class of operand (on thumbv6m the multiply also calls a
//! 64-bit multiply and a count-leading-zeros routine). [`add`] and [`mul`]
//! take the common case, both operands normal and a normal result, in a
//! few dozen integer instructions and round to nearest, ties to even,
//! exactly as IEEE binary32; every other case (a zero, a subnormal, an
//! infinity or NaN among the operands or the result, and a sum that
//! cancels more than one leading bit) is the platform's own float
//! operation, so those bits are the plain code's on each target. Equality
//! with hardware f32 on the host: tests/soft_ops.rs and
//! scripts/soft_add_long.sh.
//!
//! [`add`], [`sub`] and [`mul`] are the integer routines where they measured
//! faster than the compiler-builtins calls (soft-float targets in the
//! default device build; see ADD_ACTIVE and MUL_ACTIVE) and the float
//! operators everywhere else (the same code as before on x86-64 and FPU
//! cores).

/// True on cores without an FPU in the default device build (not
/// size-first): there [`sub`] and [`add`] may run the integer routine.
pub const ACTIVE: bool = cfg!(all(
    atome_portable,
    not(feature = "size-first"),
    not(any(target_abi = "eabihf", target_arch = "x86_64", target_arch = "aarch64", target_feature = "f"))
));

/// Where [`add`] runs the integer routine: the Arm soft-float cores (on
/// riscv32imc the compiler-builtins add measured faster: S3 61.3M with it,
/// 62.4M with this one).
const ADD_ACTIVE: bool = ACTIVE && cfg!(target_arch = "arm");

/// Where [`mul`] runs the integer routine: thumbv6m (Cortex-M0/M0+, the
/// Arm core without a 32 x 32 -> 64-bit multiply: no 32-bit
/// compare-and-swap either, which is how cfg can tell it), where the
/// compiler-builtins multiply calls a 64-bit multiply routine (S3 95.9M ->
/// 93.4M with this one). Elsewhere the builtins multiply measured faster.
const MUL_ACTIVE: bool = ACTIVE && cfg!(all(target_arch = "arm", not(target_has_atomic = "32")));

/// a - b (= a + (-b) in IEEE arithmetic), bit-exact binary32.
#[inline(always)]
pub fn sub(a: f32, b: f32) -> f32 {
    if ADD_ACTIVE {
        add_int(a, -b)
    } else {
        a - b
    }
}

/// a + b, bit-exact binary32 (the integer routine where ADD_ACTIVE).
#[inline(always)]
pub fn add(a: f32, b: f32) -> f32 {
    if ADD_ACTIVE {
        add_int(a, b)
    } else {
        a + b
    }
}

/// a * b, bit-exact binary32 (the integer routine where MUL_ACTIVE).
#[inline(always)]
pub fn mul(a: f32, b: f32) -> f32 {
    if MUL_ACTIVE {
        mul_int(a, b)
    } else {
        a * b
    }
}

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

/// a + b in integer arithmetic when both are normal and the result is a
/// normal float, else the platform's add. A zero operand returns the other
/// one when that is nonzero (x + 0 = x exactly for x != 0).
#[inline(never)]
pub fn add_int(a: f32, b: f32) -> f32 {
    let (ua, ub) = (a.to_bits(), b.to_bits());
    // Larger magnitude first (magnitudes order like their bit patterns).
    let (ua, ub) = if ua << 1 >= ub << 1 { (ua, ub) } else { (ub, ua) };
    let (ea, eb) = ((ua >> 23) & 0xff, (ub >> 23) & 0xff);
    if ea.wrapping_sub(1) >= 254 || eb.wrapping_sub(1) >= 254 {
        // x + (+-0) = x for finite nonzero x (the smaller one is the zero).
        if ub << 1 == 0 && ea.wrapping_sub(1) < 254 {
            return f32::from_bits(ua);
        }
        return add_float(a, b);
    }
    // Mantissas with the implicit bit and six guard bits (< 2^30).
    let ma = (((ua & 0x7f_ffff) | 0x80_0000) << 6) as i32;
    let mb = (((ub & 0x7f_ffff) | 0x80_0000) << 6) as i32;
    let x = if (ua ^ ub) >> 31 != 0 { -mb } else { mb };
    let d = ea - eb;
    // floor(x / 2^d) with any nonzero remainder jammed into bit 0: every
    // rounding decision at bit 7, 6 or 5 is the exact sum's (soft.rs add6).
    let (s, lost) = if d < 31 {
        let s = x >> d;
        (s, (s << d) != x)
    } else {
        (x >> 31, true)
    };
    // |a| >= |b|, so t >= 0; 0 only for x + (-x).
    let t = ma.wrapping_add(s) | lost as i32;
    let (p, e) = if t >= 1 << 30 {
        (7, ea + 1)
    } else if t >= 1 << 29 {
        (6, ea)
    } else if t >= 1 << 28 && ea > 2 {
        (5, ea - 1)
    } else {
        // Cancellation of more than one bit (or a result near the
        // subnormal range): rare, exact or not, the platform's add.
        if t == 0 {
            return 0.0;
        }
        return add_float(a, b);
    };
    let mut q = (t + (1 << (p - 1)) - 1 + ((t >> p) & 1)) >> p;
    let mut e = e;
    if q == 1 << 24 {
        // Rounded up into the next binade; exact.
        q >>= 1;
        e += 1;
    }
    if e > 254 {
        return add_float(a, b);
    }
    // The implicit bit of q carries into the exponent field.
    f32::from_bits((ua & 0x8000_0000) | (((e - 1) << 23) + q as u32))
}

/// a * b in integer arithmetic when both are normal and the product is a
/// normal float, else the platform's multiply. The 48-bit product of the
/// 24-bit mantissas comes from four 12 x 12-bit products (the 32-bit
/// multiply every one of these cores has).
#[inline(never)]
pub fn mul_int(a: f32, b: f32) -> f32 {
    let (ua, ub) = (a.to_bits(), b.to_bits());
    let (ea, eb) = ((ua >> 23) & 0xff, (ub >> 23) & 0xff);
    if ea.wrapping_sub(1) >= 254 || eb.wrapping_sub(1) >= 254 {
        // A zero times a finite value: a zero of the signs' product (the
        // forward pass multiplies by zero weights and zero states).
        if (ua << 1 == 0 && eb != 0xff) || (ub << 1 == 0 && ea != 0xff) {
            return f32::from_bits((ua ^ ub) & 0x8000_0000);
        }
        return mul_float(a, b);
    }
    let ma = (ua & 0x7f_ffff) | 0x80_0000;
    let mb = (ub & 0x7f_ffff) | 0x80_0000;
    let (ah, al) = (ma >> 12, ma & 0xfff);
    let (bh, bl) = (mb >> 12, mb & 0xfff);
    let mid = ah * bl + al * bh; // < 2^25
    let low = ((mid & 0xfff) << 12) + al * bl; // < 2^25
    // product = top * 2^24 + rem, top in [2^22, 2^24), rem < 2^24.
    let mut top = ah * bh + (mid >> 12) + (low >> 24);
    let mut rem = low & 0xff_ffff;
    // Biased exponent of top * 2^(e - 150) = the product.
    let mut e = (ea + eb) as i32 - 126;
    if top < 1 << 23 {
        top = (top << 1) | (rem >> 23);
        rem = (rem << 1) & 0xff_ffff;
        e -= 1;
    }
    // Nearest, ties to even: up when rem is above half an ulp (2^23), or
    // exactly half and top is odd.
    if rem + (top & 1) > 1 << 23 {
        top += 1;
        if top == 1 << 24 {
            top >>= 1;
            e += 1;
        }
    }
    if (e - 1) as u32 >= 254 {
        return mul_float(a, b);
    }
    f32::from_bits(((ua ^ ub) & 0x8000_0000) | ((((e - 1) as u32) << 23) + top))
}
