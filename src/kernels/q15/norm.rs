//! LayerNorm's first pass over a row of int16 mantissas: the sum, the sum
//! of squares and the extremes. On Armv7E-M two elements a step in asm
//! (`SMLALD` squares both, `SSUB16` + `SEL` keep two lanes of minima and
//! maxima): 5 instructions an element where LLVM's loop took 13; on the
//! other Thumb-2 cores `SMLAL` and conditional moves, 10 where LLVM took
//! 14; on ARMv6-M two squares added in 32 bits before the 64-bit add, 12.5
//! where LLVM took 25; a plain loop elsewhere. ARMv6-M also has the
//! per-element passes in asm ([`ln_passes_t1`]).

/// (sum m, sum m^2, min m, max m) of `xm` (i32::MAX and i32::MIN as the
/// extremes of an empty row). |sum| <= len 2^15 must fit an int32 (the
/// caller's D < 2^16).
#[inline(always)]
pub fn row_stats(xm: &[i16]) -> (i32, i64, i32, i32) {
    let (mut s, mut q, mut lo, mut hi) = (0i32, 0i64, i32::MAX, i32::MIN);
    // The elements the asm leaves (all of them elsewhere).
    #[cfg(not(any(atome_dsp, atome_thumb2, atome_armv6m)))]
    let rest = xm;
    // ARMv6-M: two elements a step, their squares added in 32 bits (each
    // at most 2^30) before the 64-bit add; the extremes in high registers
    // (CMP and MOV reach them): about 12.5 instructions an element where
    // LLVM's loop took 25.
    #[cfg(atome_armv6m)]
    let rest = if xm.len() >= 2 {
        let pairs = xm.len() / 2;
        let (mut ql, mut qh): (u32, u32);
        // One element: its sum, extremes and square (into r4).
        macro_rules! stat_t1 {
            ($k:literal) => {
                concat!(
                    "ldrh r4, [r0, #", $k, "]\n",
                    "sxth r4, r4\n",
                    "adds r1, r1, r4\n",
                    "cmp r4, r8\n",
                    "bge 5f\n",
                    "mov r8, r4\n",
                    "5:\n",
                    "cmp r4, r10\n",
                    "ble 6f\n",
                    "mov r10, r4\n",
                    "6:\n",
                    "muls r4, r4, r4\n",
                )
            };
        }
        // SAFETY: reads 2 * pairs <= xm.len() int16 from xm (halfword
        // aligned: an i16 slice), pairs >= 1 steps, stopping when the
        // pointer reaches xm + 2 * pairs; the sum cannot overflow for the
        // caller's lengths. Only the named registers and the flags change;
        // no stack use.
        unsafe {
            core::arch::asm!(
                "mov lr, r4",
                // lo = i32::MAX, hi = i32::MIN.
                "movs r4, #1",
                "lsls r4, r4, #31",
                "mov r10, r4",
                "subs r4, r4, #1",
                "mov r8, r4",
                "2:",
                stat_t1!("0"),
                "movs r5, r4",
                stat_t1!("2"),
                "adds r5, r5, r4",
                "adds r2, r2, r5",
                "movs r5, #0",
                "adcs r3, r5",
                "adds r0, #4",
                "cmp r0, lr",
                "bne 2b",
                "mov r4, r8",
                "mov r5, r10",
                inout("r0") xm.as_ptr() => _,
                inout("r1") s,
                inout("r2") 0u32 => ql,
                inout("r3") 0u32 => qh,
                inout("r4") xm.as_ptr().wrapping_add(2 * pairs) => lo,
                out("r5") hi,
                out("r8") _,
                out("r10") _,
                out("lr") _,
                options(readonly, nostack),
            );
        }
        q = ((u64::from(qh) << 32) | u64::from(ql)) as i64;
        xm.get(2 * pairs..).unwrap_or(&[])
    } else {
        xm
    };
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
        // pairs >= 1 steps. SMLALD and SMLAD cannot overflow for
        // the caller's lengths; SSUB16 sets the GE flags that SEL reads.
        // Only the named registers and the flags change.
        unsafe {
            core::arch::asm!(
                "2:",
                "ldr {x}, [{p}], #4",
                "smlald {ql}, {qh}, {x}, {x}",
                // Both lanes times 1, added to the sum.
                "smlad {s}, {x}, {one}, {s}",
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
                one = in(reg) 0x0001_0001u32,
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

/// Thumb-1 asm text: the word at `[$base, #$off]` into the high register
/// `$hi` through the low scratch `$tmp` (Thumb-1 loads only into low
/// registers; asm operands may name high ones only as clobbers).
#[cfg(atome_armv6m)]
macro_rules! to_high {
    ($tmp:literal, $base:literal, $off:literal, $hi:literal) => {
        concat!("ldr ", $tmp, ", [", $base, ", #", $off, "]\n", "mov ", $hi, ", ", $tmp, "\n")
    };
}

/// LayerNorm's per-element passes on ARMv6-M (Cortex-M0), in asm: the
/// same integers as the engine's loop (`ln_sums`), wrapping,
/// cm = (m dm + c) >> t0, zm = (cm im + r2) >> t1,
/// W = ((g zm + r3) >> t2) + ((b m4 + r4) >> t3) into `w`; OR of |W|.
/// Three passes, each with few enough values for Thumb-1's six low
/// registers (the others wait in high ones, loaded from a small array,
/// and a `MOV` brings a shift count down): about 37 instructions an
/// element where LLVM's one pass takes 47 with its spills. None (nothing
/// written) unless `xm.len() == w.len()` is even and at least 2 and every
/// shift is at most 31.
///
/// # Safety
/// `g` and `b` must be readable for `w.len()` int32 each.
#[cfg(atome_armv6m)]
pub unsafe fn ln_passes_t1(xm: &[i16], g: *const i32, b: *const i32, k: [i32; 7], t: [u32; 4], w: &mut [i32]) -> Option<u32> {
    let n = w.len();
    if xm.len() != n || n < 2 || !n.is_multiple_of(2) || t.iter().any(|&s| s > 31) {
        return None;
    }
    let [dm, c, im, r2, r3, m4, r4] = k;
    let [t0, t1, t2, t3] = t;
    let wp = w.as_mut_ptr();
    let end = wp.wrapping_add(n) as usize as u32;
    // The values each pass keeps in high registers: (c, r2, t0, t1, end),
    // (r3, t2, end), (m4, r4, t3, end).
    let ka = [c as u32, r2 as u32, t0, t1, end];
    let kb = [r3 as u32, t2, end];
    let kc = [m4 as u32, r4 as u32, t3, end];
    // Pass A: w = zm.
    // SAFETY: reads the five words of ka; n / 2 steps of two elements:
    // reads xm[i] (halfword aligned: an i16 slice, n long), writes w[i]
    // (word aligned, n long), stopping when the w pointer reaches its end
    // (n even, >= 2). Only the named registers and the flags change; no
    // stack use.
    unsafe {
        core::arch::asm!(
            to_high!("r5", "r4", "0", "r8"),
            to_high!("r5", "r4", "4", "r10"),
            to_high!("r5", "r4", "8", "r11"),
            to_high!("r5", "r4", "12", "r12"),
            to_high!("r5", "r4", "16", "lr"),
            "2:",
            ".irp k, 0, 1",
            "ldrh r4, [r0, #2*\\k]",
            "sxth r4, r4",
            "muls r4, r2, r4",
            "add r4, r8",
            "mov r5, r11",
            "asrs r4, r5",
            "muls r4, r3, r4",
            "add r4, r10",
            "mov r5, r12",
            "asrs r4, r5",
            "str r4, [r1, #4*\\k]",
            ".endr",
            "adds r0, #4",
            "adds r1, #8",
            "cmp r1, lr",
            "bne 2b",
            inout("r0") xm.as_ptr() => _,
            inout("r1") wp => _,
            in("r2") dm,
            in("r3") im,
            inout("r4") ka.as_ptr() => _,
            out("r5") _,
            out("r8") _,
            out("r10") _,
            out("r11") _,
            out("r12") _,
            out("lr") _,
            options(nostack),
        );
    }
    // Pass B1: w = (g zm + r3) >> t2.
    // SAFETY: as pass A's, reading kb, g[i] (the caller's n int32) and
    // reading then writing w[i].
    unsafe {
        core::arch::asm!(
            to_high!("r5", "r4", "0", "r8"),
            to_high!("r5", "r4", "4", "r10"),
            to_high!("r5", "r4", "8", "lr"),
            "2:",
            ".irp k, 0, 1",
            "ldr r2, [r0, #4*\\k]",
            "ldr r3, [r1, #4*\\k]",
            "muls r2, r3, r2",
            "add r2, r8",
            "mov r5, r10",
            "asrs r2, r5",
            "str r2, [r1, #4*\\k]",
            ".endr",
            "adds r0, #8",
            "adds r1, #8",
            "cmp r1, lr",
            "bne 2b",
            inout("r0") g => _,
            inout("r1") wp => _,
            out("r2") _,
            out("r3") _,
            inout("r4") kb.as_ptr() => _,
            out("r5") _,
            out("r8") _,
            out("r10") _,
            out("lr") _,
            options(nostack),
        );
    }
    // Pass B2: w += (b m4 + r4) >> t3, and the OR of |w|.
    let mut mx = 0u32;
    // SAFETY: as pass B1's, with kc and b.
    unsafe {
        core::arch::asm!(
            to_high!("r2", "r3", "0", "r8"),
            to_high!("r2", "r3", "4", "r10"),
            to_high!("r2", "r3", "8", "r11"),
            to_high!("r2", "r3", "12", "lr"),
            "2:",
            ".irp k, 0, 1",
            "ldr r2, [r0, #4*\\k]",
            "mov r5, r8",
            "muls r2, r5, r2",
            "add r2, r10",
            "mov r5, r11",
            "asrs r2, r5",
            "ldr r3, [r1, #4*\\k]",
            "adds r2, r2, r3",
            "str r2, [r1, #4*\\k]",
            "asrs r3, r2, #31",
            "eors r2, r3",
            "subs r2, r2, r3",
            "orrs r4, r2",
            ".endr",
            "adds r0, #8",
            "adds r1, #8",
            "cmp r1, lr",
            "bne 2b",
            inout("r0") b => _,
            inout("r1") wp => _,
            out("r2") _,
            inout("r3") kc.as_ptr() => _,
            inout("r4") mx,
            out("r5") _,
            out("r8") _,
            out("r10") _,
            out("r11") _,
            out("lr") _,
            options(nostack),
        );
    }
    Some(mx)
}

/// LayerNorm's affine pass on Armv7E-M: W = rshr(g zm, t2) + beta term,
/// the beta term rshr(b, t3) for t3 >= 1 or b m4 for t3 = 0, in place of
/// the zm in `w`; the OR of |W|. `SMMULR` by 2^(32 - t) is rshr by t in
/// one instruction (t = 1: the value doubled first, then 2^30; |g zm| <
/// 2^30 and |b| < 2^23 leave room), `SMMLAR` adds the beta term's: two
/// elements a step, 9 instructions an element against LLVM's 15. None
/// (nothing written) for an odd length, shifts outside 1..=31 (t2) and
/// 0..=31 (t3).
///
/// # Safety
/// `g` and `b` must be readable for `w.len()` int32 each, 4-byte aligned.
#[cfg(atome_dsp)]
#[inline(always)]
pub unsafe fn ln_affine_dsp(w: &mut [i32], g: *const i32, b: *const i32, t2: u32, t3: u32, m4: i32) -> Option<u32> {
    let n = w.len();
    if n == 0 || !n.is_multiple_of(2) || !(1..=31).contains(&t2) || t3 > 31 {
        return None;
    }
    let mul = |t: u32| if t <= 1 { 1i32 << 30 } else { 1i32 << (32 - t) };
    let (mg, mb) = (mul(t2), if t3 == 0 { m4 } else { mul(t3) });
    let (gm, bm) = (if t2 == 1 { 1 } else { 2 }, t3.min(2) as usize);
    let wp = w.as_mut_ptr();
    // SAFETY: the caller's contract and the length check: n / 2 steps,
    // each reading two int32 at g, b and w (word aligned, as LDRD needs)
    // and writing two at w. Only the named registers and the flags (Q
    // included) change.
    unsafe {
        Some(match (gm, bm) {
            (1, 0) => affine_loop::<1, 0>(wp, g, b, n / 2, mg, mb),
            (1, 1) => affine_loop::<1, 1>(wp, g, b, n / 2, mg, mb),
            (1, _) => affine_loop::<1, 2>(wp, g, b, n / 2, mg, mb),
            (_, 0) => affine_loop::<2, 0>(wp, g, b, n / 2, mg, mb),
            (_, 1) => affine_loop::<2, 1>(wp, g, b, n / 2, mg, mb),
            (_, _) => affine_loop::<2, 2>(wp, g, b, n / 2, mg, mb),
        })
    }
}

/// One pair of [`affine_loop`] (no instruction here sets N, Z or C).
#[cfg(atome_dsp)]
macro_rules! affine_pair {
    () => {
        concat!(
            "ldrd {a0}, {a1}, [{gp}], #8\n",
            "ldrd {z0}, {z1}, [{wp}]\n",
            "mul {z0}, {a0}, {z0}\n",
            "mul {z1}, {a1}, {z1}\n",
            ".if {gm} == 1\n",
            "lsl {z0}, {z0}, #1\n",
            "lsl {z1}, {z1}, #1\n",
            ".endif\n",
            "smmulr {z0}, {z0}, {mg}\n",
            "smmulr {z1}, {z1}, {mg}\n",
            "ldrd {a0}, {a1}, [{bp}], #8\n",
            ".if {bm} == 0\n",
            "mla {z0}, {a0}, {mb}, {z0}\n",
            "mla {z1}, {a1}, {mb}, {z1}\n",
            ".else\n",
            ".if {bm} == 1\n",
            "lsl {a0}, {a0}, #1\n",
            "lsl {a1}, {a1}, #1\n",
            ".endif\n",
            "smmlar {z0}, {a0}, {mb}, {z0}\n",
            "smmlar {z1}, {a1}, {mb}, {z1}\n",
            ".endif\n",
            "strd {z0}, {z1}, [{wp}], #8\n",
            "eor {a0}, {z0}, {z0}, asr #31\n",
            "sub {a0}, {a0}, {z0}, asr #31\n",
            "orr {mx}, {mx}, {a0}\n",
            "eor {a0}, {z1}, {z1}, asr #31\n",
            "sub {a0}, {a0}, {z1}, asr #31\n",
            "orr {mx}, {mx}, {a0}\n",
        )
    };
}

/// [`ln_affine_dsp`]'s loop: `GM` 1 (t2 = 1: double, then SMMULR) or 2
/// (SMMULR); `BM` 0 (MLA by m4), 1 (t3 = 1: double, then SMMLAR) or 2
/// (SMMLAR).
///
/// # Safety
/// pairs >= 1; 2 * pairs int32 readable at g and b and read-writable at
/// w, all 4-byte aligned.
#[cfg(atome_dsp)]
#[inline(always)]
unsafe fn affine_loop<const GM: usize, const BM: usize>(w: *mut i32, g: *const i32, b: *const i32, pairs: usize, mg: i32, mb: i32) -> u32 {
    let mut mx = 0u32;
    // SAFETY: the caller's contract. Only the named registers and the
    // flags (Q included) change.
    unsafe {
        core::arch::asm!(
            // (No instruction of a pair sets N, Z or C.)
            odd_then_pairs!("n", affine_pair()),
            gm = const GM,
            bm = const BM,
            wp = inout(reg) w => _,
            gp = inout(reg) g => _,
            bp = inout(reg) b => _,
            n = inout(reg) pairs => _,
            mg = in(reg) mg,
            mb = in(reg) mb,
            mx = inout(reg) mx,
            a0 = out(reg) _,
            a1 = out(reg) _,
            z0 = out(reg) _,
            z1 = out(reg) _,
            options(nostack),
        );
    }
    mx
}

/// LayerNorm's first per-element pass on the Thumb-2 cores: w[i] = ((((m
/// dm + c) >> t0) im + r2) >> t1) for m = xm[i] (wrapping products, as
/// the engine's loop), two elements a step from one word of `xm`: 7
/// instructions an element against LLVM's 8. Returns false (nothing
/// written) unless both hold the same even, non-zero number of elements.
#[cfg(atome_thumb2)]
#[inline(always)]
pub fn ln_first_t2(xm: &[i16], [dm, c, im, r2]: [i32; 4], [t0, t1]: [u32; 2], w: &mut [i32]) -> bool {
    let n = xm.len();
    if n == 0 || !n.is_multiple_of(2) || w.len() != n {
        return false;
    }
    // SAFETY: n / 2 steps, each reading one word (two int16) of xm
    // (unaligned LDR is allowed on Armv7-M and later) and writing two
    // int32 to w (word aligned: an i32 slice). Only the named registers
    // and the flags change.
    unsafe {
        core::arch::asm!(
            "2:",
            "ldr {x}, [{xp}], #4",
            "sxth {a}, {x}",
            "asr {x}, {x}, #16",
            "mla {a}, {a}, {dm}, {c}",
            "mla {x}, {x}, {dm}, {c}",
            "asr {a}, {a}, {t0}",
            "asr {x}, {x}, {t0}",
            "mla {a}, {a}, {im}, {r2}",
            "mla {x}, {x}, {im}, {r2}",
            "asr {a}, {a}, {t1}",
            "asr {x}, {x}, {t1}",
            "strd {a}, {x}, [{wp}], #8",
            "subs {n}, {n}, #1",
            "bne 2b",
            xp = inout(reg) xm.as_ptr() => _,
            wp = inout(reg) w.as_mut_ptr() => _,
            n = inout(reg) n / 2 => _,
            dm = in(reg) dm,
            c = in(reg) c,
            im = in(reg) im,
            r2 = in(reg) r2,
            t0 = in(reg) t0,
            t1 = in(reg) t1,
            x = out(reg) _,
            a = out(reg) _,
            options(nostack),
        );
    }
    true
}
