//! The q15 sparse pathway (docs/Q15.md#sparse-attention): the top-k keys
//! by exact scores and their probabilities, then the weighted sum of
//! their values. Fast paths: the four-row sum on Armv7E-M
//! (attention_dsp.rs), two rows a pass on Armv6-M.
use super::dot_q;
use super::quant::quant_into_mx;
use crate::q15::arith::*;
use crate::q15::engine::Bufs;
use crate::q15::params::Scale;

kernel!(
    /// The top-k selection at position t ([`attention_top_impl`]) through the build's dispatch.
    attention_sel = attention_top_impl(dh: usize, cq: &Scale, t: usize, eq: i32, top_k: usize, b: &mut Bufs) -> Option<(usize, i32)>);

/// The sparse pathway's selection at position t (the query (b.q, eq)
/// already there): the top-k keys ([`attention_top_impl`]), then their
/// probabilities into `b.slots`; the number of slots. (The softmax is
/// called from here, inlined into the caller, so that its frames are not
/// stacked under the selection's.)
#[inline(always)]
pub(crate) fn attention_top(accel: crate::kernels::isa::Accel, dh: usize, cq: &Scale, t: usize, eq: i32, top_k: usize, b: &mut Bufs) -> Option<usize> {
    let (keff, ce) = attention_sel(accel, dh, cq, t, eq, top_k, b)?;
    let (_, rest) = b.slots.split_at_mut_checked(top_k)?;
    let (lo, rest) = rest.split_at_mut_checked(top_k)?;
    let (hi, pr) = rest.split_at_mut_checked(top_k)?;
    softmax_q(lo.get(..keff)?, hi.get(..keff)?, i64::from(cq.m), ce, pr.get_mut(..keff)?);
    Some(keff)
}

kernel!(
    /// The weighted sum of the chosen values ([`attention_sum_impl`]) through the build's dispatch.
    attention_sum = attention_sum_impl(top_k: usize, keff: usize, b: &mut Bufs) -> Option<i32>);

/// The top-k keys at position t (the query (b.q, eq) already there) into
/// `b.slots` (index, score low and high words); the number of slots and
/// the exponent of the scores' real values, sig * cq.m * 2^that. (Only
/// the dot product runs under its frame.)
#[inline(always)]
fn attention_top_impl(dh: usize, cq: &Scale, t: usize, eq: i32, top_k: usize, b: &mut Bufs) -> Option<(usize, i32)> {
    // The largest key exponent: E_ZERO is i16::MIN, below every other,
    // so the plain maximum skips the zero keys (and is E_ZERO when all are).
    const _: () = assert!(E_ZERO == i16::MIN as i32);
    let kt = i32::from(b.ek.get(..=t)?.iter().copied().max().unwrap_or(E_ZERO as i16));
    let (q, keys, ek) = (b.q.get(..dh)?, &*b.k, &*b.ek);
    let sigma = |key: &[i16], e: i16| -> i64 {
        let e = i32::from(e);
        if e == E_ZERO {
            return 0;
        }
        let dot = dot_q(q, key);
        // (Most keys are on the largest grid: no shift.)
        if e == kt {
            dot
        } else {
            rshr(dot, (kt - e).min(63))
        }
    };
    // Top-k: descending g * sigma, earlier keys first on ties.
    let g = i64::from(cq.m.signum());
    let keff = top_k.min(t + 1);
    if keff == 0 {
        // (A loaded model has top_k >= 1.)
        return None;
    }
    let (idx, rest) = b.slots.split_at_mut_checked(top_k)?;
    let (lo, rest) = rest.split_at_mut_checked(top_k)?;
    let hi = rest.get_mut(..top_k)?;
    let (idx, lo, hi) = (idx.get_mut(..keff)?, lo.get_mut(..keff)?, hi.get_mut(..keff)?);
    let score = |lo: &[i32], hi: &[i32], i: usize| match (lo.get(i), hi.get(i)) {
        (Some(&l), Some(&h)) => (i64::from(h) << 32) | i64::from(l as u32),
        _ => 0,
    };
    let mut cnt = 0usize;
    // The k-th best signed score once k are held (the bar a later key
    // must pass), kept here rather than rebuilt from its two words.
    let mut bar = 0i64;
    // (Keys 0..=t and their exponents, cut once: no index arithmetic per
    // key. A loaded model has DH >= 1; checked so that no chunking can
    // panic.)
    if dh == 0 {
        return None;
    }
    let (keys, ek) = (keys.get(..(t + 1) * dh)?, ek.get(..=t)?);
    for (j, (key, &e)) in keys.chunks_exact(dh).zip(ek).enumerate() {
        let sg = sigma(key, e);
        let s = sgn_mul(g, sg);
        if cnt == keff && s <= bar {
            continue;
        }
        let mut pos = cnt.min(keff - 1);
        while pos > 0 && sgn_mul(g, score(lo, hi, pos - 1)) < s {
            // (pos < keff = the slices' length.)
            if let (Some(&i), Some(&l), Some(&h)) = (idx.get(pos - 1), lo.get(pos - 1), hi.get(pos - 1)) {
                if pos < keff {
                    idx[pos] = i;
                    lo[pos] = l;
                    hi[pos] = h;
                }
            }
            pos -= 1;
        }
        if let (Some(i), Some(l), Some(h)) = (idx.get_mut(pos), lo.get_mut(pos), hi.get_mut(pos)) {
            *i = j as i32;
            *l = sg as i32;
            *h = (sg >> 32) as i32;
        }
        cnt = (cnt + 1).min(keff);
        if cnt == keff {
            bar = sgn_mul(g, score(lo, hi, keff - 1));
        }
    }
    Some((keff, cq.e + eq + kt))
}

/// The sparse pathway's weighted sum over the `keff` slots that
/// [`attention_top_impl`] chose, into `b.sparse`; its exponent.
#[inline(always)]
fn attention_sum_impl(top_k: usize, keff: usize, b: &mut Bufs) -> Option<i32> {
    let d = b.sparse.len();
    let idx = b.slots.get(..keff)?;
    let pr = b.slots.get(3 * top_k..3 * top_k + keff)?;
    let mut f = E_ZERO;
    let ev_of = |j: i32| i32::from(b.ev.get(j as usize).copied().unwrap_or(E_ZERO as i16));
    for &j in idx.iter() {
        let e = ev_of(j);
        if e != E_ZERO {
            f = if f == E_ZERO { e } else { f.max(e) };
        }
    }
    let vals = &*b.v;
    let slots = idx.iter().zip(pr.iter());
    // Each probability on the grid of the largest value, Q15 there:
    // k_s = rshr(p_s, 15 + f - e_s) (0 for a zero value row), and the sum
    // A = sum k_s v_s at exponent f - 15 is exact (docs/Q15.md#sparse-attention).
    let kw = |j: i32, ps: i32| -> i32 {
        let e = ev_of(j);
        if e == E_ZERO {
            0
        } else {
            rshr32(ps, (15 + f - e).min(32))
        }
    };
    let ksum: i64 = slots.clone().map(|(&j, &ps)| i64::from(kw(j, ps))).sum();
    let out = b.mv.get_mut(..d)?;
    if ksum <= 1 << 16 {
        // sum k_s |v_s| <= 2^16 (2^15 - 1) < 2^31: int32 sums, then one
        // quantization (one copy of its loops here).
        let mx = 'sum: {
            // Up to four rows (the usual TOP_K) at once, in registers (k
            // = 0 pads).
            let mut rows: [&[i16]; 4] = [&[]; 4];
            let mut ks = [0i32; 4];
            let mut ns = 0;
            // (Size-first: none collected, the plain loop below.)
            for (&j, &ps) in slots.clone().filter(|_| !cfg!(atome_small)) {
                let k = kw(j, ps);
                if k == 0 {
                    continue;
                }
                if let (Some(r), Some(kk)) = (rows.get_mut(ns), ks.get_mut(ns)) {
                    *r = vals.get(j as usize * d..(j as usize + 1) * d)?;
                    *kk = k;
                }
                ns += 1;
            }
            // (Size-first: the plain loop over the slots.)
            if ns <= 4 && !cfg!(atome_small) {
                for r in rows.iter_mut().skip(ns) {
                    *r = vals.get(..d)?;
                }
                #[cfg(all(atome_dsp, not(atome_small)))]
                if let Some(mx) = super::attention_dsp::att_sum4_dsp(out, rows, ks) {
                    break 'sum mx;
                }
                let [r0, r1, r2, r3] = rows;
                let [k0, k1, k2, k3] = ks;
                let mut mx = 0u32;
                if cfg!(all(atome_armv6m, not(atome_small))) {
                    // Armv6-M: two rows a pass (four rows, their weights and
                    // the sums do not fit its eight low registers; S3 M0 -20K;
                    // RV32 and Thumb-2 gain nothing).
                    for (o, (&v0, &v1)) in out.iter_mut().zip(r0.iter().zip(r1)) {
                        *o = k0 * i32::from(v0) + k1 * i32::from(v1);
                    }
                    for (o, (&v2, &v3)) in out.iter_mut().zip(r2.iter().zip(r3)) {
                        let a = *o + k2 * i32::from(v2) + k3 * i32::from(v3);
                        mx |= a.unsigned_abs();
                        *o = a;
                    }
                    break 'sum mx;
                }
                for ((o, (&v0, &v1)), (&v2, &v3)) in out.iter_mut().zip(r0.iter().zip(r1)).zip(r2.iter().zip(r3)) {
                    let a = k0 * i32::from(v0) + k1 * i32::from(v1) + k2 * i32::from(v2) + k3 * i32::from(v3);
                    mx |= a.unsigned_abs();
                    *o = a;
                }
                break 'sum mx;
            }
            out.fill(0);
            for (&j, &ps) in slots {
                let k = kw(j, ps);
                if k == 0 {
                    continue;
                }
                let row = vals.get(j as usize * d..(j as usize + 1) * d)?;
                for (o, &v) in out.iter_mut().zip(row) {
                    *o += k * i32::from(v);
                }
            }
            out.iter().fold(0, |a, v| a | v.unsigned_abs())
        };
        return Some(quant_into_mx(out, mx, f - 15, b.sparse));
    }
    // (More slots than any real TOP_K: int64 sums, each channel twice.)
    let acc = |c: usize| -> i64 {
        slots.clone().map(|(&j, &ps)| i64::from(kw(j, ps)) * i64::from(vals.get(j as usize * d + c).copied().unwrap_or(0))).sum()
    };
    let mut mx = 0u64;
    for c in 0..d {
        mx |= acc(c).unsigned_abs();
    }
    let s = qshift(mx, QA);
    for (c, o) in b.sparse.iter_mut().enumerate() {
        *o = qm(acc(c), s, QA) as i16;
    }
    Some(qexp(mx, f - 15, QA))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::isa::Accel;
    use crate::q15::params::Scale;
    use std::vec;
    use std::vec::Vec;

    /// attention_top against its definition (docs/Q15.md#sparse-attention):
    /// the keff = min(TOP_K, t + 1) keys of largest sign(cq) * sigma_j,
    /// the earlier key first on equal scores, with sigma_j = q . k_j on the
    /// grid of the largest key exponent (rounded half up; 0 for a zero key).
    /// Key rows are drawn from a small pool, so that equal scores are
    /// common; TOP_K up to 12 and every sign of the score factor.
    #[test]
    fn top_k_is_the_definition() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || crate::test_rng::xorshift64(&mut x);
        let rshr_def = |v: i64, s: u32| if s == 0 { v } else { (v + (1i64 << (s - 1))) >> s };
        for case in 0..4000 {
            let dh = 1 + (next() % 12) as usize;
            let t = (next() % 40) as usize;
            let top_k = 1 + (next() % 12) as usize;
            let pool = 1 + (next() % 4) as usize;
            let rows: Vec<Vec<i16>> = (0..pool).map(|_| (0..dh).map(|_| (next() >> 48) as i16 >> (next() % 8)).collect()).collect();
            let mut k = vec![0i16; (t + 1) * dh];
            let mut ek = vec![0i16; t + 1];
            for j in 0..=t {
                k[j * dh..(j + 1) * dh].copy_from_slice(&rows[(next() % pool as u64) as usize]);
                ek[j] = match next() % 6 {
                    0 => E_ZERO as i16,
                    1 => -3,
                    2 => 2,
                    _ => 0,
                };
            }
            let mut q: Vec<i16> = (0..dh).map(|_| (next() >> 48) as i16).collect();
            let m = match next() % 5 {
                0 => 0,
                1 | 2 => -1 - (next() % 32767) as i64,
                _ => 1 + (next() % 32767) as i64,
            };
            let cq = Scale { m: m as i32, e: -40 };
            let (mut x16, mut ex, mut v, mut ev, mut ring, mut ering, mut sparse) = (vec![0i16; 4], vec![0i16; 1], vec![0i16; 4], vec![0i16; t + 1], vec![0i16; 4], vec![0i16; 1], vec![0i16; 4]);
            let (mut hs, mut mv, mut slots, mut pa, mut ent) = (vec![0i32; 4], vec![0i32; 4], vec![-1i32; 4 * top_k], vec![0i32; 1], vec![0i32; 1]);
            let mut b = Bufs {
                x: &mut x16,
                ex: &mut ex,
                k: &mut k,
                ek: &mut ek,
                v: &mut v,
                ev: &mut ev,
                ring: &mut ring,
                ering: &mut ering,
                q: &mut q,
                sparse: &mut sparse,
                hs: &mut hs,
                mv: &mut mv,
                slots: &mut slots,
                pa: &mut pa,
                ent: &mut ent,
            };
            let keff = attention_top(Accel::detect(), dh, &cq, t, 0, top_k, &mut b).unwrap();
            // The definition.
            let kt = b.ek.iter().map(|&e| i32::from(e)).max().unwrap();
            let sigma: Vec<i64> = (0..=t)
                .map(|j| {
                    let e = i32::from(b.ek[j]);
                    if e == E_ZERO {
                        return 0;
                    }
                    let dot: i64 = b.q.iter().zip(&b.k[j * dh..(j + 1) * dh]).map(|(&a, &c)| i64::from(a) * i64::from(c)).sum();
                    rshr_def(dot, (kt - e).min(63) as u32)
                })
                .collect();
            let mut order: Vec<usize> = (0..=t).collect();
            order.sort_by_key(|&j| core::cmp::Reverse(m.signum() * sigma[j]));
            assert_eq!(keff, top_k.min(t + 1), "case {case}");
            for (i, &j) in order.iter().take(keff).enumerate() {
                assert_eq!(b.slots[i], j as i32, "case {case}: slot {i}");
                let got = (i64::from(b.slots[2 * top_k + i]) << 32) | i64::from(b.slots[top_k + i] as u32);
                assert_eq!(got, sigma[j], "case {case}: score of slot {i}");
            }
        }
    }
}
