//! Pure-Rust binary32 math with the same bits on every target (docs/ARITHMETIC.md#math-functions).
//!
//! expf/tanhf return the binary64 evaluation rounded once to binary32
//! (IEEE-exact on every target, soft-float included). On microcontrollers an
//! integer fast path (`fixed`) gives the same bits at a fraction of the cost
//! and falls back to binary64 near a rounding boundary. sqrtf is correctly
//! rounded. With the `system-libm` feature, expf and tanhf come from the
//! platform C library.

mod fixed;

/// Where a 32 x 32 -> 64-bit product is a library call: thumbv6m (Cortex-M0,
/// no `SMULL`/`UMULL`; no 32-bit compare-and-swap either, which is how cfg
/// tells it). The fixed-point expf/tanhf and the q15 kernels build their
/// wide products from 16-bit multiplies there.
pub(crate) const NO_MULL: bool = cfg!(atome_armv6m);

/// Where count-leading-zeros is a library routine (`__clzsi2`, about 30
/// instructions and a call): the same cores as [`NO_MULL`] (ARMv6-M has
/// no `CLZ`).
const NO_CLZ: bool = NO_MULL;

/// Bit length of a byte value (0 for 0).
static BITLEN8: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut i = 1;
    while i < 256 {
        t[i] = t[i / 2] + 1;
        i += 1;
    }
    t
};

/// `x.leading_zeros()`, inline on every core: without `CLZ`, two halvings
/// and a byte table (about 12 instructions, no call).
#[inline(always)]
pub(crate) fn lz32(x: u32) -> u32 {
    if NO_CLZ {
        lz32_table(x)
    } else {
        x.leading_zeros()
    }
}

/// [`lz32`] without `CLZ` (a function of its own so that the host tests
/// check it).
#[inline(always)]
fn lz32_table(x: u32) -> u32 {
    let (mut v, mut n) = (x, 32);
    if v >> 16 != 0 {
        v >>= 16;
        n -= 16;
    }
    if v >> 8 != 0 {
        v >>= 8;
        n -= 8;
    }
    n - u32::from(BITLEN8[(v & 0xFF) as usize])
}

/// `x.leading_zeros()` for 64 bits, as [`lz32`].
#[inline(always)]
pub(crate) fn lz64(x: u64) -> u32 {
    if !NO_CLZ {
        return x.leading_zeros();
    }
    let hi = (x >> 32) as u32;
    if hi != 0 {
        lz32(hi)
    } else {
        32 + lz32(x as u32)
    }
}

const LN2_HI: f64 = 0.693_147_180_369_123_8; // low bits zero: k*LN2_HI exact
const LN2_LO: f64 = 1.908_214_929_270_587_7e-10;
const INV_LN2: f64 = core::f64::consts::LOG2_E;

/// 2^k as f64 for -1022 <= k <= 1023.
fn pow2(k: i32) -> f64 {
    f64::from_bits(((k + 1023) as u64) << 52)
}

/// 1.5 * 2^52: x + ROUNDER rounds x (|x| < 2^51) to an integer.
const ROUNDER: f64 = 6_755_399_441_055_744.0;

/// Taylor terms kept: |r| <= 0.347, so the first omitted one, r^14/14!, is
/// below 5e-18 of the result (binary64 rounding is 1.1e-16).
const TERMS: usize = 13;

/// 1/n! for n = 1..=TERMS.
const INV_FACT: [f64; TERMS] = {
    let mut t = [1.0f64; TERMS];
    let mut n = 1;
    while n < TERMS {
        t[n] = t[n - 1] / (n + 1) as f64;
        n += 1;
    }
    t
};

/// e^x = (1 + p) * 2^k for |x| <= 150: returns (p, k), with p = e^r - 1 and
/// r = x - k ln 2 in [-0.347, 0.347]. The one binary64 routine expf and tanhf
/// share (out of line on microcontrollers: on soft-float cores every
/// operation is a call; inlined where speed is measured in instructions).
#[cfg_attr(atome_portable, inline(never))]
#[cfg_attr(not(atome_portable), inline(always))]
fn exp_parts(x: f64) -> (f64, i32) {
    // k = x / ln 2 rounded to nearest: adding 1.5 * 2^52 leaves it in the
    // low bits (no float-to-int conversion, whose saturation checks are
    // calls on soft-float cores).
    let t = x * INV_LN2 + ROUNDER;
    let k = t.to_bits() as i32;
    let kf = t - ROUNDER;
    let r = (x - kf * LN2_HI) - kf * LN2_LO;
    let mut p = 0.0;
    for &c in INV_FACT.iter().rev() {
        p = (p + c) * r;
    }
    (p, k)
}

/// e^x for binary32, the same bits on every target.
#[cfg(not(feature = "system-libm"))]
// One copy of the fast path for the callers (the 24 KiB .text budget).
#[cfg_attr(atome_device, inline(never))]
pub fn expf(x: f32) -> f32 {
    if FAST {
        if let Some(y) = expf_fast(x) {
            return y;
        }
    }
    expf_b64(x)
}

/// tanh(x) for binary32, the same bits on every target.
#[cfg(not(feature = "system-libm"))]
#[cfg_attr(atome_device, inline(never))]
pub fn tanhf(x: f32) -> f32 {
    tanh_by::<FAST>(x)
}

/// [`tanhf`]'s steps: between the binary32 tests the integer fast path
/// when `F`, binary64 only otherwise ([`tanhf_b64`]).
#[inline(always)]
fn tanh_by<const F: bool>(x: f32) -> f32 {
    if x.is_nan() {
        return x + x;
    }
    // The tests in binary32 (exact, and cheap on soft-float cores).
    let a = x.abs();
    if a < 1.0 / 4096.0 {
        // tanh(x) = x(1 - x^2/3 + ...): rounds to x at this size.
        return x;
    }
    let t: f32 = if a > 20.0 {
        1.0
    } else if F {
        match fixed::tanh_mid(a) {
            Some(t) => t,
            None => tanh_mid_b64(a),
        }
    } else {
        tanh_mid_b64(a)
    };
    t.copysign(x)
}

/// The integer fast path serves expf/tanhf on microcontrollers (their
/// binary64 is software), except in the size-first build, which keeps the
/// smaller binary64-only code. Hosts with hardware binary64 keep it too
/// (fewer instructions there); the tests still run the fast path on them.
#[cfg(not(feature = "system-libm"))]
const FAST: bool = cfg!(atome_device);

/// Today's binary64 expf: the reference bits the fast path must equal,
/// and its fallback. Public for the exhaustive tests only.
#[doc(hidden)]
pub fn expf_b64(x: f32) -> f32 {
    if x.is_nan() {
        return x + x;
    }
    // e^89 rounds to +inf and e^-104 to 0 in binary32: clamping there
    // keeps 2^k a normal binary64.
    let (p, k) = exp_parts(x.clamp(-104.0, 89.0) as f64);
    ((1.0 + p) * pow2(k)) as f32
}

/// Today's binary64 tanhf (see [`expf_b64`]).
#[doc(hidden)]
pub fn tanhf_b64(x: f32) -> f32 {
    tanh_by::<false>(x)
}

/// tanh a for 1/4096 <= a <= 20 in binary64, rounded once.
// Inlined as before the fast path (the size-first build's code unchanged).
#[inline(always)]
fn tanh_mid_b64(a: f32) -> f32 {
    // tanh a = (e^2a - 1) / (e^2a + 1); e^2a - 1 without cancellation
    // when k = 0 (small a), where it matters. 2a is exact.
    let (p, k) = exp_parts((2.0 * a) as f64);
    let em1 = if k == 0 { p } else { (1.0 + p) * pow2(k) - 1.0 };
    (em1 / (em1 + 2.0)) as f32
}

/// The fast path alone: Some(expf(x)) when it decides the result, None
/// when expf falls back to [`expf_b64`]. Public for the exhaustive tests.
#[doc(hidden)]
pub fn expf_fast(x: f32) -> Option<f32> {
    fixed::exp(x)
}

/// The fast path alone for tanhf (see [`expf_fast`]); the special cases
/// (NaN aside) are answered as [`tanhf`] answers them.
#[doc(hidden)]
pub fn tanhf_fast(x: f32) -> Option<f32> {
    if x.is_nan() {
        return None;
    }
    let a = x.abs();
    if a < 1.0 / 4096.0 {
        return Some(x);
    }
    let t = if a > 20.0 { 1.0 } else { fixed::tanh_mid(a)? };
    Some(t.copysign(x))
}

#[cfg(feature = "system-libm")]
mod sys {
    extern "C" {
        pub fn expf(x: f32) -> f32;
        pub fn tanhf(x: f32) -> f32;
    }
}

/// e^x from the platform C library (feature `system-libm`).
#[cfg(feature = "system-libm")]
pub fn expf(x: f32) -> f32 {
    // SAFETY: expf is a pure C library function on a plain value.
    unsafe { sys::expf(x) }
}

/// tanh(x) from the platform C library (feature `system-libm`).
#[cfg(feature = "system-libm")]
pub fn tanhf(x: f32) -> f32 {
    // SAFETY: tanhf is a pure C library function on a plain value.
    unsafe { sys::tanhf(x) }
}

/// Correctly rounded square root (IEEE-754), as every C library's sqrtf.
pub fn sqrtf(x: f32) -> f32 {
    #[cfg(target_arch = "x86_64")]
    {
        use core::arch::x86_64::{_mm_cvtss_f32, _mm_set_ss, _mm_sqrt_ss};
        // SAFETY: SSE is part of the x86_64 baseline; sqrtss is correctly rounded.
        unsafe { _mm_cvtss_f32(_mm_sqrt_ss(_mm_set_ss(x))) }
    }
    #[cfg(atome_fpu)]
    {
        // SAFETY: a leaf routine of two instructions (below) under the
        // hard-float ABI every eabihf target has: x and the result in s0.
        unsafe { atome_vsqrt_f32(x) }
    }
    #[cfg(not(any(target_arch = "x86_64", atome_fpu)))]
    {
        sqrtf_soft(x)
    }
}

// Cortex-M4F/M7F/M33 (every eabihf target has single-precision VFP):
// VSQRT.F32 is correctly rounded, the same bits as sqrtf_soft, in 4 bytes
// instead of ~480. Written in assembly because rustc does not expose the
// single-precision-only FPU as the `sreg` register class.
#[cfg(atome_fpu)]
core::arch::global_asm!(
    ".section .text.atome_vsqrt_f32,\"ax\",%progbits",
    ".global atome_vsqrt_f32",
    ".hidden atome_vsqrt_f32",
    ".type atome_vsqrt_f32,%function",
    ".thumb_func",
    ".fpu fpv4-sp-d16",
    "atome_vsqrt_f32:",
    "vsqrt.f32 s0, s0",
    "bx lr",
    ".size atome_vsqrt_f32, . - atome_vsqrt_f32",
);

#[cfg(atome_fpu)]
extern "C" {
    fn atome_vsqrt_f32(x: f32) -> f32;
}

/// Integer, correctly rounded square root: the same result as the hardware's.
#[cfg_attr(atome_fpu, allow(dead_code))]
pub fn sqrtf_soft(x: f32) -> f32 {
    // (NaN quieted, zeros with their sign; +infinity is its own root.)
    if x.is_nan() || x == 0.0 {
        return x + x * 0.0;
    }
    if x == f32::INFINITY {
        return x;
    }
    if x < 0.0 {
        return f32::NAN;
    }
    let bits = x.to_bits();
    let mut e = (bits >> 23) as i32;
    let mut m = bits & 0x7f_ffff;
    if e == 0 {
        let sh = lz32(m) - 8;
        m <<= sh;
        e = 1 - sh as i32;
    } else {
        m |= 0x80_0000;
    }
    // x = m * 2^ex with m in [2^23, 2^24).
    let mut ex = e - 150;
    let mut mm = m as u64;
    if ex & 1 != 0 {
        mm <<= 1;
        ex -= 1;
    }
    // (big < 2^51, isqrt56's range: r has 25 or 26 bits, so 1 or 2 are
    // rounded off.)
    let big = mm << 26;
    ex -= 26;
    let (r, rem) = isqrt56(big);
    let nb = 32 - lz32(r);
    let drop = nb - 24;
    let mut q = r >> drop;
    let lost = r & ((1u32 << drop) - 1);
    let half = 1u32 << (drop - 1);
    if lost > half || (lost == half && (rem != 0 || q & 1 == 1)) {
        q += 1;
    }
    let mut exp2 = ex / 2 + drop as i32;
    if q == 1 << 24 {
        q >>= 1;
        exp2 += 1;
    }
    f32::from_bits((((exp2 + 150) as u32) << 23) | (q & 0x7f_ffff))
}

/// floor(sqrt(n)) and n - floor(sqrt(n))^2 for n < 2^56 with 32-bit work
/// only (sqrtf's operand has at most 51 bits): two input bits a step, root
/// r < 2^28, remainder below 2r + 1, so (rem << 2) + 3 < 2^31. No 64-bit
/// shift, compare or subtract per step (each a pair of instructions or a
/// library call on Cortex-M0).
fn isqrt56(n: u64) -> (u32, u32) {
    let (hi, lo) = ((n >> 32) as u32, n as u32);
    let (mut r, mut rem) = (0u32, 0u32);
    let mut step = |pair: u32| {
        rem = (rem << 2) | pair;
        let trial = (r << 2) | 1;
        if rem >= trial {
            rem -= trial;
            r = (r << 1) | 1;
        } else {
            r <<= 1;
        }
    };
    // Only the pairs from the highest nonzero one (leading zero pairs
    // leave r and rem at 0).
    if hi != 0 {
        let top = (32 - crate::math::lz32(hi)).div_ceil(2);
        for k in (0..top).rev() {
            step((hi >> (2 * k)) & 3);
        }
        for k in (0..16).rev() {
            step((lo >> (2 * k)) & 3);
        }
    } else {
        let top = (32 - crate::math::lz32(lo)).div_ceil(2);
        for k in (0..top).rev() {
            step((lo >> (2 * k)) & 3);
        }
    }
    (r, rem)
}

/// Natural logarithm for binary32 normal x > 0 (router entropy), in
/// binary32: within a few 1e-7 of ln x times (1 + |ln x|).
pub fn lnf(x: f32) -> f32 {
    let bits = x.to_bits();
    let mut k = ((bits >> 23) & 0xff) as i32 - 127;
    let mut m = f32::from_bits((bits & 0x7f_ffff) | (127 << 23)); // [1, 2)
    if m > core::f32::consts::SQRT_2 {
        m *= 0.5;
        k += 1;
    }
    // ln m = 2 atanh s, s = (m - 1)/(m + 1), |s| < 0.172: odd series to s^9.
    let s = (m - 1.0) / (m + 1.0);
    let s2 = s * s;
    let p = 1.0 + s2 * (1.0 / 3.0 + s2 * (1.0 / 5.0 + s2 * (1.0 / 7.0 + s2 * (1.0 / 9.0))));
    2.0 * s * p + k as f32 * core::f32::consts::LN_2
}

#[cfg(test)]
mod tests {
    #[test]
    fn isqrt_by_words() {
        // The 32-bit steps against the root's definition (r^2 <= n <
        // (r + 1)^2, remainder n - r^2): squares, their neighbours, every
        // bit length up to 56, random values.
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        let check = |n: u64| {
            let (r, rem) = super::isqrt56(n);
            let r = u64::from(r);
            assert!(r * r <= n && n < (r + 1) * (r + 1), "{n}: {r}");
            assert_eq!(u64::from(rem), n - r * r, "{n}");
        };
        for r in [0u64, 1, 2, 3, 4095, 4096, (1 << 28) - 1] {
            for n in [r * r, (r * r).saturating_sub(1), r * r + 1, r * r + 2 * r] {
                if n >> 56 == 0 {
                    check(n);
                }
            }
        }
        for _ in 0..100_000 {
            let x = crate::test_rng::xorshift64(&mut x);
            check(x >> (8 + x % 56));
        }
    }

    #[test]
    fn leading_zeros_by_table() {
        let mut x = 0x9E37_79B9u32;
        for k in 0..=32 {
            // Every bit length, with random bits below the top one.
            let v = if k == 0 { 0 } else { (x | 1 << 31) >> (32 - k) };
            assert_eq!(super::lz32_table(v), v.leading_zeros(), "{v:#x}");
            x = x.wrapping_mul(0x0019_660D).wrapping_add(0x3C6E_F35F);
        }
        for v in [0u64, 1, u64::from(u32::MAX), 1 << 32, u64::MAX, 0x0000_0010_0000_0000] {
            assert_eq!(super::lz64(v), v.leading_zeros());
        }
    }

    extern crate std;
    use super::*;

    fn ulps(a: f32, b: f32) -> u32 {
        if a == b {
            return 0;
        }
        (a.to_bits() as i64 - b.to_bits() as i64).unsigned_abs() as u32
    }

    #[test]
    fn sqrt_soft_matches_hardware() {
        let mut s = 0x1234_5678u32;
        for i in 0..2_000_000u32 {
            let s = crate::test_rng::xorshift32(&mut s);
            let x = f32::from_bits(if i < 1000 { i } else { s & 0x7fff_ffff });
            let a = sqrtf_soft(x);
            let b = std::primitive::f32::sqrt(x);
            assert!(a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()), "{x:e}: {a:e} vs {b:e}");
        }
        assert!(sqrtf_soft(-1.0).is_nan());
        assert_eq!(sqrtf_soft(f32::INFINITY), f32::INFINITY);
        assert!(sqrtf_soft(f32::NEG_INFINITY).is_nan());
        assert_eq!(sqrtf_soft(-0.0).to_bits(), (-0.0f32).to_bits());
    }

    #[cfg(not(feature = "system-libm"))]
    #[test]
    fn exp_tanh_close_to_std() {
        let mut worst = (0, 0);
        let mut s = 0x9e37_79b9u32;
        for i in 0..400_000 {
            let s = crate::test_rng::xorshift32(&mut s);
            let x = (s as f32 / u32::MAX as f32 - 0.5) * if i % 2 == 0 { 200.0 } else { 20.0 };
            worst.0 = worst.0.max(ulps(expf(x), std::primitive::f64::exp(x as f64) as f32));
            worst.1 = worst.1.max(ulps(tanhf(x), std::primitive::f64::tanh(x as f64) as f32));
        }
        assert!(worst.0 <= 1 && worst.1 <= 1, "{worst:?}");
        assert_eq!(expf(0.0), 1.0);
        assert_eq!(expf(f32::NEG_INFINITY), 0.0);
        assert_eq!(expf(f32::INFINITY), f32::INFINITY);
        assert!(expf(f32::NAN).is_nan() && tanhf(f32::NAN).is_nan());
        assert_eq!(tanhf(f32::INFINITY), 1.0);
        assert_eq!(tanhf(-0.0).to_bits(), (-0.0f32).to_bits());
    }

    #[test]
    fn ln_close_to_std() {
        let mut x = f32::MIN_POSITIVE;
        while x < 4.0 {
            let d = (lnf(x) as f64 - std::primitive::f64::ln(x as f64)).abs();
            assert!(d < 3e-7 * (1.0 + (x as f64).ln().abs()), "{x:e}: {} vs {}", lnf(x), (x as f64).ln());
            x = f32::from_bits(x.to_bits() + 997);
        }
        assert_eq!(lnf(1.0), 0.0);
    }
}
