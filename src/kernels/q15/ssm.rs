//! The q15 SSM step (docs/Q15.md#ssm-state-pathway): the decay and input
//! terms on one grid, renormalized to 30 bits. Fast paths: Thumb-2 asm
//! (ssm_t2.rs, `SMULL`), split 16-bit products on Armv6-M (no 32 x 32 ->
//! 64 multiply; [`ssm_sums_m0`]), a plain loop elsewhere.
use crate::q15::arith::*;
use crate::q15::params::{PSrc, Vals};

kernel!(
    /// One SSM step ([`ssm_step_impl`]) through the build's dispatch.
    ssm_step = ssm_step_impl::<false>(sb: &PSrc, tanh: Vals, hs: &mut [i32], ehs: i32, h: &[i16], eh: i32) -> i32);

/// One SSM step (docs/Q15.md#ssm-state-pathway) on the hidden mantissas
/// `hs` (exponent ehs) with the normalized row (h, eh); the new exponent.
/// (`GENERAL`: the sums without the usual shifts' fast loop.)
#[inline(always)]
pub(super) fn ssm_step_impl<const GENERAL: bool>(sb: &PSrc, tanh: Vals, hs: &mut [i32], ehs: i32, h: &[i16], eh: i32) -> i32 {
    let e1 = ecomb(ehs, -30);
    let e2 = ecomb(sb.e, eh);
    // Both terms rounded onto a grid 30 bits below the larger's bound (the
    // decay term shifts by 30 or more, the input term by 8 or more): each
    // below 2^30, the sum an int32 (docs/Q15.md#ssm-state-pathway).
    let a = align_at(&[top(e1, 60), top(e2, QP as i32 + QA as i32)], SSM_ROOM);
    let (s1, s2) = (ashift(a, e1).max(1) as u32, ashift(a, e2).max(1) as u32);
    #[cfg(all(atome_thumb2, not(atome_small)))]
    if let (false, 30..=32, 1..=32, Some(bv)) = (GENERAL, s1, s2, sb.vals()) {
        let ((tp, tn), (bp, bn)) = (tanh.words(), bv.words());
        if tn >= hs.len() && bn >= hs.len() {
            // SAFETY: tp and bp address tn, bn >= hs.len() int32 (the
            // caller's vectors), s1 in 30..=32, s2 in 1..=32.
            let mx = unsafe { super::ssm_t2::ssm_sums_s(tp, bp, hs, h, s1, s2) };
            return ssm_norm(hs, mx, a);
        }
    }
    // Cortex-M0: the split products' loops (one per usual decay shift)
    // over int32 views of both vectors, compiled once each.
    if let (true, false, Some(bv)) = (NO_SMULL && !cfg!(atome_small), GENERAL, sb.vals()) {
        if let Some(mx) = ssm_sums_m0(tanh.ints(), bv.ints(), hs, h, s1, s2) {
            return ssm_norm(hs, mx, a);
        }
    }
    // Size-first: one loop for every kind of both vectors.
    #[cfg(atome_small)]
    let mx = ssm_sums::<GENERAL>(tanh.ints().iter().copied(), (0..h.len()).map(|c| sb.m(c)), hs, h, s1, s2);
    #[cfg(not(atome_small))]
    let mx = match sb.vals() {
        Some(bs) => ssm_sums::<GENERAL>(tanh.ints().iter().copied(), bs.ints().iter().copied(), hs, h, s1, s2),
        None => ssm_sums::<GENERAL>(tanh.ints().iter().copied(), (0..h.len()).map(|c| sb.m(c)), hs, h, s1, s2),
    };
    ssm_norm(hs, mx, a)
}

/// The SSM state renormalized to 30 bits after its sums (OR of |W| `mx`,
/// grid a); its exponent.
#[inline(always)]
fn ssm_norm(hs: &mut [i32], mx: u32, a: i32) -> i32 {
    let sh = qshift(u64::from(mx), QH);
    const LIM30: i32 = (1 << QH) - 1;
    if sh >= 1 {
        // |W| < 2^31: sh = 1, floor((W + 1) / 2) without the overflow.
        for hc in hs.iter_mut() {
            *hc = ((*hc >> 1) + (*hc & 1)).min(LIM30);
        }
    } else if sh < 0 {
        // (sh = 0, the sums already on 30 bits: nothing to do.)
        let n = (-sh).min(31) as u32;
        for hc in hs.iter_mut() {
            *hc <<= n;
        }
    }
    qexp(u64::from(mx), a, QH)
}

/// The SSM's grid: 30 bits below its larger term's bound.
const SSM_ROOM: i32 = 30;

/// The SSM sums W_c = rshr(T_c hs_c, s1) + rshr(b_c h_c, s2) into hs; OR
/// of |W|. (|T hs| < 2^60 with s1 >= 30, |b h| < 2^38 with s2 >= 8:
/// rshr_to32's bound.)
#[inline(always)]
fn ssm_sums<const GENERAL: bool>(ti: impl Iterator<Item = i32>, bi: impl Iterator<Item = i32>, hs: &mut [i32], h: &[i16], s1: u32, s2: u32) -> u32 {
    let mut mx = 0u32;
    if !GENERAL && s1 <= 32 && s2 <= 32 {
        // The usual shifts (s1 = 30 when the decay term is the larger):
        // rshr_hl's low-word case only, its branch out of the loop.
        let r = |v: i64, s: u32| rshr_hl_lo((v >> 32) as i32, v as u32, s);
        for ((hc, &hv), (t, bm)) in hs.iter_mut().zip(h).zip(ti.zip(bi)) {
            let v = r(mul64(t, *hc), s1) + r(mul64_16(bm, i32::from(hv)), s2);
            mx |= v.unsigned_abs();
            *hc = v;
        }
        return mx;
    }
    for ((hc, &hv), (t, bm)) in hs.iter_mut().zip(h).zip(ti.zip(bi)) {
        let v = rshr_to32(mul64(t, *hc), s1) + rshr_to32(mul64_16(bm, i32::from(hv)), s2);
        mx |= v.unsigned_abs();
        *hc = v;
    }
    mx
}

/// [`ssm_sums`] on Cortex-M0 (no 32 x 32 -> 64 multiply) for the usual
/// shifts, by 16-bit halves and int32 operations (|T|, |hs| <= 2^30: the
/// split's bound; |h| <= 32767); None for other shifts. The decay shifts
/// of the runs (30 to 32) as constants: their masks and shifts become
/// immediates, fewer values to spill.
#[inline(never)]
fn ssm_sums_m0(t: &[i32], b: &[i32], hs: &mut [i32], h: &[i16], s1: u32, s2: u32) -> Option<u32> {
    if !(1..=15).contains(&s2) {
        return None;
    }
    Some(match s1 {
        30 => ssm_sums_split::<14>(t, b, hs, h, s2),
        31 => ssm_sums_split::<15>(t, b, hs, h, s2),
        32 => ssm_sums_split::<16>(t, b, hs, h, s2),
        17..=29 => {
            let mut mx = 0u32;
            for ((hc, &hv), (&t, &bm)) in hs.iter_mut().zip(h).zip(t.iter().zip(b)) {
                let v = rshr_mul_split(t, *hc, s1 - 16).wrapping_add(rshr_mul16_split(bm, i32::from(hv), s2));
                mx |= v.unsigned_abs();
                *hc = v;
            }
            mx
        }
        _ => return None,
    })
}

/// [`ssm_sums_m0`]'s loops for a decay shift of 16 + K, in two passes
/// (fewer live values each).
#[inline(always)]
fn ssm_sums_split<const K: u32>(t: &[i32], b: &[i32], hs: &mut [i32], h: &[i16], s2: u32) -> u32 {
    let mut mx = 0u32;
    for (hc, &t) in hs.iter_mut().zip(t) {
        *hc = rshr_mul_split(t, *hc, K);
    }
    for ((hc, &hv), &bm) in hs.iter_mut().zip(h).zip(b) {
        let v = hc.wrapping_add(rshr_mul16_split(bm, i32::from(hv), s2));
        mx |= v.unsigned_abs();
        *hc = v;
    }
    mx
}
