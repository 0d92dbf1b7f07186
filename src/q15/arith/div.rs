//! The one wide division of the q15 contract, floor(n / d) with a quotient
//! below 2^32 (the softmax's 2^61 / Z and tanh_q30's), in 32-bit steps on
//! the 32-bit cores.

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
    #[cfg(all(atome_armv6m, not(atome_small)))]
    if let Some(q) = div_bits_t1(n, d) {
        return u64::from(q);
    }
    // (Size-first, and Armv6-M's operands past div_bits_t1, which are
    // rare: one short loop, no library division and its stack.)
    if cfg!(any(atome_small, atome_armv6m)) {
        return div_bits(n, d);
    }
    div_q32_long(n, d)
}

/// floor(n / d) (d = 0 as 1) by restoring division, one quotient bit a
/// step: 32 steps when the quotient is below 2^32 (the remainder starts as
/// n's high word), 64 otherwise. The size-first build's division: a few
/// instructions of code and no library routine under it. (Out of line
/// where it is the fallback of another division: one copy for the softmax
/// and tanh.)
#[cfg_attr(not(atome_small), inline(never))]
pub(super) fn div_bits(n: u64, d: u64) -> u64 {
    let d = d.max(1);
    let (mut r, mut q, steps) = if n >> 32 < d { (n >> 32, n << 32, 32) } else { (0, n, 64) };
    for _ in 0..steps {
        // r < d: the true 2r + bit (with the carry out of r) is below 2d,
        // so one wrapping subtraction leaves the remainder.
        let carry = r >> 63;
        r = (r << 1) | (q >> 63);
        q <<= 1;
        if carry != 0 || r >= d {
            r = r.wrapping_sub(d);
            q |= 1;
        }
    }
    q
}

/// floor(n / d) on ARMv6-M (no divide instruction: each 32-bit division is
/// a library loop of about 160 instructions, and `divlu` takes two) by
/// restoring division in asm, one quotient bit a step and six instructions
/// a step: for 0 < d < 2^32 and n < d 2^32 (a quotient below 2^32), else
/// None.
#[cfg(all(atome_armv6m, not(atome_small)))]
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

/// floor(2^61 / u) for u in [2^30, 2^31] (tanh_q30's quotient, in
/// [2^30, 2^31]).
#[inline]
pub fn div61(u: u32) -> u32 {
    #[cfg(all(atome_armv6m, not(atome_small)))]
    if (1 << 30..=1 << 31).contains(&u) {
        return div61_t1(u);
    }
    // (Cores with a 32-bit divide instruction: two of them.)
    #[cfg(all(not(atome_armv6m), not(atome_small)))]
    if cfg!(target_pointer_width = "32") && (1 << 30..1 << 31).contains(&u) {
        return div61_words(u);
    }
    div_q32(1 << 61, u64::from(u)) as u32
}

/// [`div61`] for u in [2^30, 2^31) by two 32 / 32-bit divisions: Hacker's
/// Delight's `divlu` on 2^62 / 2u (a divisor with its top bit set), whose
/// dividend's low word is zero, so no low digits are shifted in. (Tests:
/// `div61_words_is_the_division`, every u in scripts/math_exhaustive.sh.)
pub fn div61_words(u: u32) -> u32 {
    let dn = u << 1;
    // (d1 >= 2^15 for u >= 2^30: setting bit 15 changes nothing there and
    // leaves no division panic path.)
    let (d1, d0) = ((dn >> 16) | 0x8000, dn & 0xFFFF);
    // Each digit estimate from the top divisor digit (d1 >= 2^15), then at
    // most two corrections; rhat < 2^16 wherever it is shifted.
    let digit = |un: u32| {
        let mut q = un / d1;
        let mut rhat = un - q * d1;
        while q >> 16 != 0 || q * d0 > rhat << 16 {
            q -= 1;
            rhat += d1;
            if rhat >> 16 != 0 {
                break;
            }
        }
        q
    };
    // 2^62 = (2^30 : 0): the high digit from 2^30 / d1.
    let q1 = digit(1 << 30);
    // The partial remainder 2^46 - q1 dn, below dn: exact mod 2^32, where
    // 2^46 is 0.
    let un21 = 0u32.wrapping_sub(q1.wrapping_mul(dn));
    let q0 = digit(un21);
    (q1 << 16) | q0
}

/// [`div61`] on ARMv6-M by restoring division, four quotient bits per
/// loop pass: the remainder stays below u <= 2^31, so its doubling never
/// carries out and each bit is a compare, a conditional subtract and ADCS
/// (whose carry in is the bit), 4.5 instructions a bit against the general
/// loop's 8.
#[cfg(all(atome_armv6m, not(atome_small)))]
#[inline(never)]
fn div61_t1(u: u32) -> u32 {
    let q: u32;
    // SAFETY: register arithmetic only. r2 is the remainder (2^29, the
    // dividend's high word, to start; the low word's bits are all zero),
    // r1 the quotient; CMP leaves C set exactly when the doubled remainder
    // is at least u, SUBS then leaves it set (no borrow), and ADCS shifts
    // that bit into the quotient.
    unsafe {
        core::arch::asm!(
            "movs r3, #8",
            "2:",
            "lsls r2, r2, #1",
            "cmp r2, r0",
            "bcc 3f",
            "subs r2, r2, r0",
            "3:",
            "adcs r1, r1",
            "lsls r2, r2, #1",
            "cmp r2, r0",
            "bcc 4f",
            "subs r2, r2, r0",
            "4:",
            "adcs r1, r1",
            "lsls r2, r2, #1",
            "cmp r2, r0",
            "bcc 5f",
            "subs r2, r2, r0",
            "5:",
            "adcs r1, r1",
            "lsls r2, r2, #1",
            "cmp r2, r0",
            "bcc 6f",
            "subs r2, r2, r0",
            "6:",
            "adcs r1, r1",
            "subs r3, #1",
            "bne 2b",
            in("r0") u,
            inout("r1") 0u32 => q,
            inout("r2") 1u32 << 29 => _,
            out("r3") _,
            options(pure, nomem, nostack),
        );
    }
    q
}

/// [`div_q32`]'s long form (the tests run it on every host).
pub(super) fn div_q32_long(n: u64, d: u64) -> u64 {
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
