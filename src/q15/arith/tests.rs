use super::div::{div_bits, div_q32_long};
use super::{bitlen, f32_parts, fquant_exp, rshr, rshr_mul16_split, rshr_mul_split, to_f32_f64, to_f32_int as to_f32, to_f32_words, E_ZERO, QA};

use crate::test_rng::xorshift64 as xorshift;

/// to_f32's 32-bit word steps against its binary64 form: every magnitude
/// up to 2^53 and beyond, exponents from underflow to overflow, ties.
/// (The word steps take the normal results; the rest is the binary64
/// form itself, so the count below checks that most cases are real
/// comparisons.)
#[test]
fn to_f32_is_the_binary64_rounding() {
    let mut s = 0x2545_F491_4F6C_DD1Du64;
    let mut next = || xorshift(&mut s);
    let mut words = 0;
    for i in 0..400_000 {
        let r = next();
        let v = (next() >> (r % 64)) as i64;
        let v = if r & (1 << 7) != 0 { v.wrapping_neg() } else { v };
        // Exponents around binary32's range, and far outside it.
        let e = if i % 10 == 0 { (r >> 8) as i32 % 2100 } else { ((r >> 8) % 360) as i32 - 240 };
        let (a, b) = (to_f32(v, e), to_f32_f64(v, e));
        assert_eq!(a.to_bits(), b.to_bits(), "{v} * 2^{e}");
        words += usize::from(to_f32_words(v, e).is_some());
    }
    // (211,880 with this seed.)
    assert!(words > 150_000, "{words} of 400000 by the word steps");
    // Ties at every binary32 grid: odd multiples of half a unit.
    for e in -180..140 {
        for v in [1i64, 3, (1 << 24) + 1, (1 << 25) - 1, (1 << 25) + 3, -((1 << 24) + 1), (1 << 53) - 1, i64::MIN, i64::MAX, 0] {
            assert_eq!(to_f32(v, e).to_bits(), to_f32_f64(v, e).to_bits(), "{v} * 2^{e}");
        }
    }
    // Ties, ties plus one and values just below a tie at every shift of
    // the 25 leading bits (the rounding bit in either word, or at bit 31
    // or 32).
    for k in 0..40 {
        for base in [(1i64 << 24) + 1, (1 << 25) - 1, (1 << 24) + 3] {
            for d in [-1i64, 0, 1] {
                let v = (base << k) + d;
                for e in [-150, -126, -60, 0, 30] {
                    for v in [v, -v] {
                        assert_eq!(to_f32(v, e).to_bits(), to_f32_f64(v, e).to_bits(), "{v} * 2^{e}");
                    }
                }
            }
        }
    }
}

/// div_q32's two forms (the default builds' long form, the size-first
/// build's bit loop) against the plain 64-bit division: the softmax's and
/// tanh_q30's operand ranges, every divisor width, and edges (quotients
/// near 2^32, divisors with one bit or all bits set, n = 0).
#[test]
fn div_q32_is_the_division() {
    let mut s = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = || xorshift(&mut s);
    let check = |n: u64, d: u64| {
        assert_eq!(div_q32_long(n, d), n / d.max(1), "{n} / {d}");
        assert_eq!(div_bits(n, d), n / d.max(1), "{n} / {d} (bits)");
    };
    for _ in 0..400_000 {
        let r = next();
        let d = match r % 4 {
            // Softmax: Z in [2^30, 2^34).
            0 => (1 << 30) + (next() >> (30 + (r >> 8) % 34).min(63)),
            // tanh: [2^31, 2^32].
            1 => (1 << 31) + (next() >> 32) % ((1 << 31) + 1),
            _ => next() >> ((r >> 8) % 64),
        };
        let n = match (r >> 16) % 3 {
            0 => 1 << 61,
            1 => next() >> 1,
            _ => d.saturating_mul(next() >> 32).saturating_add(next() % d.max(1)) >> ((r >> 24) % 2),
        };
        check(n, d);
    }
    for d in [1u64, 2, 3, 0xFFFF, 0x1_0000, (1 << 31) - 1, 1 << 31, (1 << 32) - 1, 1 << 32, (1 << 33) + 1, (1 << 40) - 1, 1 << 40, 1 << 63, u64::MAX - 1, u64::MAX, 0] {
        for n in [0u64, 1, d, d.wrapping_mul(0xFFFF_FFFF), d.wrapping_mul(0xFFFF_FFFF).wrapping_add(d.saturating_sub(1)), u64::MAX >> 1, u64::MAX, 1 << 61] {
            check(n, d);
        }
    }
}

#[test]
/// The SSM's split products against rshr of the int64 product, at
/// the bounds and edges of their halves.
fn block_exponent_of_floats() {
    // fquant_exp's shortcut for normal numbers against the definition
    // by f32_parts: zeros, subnormals, normals, infinities, NaN.
    let plain = |v: &[f32]| {
        let tops = v.iter().filter_map(|&x| {
            let (m, e) = f32_parts(x);
            (m != 0).then(|| e + bitlen(m.unsigned_abs()))
        });
        tops.max().map_or(E_ZERO, |t| t - QA as i32)
    };
    let specials = [0.0f32, -0.0, 1e-45, -3e-42, 1.1754942e-38, 1.0, -2.5, 3.4028235e38, f32::INFINITY, f32::NEG_INFINITY, f32::NAN];
    for (i, &a) in specials.iter().enumerate() {
        for &b in &specials[i..] {
            let v = [a, b, 0.0];
            assert_eq!(fquant_exp(v.len(), |k| v[k], QA), plain(&v), "{a:e} {b:e}");
        }
    }
}

#[test]
fn split_products_are_rshr() {
    let mut x = 0x853C_49E6_748F_EA9Bu64;
    let mut next = || xorshift(&mut x);
    let edge = [0, 1, -1, 65535, 65536, -65536, (1 << 30) - 1, -(1 << 30) + 1, 1 << 30, -(1 << 30), 0x3FFF_FFFF, -0x3FFF_0001];
    for i in 0..400_000 {
        let pick = |r: u64, bits: u32| -> i32 {
            match r % 4 {
                0 => edge[(r >> 8) as usize % edge.len()],
                _ => ((r >> 8) as i64 % (1i64 << bits)) as i32,
            }
        };
        let (a, b) = (pick(next(), 30).clamp(-(1 << 30), 1 << 30), pick(next(), 30).clamp(-(1 << 30), 1 << 30));
        let k = 1 + (i % 16) as u32;
        assert_eq!(rshr_mul_split(a, b, k), rshr(i64::from(a) * i64::from(b), 16 + k as i32) as i32, "{a} {b} {k}");
        let a32 = next() as i32;
        let h = (pick(next(), 15)).clamp(-32767, 32767);
        let s = 1 + (i % 15) as u32;
        assert_eq!(rshr_mul16_split(a32, h, s), rshr(i64::from(a32) * i64::from(h), s as i32) as i32, "{a32} {h} {s}");
    }
}

/// tanh_q30's 32-bit form against the contract's steps: every 251st bit
/// pattern, both signs, and each exponent's first, last and middle
/// mantissas (all 2^32 patterns: scripts/math_exhaustive.sh).
#[test]
fn tanh_q30_is_its_steps() {
    use super::{tanh_q30, tanh_q30_steps};
    let check = |b: u32| {
        let a = f32::from_bits(b);
        assert_eq!(tanh_q30(a), tanh_q30_steps(a), "{b:#010x}");
    };
    for b in (0..=u32::MAX).step_by(251) {
        check(b);
    }
    for bx in 0..256u32 {
        for fr in [0, 1, 2, 0x40_0000, 0x7F_FFFE, 0x7F_FFFF] {
            check(bx << 23 | fr);
            check(1 << 31 | bx << 23 | fr);
        }
    }
}

/// gt_key against the float compare: every class but NaN, both zeros,
/// neighbours and equal values.
#[test]
fn gt_key_is_the_float_compare() {
    let mut s = 0x1234_5678_9ABC_DEF1u64;
    let mut next = || xorshift(&mut s);
    let edge = [0.0f32, -0.0, 1.0, -1.0, f32::MIN_POSITIVE, -f32::MIN_POSITIVE, f32::MAX, f32::MIN, f32::INFINITY, f32::NEG_INFINITY, 1e-45, -1e-45];
    for _ in 0..200_000 {
        let r = next();
        let a = f32::from_bits(r as u32);
        let b = match (r >> 32) % 4 {
            0 => f32::from_bits((r >> 32) as u32),
            1 => f32::from_bits((r as u32).wrapping_add(((r >> 40) % 3) as u32).wrapping_sub(1)),
            2 => a,
            _ => edge[((r >> 40) % edge.len() as u64) as usize],
        };
        if a.is_nan() || b.is_nan() {
            continue;
        }
        assert_eq!(super::gt_key(a, b), a > b, "{a:e} > {b:e}");
        assert_eq!(super::gt_key(b, a), b > a, "{b:e} > {a:e}");
    }
    for &a in &edge {
        for &b in &edge {
            assert_eq!(super::gt_key(a, b), a > b, "{a:e} > {b:e}");
        }
    }
}
