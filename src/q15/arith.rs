//! The primitives of the q15 contract (docs/Q15.md#notation-and-primitives):
//! the one rounding (`rshr`), block quantization, exact reading of binary32
//! parameters, exp2q, softmax_q, tanh_q30 and the one conversion back to
//! binary32.

/// Exponent of an all-zero block.
pub const E_ZERO: i32 = -32768;
/// Activation mantissa bits.
pub const QA: u32 = 15;
/// Parameter-vector mantissa bits (gamma, beta, b, c_out).
pub const QP: u32 = 23;
/// SSM hidden-state mantissa bits.
pub const QH: u32 = 30;
const ONE_Q30: i64 = 1 << 30;
const U_MAX: i64 = 1 << 30;
/// round(log2(e) * 2^30).
const L2E_Q30: i64 = 1549082005;
/// round(2 * log2(e) * 2^30).
const L2E2_Q30: i64 = 3098164009;
/// 2^-f on [0, 1): Q30 coefficients of f^0 .. f^5 (f in Q24).
const EXP2_C: [i64; 6] = [1073741824, -744258021, 257897342, -59392531, 9905124, -1022888];

mod div;
mod exp;
pub use div::{div61, div61_words, div_q32};
use exp::to_q24;
pub use exp::{exp2q, sgn_mul, softmax_q};

/// Round(v / 2^s), ties toward +infinity; s <= 0 shifts left exactly (the
/// caller keeps the result in range); s >= 63 gives 0.
#[cfg_attr(not(atome_small), inline(always))]
pub fn rshr(v: i64, s: i32) -> i64 {
    if s <= 0 {
        // Only zero could need a wider shift; it stays zero.
        if v == 0 || s < -62 {
            0
        } else {
            shl64(v, (-s) as u32)
        }
    } else if s >= 63 {
        0
    } else {
        // floor((v + 2^(s-1)) / 2^s) = floor((floor(v / 2^(s-1)) + 1) / 2):
        // one variable shift instead of two.
        (sar64(v, (s - 1) as u32) + 1) >> 1
    }
}

/// The int64 whose low and high 32-bit halves are `lo` and `hi` (an asm
/// loop's 64-bit sum, a shift's halves).
#[cfg_attr(not(atome_small), inline(always))]
pub fn join64(lo: u32, hi: u32) -> i64 {
    ((u64::from(hi) << 32) | u64::from(lo)) as i64
}

/// v << n (n < 64), in 32-bit halves where a 64-bit shift is a library
/// call (Cortex-M0).
#[cfg_attr(not(atome_small), inline(always))]
fn shl64(v: i64, n: u32) -> i64 {
    if NO_SMULL {
        let (lo, hi) = (v as u32, (v >> 32) as u32);
        let (lo2, hi2) = if n == 0 {
            (lo, hi)
        } else if n < 32 {
            (lo << n, (hi << n) | (lo >> (32 - n)))
        } else {
            (0, lo << (n - 32))
        };
        ((u64::from(hi2) << 32) | u64::from(lo2)) as i64
    } else {
        v << n
    }
}

/// v >> n (arithmetic, n < 64), in 32-bit halves where a 64-bit shift is a
/// library call (Cortex-M0).
#[cfg_attr(not(atome_small), inline(always))]
fn sar64(v: i64, n: u32) -> i64 {
    if NO_SMULL {
        let (lo, hi) = (v as u32, (v >> 32) as i32);
        let (lo2, hi2) = if n == 0 {
            (lo, hi)
        } else if n < 32 {
            ((lo >> n) | ((hi as u32) << (32 - n)), hi >> n)
        } else {
            ((hi >> (n - 32)) as u32, hi >> 31)
        };
        (i64::from(hi2) << 32) | i64::from(lo2)
    } else {
        v >> n
    }
}

/// [`rshr`] of an int32 whose result the caller knows fits (s <= 0: the
/// exact left shift; s >= 32: 0 for |v| < 2^31).
#[cfg_attr(not(atome_small), inline(always))]
pub fn rshr32(v: i32, s: i32) -> i32 {
    if s <= 0 {
        v << (-s).min(31)
    } else if s >= 32 {
        0
    } else {
        ((v >> (s - 1)) + 1) >> 1
    }
}

/// rshr(v, s) for 1 <= s <= 63 when the caller's bound gives
/// |floor(v / 2^(s-1))| < 2^31 (so the result is an int32): v in its two
/// 32-bit words (hi: bits 32-63, lo: bits 0-31), one 32-bit shift pair and
/// no 64-bit shift.
#[cfg_attr(not(atome_small), inline(always))]
pub fn rshr_hl(hi: i32, lo: u32, s: u32) -> i32 {
    if s <= 32 {
        return rshr_hl_lo(hi, lo, s);
    }
    let x = hi >> (s - 33);
    // floor((x + 1) / 2) without the overflow of x + 1.
    (x >> 1) + (x & 1)
}

/// [`rshr_hl`] for 1 <= s <= 32, without its branch (for loops whose shift
/// the caller checked once).
#[cfg_attr(not(atome_small), inline(always))]
pub fn rshr_hl_lo(hi: i32, lo: u32, s: u32) -> i32 {
    let n = s - 1;
    // The low word of v >> n is the whole value (the bound above).
    // (For n = 0 the high word's part, hi << 32, leaves the low word.)
    let x = ((lo >> n) | (((hi as u32) << 1) << (31 - n))) as i32;
    // floor((x + 1) / 2) without the overflow of x + 1.
    (x >> 1) + (x & 1)
}

/// [`rshr_hl`] of an int64.
#[cfg_attr(not(atome_small), inline(always))]
pub fn rshr_to32(v: i64, s: u32) -> i32 {
    rshr_hl((v >> 32) as i32, v as u32, s)
}

/// Where a 32 x 32 -> 64-bit product is a library call (Cortex-M0).
pub(crate) use crate::math::NO_MULL as NO_SMULL;

/// a * b exactly, for any int32 a and b: four 16 x 16 multiplies where the
/// core has no 32 x 32 -> 64 one (a 64 x 64 library call otherwise).
#[cfg_attr(not(atome_small), inline(always))]
pub fn mul64(a: i32, b: i32) -> i64 {
    if NO_SMULL {
        let (ah, al) = (a >> 16, a & 0xFFFF);
        let (bh, bl) = (b >> 16, b & 0xFFFF);
        // al, bl in [0, 2^16): al * bl < 2^32 (unsigned); ah * bl and
        // al * bh fit int32 with their sign; ah * bh < 2^30.
        let ll = (al as u32).wrapping_mul(bl as u32);
        let mid = i64::from(ah * bl) + i64::from(al * bh);
        (i64::from(ah * bh) << 32) + (mid << 16) + i64::from(ll)
    } else {
        i64::from(a) * i64::from(b)
    }
}

/// rshr(a b, 16 + k) for |a|, |b| <= 2^30 and 1 <= k <= 16, by 16-bit
/// halves and int32 operations only (the SSM's decay term where a 64-bit
/// product is a library call or four multiplies and 64-bit adds): with
/// a = ah 2^16 + al, b = bh 2^16 + bl (al, bl in [0, 2^16)),
/// a b = ah bh 2^32 + M 2^16 + al bl, M = ah bl + al bh (|M| < 2^31 by
/// the bounds), and the quotient is
/// ah bh 2^(16-k) + (M >> k) + (((M mod 2^k) + (al bl >> 16) + 2^(k-1)) >> k).
/// Wrapping: the true result is an int32 whenever the caller's is.
#[cfg_attr(not(atome_small), inline(always))]
pub fn rshr_mul_split(a: i32, b: i32, k: u32) -> i32 {
    let (ah, al, bh, bl) = (a >> 16, a & 0xFFFF, b >> 16, b & 0xFFFF);
    let m = ah.wrapping_mul(bl).wrapping_add(al.wrapping_mul(bh));
    let ll = (al as u32).wrapping_mul(bl as u32);
    let w = (m & ((1 << k) - 1)) + (ll >> 16) as i32 + (1 << (k - 1));
    ah.wrapping_mul(bh).wrapping_shl(16 - k).wrapping_add(m >> k).wrapping_add(w >> k)
}

/// rshr(a h, s) for |h| <= 32767 and 1 <= s <= 15, by 16-bit halves of a
/// (any int32): a h = (ah h) 2^16 + al h, the first part a multiple of
/// 2^s; |al h| + 2^(s-1) < 2^31. Wrapping, as [`rshr_mul_split`].
#[cfg_attr(not(atome_small), inline(always))]
pub fn rshr_mul16_split(a: i32, h: i32, s: u32) -> i32 {
    let (ah, al) = (a >> 16, a & 0xFFFF);
    (ah * h).wrapping_shl(16 - s).wrapping_add((al * h + (1 << (s - 1))) >> s)
}

/// a * b exactly for |b| <= 32767 (an activation mantissa): two 16 x 16
/// multiplies where the core has no 32 x 32 -> 64 one.
#[cfg_attr(not(atome_small), inline(always))]
pub fn mul64_16(a: i32, b: i32) -> i64 {
    if NO_SMULL {
        // al in [0, 2^16): |al * b| < 2^31; |ah * b| < 2^31.
        let (ah, al) = (a >> 16, a & 0xFFFF);
        (i64::from(ah * b) << 16) + i64::from(al * b)
    } else {
        i64::from(a) * i64::from(b)
    }
}

/// Bits of m >= 0 (0 for 0).
#[cfg_attr(not(atome_small), inline(always))]
pub fn bitlen(m: u64) -> i32 {
    64 - crate::math::lz64(m) as i32
}

/// The shift of quant_b for a largest magnitude `mx` (bitlen(mx) - b).
#[cfg_attr(not(atome_small), inline(always))]
pub fn qshift(mx: u64, bits: u32) -> i32 {
    bitlen(mx) - bits as i32
}

/// One mantissa of quant_b: rshr then saturation to +-(2^b - 1). (Out of
/// line on the microcontrollers: a per-row step, whose 64-bit shifts are
/// long on 32-bit cores; inlined on x86-64.)
#[cfg_attr(all(atome_portable, not(atome_small)), inline(never))]
#[cfg_attr(not(atome_portable), inline(always))]
pub fn qm(v: i64, s: i32, bits: u32) -> i64 {
    let lim = (1i64 << bits) - 1;
    rshr(v, s).clamp(-lim, lim)
}

/// quant_b of one value at exponent e: (mantissa, exponent). (Out of
/// line on the microcontrollers: per row, not per element.)
#[cfg_attr(all(atome_portable, not(atome_small)), inline(never))]
#[cfg_attr(any(atome_small, not(atome_portable)), inline)]
pub fn quant_scalar(v: i64, e: i32, bits: u32) -> (i64, i32) {
    if v == 0 {
        return (0, E_ZERO);
    }
    let s = qshift(v.unsigned_abs(), bits);
    (qm(v, s, bits), e + s)
}

/// The exponent of a block whose largest magnitude is `mx`: e + shift, or
/// E_ZERO for a zero block.
#[cfg_attr(not(atome_small), inline(always))]
pub fn qexp(mx: u64, e: i32, bits: u32) -> i32 {
    if mx == 0 {
        E_ZERO
    } else {
        e + qshift(mx, bits)
    }
}

/// Exponent of a product of blocks.
#[cfg_attr(not(atome_small), inline(always))]
pub fn ecomb(a: i32, b: i32) -> i32 {
    if a == E_ZERO || b == E_ZERO {
        E_ZERO
    } else {
        a + b
    }
}

/// The top (exponent + bound bits) of an align_sum term; None for a zero block.
#[cfg_attr(not(atome_small), inline(always))]
pub fn top(e: i32, bits: i32) -> Option<i32> {
    if e == E_ZERO {
        None
    } else {
        Some(e + bits)
    }
}

/// The sum grid of align_sum: max of the terms' tops minus `room` (0 when
/// every term is zero; then every shift is 63).
#[inline]
pub fn align_at(tops: &[Option<i32>], room: i32) -> i32 {
    tops.iter().flatten().max().map_or(0, |t| t - room)
}

/// The shift of a term at exponent e onto the grid A (63: the term is zero).
#[cfg_attr(not(atome_small), inline(always))]
pub fn ashift(a: i32, e: i32) -> i32 {
    if e == E_ZERO {
        63
    } else {
        (a - e).min(63)
    }
}

/// Exact parts of a binary32 (NaN read as 0, +-infinity as +-FLT_MAX):
/// f = m * 2^e with |m| in [2^23, 2^24) (or 0, exponent -24).
/// (Out of line on the microcontrollers: one copy of the code.)
#[cfg_attr(atome_portable, inline(never))]
#[cfg_attr(not(atome_portable), inline)]
pub fn f32_parts(f: f32) -> (i64, i32) {
    let b = f.to_bits();
    let neg = b >> 31 != 0;
    let ex = ((b >> 23) & 0xFF) as i32;
    let fr = (b & 0x7F_FFFF) as i64;
    let (m, e) = if ex == 0xFF {
        if fr != 0 {
            return (0, -24);
        }
        (0xFF_FFFF, 254 - 150)
    } else if ex == 0 {
        if fr == 0 {
            return (0, -24);
        }
        // Subnormal: normalized so the top bit is bit 23, as frexp does.
        let sh = 24 - bitlen(fr as u64);
        (fr << sh, -149 - sh)
    } else {
        (fr | 0x80_0000, ex - 150)
    };
    (if neg { -m } else { m }, e)
}

/// The block exponent of fquant_b over values `f(0..n)`: E_ZERO when all
/// are zero (or NaN).
pub fn fquant_exp(n: usize, f: impl Fn(usize) -> f32, bits: u32) -> i32 {
    let mut t: Option<i32> = None;
    for i in 0..n {
        let x = f(i);
        let ex = (x.to_bits() >> 23) & 0xFF;
        let v = if ex != 0 && ex != 0xFF {
            // A normal number: its mantissa has 24 bits, so its top is
            // ex - 150 + 24 (no bit count: a library call on Cortex-M0).
            ex as i32 - 126
        } else {
            let (m, e) = f32_parts(x);
            if m == 0 {
                continue;
            }
            e + bitlen(m.unsigned_abs())
        };
        t = Some(t.map_or(v, |x: i32| x.max(v)));
    }
    t.map_or(E_ZERO, |t| t - bits as i32)
}

/// The exact product of two binary32 values read as [`f32_parts`]:
/// (m, e) with |m| < 2^48 ((0, 0) when either is zero).
/// (Out of line on the microcontrollers: one copy of the code.)
#[cfg_attr(atome_portable, inline(never))]
#[cfg_attr(not(atome_portable), inline(always))]
pub fn f32_prod_parts(a: f32, b: f32) -> (i64, i32) {
    let ((ma, ea), (mb, eb)) = (f32_parts(a), f32_parts(b));
    if ma == 0 || mb == 0 {
        (0, 0)
    } else {
        // (|ma|, |mb| < 2^24: int32 factors, whose exact product mul64
        // forms without a 64 x 64 library call on Cortex-M0.)
        (mul64(ma as i32, mb as i32), ea + eb)
    }
}

/// The block exponent of exact values m_i 2^e_i (`f(0..n)`, |m| < 2^62)
/// at b bits: E_ZERO when all are zero.
pub fn pquant_exp(n: usize, f: impl Fn(usize) -> (i64, i32), bits: u32) -> i32 {
    let mut t: Option<i32> = None;
    for i in 0..n {
        let (m, e) = f(i);
        if m != 0 {
            let v = e + bitlen(m.unsigned_abs());
            t = Some(t.map_or(v, |x: i32| x.max(v)));
        }
    }
    t.map_or(E_ZERO, |t| t - bits as i32)
}

/// One mantissa of a block at exponent e (from [`pquant_exp`]): the exact
/// m 2^ex rounded onto its grid, saturated to b bits.
/// (Out of line on the microcontrollers: one copy of the code.)
#[cfg_attr(atome_portable, inline(never))]
#[cfg_attr(not(atome_portable), inline(always))]
pub fn pq(m: i64, ex: i32, e: i32, bits: u32) -> i64 {
    if m == 0 {
        0
    } else {
        qm(m, (e - ex).min(63), bits)
    }
}

/// One mantissa of fquant_b: the float `f` on the block exponent e.
/// (Out of line on the microcontrollers: one copy of the code.)
#[cfg_attr(atome_portable, inline(never))]
#[cfg_attr(not(atome_portable), inline(always))]
pub fn fq(f: f32, e: i32, bits: u32) -> i64 {
    fq_inline(f, e, bits)
}

/// [`fq`] inlined (the cached build's per-position vector copies).
#[inline(always)]
pub fn fq_inline(f: f32, e: i32, bits: u32) -> i64 {
    let b = f.to_bits();
    let bx = ((b >> 23) & 0xFF) as i32;
    let s = e - (bx - 150);
    if bits < 31 && bx != 0 && bx != 0xFF && (1..32).contains(&s) {
        // A normal float (f32_parts: |m| in [2^23, 2^24), exponent bx - 150)
        // on its block's grid: the int32 rounding below, without the
        // subnormal and non-finite cases.
        let m = ((b & 0x7F_FFFF) | 0x80_0000) as i32;
        let m = if b >> 31 != 0 { -m } else { m };
        let lim = (1i32 << bits) - 1;
        return i64::from((((m >> (s - 1)) + 1) >> 1).clamp(-lim, lim));
    }
    let (m, ex) = f32_parts(f);
    if m == 0 {
        return 0;
    }
    let s = e - ex;
    if (1..32).contains(&s) && bits < 31 {
        // |m| < 2^24: the rounding in int32 (always the case inside a block
        // whose exponent fquant_exp gave: s >= bitlen(m) - bits >= 1 there).
        let lim = (1i32 << bits) - 1;
        return i64::from((((m as i32) >> (s - 1)) + 1) >> 1).clamp(-i64::from(lim), i64::from(lim));
    }
    qm(m, s.min(63), bits)
}

/// fquant15 of one float (a weight record's scale): (mantissa, exponent).
pub fn fquant_scalar(f: f32) -> (i64, i32) {
    // (Through `dyn`: one copy with the parameter vectors'.)
    let e = fquant_exp(1, &(|_| f) as &dyn Fn(usize) -> f32, QA);
    (fq(f, e, QA), e)
}

/// tanh(a) in Q30 (|T| <= 2^30) from exp2q.
///
/// For a normal float the same steps in 32-bit words: with u = 2^30 + en,
/// the quotient floor((2 (2^30 - en) 2^30 + u) / 2u) is
/// floor(2^61 / u + 1/2) - 2^30, so one division of 2^61 and a remainder
/// test replace the 64-bit numerator and divisor; the product |m| L2E2 is
/// formed in two words, and a shift that saturates exp2q's input is
/// answered without it. (Equal to [`tanh_q30_steps`]; tests: `tanh_q30_is_its_steps`, and every normal
/// float in scripts/math_exhaustive.sh.) The other classes by their
/// results under those steps: zero, subnormals and NaN give 0 (exp2q's
/// input rounds to 0), the infinities +-2^30.
pub fn tanh_q30(a: f32) -> i32 {
    let b = a.to_bits();
    let bx = (b >> 23) & 0xFF;
    if bx == 0 || (bx == 0xFF && b & 0x7F_FFFF != 0) {
        return 0;
    }
    if bx == 0xFF {
        return if b >> 31 != 0 { -(ONE_Q30 as i32) } else { ONE_Q30 as i32 };
    }
    let m = (b & 0x7F_FFFF) | 0x80_0000;
    // exp2q's input is rshr(|m| L2E2, s), s = -(bx - 150 - 6).
    let s = 156 - bx as i32;
    let t = if s <= 25 {
        // |m| L2E2 / 2^25 > 2^29: exp2q gives 0, the quotient 2^31.
        ONE_Q30 as i32
    } else {
        // |m| L2E2 < 2^56; for s > 56 it rounds to 0. L2E2 = 2^31 + c, c
        // an int32: the product as m 2^31 + mul64(m, c), no 64 x 64 call.
        let v = if s > 56 {
            0
        } else {
            let p = (u64::from(m) << 31).wrapping_add(mul64(m as i32, (L2E2_Q30 - (1 << 31)) as i32) as u64);
            // (s >= 26: p / 2^(s-1) < 2^31, rshr_hl's bound.)
            rshr_hl((p >> 32) as i32, p as u32, s as u32)
        };
        let u = (ONE_Q30 + exp2q(i64::from(v))) as u32;
        // u in [2^30, 2^31]: the quotient Q of 2^61 is below 2^32, and the
        // remainder 2^61 - Q u (below u) is its low word.
        let q = div::div61(u);
        let r = 0u32.wrapping_sub(q.wrapping_mul(u));
        (q - (1 << 30)) as i32 + i32::from(r >= u - r)
    };
    if b >> 31 != 0 {
        -t
    } else {
        t
    }
}

/// [`tanh_q30`] by the contract's steps, for every float (what the tests
/// hold the 32-bit form to).
#[inline(never)]
pub fn tanh_q30_steps(a: f32) -> i32 {
    let (m, e) = f32_parts(a);
    let p = m.abs() * L2E2_Q30;
    let en = exp2q(to_q24(p, e - 6));
    let num = 2 * (ONE_Q30 - en) * ONE_Q30 + (ONE_Q30 + en);
    // en >= 0 (exp2q), so the divisor is >= 2^31: max(1) is a no-op that
    // lets the division be seen as safe.
    let t = div_q32(num as u64, (2 * (ONE_Q30 + en)).max(1) as u64) as i64;
    (if m < 0 { -t } else { t }) as i32
}

/// 2^k as binary64, |k| <= 1022.
#[inline]
fn pow2(k: i32) -> f64 {
    f64::from_bits(((k + 1023) as u64) << 52)
}

/// The binary32 nearest to v * 2^e (for |v| < 2^53; beyond, v rounds to
/// binary64 first): by binary64 on 64-bit hosts, by integer steps on the
/// 32-bit cores (the same bits).
#[inline]
pub fn to_f32(v: i64, e: i32) -> f32 {
    // (64-bit hosts have binary64 in hardware.)
    if cfg!(target_pointer_width = "64") {
        return to_f32_f64(v, e);
    }
    to_f32_int(v, e)
}

/// a > b for floats that are not NaN (to_f32's results): where float
/// compares are library calls, as the integers their bits order by (the
/// magnitude, negated for a set sign bit: -0.0 and +0.0 are both 0).
#[inline(always)]
pub fn gt_num(a: f32, b: f32) -> bool {
    if cfg!(any(atome_fpu, target_pointer_width = "64")) {
        return a > b;
    }
    gt_key(a, b)
}

/// [`gt_num`]'s integer form (the tests run it on every host).
#[inline(always)]
pub fn gt_key(a: f32, b: f32) -> bool {
    let key = |f: f32| {
        let b = f.to_bits();
        let m = (b & 0x7FFF_FFFF) as i32;
        if b >> 31 != 0 {
            -m
        } else {
            m
        }
    };
    key(a) > key(b)
}

/// [`to_f32`] of the exact product acc m (|m| < 2^15): with a
/// single-precision FPU and |acc| < 2^24 (both exact as floats), their
/// float product is the one rounding of acc m, and the power of two
/// scales it exactly when the result is normal; else to_f32 of the int64
/// product (by mul64 for an int32 acc: no 64 x 64 call on Cortex-M0).
#[inline]
pub fn to_f32_prod(acc: i64, m: i32, e: i32) -> f32 {
    #[cfg(all(atome_fpu, not(atome_small)))]
    if acc.unsigned_abs() < 1 << 24 && m.unsigned_abs() < 1 << 24 && (-126..=127).contains(&e) {
        let f = (acc as i32 as f32 * m as f32) * f32::from_bits(((e + 127) as u32) << 23);
        if f.is_normal() {
            return f;
        }
    }
    let p = match i32::try_from(acc) {
        Ok(a) => mul64(a, m),
        Err(_) => acc * i64::from(m),
    };
    to_f32(p, e)
}

/// [`to_f32`] on the 32-bit cores (the tests run it on every host): a
/// normal result by 32-bit integer steps (no software binary64 on the
/// cores without a double FPU), the rare rest (zero, a subnormal or
/// infinite result, |v| >= 2^53) by binary64.
fn to_f32_int(v: i64, e: i32) -> f32 {
    match to_f32_words(v, e) {
        Some(f) => f,
        None => to_f32_f64(v, e),
    }
}

/// [`to_f32_int`] for 0 < |v| < 2^53 (beyond, the contract rounds to
/// binary64 first) and a normal result, in 32-bit words
/// (no 64-bit shift: a library call on Cortex-M0): the 25 bits from the
/// leading one, the last of them the rounding bit, and a sticky bit for
/// the rest; None otherwise.
#[cfg_attr(not(atome_small), inline(always))]
fn to_f32_words(v: i64, e: i32) -> Option<f32> {
    let m = v.unsigned_abs();
    let (hi, lo) = ((m >> 32) as u32, m as u32);
    if hi >> 21 != 0 || m == 0 {
        return None;
    }
    let bl = if hi != 0 { 64 - crate::math::lz32(hi) } else { 32 - crate::math::lz32(lo) } as i32;
    let x = bl - 1 + e.clamp(-400, 400);
    if !(-126..=127).contains(&x) {
        return None;
    }
    let q = if bl <= 24 {
        lo << (24 - bl)
    } else {
        // q2: bits bl-1 .. t of m (25 of them), t = bl - 25 < 29.
        let t = (bl - 25) as u32;
        let (q2, sticky) = if t == 0 { (lo, false) } else { ((lo >> t) | (hi << (32 - t)), lo << (32 - t) != 0) };
        let q = q2 >> 1;
        q + u32::from(q2 & 1 != 0 && (sticky || q & 1 != 0))
    };
    // The leading one is q's bit 23 (a carry to 2^24 steps the exponent).
    let sign = u32::from(v < 0) << 31;
    Some(f32::from_bits(sign | ((((x + 126) as u32) << 23) + q)))
}

/// [`to_f32`] by binary64: v as f64 (exact below 2^53) times two powers
/// of two (exact inside binary64's range), then one rounding to binary32.
fn to_f32_f64(v: i64, e: i32) -> f32 {
    let e = e.clamp(-2000, 2000);
    let half = e.div_euclid(2);
    ((v as f64) * pow2(half) * pow2(e - half)) as f32
}

/// A plain exponent sum (as the contract writes `se + e_h`): any E_ZERO
/// operand only ever meets zero mantissas.
#[cfg_attr(not(atome_small), inline(always))]
pub(crate) fn ecomb_plain(a: i32, b: i32) -> i32 {
    a + b
}

#[cfg(test)]
mod tests;
