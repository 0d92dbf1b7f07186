//! The q15 LayerNorm (docs/Q15.md#layernorm): the row's statistics, then
//! the per-element passes on the output's grid. The first pass
//! ([`row_stats`]): on Armv7E-M two elements a step in asm
//! (`SMLALD` squares both, `SSUB16` + `SEL` keep two lanes of minima and
//! maxima): 5 instructions an element where LLVM's loop took 13; on the
//! other Thumb-2 cores `SMLAL` and conditional moves, 10 where LLVM took
//! 14; on ARMv6-M two squares added in 32 bits before the 64-bit add, 12.5
//! where LLVM took 25; a plain loop elsewhere. The per-element passes:
//! ARMv6-M in asm (norm_t1.rs), Armv7E-M's affine pass by DSP
//! instructions (norm_dsp.rs), the Thumb-2 first pass (norm_t2.rs), two
//! passes on Armv7-M and later, one elsewhere.
use crate::q15::arith::*;
use crate::q15::params::{PSrc, Vals};

kernel!(
    /// LayerNorm of one row ([`layer_norm_impl`]) through the build's dispatch.
    layer_norm = layer_norm_impl::<false>(xm: &[i16], ex: i32, g: &PSrc, b: &PSrc, w: &mut [i32], out: &mut [i16]) -> i32);

/// LayerNorm of the block (xm, ex) with (g, b) into `out`; its exponent
/// (docs/Q15.md#layernorm). `w` (D values) is scratch. (`GENERAL`: the
/// int64 path for every row; the tests compare the two.)
#[inline(always)]
pub(super) fn layer_norm_impl<const GENERAL: bool>(xm: &[i16], ex: i32, g: &PSrc, b: &PSrc, w: &mut [i32], out: &mut [i16]) -> i32 {
    let d = xm.len() as i64;
    if d == 0 {
        return E_ZERO;
    }
    // |S| <= D * 32767 < 2^31 and m^2 < 2^30 (docs/Q15.md#integer-widths).
    let (s32, q, lo, hi) = row_stats(xm);
    let s = i64::from(s32);
    let n = d * q - s * s;
    const LIM: i64 = 1 << 62;
    let base = 21475 * d * d;
    let k = 31 + 2 * ex;
    let eps = if ex == E_ZERO {
        LIM
    } else if k >= 0 {
        rshr64(base, k.min(63))
    } else {
        let left = (-k).min(62);
        if base > (LIM >> left) {
            LIM
        } else {
            base << left
        }
    };
    let n2 = n + eps;
    let inv = 1.0f32 / crate::math::sqrtf(n2.max(1) as f32);
    let (mi, ei) = f32_parts(inv);
    // c = D m - S is increasing in m: its largest magnitude, and that of
    // its rounding cm, are at the row's extremes, so both grids are known
    // before the per-element pass.
    let (chi, clo) = (d * i64::from(hi) - s, d * i64::from(lo) - s);
    let sc = qshift(chi.unsigned_abs().max(clo.unsigned_abs()), QA);
    let (im, ie) = quant_scalar(mi, ei, QA);
    let mz = rshr64(chi, sc).unsigned_abs().max(rshr64(clo, sc).unsigned_abs()) * im as u64;
    let sz = qshift(mz, QA);
    let ze = if mz == 0 { E_ZERO } else { sc + ie + sz };
    let (e1, e2) = (ecomb(g.e, ze), b.e);
    let a = align_at(&[top(e1, 30), top(e2, QA as i32)], LN_ROOM);
    let (s1, s2) = (ashift(a, e1), ashift(a, e2));
    let fast = !GENERAL && d <= 16383 && sc >= -15 && sz >= -15;
    // Each rshr as (v * M + R) >> S with per-row constants (M = 2^-s for a
    // left shift), D and S folded into the first: on the fast grids every
    // true value is an int32 (|c| < 2^30 for D < 2^14; wrapping products
    // whose true result fits are exact).
    let rs = |s: i32| -> (i32, i32, u32) {
        if s <= 0 {
            (1 << (-s).min(31), 0, 0)
        } else {
            let s = s.min(31);
            (1, 1 << (s - 1), s as u32)
        }
    };
    let (m1, r1, t1) = rs(sc);
    let (m2, r2, t2) = rs(sz);
    let (_, r3, t3) = rs(s1.max(1));
    let (m4, r4, t4) = rs(s2);
    let c1 = [(d as i32).wrapping_mul(m1), r1.wrapping_sub(s32.wrapping_mul(m1)), (im as i32).wrapping_mul(m2), r2, r3, m4, r4];
    let t = [t1, t2, t3, t4];
    let fast_mx = match (fast, g.vals(), b.vals(), w.get_mut(..xm.len())) {
        (true, Some(gv), Some(bv), Some(wr)) => ln_fast(xm, gv, bv, c1, t, wr),
        _ => None,
    };
    let mx = match fast_mx {
        Some(mx) => mx,
        // (Size-first: the int64 loop, one copy fewer.)
        None if fast && !cfg!(atome_small) => ln_src(xm, g, b, c1, t, w),
        None => ln_general(xm, g, b, [d, s, im], [sc, sz, s1, s2], w),
    };
    super::quant::quant_at(w, qshift(u64::from(mx), QA), out);
    qexp(u64::from(mx), a, QA)
}

/// LayerNorm's per-element pass for any D and grid: the same integers
/// in int64 (D, S and the inverse's mantissa im; the shifts of cm, zm and
/// the two terms); OR of |W|. (Out of line: off the rows' usual path.)
#[cfg_attr(not(atome_small), inline(never))]
fn ln_general(xm: &[i16], g: &PSrc, b: &PSrc, [d, s, im]: [i64; 3], [sc, sz, s1, s2]: [i32; 4], w: &mut [i32]) -> u32 {
    let mut mx = 0u32;
    for (i, (o, &m)) in w.iter_mut().zip(xm).enumerate() {
        let cm = rshr64(d * i64::from(m) - s, sc);
        let zm = rshr64(cm * im, sz);
        let v = rshr64(i64::from(super::pm(g, i)) * zm, s1) + rshr64(i64::from(super::pm(b, i)), s2);
        // |v| < 2^30.
        mx |= v.unsigned_abs() as u32;
        *o = v as i32;
    }
    mx
}

/// rshr of an int64, out of line: one copy of its 64-bit shifts for the
/// per-row steps and [`ln_general`] (a few calls a row).
#[cfg_attr(not(atome_small), inline(never))]
fn rshr64(v: i64, s: i32) -> i64 {
    rshr(v, s)
}

/// LayerNorm's per-element passes (the constants of [`ln_src`]) with
/// gamma and beta as int32 vectors at least as long as `w` (= `xm`): the
/// build's fast path; OR of |W|. None (nothing written) where the core's
/// asm does not take the row (an odd D).
#[allow(unreachable_code)]
#[inline(always)]
fn ln_fast(xm: &[i16], gv: Vals, bv: Vals, c1: [i32; 7], t: [u32; 4], w: &mut [i32]) -> Option<u32> {
    let ((gp, gn), (bp, bn)) = (gv.words(), bv.words());
    if gn < w.len() || bn < w.len() {
        return None;
    }
    let _ = (gp, bp);
    // Cortex-M0: three passes in asm (norm_t1.rs).
    #[cfg(all(atome_armv6m, not(atome_small)))]
    // SAFETY: gp and bp address gn, bn >= w.len() int32.
    return unsafe { super::norm_t1::ln_passes_t1(xm, gp, bp, c1, t, w) };
    // Armv7E-M: the first pass, then the affine pass by SMMULR and
    // SMMLAR (norm_t2.rs, norm_dsp.rs).
    #[cfg(all(atome_dsp, not(atome_small)))]
    {
        let [dm, c, im, r2, ..] = c1;
        if !super::norm_t2::ln_first_t2(xm, [dm, c, im, r2], [t[0], t[1]], w) {
            return None;
        }
        // SAFETY: gp and bp address gn, bn >= w.len() int32, word
        // aligned (i32 or f32 slices).
        return unsafe { super::norm_dsp::ln_affine_dsp(w, gp, bp, t[2], t[3], c1[5]) };
    }
    // The other Thumb-2 cores: the same first pass, then the affine pass
    // alone (one pass spills about ten loads an element there: S3 q15
    // M3 -33K instructions with two).
    #[cfg(all(atome_thumb2, not(atome_dsp), not(atome_small)))]
    {
        let [dm, c, im, r2, r3, m4, r4] = c1;
        if !super::norm_t2::ln_first_t2(xm, [dm, c, im, r2], [t[0], t[1]], w) {
            return None;
        }
        return Some(ln_affine(w, gv.ints(), bv.ints(), [r3, m4, r4], [t[2], t[3]]));
    }
    // Elsewhere one pass (on RV32 the faster: +33K instructions with two).
    Some(ln_one(xm, gv.ints(), bv.ints(), c1, t, w))
}

/// LayerNorm's per-element pass: cm = (m D' + C) >> t0, zm = (cm I + R2)
/// >> t1, W = ((g zm + R3) >> t2) + ((b B + R4) >> t3) into `w`; OR of |W|.
#[cfg_attr(any(atome_armv6m, atome_thumb2), allow(dead_code))]
#[inline(always)]
fn ln_one(xm: &[i16], gi: &[i32], bi: &[i32], [dm, c, im, r2, r3, m4, r4]: [i32; 7], [t0, t1, t2, t3]: [u32; 4], w: &mut [i32]) -> u32 {
    let mut mx = 0u32;
    for ((o, &m), (&gm, &bm)) in w.iter_mut().zip(xm).zip(gi.iter().zip(bi)) {
        let cm = i32::from(m).wrapping_mul(dm).wrapping_add(c) >> t0;
        let zm = (cm.wrapping_mul(im) + r2) >> t1;
        let v = ((gm * zm + r3) >> t2) + ((bm * m4 + r4) >> t3);
        mx |= v.unsigned_abs();
        *o = v;
    }
    mx
}

/// [`ln_one`] reading gamma and beta element by element from wherever
/// they are (the blob's floats or the per-layer copy): the rows that no
/// fast path takes. (Out of line: one copy for every caller.)
#[cfg_attr(atome_small, allow(dead_code))]
#[inline(never)]
fn ln_src(xm: &[i16], g: &PSrc, b: &PSrc, [dm, c, im, r2, r3, m4, r4]: [i32; 7], [t0, t1, t2, t3]: [u32; 4], w: &mut [i32]) -> u32 {
    let mut mx = 0u32;
    for (i, (o, &m)) in w.iter_mut().zip(xm).enumerate() {
        let cm = i32::from(m).wrapping_mul(dm).wrapping_add(c) >> t0;
        let zm = (cm.wrapping_mul(im) + r2) >> t1;
        let v = ((super::pm(g, i) * zm + r3) >> t2) + ((super::pm(b, i) * m4 + r4) >> t3);
        mx |= v.unsigned_abs();
        *o = v;
    }
    mx
}

/// LayerNorm's grid: 29 bits below its largest term's bound.
const LN_ROOM: i32 = 29;

/// LayerNorm's second pass on Armv7-M: W = ((g zm + R3) >> t2) + ((b B +
/// R4) >> t3) in place; OR of |W|. (Out of line: alone, its constants stay
/// in registers whatever the caller's code around it.)
#[cfg(all(atome_thumb2, not(atome_dsp), not(atome_small)))]
#[inline(never)]
fn ln_affine(w: &mut [i32], gi: &[i32], bi: &[i32], [r3, m4, r4]: [i32; 3], [t2, t3]: [u32; 2]) -> u32 {
    let mut mx = 0u32;
    for (o, (&gm, &bm)) in w.iter_mut().zip(gi.iter().zip(bi)) {
        let v = ((gm * *o + r3) >> t2) + ((bm * m4 + r4) >> t3);
        mx |= v.unsigned_abs();
        *o = v;
    }
    mx
}

/// (sum m, sum m^2, min m, max m) of `xm` (i32::MAX and i32::MIN as the
/// extremes of an empty row). |sum| <= len 2^15 must fit an int32 (the
/// caller's D < 2^16).
#[inline(always)]
pub fn row_stats(xm: &[i16]) -> (i32, i64, i32, i32) {
    let (mut s, mut q, mut lo, mut hi) = (0i32, 0i64, i32::MAX, i32::MIN);
    // The elements the asm leaves (all of them elsewhere).
    #[cfg(not(any(all(atome_dsp, not(atome_small)), all(atome_thumb2, not(atome_small)), all(atome_armv6m, not(atome_small)))))]
    let rest = xm;
    // ARMv6-M: two elements a step, their squares added in 32 bits (each
    // at most 2^30) before the 64-bit add; the extremes in high registers
    // (CMP and MOV reach them): about 12.5 instructions an element where
    // LLVM's loop took 25.
    #[cfg(all(atome_armv6m, not(atome_small)))]
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
    #[cfg(all(all(atome_thumb2, not(atome_small)), not(all(atome_dsp, not(atome_small)))))]
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
    #[cfg(all(atome_dsp, not(atome_small)))]
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
