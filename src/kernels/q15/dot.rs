//! The exact dot product of two int16 vectors (the attention's q . k):
//! `SMLALD` on Armv7E-M (two products and a 64-bit accumulate in one
//! instruction, activations two to a word), `SMLAL` on the other Thumb-2
//! cores, a `MULS` and 64-bit add loop in asm on Armv6-M, a plain loop
//! elsewhere.

/// sum a_i b_i over the shorter length, exactly (|sum| <= 2^30 * len).
#[inline(always)]
pub fn dot_q(a: &[i16], b: &[i16]) -> i64 {
    #[cfg(all(atome_dsp, not(atome_small)))]
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
    #[cfg(all(all(atome_thumb2, not(atome_small)), not(all(atome_dsp, not(atome_small)))))]
    {
        let n = a.len().min(b.len());
        if n == 0 {
            return 0;
        }
        dot_smlal(a.as_ptr(), b.as_ptr(), n)
    }
    #[cfg(all(atome_rv32, not(atome_small)))]
    {
        dot_by_pairs(a, b)
    }
    #[cfg(all(atome_armv6m, not(atome_small)))]
    {
        let n = a.len().min(b.len());
        if n == 0 {
            return 0;
        }
        dot_t1(a.as_ptr(), b.as_ptr(), n)
    }
    #[cfg(not(any(all(atome_dsp, not(atome_small)), all(atome_thumb2, not(atome_small)), all(atome_rv32, not(atome_small)), all(atome_armv6m, not(atome_small)))))]
    {
        let mut acc = 0i64;
        for (&x, &y) in a.iter().zip(b) {
            acc += i64::from(i32::from(x) * i32::from(y));
        }
        acc
    }
}

/// [`dot_q`] on Armv6-M: the products from the last to the first (an
/// exact integer sum: any order gives it), eight instructions each (the
/// compiled loop, inlined into the attention's scan, took eleven: its
/// index lived on the stack).
///
/// # Safety
/// n >= 1 readable int16 at each pointer (n < 2^30).
#[cfg(all(atome_armv6m, not(atome_small)))]
#[inline(never)]
fn dot_t1(a: *const i16, b: *const i16, n: usize) -> i64 {
    let (mut lo, mut hi) = (0u32, 0u32);
    // SAFETY: the caller's contract (n >= 1 readable int16 at each
    // pointer): the byte offset runs from 2 (n - 1) down to 0, each
    // halfword read inside both arrays. Only the named registers and the
    // flags change.
    unsafe {
        core::arch::asm!(
            "2:",
            "ldrsh {t0}, [{ap}, {i}]",
            "ldrsh {t1}, [{bp}, {i}]",
            "muls {t0}, {t1}",
            "asrs {t1}, {t0}, #31",
            "adds {lo}, {lo}, {t0}",
            "adcs {hi}, {t1}",
            "subs {i}, #2",
            "bpl 2b",
            ap = in(reg) a,
            bp = in(reg) b,
            i = inout(reg) 2 * (n - 1) => _,
            lo = inout(reg) lo,
            hi = inout(reg) hi,
            t0 = out(reg) _,
            t1 = out(reg) _,
            options(pure, readonly, nostack),
        );
    }
    crate::q15::arith::join64(lo, hi)
}

/// One step of [`dot_pairs`]: a word (two int16) from each side, SMLALD.
#[cfg(all(atome_dsp, not(atome_small)))]
macro_rules! smlald_step {
    () => {
        concat!("ldr {t0}, [{ap}], #4\n", "ldr {t1}, [{bp}], #4\n", "smlald {lo}, {hi}, {t0}, {t1}\n")
    };
}

/// One step of [`dot_smlal`]: an int16 from each side, SMLAL.
#[cfg(all(all(atome_thumb2, not(atome_small)), not(all(atome_dsp, not(atome_small)))))]
macro_rules! smlal_step {
    () => {
        concat!("ldrsh {t0}, [{ap}], #2\n", "ldrsh {t1}, [{bp}], #2\n", "smlal {lo}, {hi}, {t0}, {t1}\n")
    };
}

/// sum over `pairs` >= 1 int16 pairs at a and b (2 * pairs readable int16
/// each) of a_i b_i, by `SMLALD`.
#[cfg(all(atome_dsp, not(atome_small)))]
#[inline(always)]
fn dot_pairs(a: *const i16, b: *const i16, pairs: usize) -> i64 {
    let (mut lo, mut hi) = (0u32, 0u32);
    // SAFETY: the caller's contract (2 * pairs readable int16 at each
    // pointer, pairs >= 1); word loads of two int16 may be unaligned
    // (Armv7E-M allows unaligned LDR from normal memory). Only the named
    // registers and the flags change.
    unsafe {
        core::arch::asm!(
            // An odd pair first, then two pairs a step (ldr and smlald
            // leave the flags of the lsrs: C the odd pair, Z no steps).
            "lsrs {n}, {n}, #1",
            "bcc 2f",
            smlald_step!(),
            "2:",
            "beq 3f",
            "4:",
            smlald_step!(),
            smlald_step!(),
            "subs {n}, {n}, #1",
            "bne 4b",
            "3:",
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
    crate::q15::arith::join64(lo, hi)
}

/// sum over `n` >= 1 int16 at a and b (n readable int16 each) of a_i b_i,
/// by `SMLAL` (Armv7-M), four a step: LLVM's loop took seven instructions
/// per product, this takes three and a half.
#[cfg(all(all(atome_thumb2, not(atome_small)), not(all(atome_dsp, not(atome_small)))))]
#[inline(always)]
fn dot_smlal(a: *const i16, b: *const i16, n: usize) -> i64 {
    let (mut lo, mut hi) = (0u32, 0u32);
    // SAFETY: the caller's contract (n >= 1 readable int16 at each
    // pointer); halfword loads, the pointers advancing by one int16 per
    // product, n in all. Only the named registers and the flags change.
    unsafe {
        core::arch::asm!(
            "ands {r}, {n}, #3",
            "lsrs {n}, {n}, #2",
            "beq 3f",
            "2:",
            smlal_step!(),
            smlal_step!(),
            smlal_step!(),
            smlal_step!(),
            "subs {n}, {n}, #1",
            "bne 2b",
            "3:",
            "cmp {r}, #0",
            "beq 5f",
            "4:",
            smlal_step!(),
            "subs {r}, {r}, #1",
            "bne 4b",
            "5:",
            ap = inout(reg) a => _,
            bp = inout(reg) b => _,
            n = inout(reg) n => _,
            r = out(reg) _,
            lo = inout(reg) lo,
            hi = inout(reg) hi,
            t0 = out(reg) _,
            t1 = out(reg) _,
            options(readonly, nostack),
        );
    }
    crate::q15::arith::join64(lo, hi)
}

/// [`dot_q`] with two products a step, summed in int32 and widened once
/// (RV32 has no 32x32+64 accumulate; the 64-bit hosts' loop vectorizes
/// instead, and the unit test runs this one there). Out of line: inlined
/// into the attention's selection loop, its registers spilled.
#[cfg_attr(not(all(atome_rv32, not(atome_small))), allow(dead_code))]
#[inline(never)]
fn dot_by_pairs(a: &[i16], b: &[i16]) -> i64 {
    // Each product is in (-2^30, 2^30], so the pair sum s is in (-2^31 + 2^16, 2^31]: it
    // wraps only at +2^31, to i32::MIN, which no other sum gives;
    // s - 1 (wrapping) is then exact, and the pairs' +1 are added once.
    let mut it = a.iter().zip(b);
    let (mut acc, mut pairs) = (0i64, 0u32);
    while let Some((&x0, &y0)) = it.next() {
        let p0 = i32::from(x0) * i32::from(y0);
        let Some((&x1, &y1)) = it.next() else {
            acc += i64::from(p0);
            break;
        };
        acc += i64::from(p0.wrapping_add(i32::from(x1) * i32::from(y1)).wrapping_sub(1));
        pairs += 1;
    }
    acc += i64::from(pairs);
    acc
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dot_by_pairs_is_the_dot_product() {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || crate::test_rng::xorshift64(&mut x);
        let plain = |a: &[i16], b: &[i16]| a.iter().zip(b).map(|(&p, &q)| i64::from(p) * i64::from(q)).sum::<i64>();
        for case in 0..3000 {
            let (na, nb) = ((next() % 40) as usize, (next() % 40) as usize);
            let nb = if case % 2 == 0 { na } else { nb };
            let pick = |r: u64| match r % 5 {
                // The extremes (-32768 * -32768 twice is the pair sum that
                // wraps) and anything.
                0 => i16::MIN,
                1 => i16::MAX,
                2 => -i16::MAX,
                _ => (r >> 8) as i16,
            };
            let a: [i16; 40] = core::array::from_fn(|_| pick(next()));
            let b: [i16; 40] = core::array::from_fn(|_| pick(next()));
            assert_eq!(dot_by_pairs(&a[..na], &b[..nb]), plain(&a[..na], &b[..nb]), "{na} {nb}");
            assert_eq!(dot_q(&a[..na], &b[..nb]), plain(&a[..na], &b[..nb]));
        }
        let m = [i16::MIN; 8];
        assert_eq!(dot_by_pairs(&m, &m), 8 << 30);
    }
}
