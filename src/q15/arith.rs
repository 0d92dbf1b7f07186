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

/// Round(v / 2^s), ties toward +infinity; s <= 0 shifts left exactly (the
/// caller keeps the result in range); s >= 63 gives 0.
#[inline(always)]
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

/// v << n (n < 64), in 32-bit halves where a 64-bit shift is a library
/// call (Cortex-M0).
#[inline(always)]
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
#[inline(always)]
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
#[inline(always)]
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
#[inline(always)]
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
#[inline(always)]
pub fn rshr_hl_lo(hi: i32, lo: u32, s: u32) -> i32 {
    let n = s - 1;
    // The low word of v >> n is the whole value (the bound above).
    // (For n = 0 the high word's part, hi << 32, leaves the low word.)
    let x = ((lo >> n) | (((hi as u32) << 1) << (31 - n))) as i32;
    // floor((x + 1) / 2) without the overflow of x + 1.
    (x >> 1) + (x & 1)
}

/// [`rshr_hl`] of an int64.
#[inline(always)]
pub fn rshr_to32(v: i64, s: u32) -> i32 {
    rshr_hl((v >> 32) as i32, v as u32, s)
}

/// Where a 32 x 32 -> 64-bit product is a library call (Cortex-M0).
pub(crate) use crate::math::NO_MULL as NO_SMULL;

/// a * b exactly, for any int32 a and b: four 16 x 16 multiplies where the
/// core has no 32 x 32 -> 64 one (a 64 x 64 library call otherwise).
#[inline(always)]
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
#[inline(always)]
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
#[inline(always)]
pub fn rshr_mul16_split(a: i32, h: i32, s: u32) -> i32 {
    let (ah, al) = (a >> 16, a & 0xFFFF);
    (ah * h).wrapping_shl(16 - s).wrapping_add((al * h + (1 << (s - 1))) >> s)
}

/// a * b exactly for |b| <= 32767 (an activation mantissa): two 16 x 16
/// multiplies where the core has no 32 x 32 -> 64 one.
#[inline(always)]
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
#[inline(always)]
pub fn bitlen(m: u64) -> i32 {
    64 - crate::math::lz64(m) as i32
}

/// The shift of quant_b for a largest magnitude `mx` (bitlen(mx) - b).
#[inline(always)]
pub fn qshift(mx: u64, bits: u32) -> i32 {
    bitlen(mx) - bits as i32
}

/// One mantissa of quant_b: rshr then saturation to +-(2^b - 1).
#[inline(always)]
pub fn qm(v: i64, s: i32, bits: u32) -> i64 {
    let lim = (1i64 << bits) - 1;
    rshr(v, s).clamp(-lim, lim)
}

/// quant_b of one value at exponent e: (mantissa, exponent).
#[inline]
pub fn quant_scalar(v: i64, e: i32, bits: u32) -> (i64, i32) {
    if v == 0 {
        return (0, E_ZERO);
    }
    let s = qshift(v.unsigned_abs(), bits);
    (qm(v, s, bits), e + s)
}

/// The exponent of a block whose largest magnitude is `mx`: e + shift, or
/// E_ZERO for a zero block.
#[inline(always)]
pub fn qexp(mx: u64, e: i32, bits: u32) -> i32 {
    if mx == 0 {
        E_ZERO
    } else {
        e + qshift(mx, bits)
    }
}

/// Exponent of a product of blocks.
#[inline(always)]
pub fn ecomb(a: i32, b: i32) -> i32 {
    if a == E_ZERO || b == E_ZERO {
        E_ZERO
    } else {
        a + b
    }
}

/// The top (exponent + bound bits) of an align_sum term; None for a zero block.
#[inline(always)]
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
#[inline(always)]
pub fn ashift(a: i32, e: i32) -> i32 {
    if e == E_ZERO {
        63
    } else {
        (a - e).min(63)
    }
}

/// Exact parts of a binary32 (NaN read as 0, +-infinity as +-FLT_MAX):
/// f = m * 2^e with |m| in [2^23, 2^24) (or 0, exponent -24).
#[inline]
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
#[inline(always)]
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
#[inline(always)]
pub fn pq(m: i64, ex: i32, e: i32, bits: u32) -> i64 {
    if m == 0 {
        0
    } else {
        qm(m, (e - ex).min(63), bits)
    }
}

/// One mantissa of fquant_b: the float `f` on the block exponent e.
#[inline(always)]
pub fn fq(f: f32, e: i32, bits: u32) -> i64 {
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
    let e = fquant_exp(1, |_| f, QA);
    (fq(f, e, QA), e)
}

/// The coefficients in the order [`exp2_horner_t1`] adds them.
#[cfg(atome_armv6m)]
static EXP2_C_DOWN: [i32; 5] = [EXP2_C[4] as i32, EXP2_C[3] as i32, EXP2_C[2] as i32, EXP2_C[1] as i32, EXP2_C[0] as i32];

/// exp2q's Horner steps acc = C_i + rshr(acc f, 24) from acc = C5, on
/// ARMv6-M in asm: each product as [`rshr_mul_split`]'s (k = 8; |acc| <
/// 2^30 and 0 <= f < 2^24 are within its bounds) with f's halves in
/// registers for all five steps: 21 instructions a step where LLVM's
/// spilled loop took about 30.
#[cfg(atome_armv6m)]
#[inline(always)]
fn exp2_horner_t1(f: i32) -> i32 {
    let acc: i32;
    // One step: r0 = acc, r1 = bl, r2 = bh; the next coefficient from the
    // table in r8 at byte offset `off`.
    macro_rules! step {
        ($off:literal) => {
            concat!(
                "asrs r3, r0, #16\n",
                "uxth r4, r0\n",
                "movs r5, r3\n",
                "muls r5, r1, r5\n",
                "movs r0, r4\n",
                "muls r0, r2, r0\n",
                "adds r5, r5, r0\n",
                "muls r4, r1, r4\n",
                "lsrs r4, r4, #16\n",
                "uxtb r0, r5\n",
                "adds r4, r4, r0\n",
                "adds r4, #128\n",
                "asrs r4, r4, #8\n",
                "asrs r5, r5, #8\n",
                "adds r4, r4, r5\n",
                "muls r3, r2, r3\n",
                "lsls r3, r3, #8\n",
                "adds r0, r3, r4\n",
                "mov r3, r8\n",
                "ldr r3, [r3, #", $off, "]\n",
                "adds r0, r0, r3\n",
            )
        };
    }
    // SAFETY: reads the five words of EXP2_C_DOWN; register arithmetic
    // otherwise. Only the named registers and the flags change; no stack
    // use.
    unsafe {
        core::arch::asm!(
            "mov r8, r3",
            "uxth r1, r2",
            "lsrs r2, r2, #16",
            step!("0"),
            step!("4"),
            step!("8"),
            step!("12"),
            step!("16"),
            inout("r0") EXP2_C[5] as i32 => acc,
            out("r1") _,
            inout("r2") f => _,
            inout("r3") EXP2_C_DOWN.as_ptr() => _,
            out("r4") _,
            out("r5") _,
            out("r8") _,
            options(readonly, nostack),
        );
    }
    acc
}

/// 2^(-v / 2^24) in Q30 for v >= 0 (saturated at 2^30).
#[inline]
pub fn exp2q(v: i64) -> i64 {
    let v = v.min(U_MAX);
    // (The softmax's largest term, d = 0: the polynomial at 0 is C0 = 2^30.
    // From 2^32 on, every rshr32 is 0.)
    if v == 0 {
        return ONE_Q30;
    }
    if v >= 32 << 24 {
        return 0;
    }
    if v >= 0 {
        // int32 Horner: every multiplicand is a partial sum of C5..C1,
        // below sum |C1..C5| < 2^30, and f < 2^24, so each product is
        // below 2^54, its rshr below 2^30 and each new acc below 2^31.
        let (ip, f) = ((v >> 24) as i32, (v & ((1 << 24) - 1)) as i32);
        #[cfg(atome_armv6m)]
        let acc = exp2_horner_t1(f);
        #[cfg(not(atome_armv6m))]
        let acc = {
            let mut acc = EXP2_C[5] as i32;
            for &c in EXP2_C[..5].iter().rev() {
                acc = c as i32 + rshr_to32(mul64(acc, f), 24);
            }
            acc
        };
        return i64::from(rshr32(acc.clamp(0, ONE_Q30 as i32), ip));
    }
    let ip = (v >> 24) as i32;
    let f = v & ((1 << 24) - 1);
    let mut acc = EXP2_C[5];
    for &c in EXP2_C[..5].iter().rev() {
        acc = c + rshr(acc * f, 24);
    }
    rshr(acc.clamp(0, ONE_Q30), ip)
}

/// min(v * 2^k, 2^30) for k >= 0 (saturating), min(rshr(v, -k), 2^30)
/// otherwise: a Q24 exp2q input from an exact product and its exponent.
#[inline]
fn to_q24(v: i64, k: i32) -> i64 {
    if k >= 0 {
        let left = k.min(62);
        if v > (U_MAX >> left) {
            U_MAX
        } else {
            v << left
        }
    } else {
        rshr(v, (-k).min(63)).min(U_MAX)
    }
}

/// g * v for a sign g in {-1, 0, 1}; on Cortex-M0 without a multiply (a
/// library call there).
#[inline(always)]
pub fn sgn_mul(g: i64, v: i64) -> i64 {
    if NO_SMULL {
        match g {
            1 => v,
            -1 => -v,
            _ => 0,
        }
    } else {
        g * v
    }
}

/// softmax_q of the real scores sig(j) * cm * 2^ce, j < out.len(): Q30
/// probabilities into `out`.
pub fn softmax_q(sig: impl Fn(usize) -> i64, cm: i64, ce: i32, out: &mut [i32]) {
    let g = cm.signum();
    let mut mx = i64::MIN;
    for j in 0..out.len() {
        mx = mx.max(sgn_mul(g, sig(j)));
    }
    let (km, ke) = quant_scalar(cm.abs() * L2E_Q30, ce - 30, QA);
    let k = ke + 24;
    let mut z = 0i64;
    for (j, o) in out.iter_mut().enumerate() {
        let d = mx - sgn_mul(g, sig(j));
        // (0 <= d; |km| < 2^15: an int32 d makes the product mul64's,
        // without a 64 x 64 library call on Cortex-M0.)
        let p = match i32::try_from(d) {
            Ok(d32) if NO_SMULL => mul64(d32, km as i32),
            _ => d * km,
        };
        let e = exp2q(to_q24(p, k));
        *o = e as i32;
        z += e;
    }
    // The largest term is exp2q(0) = 2^30, so z >= 2^30 for a non-empty
    // out: max(1) is a no-op that lets the division be seen as safe.
    let rz = div_q32(1 << 61, z.max(1) as u64) as i64;
    for o in out.iter_mut() {
        // (*o <= 2^30; rz <= 2^31, an int32 unless z = 2^30.)
        let p = match i32::try_from(rz) {
            Ok(r32) if NO_SMULL => mul64(*o, r32),
            _ => i64::from(*o) * rz,
        };
        *o = rshr(p, 31) as i32;
    }
}

/// floor(n / d) for a quotient below 2^32 (the softmax's 2^61 / Z and
/// tanh_q30's division): two 32 / 32-bit divisions with a normalized
/// divisor (Hacker's Delight's `divlu`) and at most a few exact
/// corrections, where the core divides 32 bits in one instruction
/// (Armv7-M, RV32M) and the library's 64-bit routine loops over the bits.
/// Any other operands (d = 0 as 1, d >= 2^40, a quotient >= 2^32) by `/`.
#[inline]
pub fn div_q32(n: u64, d: u64) -> u64 {
    // (64-bit cores divide 64 bits in one instruction.)
    if cfg!(target_pointer_width = "64") {
        return n / d.max(1);
    }
    #[cfg(atome_armv6m)]
    if let Some(q) = div_bits_t1(n, d) {
        return u64::from(q);
    }
    div_q32_long(n, d)
}

/// floor(n / d) on ARMv6-M (no divide instruction: each 32-bit division is
/// a library loop of about 160 instructions, and `divlu` takes two) by
/// restoring division in asm, one quotient bit a step and six instructions
/// a step: for 0 < d < 2^32 and n < d 2^32 (a quotient below 2^32), else
/// None.
#[cfg(atome_armv6m)]
#[inline(never)]
fn div_bits_t1(n: u64, d: u64) -> Option<u32> {
    let (hi, lo) = ((n >> 32) as u32, n as u32);
    if d == 0 || d >> 32 != 0 || u64::from(hi) >= d {
        return None;
    }
    let d = d as u32;
    let q: u32;
    // SAFETY: register arithmetic only. Each step shifts the remainder
    // (r2) and the dividend's low word (r1, which becomes the quotient)
    // left by one: LSLS puts lo's top bit in C, ADCS shifts it into the
    // remainder and puts the remainder's old top bit in C; when that bit
    // is set or the remainder is at least d, d is subtracted (the true
    // remainder, 2^32 + r2 or r2, is below 2d: the 33-bit case wraps to
    // the right value) and the quotient bit set.
    unsafe {
        core::arch::asm!(
            "movs r3, #32",
            "2:",
            "lsls r1, r1, #1",
            "adcs r2, r2",
            "bcs 3f",
            "cmp r2, r0",
            "bcc 4f",
            "3:",
            "subs r2, r2, r0",
            "adds r1, #1",
            "4:",
            "subs r3, #1",
            "bne 2b",
            in("r0") d,
            inout("r1") lo => q,
            inout("r2") hi => _,
            out("r3") _,
            options(pure, nomem, nostack),
        );
    }
    Some(q)
}

/// [`div_q32`]'s long form (the tests run it on every host).
fn div_q32_long(n: u64, d: u64) -> u64 {
    if d >= 1 << 40 || d == 0 || n >> 63 != 0 {
        return n / d.max(1);
    }
    if d >> 32 == 0 {
        return match divlu(n, d as u32) {
            Some(q) => u64::from(q),
            None => n / d.max(1),
        };
    }
    // A divisor of 33 to 40 bits: the quotient of both cut by k bits
    // (the divisor then has 32) is within 2 of the true one.
    let k = 32 - crate::math::lz64(d);
    let Some(q) = divlu(n >> k, (d >> k) as u32) else { return n / d.max(1) };
    let mut q = u64::from(q);
    // (q <= n / d + 2, n < 2^63 and d < 2^40: every product below is
    // under n + 3 d < 2^64.)
    while q > 0 && q * d > n {
        q -= 1;
    }
    while (q + 1) * d <= n {
        q += 1;
    }
    q
}

/// floor(n / d) when it is below 2^32 (n / 2^32 < d), else None.
#[inline]
fn divlu(n: u64, d: u32) -> Option<u32> {
    if d == 0 || (n >> 32) >= u64::from(d) {
        return None;
    }
    if n >> 32 == 0 {
        return Some(n as u32 / d.max(1));
    }
    // Normalized: d's top bit set; n << s cannot overflow (n < d 2^32).
    let s = crate::math::lz32(d);
    let (d, n) = (d << s, n << s);
    let (dh, dl) = (d >> 16, d & 0xFFFF);
    let (u1, u0) = ((n >> 32) as u32, n as u32);
    let (un1, un0) = (u0 >> 16, u0 & 0xFFFF);
    // First digit. (The product is evaluated only once q1 < 2^16, and
    // rhat < 2^16 there: both sides below 2^32.)
    // (dh >= 2^15: max(1) is a no-op that lets every division below be
    // seen as safe; the firmware audit allows no panic path.)
    let dh = dh.max(1);
    let mut q1 = u1 / dh;
    let mut rhat = u1 - q1 * dh;
    while q1 >> 16 != 0 || q1 * dl > ((rhat << 16) | un1) {
        q1 -= 1;
        rhat += dh;
        if rhat >> 16 != 0 {
            break;
        }
    }
    // The partial remainder (below d, so its wrapping form is exact).
    let un21 = ((u1 << 16) | un1).wrapping_sub(q1.wrapping_mul(d));
    let mut q0 = un21 / dh;
    rhat = un21 - q0 * dh;
    while q0 >> 16 != 0 || q0 * dl > ((rhat << 16) | un0) {
        q0 -= 1;
        rhat += dh;
        if rhat >> 16 != 0 {
            break;
        }
    }
    Some((q1 << 16) | q0)
}

/// tanh(a) in Q30 (|T| <= 2^30) from exp2q.
pub fn tanh_q30(a: f32) -> i32 {
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

/// [`to_f32`] by integer steps (the tests run it on every host).
fn to_f32_int(v: i64, e: i32) -> f32 {
    let m = v.unsigned_abs();
    if m >> 53 != 0 {
        return to_f32_f64(v, e);
    }
    if m == 0 {
        return 0.0;
    }
    // The same value by integer steps (the binary64 steps are exact here,
    // so both are the one round-to-nearest-even of v 2^e): no software
    // binary64 on the cores without a double FPU.
    let sign = u32::from(v < 0) << 31;
    let bl = bitlen(m);
    // Exponent of the leading bit.
    let x = i64::from(bl - 1) + i64::from(e);
    if x >= 128 {
        return f32::from_bits(sign | 0x7F80_0000);
    }
    if x < -150 {
        return f32::from_bits(sign);
    }
    // Bits below the binary32 unit in the last place: 24 significant bits
    // for a normal result, the 2^-149 grid for a subnormal one.
    let s = if x >= -126 { bl - 24 } else { (-149 - x + i64::from(bl) - 1) as i32 };
    let q = if s <= 0 {
        m << -s
    } else {
        let (q, rem, half) = (m >> s, m & ((1u64 << s) - 1), 1u64 << (s - 1));
        q + u64::from(rem > half || (rem == half && q & 1 == 1))
    } as u32;
    // A rounding up to 2^24 carries into the exponent (at most to the
    // infinity's pattern).
    let bits = if x >= -126 { (((x + 126) as u32) << 23) + q } else { q };
    f32::from_bits(sign | bits)
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
#[inline(always)]
pub(crate) fn ecomb_plain(a: i32, b: i32) -> i32 {
    a + b
}

#[cfg(test)]
mod tests {

    use super::{bitlen, div_q32_long as div_q32, f32_parts, fquant_exp, rshr, rshr_mul16_split, rshr_mul_split, to_f32_f64, to_f32_int as to_f32, E_ZERO, QA};

    /// The tests' random numbers (xorshift64).
    fn xorshift(s: &mut u64) -> u64 {
        *s ^= *s << 13;
        *s ^= *s >> 7;
        *s ^= *s << 17;
        *s
    }

    /// to_f32's integer steps against its binary64 form: every magnitude
    /// up to 2^53 and beyond, exponents from underflow to overflow, ties.
    #[test]
    fn to_f32_is_the_binary64_rounding() {
        let mut s = 0x2545_F491_4F6C_DD1Du64;
        let mut next = || xorshift(&mut s);
        for i in 0..400_000 {
            let r = next();
            let v = (next() >> (r % 64)) as i64;
            let v = if r & (1 << 7) != 0 { v.wrapping_neg() } else { v };
            // Exponents around binary32's range, and far outside it.
            let e = if i % 10 == 0 { (r >> 8) as i32 % 2100 } else { ((r >> 8) % 360) as i32 - 240 };
            let (a, b) = (to_f32(v, e), to_f32_f64(v, e));
            assert_eq!(a.to_bits(), b.to_bits(), "{v} * 2^{e}");
        }
        // Ties at every binary32 grid: odd multiples of half a unit.
        for e in -180..140 {
            for v in [1i64, 3, (1 << 24) + 1, (1 << 25) - 1, (1 << 25) + 3, -((1 << 24) + 1), (1 << 53) - 1, i64::MIN, i64::MAX, 0] {
                assert_eq!(to_f32(v, e).to_bits(), to_f32_f64(v, e).to_bits(), "{v} * 2^{e}");
            }
        }
    }

    /// div_q32 against the plain 64-bit division: the softmax's and
    /// tanh_q30's operand ranges, every divisor width, and edges (quotients
    /// near 2^32, divisors with one bit or all bits set, n = 0).
    #[test]
    fn div_q32_is_the_division() {
        let mut s = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = || xorshift(&mut s);
        let check = |n: u64, d: u64| assert_eq!(div_q32(n, d), n / d.max(1), "{n} / {d}");
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
        for d in [1u64, 2, 3, 0xFFFF, 0x1_0000, (1 << 31) - 1, 1 << 31, (1 << 32) - 1, 1 << 32, (1 << 33) + 1, (1 << 40) - 1, 1 << 40, 0] {
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
}
