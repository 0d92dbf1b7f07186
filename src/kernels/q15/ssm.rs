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
    if let (false, Some(bv)) = (GENERAL, sb.vals()) {
        if let Some(mx) = ssm_fast(tanh, bv, hs, h, s1, s2) {
            return ssm_norm(hs, mx, a);
        }
    }
    // Every other case (a zero state, unusual shifts, a gain read from the
    // blob): the int64 roundings, one copy.
    let mx = ssm_sums_general(tanh.ints(), sb, hs, h, s1, s2);
    ssm_norm(hs, mx, a)
}

/// The build's fast sums for the usual shifts (decay s1 in 30..=32, input
/// s2 in 1..=32 or fewer), over the int32 views of both vectors; None
/// (nothing written) elsewhere.
#[inline(always)]
fn ssm_fast(tanh: Vals, bv: Vals, hs: &mut [i32], h: &[i16], s1: u32, s2: u32) -> Option<u32> {
    // Thumb-2: SMULL, or SMMULR on Armv7E-M, in asm (ssm_t2.rs).
    #[cfg(all(atome_thumb2, not(atome_small)))]
    {
        let ((tp, tn), (bp, bn)) = (tanh.words(), bv.words());
        if !(30..=32).contains(&s1) || !(1..=32).contains(&s2) || tn < hs.len() || bn < hs.len() {
            return None;
        }
        // SAFETY: tp and bp address tn, bn >= hs.len() int32 (the
        // caller's vectors), s1 in 30..=32, s2 in 1..=32.
        return Some(unsafe { super::ssm_t2::ssm_sums_s(tp, bp, hs, h, s1, s2) });
    }
    // Cortex-M0: the split products (no 32 x 32 -> 64 multiply).
    #[cfg(all(atome_armv6m, not(atome_small)))]
    return ssm_sums_m0(tanh.ints(), bv.ints(), hs, h, s1, s2);
    // Elsewhere: rshr_hl's low-word case only, its branch out of the loop
    // (|T hs| < 2^60 with s1 >= 30, |b h| < 2^38 with s2 >= 8).
    // (Size-first: none, the general loop.)
    #[allow(unreachable_code)]
    {
        if s1 > 32 || s2 > 32 || cfg!(atome_small) {
            return None;
        }
        let r = |v: i64, s: u32| rshr_hl_lo((v >> 32) as i32, v as u32, s);
        let mut mx = 0u32;
        for ((hc, &hv), (&t, &bm)) in hs.iter_mut().zip(h).zip(tanh.ints().iter().zip(bv.ints())) {
            let v = r(mul64(t, *hc), s1) + r(mul64_16(bm, i32::from(hv)), s2);
            mx |= v.unsigned_abs();
            *hc = v;
        }
        Some(mx)
    }
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

/// The SSM sums W_c = rshr(T_c hs_c, s1) + rshr(b_c h_c, s2) into hs for
/// any shifts, the gain read through [`super::pm`]; OR of |W|. (|T hs| <
/// 2^60 with s1 >= 30, |b h| < 2^38 with s2 >= 8: rshr_to32's bound. Out
/// of line: one copy for every caller.)
#[cfg_attr(not(atome_small), inline(never))]
fn ssm_sums_general(t: &[i32], sb: &PSrc, hs: &mut [i32], h: &[i16], s1: u32, s2: u32) -> u32 {
    let mut mx = 0u32;
    for (c, ((hc, &hv), &t)) in hs.iter_mut().zip(h).zip(t).enumerate() {
        let v = rshr_to32(mul64(t, *hc), s1) + rshr_to32(mul64_16(super::pm(sb, c), i32::from(hv)), s2);
        mx |= v.unsigned_abs();
        *hc = v;
    }
    mx
}

/// The SSM sums on Cortex-M0 (no 32 x 32 -> 64 multiply) for the usual
/// shifts, by 16-bit halves and int32 operations (|T|, |hs| <= 2^30: the
/// split's bound; |h| <= 32767); None for other shifts. The decay shifts
/// of the runs (30 to 32) as constants: their masks and shifts become
/// immediates, fewer values to spill.
#[cfg(all(atome_armv6m, not(atome_small)))]
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
#[cfg(all(atome_armv6m, not(atome_small)))]
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
