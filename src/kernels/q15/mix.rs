//! The q15 mix (docs/Q15.md#mix): the router's probabilities and the sum
//! of the residual and the three pathways on one grid. Fast path: the
//! DSP sums of Armv7E-M (mix_dsp.rs); two passes on Thumb-2, one
//! elsewhere.
use super::quant::{or_abs, quant_at};
use crate::math::lnf;
use crate::q15::arith::*;
use crate::q15::params::Scale;

kernel!(
    /// The mix of position t ([`mix_impl`]) through the build's dispatch.
    mix = mix_impl::<false>(conv: &Scale, wv: &Scale, st: State, lm: &mut [i32], l: (u32, i32), sp: (&mut [i16], i32), r: [i32; 3], xr: &mut [i16], ex: i32) -> i32);

/// Q30 router probabilities (3) from the exact router sums `acc3` of a
/// normalized row at exponent eh.
#[inline(never)]
pub(crate) fn router(sc: Scale, acc3: &[i32], eh: i32) -> [i32; 3] {
    // (The sums are int32: no high words.)
    let mut r = [0i32; 3];
    softmax_q(acc3, &[], i64::from(sc.m), ecomb_plain(sc.e, eh), &mut r);
    r
}

/// The router entropy (nats) of probabilities r (Q30), as binary32 bits.
#[inline(always)]
pub(crate) fn entropy(r: [i32; 3]) -> i32 {
    let mut hsum = 0.0f32;
    for &ri in &r {
        let v = to_f32(i64::from(ri), -30);
        if v >= f32::MIN_POSITIVE {
            hsum -= v * lnf(v);
        }
    }
    hsum.to_bits() as i32
}

/// The SSM hidden state (c_out * h) of a mix.
pub(crate) struct State<'b> {
    /// The hidden mantissas, D.
    pub hs: &'b [i32],
    /// Their exponent.
    pub ehs: i32,
}

/// The mix of position t (docs/Q15.md#mix) into its residual row `xr`
/// (exponent ex); the new exponent. `lm` holds the exact conv sums and
/// becomes scratch. (`GENERAL`: the rshr32 loop for every grid.)
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(super) fn mix_impl<const GENERAL: bool>(conv: &Scale, wv: &Scale, st: State, lm: &mut [i32], (mxl, et): (u32, i32), (sp, esp): (&mut [i16], i32), r: [i32; 3], xr: &mut [i16], ex: i32) -> i32 {
    // The local and state pathways on their 15-bit grids (shifts sl, ss),
    // formed in the sum's loop (docs/Q15.md#mix).
    let (sl, el) = (qshift(u64::from(mxl), QA), qexp(u64::from(mxl), et, QA));
    let hs = st.hs;
    let mxs = or_abs(hs);
    let (ss, es) = (qshift(u64::from(mxs), QA), qexp(u64::from(mxs), st.ehs, QA));
    let (c0m, c0e) = quant_scalar(i64::from(r[0]) * i64::from(conv.m), conv.e - 30, QA);
    let (c1m, c1e) = quant_scalar(i64::from(r[1]), -30, QA);
    let (c2m, c2e) = quant_scalar(i64::from(r[2]) * i64::from(wv.m), wv.e - 30, QA);
    let (e0, e1, e2) = (ecomb(c0e, el), ecomb(c1e, es), ecomb(c2e, esp));
    // Every coefficient rounded once onto the sum's grid A (its shift is at
    // least 1: |k| <= 2^14), the residual too: each term is at most 2^29
    // and the sum an int32.
    let a = align_at(&[top(ex, QA as i32), top(e0, 30), top(e1, 30), top(e2, 30)], MIX_ROOM);
    let k = |c: i64, e: i32| rshr(c, ashift(a, e)) as i32;
    let ks = [k(c0m, e0), k(c1m, e1), k(c2m, e2)];
    let sx = ashift(a, ex);
    let mx = if !GENERAL && !cfg!(atome_small) {
        // Each pathway's grid as (v + r) >> t: a right shift s in 1..=31
        // rounds (r = 2^(s-1)); a left shift (s <= 0, exact) moves into
        // its coefficient instead (k (v << n) = (k << n) v, wrapping: the
        // product fits an int32, so the wrapped factor gives it exactly),
        // and s >= 32 (every rshr32 0) makes the coefficient 0.
        let grid = |s: i32, k: i32| -> (i32, u32, i32) {
            match s {
                1..=31 => (1 << (s - 1), s as u32, k),
                ..=0 => (0, 0, k.wrapping_shl((-s).min(31) as u32)),
                _ => (0, 0, 0),
            }
        };
        let ((rl, tl, k0), (rs, ts, k1)) = (grid(sl, ks[0]), grid(ss, ks[1]));
        let ks = [k0, k1, ks[2]];
        let loc = move |w: i32| (w + rl) >> tl;
        let sta = move |h: i32| (h + rs) >> ts;
        let _ = (loc, sta);
        // Armv7E-M: the same sums by SMMULR (mix_dsp.rs).
        #[cfg(all(atome_dsp, not(atome_small)))]
        let fast = super::mix_dsp::mix_sums_dsp(lm, hs, sp, xr, (tl, ts, sx), ks);
        // Elsewhere the residual shifted left (exact), the rows' usual
        // case: a fourth product.
        #[cfg(not(all(atome_dsp, not(atome_small))))]
        let fast = if sx <= 0 {
            let kx = 1 << (-sx).min(14);
            Some(mix_sums(lm, hs, sp, xr, ks, loc, sta, move |x| x * kx))
        } else {
            None
        };
        match fast {
            Some(mx) => mx,
            None => mix_sums_any(lm, hs, sp, xr, ks, (tl as i32, ts as i32, sx)),
        }
    } else {
        // (|L| < 2^18, |hs| < 2^30: every rshr32 result within +-2^15.)
        mix_sums_any(lm, hs, sp, xr, ks, (sl, ss, sx))
    };
    quant_at(lm, qshift(u64::from(mx), QA), xr);
    qexp(u64::from(mx), a, QA)
}

/// The grid of the mix: 29 bits below its largest term's bound.
const MIX_ROOM: i32 = 29;

/// [`mix_sums`] for any grids: local, state and x' as rshr32 by sl, ss
/// and sx. (Out of line: one copy for the rows no fast path takes.)
#[allow(clippy::too_many_arguments)]
#[cfg_attr(not(atome_small), inline(never))]
pub(crate) fn mix_sums_any(lm: &mut [i32], hs: &[i32], sp: &[i16], xr: &[i16], ks: [i32; 3], (sl, ss, sx): (i32, i32, i32)) -> u32 {
    mix_sums(lm, hs, sp, xr, ks, move |w| rshr32(w, sl), move |h| rshr32(h, ss), move |x| rshr32(x, sx))
}

/// The mix's sums W = x' + k0 local + k1 state + k2 sparse into `lm`,
/// which holds the exact conv sums on entry; local, state and x' come
/// from their closures (grids and the residual's shift); OR of |W|.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn mix_sums(lm: &mut [i32], hs: &[i32], sp: &[i16], xr: &[i16], [k0, k1, k2]: [i32; 3], loc: impl Fn(i32) -> i32, sta: impl Fn(i32) -> i32, xf: impl Fn(i32) -> i32) -> u32 {
    let mut mx = 0u32;
    if cfg!(all(atome_thumb2, not(atome_small))) {
        // Two passes on Thumb-2, each with few enough constants to stay
        // in registers (one pass reloads some every element).
        for (w, &spc) in lm.iter_mut().zip(sp) {
            *w = k0.wrapping_mul(loc(*w)).wrapping_add(k2 * i32::from(spc));
        }
        for ((w, &h), &xc) in lm.iter_mut().zip(hs).zip(xr) {
            let v = w.wrapping_add(xf(i32::from(xc))).wrapping_add(k1.wrapping_mul(sta(h)));
            mx |= v.unsigned_abs();
            *w = v;
        }
        return mx;
    }
    for (((w, &h), &spc), &xc) in lm.iter_mut().zip(hs).zip(sp).zip(xr) {
        // (Wrapping: a coefficient may carry a left shift, see `mix`; the
        // sum itself is an int32.)
        let v = xf(i32::from(xc)).wrapping_add(k0.wrapping_mul(loc(*w))).wrapping_add(k1.wrapping_mul(sta(h))).wrapping_add(k2 * i32::from(spc));
        mx |= v.unsigned_abs();
        *w = v;
    }
    mx
}
