//! Pure-Rust binary32 math with the same bits on every target (SPEC section 5).
//!
//! expf/tanhf evaluate in binary64 (IEEE-exact on every target, soft-float
//! included) and round once to binary32; sqrtf is correctly rounded. With the
//! `system-libm` feature, expf and tanhf come from the platform C library.

#[cfg_attr(feature = "system-libm", allow(dead_code))]
const LN2_HI: f64 = 6.931_471_803_691_238_164_90e-01; // low bits zero: k*LN2_HI exact
#[cfg_attr(feature = "system-libm", allow(dead_code))]
const LN2_LO: f64 = 1.908_214_929_270_587_700_02e-10;
#[cfg_attr(feature = "system-libm", allow(dead_code))]
const INV_LN2: f64 = 1.442_695_040_888_963_387_00;

/// 2^k as f64 for -1022 <= k <= 1023.
fn pow2(k: i32) -> f64 {
    f64::from_bits(((k + 1023) as u64) << 52)
}

/// Round half away from zero, for the range reduction.
#[cfg_attr(feature = "system-libm", allow(dead_code))]
fn round_i32(x: f64) -> i32 {
    if x >= 0.0 {
        (x + 0.5) as i32
    } else {
        (x - 0.5) as i32
    }
}

/// 1/n! for n = 0..=17.
#[cfg_attr(feature = "system-libm", allow(dead_code))]
const INV_FACT: [f64; 18] = {
    let mut t = [1.0f64; 18];
    let mut n = 1;
    while n < 18 {
        t[n] = t[n - 1] / n as f64;
        n += 1;
    }
    t
};

/// e^r - 1 by its Taylor series to r^N (Horner, coefficients 1/n!).
#[cfg_attr(feature = "system-libm", allow(dead_code))]
#[inline(always)]
fn expm1_taylor<const N: usize>(r: f64) -> f64 {
    let mut p = INV_FACT[N];
    let mut n = N - 1;
    while n >= 1 {
        p = p * r + INV_FACT[n];
        n -= 1;
    }
    p * r
}

/// e^r - 1 for |r| <= 0.75 to r^17 (relative error < 1e-16).
#[cfg_attr(feature = "system-libm", allow(dead_code))]
fn expm1_small(r: f64) -> f64 {
    expm1_taylor::<17>(r)
}

/// e^r - 1 for |r| <= 0.35 to r^12 (the first omitted term, r^13/13!, is
/// below 1.8e-16: the f32 result is the same as with the full series except
/// within ~1e-16 relative of a rounding boundary).
#[cfg_attr(feature = "system-libm", allow(dead_code))]
#[inline(always)]
fn expm1_reduced(r: f64) -> f64 {
    expm1_taylor::<12>(r)
}

/// e^x in binary64 for |x| <= 150 (the range expf uses).
#[cfg_attr(feature = "system-libm", allow(dead_code))]
#[inline(always)]
fn exp_f64_short(x: f64) -> f64 {
    let k = round_i32(x * INV_LN2);
    let kf = k as f64;
    let r = (x - kf * LN2_HI) - kf * LN2_LO; // |r| <= 0.35
    (1.0 + expm1_reduced(r)) * pow2(k)
}

/// e^x in binary64 for |x| <= 700.
#[cfg_attr(feature = "system-libm", allow(dead_code))]
fn exp_f64(x: f64) -> f64 {
    let k = round_i32(x * INV_LN2);
    let kf = k as f64;
    let r = (x - kf * LN2_HI) - kf * LN2_LO; // |r| <= 0.35
    (1.0 + expm1_small(r)) * pow2(k)
}

/// e^x for binary32, the same bits on every target.
#[cfg(not(feature = "system-libm"))]
pub fn expf(x: f32) -> f32 {
    if x.is_nan() {
        return x + x;
    }
    if x > 89.0 {
        return f32::INFINITY;
    }
    if x < -104.0 {
        return 0.0;
    }
    exp_f64_short(x as f64) as f32
}

/// tanh(x) for binary32, the same bits on every target.
#[cfg(not(feature = "system-libm"))]
pub fn tanhf(x: f32) -> f32 {
    if x.is_nan() {
        return x + x;
    }
    let a = (x as f64).abs();
    if a < 1.0 / 4096.0 {
        // tanh(x) = x(1 - x^2/3 + ...): rounds to x at this size.
        return x;
    }
    let t = if a > 20.0 {
        1.0
    } else {
        let y = 2.0 * a;
        let em1 = if y <= 0.75 { expm1_small(y) } else { exp_f64(y) - 1.0 };
        em1 / (em1 + 2.0)
    };
    let t = t as f32;
    if x < 0.0 {
        -t
    } else {
        t
    }
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
    #[cfg(not(target_arch = "x86_64"))]
    {
        sqrtf_soft(x)
    }
}

/// Integer, correctly rounded square root: the same result as the hardware's.
pub fn sqrtf_soft(x: f32) -> f32 {
    if x.is_nan() || x == 0.0 || x == f32::INFINITY {
        return x + x * 0.0;
    }
    if x < 0.0 {
        return f32::NAN;
    }
    let bits = x.to_bits();
    let mut e = (bits >> 23) as i32;
    let mut m = bits & 0x7f_ffff;
    if e == 0 {
        let sh = m.leading_zeros() - 8;
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
    let big = mm << 26;
    ex -= 26;
    let r = isqrt(big);
    let rem = big - r * r;
    let nb = 64 - r.leading_zeros();
    let drop = nb - 24;
    let mut q = r >> drop;
    let lost = r & ((1u64 << drop) - 1);
    let half = 1u64 << (drop - 1);
    if lost > half || (lost == half && (rem != 0 || q & 1 == 1)) {
        q += 1;
    }
    let mut exp2 = ex / 2 + drop as i32;
    if q == 1 << 24 {
        q >>= 1;
        exp2 += 1;
    }
    f32::from_bits((((exp2 + 150) as u32) << 23) | (q as u32 & 0x7f_ffff))
}

/// floor(sqrt(n)), bit by bit.
fn isqrt(n: u64) -> u64 {
    let mut rem = n;
    let mut res = 0u64;
    let mut bit = 1u64 << 62;
    while bit > n {
        bit >>= 2;
    }
    while bit != 0 {
        if rem >= res + bit {
            rem -= res + bit;
            res = (res >> 1) + bit;
        } else {
            res >>= 1;
        }
        bit >>= 2;
    }
    res
}

/// Natural logarithm in binary64 for finite x > 0 (router entropy).
pub fn ln_f64(x: f64) -> f64 {
    if !(x > 0.0) {
        return f64::NAN;
    }
    if x == f64::INFINITY {
        return x;
    }
    let mut bits = x.to_bits();
    let mut k = 0i32;
    if bits >> 52 == 0 {
        // subnormal: scale up by 2^54
        bits = (x * pow2(54)).to_bits();
        k -= 54;
    }
    k += ((bits >> 52) & 0x7ff) as i32 - 1023;
    let mut m = f64::from_bits((bits & 0x000f_ffff_ffff_ffff) | (1023u64 << 52)); // [1,2)
    if m > core::f64::consts::SQRT_2 {
        m *= 0.5;
        k += 1;
    }
    // ln(m) = 2 atanh(s), s = (m-1)/(m+1), |s| < 0.172
    let s = (m - 1.0) / (m + 1.0);
    let s2 = s * s;
    let mut p = 0.0;
    let mut n = 21.0;
    while n >= 1.0 {
        p = 1.0 / n + s2 * p;
        n -= 2.0;
    }
    2.0 * s * p + k as f64 * core::f64::consts::LN_2
}

#[cfg(test)]
mod tests {
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
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            let x = f32::from_bits(if i < 1000 { i } else { s & 0x7fff_ffff });
            let a = sqrtf_soft(x);
            let b = std::primitive::f32::sqrt(x);
            assert!(a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()), "{x:e}: {a:e} vs {b:e}");
        }
        assert!(sqrtf_soft(-1.0).is_nan());
        assert_eq!(sqrtf_soft(-0.0).to_bits(), (-0.0f32).to_bits());
    }

    #[cfg(not(feature = "system-libm"))]
    #[test]
    fn exp_tanh_close_to_std() {
        let mut worst = (0, 0);
        let mut s = 0x9e37_79b9u32;
        for i in 0..400_000 {
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
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
        for i in 1..100_000 {
            let x = i as f64 * 0.37e-3;
            let d = (ln_f64(x) - std::primitive::f64::ln(x)).abs();
            assert!(d < 1e-14 * (1.0 + x.ln().abs()), "{x}");
        }
    }
}
