//! The exact dot product of two int16 vectors (the attention's q . k):
//! `SMLALD` on Armv7E-M (two products and a 64-bit accumulate in one
//! instruction, activations two to a word), a plain loop elsewhere.

/// sum a_i b_i over the shorter length, exactly (|sum| < 2^30 * len).
#[inline(always)]
pub fn dot_q(a: &[i16], b: &[i16]) -> i64 {
    #[cfg(atome_dsp)]
    {
        let n = a.len().min(b.len());
        let pairs = n / 2;
        let mut acc = if pairs > 0 { dot_pairs(a.as_ptr(), b.as_ptr(), pairs) } else { 0 };
        if n % 2 == 1 {
            if let (Some(&x), Some(&y)) = (a.get(n - 1), b.get(n - 1)) {
                acc += i64::from(i32::from(x) * i32::from(y));
            }
        }
        acc
    }
    #[cfg(not(atome_dsp))]
    {
        let mut acc = 0i64;
        for (&x, &y) in a.iter().zip(b) {
            acc += i64::from(i32::from(x) * i32::from(y));
        }
        acc
    }
}

/// sum over `pairs` >= 1 int16 pairs at a and b (2 * pairs readable int16
/// each) of a_i b_i, by `SMLALD`.
#[cfg(atome_dsp)]
#[inline(always)]
fn dot_pairs(a: *const i16, b: *const i16, pairs: usize) -> i64 {
    let (mut lo, mut hi) = (0u32, 0u32);
    // SAFETY: the caller's contract (2 * pairs readable int16 at each
    // pointer, pairs >= 1); word loads of two int16 may be unaligned
    // (Armv7E-M allows unaligned LDR from normal memory). Only the named
    // registers and the flags change.
    unsafe {
        core::arch::asm!(
            "2:",
            "ldr {t0}, [{ap}], #4",
            "ldr {t1}, [{bp}], #4",
            "smlald {lo}, {hi}, {t0}, {t1}",
            "subs {n}, {n}, #1",
            "bne 2b",
            ap = inout(reg) a => _,
            bp = inout(reg) b => _,
            n = inout(reg) pairs => _,
            lo = inout(reg) lo,
            hi = inout(reg) hi,
            t0 = out(reg) _,
            t1 = out(reg) _,
            options(readonly, nostack),
        );
    }
    ((u64::from(hi) << 32) | u64::from(lo)) as i64
}
