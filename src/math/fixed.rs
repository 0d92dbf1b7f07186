//! Integer fixed-point expf/tanhf (docs/ARITHMETIC.md#math-functions).
//!
//! Soft-float cores pay for every binary64 operation with a library call;
//! this path uses 32x32->64 multiplies instead. It computes e^x or tanh a
//! with a relative error below 2^-50, then rounds to binary32 only when the
//! value lies more than GUARD (2^-43 relative) from a rounding boundary (the
//! midpoint of two binary32 neighbours). The binary64 routine it replaces
//! is within 2^-47 of the true value, so both round to the same binary32
//! whenever the fast path answers; otherwise (None) the caller falls back
//! to binary64. tests/math_exhaustive.rs checks all 2^32 inputs.
//!
//! Notation: "Qn" is an integer holding value * 2^n.

/// 2^(j/64) in Q63, j = 0..64 (rounded to nearest).
const EXP2_64: [u64; 64] = [
    0x8000000000000000, 0x8164d1f3bc030773, 0x82cd8698ac2ba1d7, 0x843a28c3acde4046,
    0x85aac367cc487b15, 0x871f61969e8d1010, 0x88980e8092da8527, 0x8a14d575496efd9a,
    0x8b95c1e3ea8bd6e7, 0x8d1adf5b7e5ba9e6, 0x8ea4398b45cd53c0, 0x9031dc431466b1dc,
    0x91c3d373ab11c336, 0x935a2b2f13e6e92c, 0x94f4efa8fef70961, 0x96942d3720185a00,
    0x9837f0518db8a96f, 0x99e0459320b7fa65, 0x9b8d39b9d54e5539, 0x9d3ed9a72cffb751,
    0x9ef5326091a111ae, 0xa0b0510fb9714fc2, 0xa27043030c496819, 0xa43515ae09e6809e,
    0xa5fed6a9b15138ea, 0xa7cd93b4e965356a, 0xa9a15ab4ea7c0ef8, 0xab7a39b5a93ed337,
    0xad583eea42a14ac6, 0xaf3b78ad690a4375, 0xb123f581d2ac2590, 0xb311c412a9112489,
    0xb504f333f9de6484, 0xb6fd91e328d17791, 0xb8fbaf4762fb9ee9, 0xbaff5ab2133e45fb,
    0xbd08a39f580c36bf, 0xbf1799b67a731083, 0xc12c4cca66709456, 0xc346ccda24976407,
    0xc5672a115506dadd, 0xc78d74c8abb9b15d, 0xc9b9bd866e2f27a3, 0xcbec14fef2727c5d,
    0xce248c151f8480e4, 0xd06333daef2b2595, 0xd2a81d91f12ae45a, 0xd4f35aabcfedfa1f,
    0xd744fccad69d6af4, 0xd99d15c278afd7b6, 0xdbfbb797daf23755, 0xde60f4825e0e9124,
    0xe0ccdeec2a94e111, 0xe33f8972be8a5a51, 0xe5b906e77c8348a8, 0xe8396a503c4bdc68,
    0xeac0c6e7dd24392f, 0xed4f301ed9942b84, 0xefe4b99bdcdaf5cb, 0xf281773c59ffb13a,
    0xf5257d152486cc2c, 0xf7d0df730ad13bb9, 0xfa83b2db722a033a, 0xfd3e0c0cf486c175,
];

/// ln2/64 in Q56: integer part (C_HI) and the next 32 bits (C_LO, Q88).
const C_HI: i64 = 0x2c5c85fdf473d;
const C_LO: i64 = 0xe6af278f;
/// 64/ln2 in Q24, for the first estimate of N = floor(x * 64/ln2).
const K24: i64 = 1_549_082_005;

/// 1/n! in Q32 for n = 6, 5, 4, 3 (rounded to nearest).
const E6: u32 = 0x5b05b0;
const E5: u32 = 0x222_2222;
const E4: u32 = 0xaaa_aaab;
const E3: u32 = 0x2aaa_aaab;

/// tanh a = a(1 - w), w = s/3 - 2s^2/15 + 17s^3/315 - 62s^4/2835 +
/// 1382s^5/155925 (s = a^2): 1/3 in Q64, the others in Q32.
const T1: u64 = 0x5555_5555_5555_5555;
const T2: u32 = 0x2222_2222;
const T3: u32 = 0xdd0_dd0e;
const T4: u32 = 0x599_3d22;
const T5: u32 = 0x244_dc6b;

/// Distance (in units of bit 0 of a normalized 64-bit value, 2^-63
/// relative) within which a value counts as on a rounding boundary: 2^-43
/// relative, far above the fast path's error (< 2^-50) plus binary64's
/// (< 2^-47).
const GUARD: u64 = 1 << 20;

/// a * b for a, b < 2^32 (the callers' bounds): one multiply, or on
/// Cortex-M0 [`wmul_halves`] (about half of `__aeabi_lmul`'s 64 x 64).
#[inline(always)]
fn wmul(a: u64, b: u64) -> u64 {
    if super::NO_MULL {
        wmul_halves(a as u32, b as u32)
    } else {
        a * b
    }
}

/// a * b from four 16 x 16 -> 32-bit multiplies (one copy: code size).
#[inline(never)]
fn wmul_halves(a: u32, b: u32) -> u64 {
    let (ah, al, bh, bl) = (a >> 16, a & 0xffff, b >> 16, b & 0xffff);
    // Each partial product is below 2^32; the middle sum below 2^33.
    let mid = u64::from(al * bh) + u64::from(ah * bl);
    (u64::from(ah * bh) << 32) + (mid << 16) + u64::from(al * bl)
}

/// High 64 bits of a * b, less 0..3 units (the low x low product and the
/// carries of the dropped low halves are left out): three 32x32->64
/// multiplies.
#[inline(always)]
fn mulhi(a: u64, b: u64) -> u64 {
    let (ah, al) = (a >> 32, a & 0xffff_ffff);
    let (bh, bl) = (b >> 32, b & 0xffff_ffff);
    wmul(ah, bh) + (wmul(ah, bl) >> 32) + (wmul(al, bh) >> 32)
}

/// (a * b) >> 32, less 0..1 unit: two 32x32->64 multiplies.
#[inline(always)]
fn mul64x32(a: u64, b: u32) -> u64 {
    let b = b as u64;
    wmul(a >> 32, b) + (wmul(a & 0xffff_ffff, b) >> 32)
}

/// Rounds v * 2^e (v > 0) to binary32, or None near a rounding boundary
/// or outside the normal range.
// One copy for its three callers on microcontrollers (code size).
#[cfg_attr(atome_portable, inline(never))]
fn round_guarded(v: u64, e: i32) -> Option<f32> {
    let lz = super::lz64(v);
    let v = v << lz;
    let rem = v & ((1 << 40) - 1);
    let half = 1u64 << 39;
    if rem.abs_diff(half) <= GUARD {
        return None;
    }
    let mut mant = (v >> 40) as u32 + (rem > half) as u32;
    let mut ex = e - lz as i32 + 63;
    if mant == 1 << 24 {
        mant >>= 1;
        ex += 1;
    }
    let biased = ex + 127;
    if !(1..=254).contains(&biased) {
        return None;
    }
    Some(f32::from_bits(((biased as u32) << 23) | (mant & 0x7f_ffff)))
}

/// e^x = M * 2^k for 2^-27 <= |x| <= 88: returns (M in Q62, k), M in
/// [1, 2] within 2^-50 relative.
// Shared by expf and tanhf on microcontrollers (code size).
#[cfg_attr(atome_portable, inline(never))]
fn exp_core(x: f32) -> (u64, i32) {
    let bits = x.to_bits();
    let e = ((bits >> 23) & 0xff) as i32;
    let m = ((bits & 0x7f_ffff) | 0x80_0000) as i64;
    // x in Q56, exact: |x| >= 2^-27 makes e >= 100, |x| < 128 keeps it
    // below 2^63.
    let mut xq = m << (e - 94);
    if bits >> 31 != 0 {
        xq = -xq;
    }
    // N = floor(x * 64/ln2), maybe off by one (fixed below): x in Q24
    // times 64/ln2 in Q24.
    let mut n = (((xq >> 32) * K24) >> 48) as i32;
    // r = x - N ln2/64 in Q56 (Cody-Waite: N*C_HI exact, N*C_LO to 2^-56).
    let mut r = xq - n as i64 * C_HI - ((n as i64 * C_LO) >> 32);
    let c = C_HI + 1; // ln2/64 in Q56 rounded up
    if r < 0 {
        n -= 1;
        r += c;
    } else if r >= c {
        n += 1;
        r -= c;
    }
    // e^r - 1 = r(1 + r(1/2 + r(1/6 + r(1/24 + r(1/120 + r/720))))),
    // 0 <= r < ln2/64 < 2^-6.5: the omitted r^7/7! is below 2^-58. The
    // inner terms, multiplied by r^3 or more, need only 32 bits.
    let r64 = (r as u64) << 8; // Q64
    let r38 = (r >> 18) as u64; // Q38, < 2^31.5
    let mut s = E6 as u64;
    // (s stays below 2^32: E_n < 2^32 and each product term below 2^26.)
    s = E5 as u64 + (wmul(r38, s) >> 38);
    s = E4 as u64 + (wmul(r38, s) >> 38);
    s = E3 as u64 + (wmul(r38, s) >> 38); // Q32, < 2^31
    let s2 = (1u64 << 62) + (mul64x32(r64, s as u32) >> 1); // Q63
    let s1 = (1u64 << 63) + mulhi(r64, s2); // Q63
    let p = mulhi(r64, s1); // e^r - 1, Q63
    let t = EXP2_64[(n & 63) as usize];
    ((t >> 1) + mulhi(t, p), n >> 6)
}

/// e^x for binary32, or None (NaN, |x| > 87, near a rounding boundary).
pub(super) fn exp(x: f32) -> Option<f32> {
    let abs = x.to_bits() & 0x7fff_ffff;
    if abs < 0x3200_0000 {
        // |x| < 2^-27 (zeros and subnormals included): e^x is within
        // 2^-26 of 1, so is binary64's 1 + p, and both round to 1.
        return Some(1.0);
    }
    if abs > 0x42ae_0000 {
        // |x| > 87 (inf and NaN included): overflow, underflow and
        // subnormal results stay with binary64.
        return None;
    }
    let (m, k) = exp_core(x);
    round_guarded(m, k - 62)
}

/// tanh a for 1/4096 <= a <= 20, or None near a rounding boundary.
pub(super) fn tanh_mid(a: f32) -> Option<f32> {
    let bits = a.to_bits();
    if bits < 0x3d80_0000 {
        // a < 1/16: the odd series, relative to a. a = m 2^(e-150).
        let e = (bits >> 23) as i32;
        let m = ((bits & 0x7f_ffff) | 0x80_0000) as u64;
        // s = a^2 in Q64 (< 2^-8): m^2 2^(2e-300+64); the shift is -6..=8.
        let sh = 2 * e - 236;
        let m2 = wmul(m, m);
        let s = if sh >= 0 { m2 << sh } else { m2 >> -sh };
        let s40 = s >> 24; // Q40, < 2^32
        let mut b = T5 as u64;
        b = T4 as u64 - (wmul(s40, b) >> 40);
        b = T3 as u64 - (wmul(s40, b) >> 40);
        b = T2 as u64 - (wmul(s40, b) >> 40); // Q32
        let b1 = T1 - mul64x32(s, b as u32); // Q64
        let w = mulhi(s, b1); // Q64, < 2^-9.5
        // a(1 - w) = (m 2^32 - m w) 2^(e-182).
        let v = (m << 32) - mul64x32(w, m as u32);
        return round_guarded(v, e - 182);
    }
    // tanh a = (1 - E)/(1 + E), E = e^-2a in [e^-40, e^-1/8]: -2a is exact.
    let (em, k) = exp_core(-2.0 * a);
    // E in Q64: em 2^(k+2), k <= -1.
    let sh = k + 2;
    let big_e = if sh >= 0 { em << sh } else { em >> -sh };
    let num = big_e.wrapping_neg(); // 1 - E, Q64
    let den = (1u64 << 63) + (big_e >> 1); // 1 + E in [1, 2), Q63
    // 1/den: a 16-bit estimate from one 32/32 division, one Newton step to
    // about 2^-28 (Q31), then num/den from q0 = num y and one correction
    // by the remainder: error about 2^-55.
    let d31 = (den >> 32) as u32; // Q31
    let y0 = (u32::MAX / (d31 >> 16)) as u64; // Q17, within 2^-14
    let y = y0 << 14; // Q31
    let t = wmul(d31 as u64, y); // d y, Q62
    let f = ((1u64 << 63) - t) >> 31; // 2 - d y, Q31
    let y1 = wmul(y, f) >> 31; // Q31, <= 2^31
    let q0 = mul64x32(num, y1 as u32); // Q63
    let rem = (num >> 2) as i64 - mulhi(q0, den) as i64; // Q62, |rem| < 2^35
    let corr = (rem * (y1 >> 4) as i64) >> 26; // Q63
    let q = (q0 as i64 + corr) as u64;
    round_guarded(q, -63)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn products_within_stated_units() {
        let mut s = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..100_000 {
            let a = crate::test_rng::xorshift64(&mut s);
            let b = s.rotate_left(29) ^ 0x9e37_79b9_7f4a_7c15;
            let exact = ((a as u128 * b as u128) >> 64) as u64;
            let d = exact - mulhi(a, b);
            assert!(d <= 3, "{a:x} {b:x}");
            let exact32 = ((a as u128 * (b as u32) as u128) >> 32) as u64;
            assert!(exact32 - mul64x32(a, b as u32) <= 1);
            let (x, y) = (a as u32, b as u32);
            assert_eq!(wmul_halves(x, y), u64::from(x) * u64::from(y));
        }
        for x in [0u32, 1, 0xffff, 0x1_0000, 0xffff_ffff, 0x8000_0000, 0x7fff_ffff] {
            for y in [0u32, 1, 0xffff, 0x1_0000, 0xffff_ffff, 0x8000_0000, 0x7fff_ffff] {
                assert_eq!(wmul_halves(x, y), u64::from(x) * u64::from(y));
            }
        }
    }
}
