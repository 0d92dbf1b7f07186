//! LayerNorm's first pass over a row of int16 mantissas: the sum, the sum
//! of squares and the extremes. On Armv7E-M two elements a step in asm
//! (`SMLALD` squares both, `SSUB16` + `SEL` keep two lanes of minima and
//! maxima): 5 instructions an element where LLVM's loop took 13; on the
//! other Thumb-2 cores `SMLAL` and conditional moves, 10 where LLVM took
//! 14; a plain loop elsewhere.

/// (sum m, sum m^2, min m, max m) of `xm` (i32::MAX and i32::MIN as the
/// extremes of an empty row). |sum| <= len 2^15 must fit an int32 (the
/// caller's D < 2^16).
#[inline(always)]
pub fn row_stats(xm: &[i16]) -> (i32, i64, i32, i32) {
    let (mut s, mut q, mut lo, mut hi) = (0i32, 0i64, i32::MAX, i32::MIN);
    // The elements the asm leaves (all of them elsewhere).
    #[cfg(not(any(atome_dsp, atome_thumb2)))]
    let rest = xm;
    #[cfg(all(atome_thumb2, not(atome_dsp)))]
    let rest = if xm.len() >= 2 {
        let pairs = xm.len() / 2;
        let (mut ql, mut qh) = (0u32, 0u32);
        // One element: sum, square, extremes.
        macro_rules! stat_step {
            () => {
                concat!(
                    "ldrsh {x}, [{p}], #2\n",
                    "add {s}, {s}, {x}\n",
                    "smlal {ql}, {qh}, {x}, {x}\n",
                    "cmp {x}, {lo}\n",
                    "it lt\n",
                    "movlt {lo}, {x}\n",
                    "cmp {x}, {hi}\n",
                    "it gt\n",
                    "movgt {hi}, {x}\n",
                )
            };
        }
        // SAFETY: reads 2 * pairs <= xm.len() int16 from xm (halfword
        // loads), pairs >= 1 steps; the adds cannot overflow for the
        // caller's lengths. Only the named registers and the flags change.
        unsafe {
            core::arch::asm!(
                "2:",
                stat_step!(),
                stat_step!(),
                "subs {n}, {n}, #1",
                "bne 2b",
                p = inout(reg) xm.as_ptr() => _,
                n = inout(reg) pairs => _,
                s = inout(reg) s,
                ql = inout(reg) ql,
                qh = inout(reg) qh,
                lo = inout(reg) lo,
                hi = inout(reg) hi,
                x = out(reg) _,
                options(readonly, nostack),
            );
        }
        q = ((u64::from(qh) << 32) | u64::from(ql)) as i64;
        xm.get(2 * pairs..).unwrap_or(&[])
    } else {
        xm
    };
    #[cfg(atome_dsp)]
    let rest = if xm.len() >= 2 {
        let pairs = xm.len() / 2;
        let (mut ql, mut qh, mut lo2, mut hi2) = (0u32, 0u32, 0x7FFF_7FFFu32, 0x8000_8000u32);
        // SAFETY: reads 2 * pairs <= xm.len() int16 from xm as pairs
        // (unaligned word loads: Armv7E-M allows them from normal memory),
        // pairs >= 1 steps. SMLALD, SXTAH and the adds cannot overflow for
        // the caller's lengths; SSUB16 sets the GE flags that SEL reads.
        // Only the named registers and the flags change.
        unsafe {
            core::arch::asm!(
                "2:",
                "ldr {x}, [{p}], #4",
                "smlald {ql}, {qh}, {x}, {x}",
                "sxtah {s}, {s}, {x}",
                "add {s}, {s}, {x}, asr #16",
                // GE per lane where x >= lo: keep lo there, else x.
                "ssub16 {t}, {x}, {lo}",
                "sel {lo}, {lo}, {x}",
                // GE per lane where x >= hi: x there, else hi.
                "ssub16 {t}, {x}, {hi}",
                "sel {hi}, {x}, {hi}",
                "subs {n}, {n}, #1",
                "bne 2b",
                p = inout(reg) xm.as_ptr() => _,
                n = inout(reg) pairs => _,
                s = inout(reg) s,
                ql = inout(reg) ql,
                qh = inout(reg) qh,
                lo = inout(reg) lo2,
                hi = inout(reg) hi2,
                x = out(reg) _,
                t = out(reg) _,
                options(readonly, nostack),
            );
        }
        q = ((u64::from(qh) << 32) | u64::from(ql)) as i64;
        let lane = |w: u32, k: u32| i32::from((w >> (16 * k)) as u16 as i16);
        lo = lane(lo2, 0).min(lane(lo2, 1));
        hi = lane(hi2, 0).max(lane(hi2, 1));
        xm.get(2 * pairs..).unwrap_or(&[])
    } else {
        xm
    };
    for &m in rest {
        let m = i32::from(m);
        s += m;
        q += i64::from(m * m);
        lo = lo.min(m);
        hi = hi.max(m);
    }
    (s, q, lo, hi)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn row_stats_of_rows() {
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        for len in 0..70 {
            for _ in 0..50 {
                let row: [i16; 70] = core::array::from_fn(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    x as i16
                });
                let r = &row[..len];
                let want = (
                    r.iter().map(|&v| i32::from(v)).sum::<i32>(),
                    r.iter().map(|&v| i64::from(v) * i64::from(v)).sum::<i64>(),
                    r.iter().map(|&v| i32::from(v)).min().unwrap_or(i32::MAX),
                    r.iter().map(|&v| i32::from(v)).max().unwrap_or(i32::MIN),
                );
                assert_eq!(row_stats(r), want);
            }
        }
    }
}
