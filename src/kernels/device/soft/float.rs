//! The unpacked float of the software accumulate and its whole-float add:
//! one IEEE binary32 add, round to nearest, ties to even, for any finite
//! operands ([`add`]), and [`add_f32`] for every float.

/// An unpacked finite float: value = m * 2^(e - 150), |m| < 2^24, m carries
/// the sign. Normal numbers have |m| >= 2^23 and e = the biased exponent;
/// subnormals have e = 1 and |m| < 2^23 (the same scale as e = 1 normals);
/// zero is m = 0, e = 0 (and stands for +0.0).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Soft {
    /// Signed mantissa with the implicit bit.
    pub m: i32,
    /// Biased exponent (1 for subnormals, 0 for zero).
    pub e: i32,
}

/// +0.0.
pub const ZERO: Soft = Soft { m: 0, e: 0 };

/// Unpacks a finite float (both zeros give [`ZERO`]); None for inf and NaN.
#[inline]
pub fn unpack(x: f32) -> Option<Soft> {
    let b = x.to_bits();
    let f = ((b >> 23) & 0xff) as i32;
    if f == 0xff {
        return None;
    }
    let frac = (b & 0x7f_ffff) as i32;
    let (m, e) = if f == 0 { (frac, 1) } else { (frac | 1 << 23, f) };
    if m == 0 {
        return Some(ZERO);
    }
    Some(Soft { m: if (b as i32) < 0 { -m } else { m }, e })
}

/// Packs back to a float (exact: a [`Soft`] is always representable).
#[inline]
pub fn pack(s: Soft) -> f32 {
    if s.m == 0 {
        return 0.0;
    }
    let sign = (s.m as u32) & 0x8000_0000;
    // The implicit bit of a normal mantissa carries into the exponent field,
    // so normals and subnormals (e = 1, |m| < 2^23) pack the same way.
    f32::from_bits(sign | ((((s.e - 1) as u32) << 23) + s.m.unsigned_abs()))
}

/// a + x rounded to nearest, ties to even; None when the sum overflows
/// (its IEEE result is then an infinity of the sum's sign). A zero result
/// is [`ZERO`] (+0.0, as IEEE gives for x + (-x)); a zero operand returns
/// the other one unchanged (so -0 + -0 is not covered: see [`add_f32`]).
pub fn add(a: Soft, x: Soft) -> Option<Soft> {
    if x.m == 0 {
        return Some(a);
    }
    if a.m == 0 {
        return Some(x);
    }
    let (big, small) = if a.e >= x.e { (a, x) } else { (x, a) };
    let d = (big.e - small.e) as u32;
    // Six guard bits; |m| << 6 < 2^30 so the sum fits an i32.
    let s6 = small.m << 6;
    // Arithmetic shifts floor; a nonzero remainder is jammed into bit 0,
    // which keeps every rounding decision at bit 6 (or 5 after one
    // normalising shift left) that the exact sum would give.
    let (s, lost) = if d < 31 {
        let s = s6 >> d;
        (s, (s << d) != s6)
    } else {
        (s6 >> 31, true)
    };
    let mut t = ((big.m << 6) + s) | lost as i32;
    if t == 0 {
        return Some(ZERO);
    }
    let mut e = big.e;
    // Normalise |t| into [2^29, 2^30) at exponent e; subnormal results stop
    // at e = 1 (and are exact: no bits were lost on the way there).
    if t.unsigned_abs() >= 1 << 30 {
        t = (t >> 1) | (t & 1);
        e += 1;
    } else {
        while t.unsigned_abs() < 1 << 29 && e > 1 {
            t <<= 1;
            e -= 1;
        }
    }
    // Round at bit 6 to nearest, ties to even: floor((t + 31 + lsb) / 64)
    // on two's complement is symmetric in the sign.
    let mut m = (t + 31 + ((t >> 6) & 1)) >> 6;
    if m.unsigned_abs() == 1 << 24 {
        // Rounded up into the next binade; m is even, so this is exact.
        m >>= 1;
        e += 1;
    }
    if e > 254 {
        return None;
    }
    Some(Soft { m, e })
}

/// a + b for any floats: [`add`] for finite nonzero operands, IEEE rules
/// for zeros, infinities and NaN (NaN results are the default quiet NaN).
pub fn add_f32(a: f32, b: f32) -> f32 {
    let (ua, ub) = match (unpack(a), unpack(b)) {
        (Some(ua), Some(ub)) => (ua, ub),
        _ => {
            if a.is_nan() || b.is_nan() || (a.is_infinite() && b.is_infinite() && a.to_bits() != b.to_bits()) {
                return f32::from_bits(0x7fc0_0000);
            }
            return if a.is_infinite() { a } else { b };
        }
    };
    match (ua.m == 0, ub.m == 0) {
        // -0 only when both are -0.
        (true, true) => f32::from_bits(a.to_bits() & b.to_bits()),
        (true, false) => b,
        (false, true) => a,
        (false, false) => match add(ua, ub) {
            Some(s) => pack(s),
            // Only same-sign sums overflow.
            None => f32::from_bits((a.to_bits() & 0x8000_0000) | 0x7f80_0000),
        },
    }
}
