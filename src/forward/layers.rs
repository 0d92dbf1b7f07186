//! The layer loop: every layer over positions p0..n, a chunk of positions at
//! a time.
//!
//! Per layer and chunk: normalize the rows; project keys, values, router
//! and queries; turn the router values into probabilities; score the keys
//! into attention slots; mix the conv, state and sparse pathways into the
//! residual stream, N channels at a time. The code is generic over the lane
//! type (the instruction set's choice, [`Accel::with_lanes`]) and the
//! key-cache layout ([`KeyCache`]); the size profile ([`SIZE_FIRST`]) only
//! picks how the projections are grouped.
use super::{Entropy, LayerMem, Layers, Scratch, Tokens};
use crate::format::{Block, Model, Tensor};
use crate::kernels::attention::{slot_key, slot_probs};
use crate::kernels::choice::{Accel, KeyCache, SIZE_FIRST};
use crate::kernels::conv::{conv_lanes, CONV_LANES};
use crate::kernels::keys::{score_keys, KeyLayout};
use crate::kernels::lanes::{LaneJob, Lanes};
use crate::kernels::matvec::{embed_row, matvec_batch_accel, matvec_multi_accel, MvJob};
use crate::kernels::{copy, layer_norm, softmax};
use crate::math::{sqrtf, tanhf};

/// Runs every layer over positions p0..n of `tokens` (n <= S). Each layer's
/// stored state for positions < p0 must come from an earlier call on the same
/// prefix (p0 is 0 for a lean state).
/// Afterwards x row n-1 holds the final residual stream (rows p0..n-1 are
/// only needed by the last layer for their keys, values, normalized rows and
/// SSM state, so the last layer does not mix them into x).
#[allow(clippy::too_many_arguments)]
pub fn run_layers<L: Layers>(
    model: &Model,
    tokens: &Tokens,
    p0: usize,
    n: usize,
    x: &mut [f32],
    layers: &mut L,
    sc: &mut Scratch,
    ent: &mut Entropy,
) {
    let accel = sc.accel;
    accel.with_lanes(Run { model, tokens, p0, n, x, layers, sc, ent })
}

/// [`run_layers`]' arguments, run with the lane type the CPU allows.
struct Run<'r, 'm, 't, 's, 'e, L> {
    model: &'r Model<'m>,
    tokens: &'r Tokens<'t>,
    p0: usize,
    n: usize,
    x: &'r mut [f32],
    layers: &'r mut L,
    sc: &'r mut Scratch<'s>,
    ent: &'r mut Entropy<'e>,
}

impl<L: Layers> LaneJob for Run<'_, '_, '_, '_, '_, L> {
    type Out = ();
    #[inline(always)]
    fn run<S: Lanes<N>, const N: usize>(self) {
        let Run { model, tokens, p0, n, x, layers, sc, ent } = self;
        layers_with::<L, S, N>(model, tokens, p0, n, x, layers, sc, ent)
    }
}

/// Where a chunk is: positions c0..c0+m; those from c0+i_full on are mixed
/// into x, and the router is needed from c0+i_rout on (i_rout is 0 or
/// i_full).
#[derive(Clone, Copy)]
struct Chunk {
    c0: usize,
    m: usize,
    i_full: usize,
    i_rout: usize,
    /// The value cache keeps the normalized rows (see `lazy_v`).
    lazy_v: bool,
}

#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn layers_with<L: Layers, S: Lanes<N>, const N: usize>(
    model: &Model,
    tokens: &Tokens,
    p0: usize,
    n: usize,
    x: &mut [f32],
    layers: &mut L,
    sc: &mut Scratch,
    ent: &mut Entropy,
) {
    // The query area holds CONV_LANES lanes of conv weights per tap.
    const { assert!(N <= CONV_LANES) };
    let dims = model.dims;
    let (d, dh) = (dims.d_model, dims.d_head);
    let chunk = sc.chunk.max(1);
    let hist_rows = dims.kernel_size - 1;
    let p0 = if L::KEEPS { p0 } else { 0 };
    for t in p0..n {
        if let Some(row) = x.get_mut(t * d..t * d + d) {
            embed_row(&model.embed(), tokens.id(t, dims.vocab), row);
        }
    }
    let inv_sqrt_dh = 1.0 / sqrtf(dh as f32);
    let n_layers = dims.n_layers;
    for l in 0..n_layers {
        let blk = model.block(l);
        let mut mem = layers.layer(l);
        let kc = KeyCache::new(mem.k.len(), dh);
        if p0 == 0 {
            let a = blk.ssm().a;
            for (c, th) in mem.tanh_a.iter_mut().enumerate() {
                *th = tanhf(a.get(c));
            }
            for v in mem.hs.iter_mut() {
                *v = 0.0;
            }
        }
        // Positions >= full0 are mixed into x; in the last layer only n-1 is
        // (the others only feed its keys, values, conv rows and SSM state).
        let full0 = if l + 1 == n_layers { n.saturating_sub(1) } else { 0 };
        // A lean state's last layer: only position n-1's attention reads
        // values, those of at most TOP_K keys. Its value cache keeps the
        // normalized rows, and only the chosen keys' rows become values
        // (W_v h_j, the same floats), after the scoring. (n >= 2: x row 0,
        // not mixed in this layer, is the scratch row. A cached state
        // keeps every value for later calls; the size-first build keeps
        // its shorter code.)
        let lazy_v = !cfg!(feature = "size-first") && !L::KEEPS && l + 1 == n_layers && n >= 2;
        // Rows 0..K-1 of h hold positions p0-K+1 .. p0-1.
        let hl = hist_rows * d;
        if let (true, Some(dst), Some(src)) = (L::KEEPS, sc.h.get_mut(..hl), mem.hist.get(..hl)) {
            copy(dst, src);
        }
        let mut c0 = p0;
        while c0 < n {
            let m = (n - c0).min(chunk);
            let hc = sc.h.get_mut(hl..hl + m * d).unwrap_or(&mut []);
            for i in 0..m {
                let t = c0 + i;
                if let (Some(xr), Some(hr)) = (x.get(t * d..t * d + d), hc.get_mut(i * d..i * d + d)) {
                    layer_norm(xr, &blk.norm(), hr);
                }
            }
            // The router is needed at the mixed positions and wherever
            // entropies are kept (a prefix of positions).
            let i_full = full0.saturating_sub(c0).min(m);
            let i_rout = if ent.all.len() > c0 * n_layers + l { 0 } else { i_full };
            let ch = Chunk { c0, m, i_full, i_rout, lazy_v };
            project(sc, &mut mem, &blk, kc, ch, hl, d, dh);
            for i in i_rout..m {
                let Some(r) = sc.r.get_mut(i * 3..i * 3 + 3) else { continue };
                softmax(r);
                ent.keep(r, c0 + i, n, l, n_layers);
            }
            attend::<KeyCache, S, N>(sc, &mem, kc, ch, dims.top_k, inv_sqrt_dh);
            if lazy_v && i_full < m {
                chosen_values(sc, &mut mem, &blk, x, i_full, c0 + i_full, dims.top_k, d);
            }
            mix::<S, N>(x, sc, &mut mem, &blk, ch, d, dims.kernel_size, dims.top_k);
            #[cfg(not(feature = "size-first"))]
            if L::KEEPS && c0 + m >= n {
                // The last chunk: its last K-1 rows go straight to the kept
                // history, no shift and copy back (the size-first build
                // keeps the shorter code below).
                if let (Some(dst), Some(src)) = (mem.hist.get_mut(..hl), sc.h.get(m * d..m * d + hl)) {
                    copy(dst, src);
                }
                break;
            }
            // Keep the last K-1 normalized rows in front for the next chunk.
            // Row by row, ascending (row m + r is read before it is overwritten);
            // copy_within would link a panic path.
            for r in 0..hist_rows {
                if let Some((lo, hi)) = sc.h.split_at_mut_checked((m + r) * d) {
                    if let (Some(dst), Some(src)) = (lo.get_mut(r * d..r * d + d), hi.get(..d)) {
                        copy(dst, src);
                    }
                }
            }
            c0 += m;
        }
        // (the default build copied the last chunk's rows above)
        #[cfg(feature = "size-first")]
        if let (true, Some(dst), Some(src)) = (L::KEEPS, mem.hist.get_mut(..hl), sc.h.get(..hl)) {
            copy(dst, src);
        }
    }
}

/// The chunk's projections from its normalized rows (sc.h from float hl
/// on): keys into the cache,
/// values into theirs, router values from i_rout on (sc.r) and queries from
/// i_full on (sc.q).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn project<K: KeyLayout>(sc: &mut Scratch, mem: &mut LayerMem, blk: &Block, kc: K, ch: Chunk, hl: usize, d: usize, dh: usize) {
    let Chunk { c0, m, i_full, i_rout, lazy_v } = ch;
    let acc = sc.accel;
    let hc = sc.h.get(hl..hl + m * d).unwrap_or(&[]);
    let vdst = mem.v.get_mut(c0 * d..(c0 + m) * d).unwrap_or(&mut []);
    if lazy_v {
        // The normalized rows stand in for the values (`chosen_values`).
        copy(vdst, hc);
    }

    if SIZE_FIRST {
        // One matrix at a time: on a microcontroller it costs the same and
        // takes less code.
        let in_rows = match kc.rows_from(mem.k, c0) {
            Some(kd) => {
                project_one(acc, &blk.wk(), hc, 0, m, kd, dh);
                true
            }
            None => {
                project_one(acc, &blk.wk(), hc, 0, m, sc.q, dh);
                false
            }
        };
        if !lazy_v {
            project_one(acc, &blk.wv(), hc, 0, m, vdst, d);
        }
        if !in_rows {
            kc.store(mem.k, c0, m, sc.q);
        }
        project_one(acc, &blk.router(), hc, i_rout, m, sc.r, 3);
        project_one(acc, &blk.wq(), hc, i_full, m, sc.q, dh);
        return;
    }
    // Matrices over the same positions share one matvec call (one set of
    // column tables). Keys not written in place go through a buffer (the
    // slot area when they fit and the queries are computed in the same
    // call, else the query area) into the cache.
    let vopt = if lazy_v { None } else { Some(vdst) };
    let r_part = sc.r.get_mut(i_rout * 3..).unwrap_or(&mut []);
    let with_r = i_rout == 0;
    let q_done = match kc.rows_from(mem.k, c0) {
        Some(kd) => {
            let all = i_full == 0;
            group(acc, blk, kd, vopt, r_part, if all { Some(&mut *sc.q) } else { None }, with_r, hc, d, dh, m);
            all
        }
        None => {
            let keys_in_slots = i_full == 0 && m * dh <= sc.slots.len();
            if keys_in_slots {
                group(acc, blk, &mut *sc.slots, vopt, r_part, Some(&mut *sc.q), with_r, hc, d, dh, m);
            } else {
                group(acc, blk, &mut *sc.q, vopt, r_part, None, with_r, hc, d, dh, m);
            }
            kc.store(mem.k, c0, m, if keys_in_slots { sc.slots } else { sc.q });
            keys_in_slots
        }
    };
    if !q_done && i_full < m {
        // Queries (and the router where not done above) of positions i_full..m.
        if let (Some(xs), Some(qo)) = (hc.get(i_full * d..), sc.q.get_mut(i_full * dh..)) {
            if i_rout == i_full && i_rout > 0 {
                let ro = sc.r.get_mut(i_rout * 3..).unwrap_or(&mut []);
                let mut jobs = [MvJob { w: &blk.router(), out: ro, ostride: 3 }, MvJob { w: &blk.wq(), out: qo, ostride: dh }];
                matvec_multi_accel(acc, &mut jobs, xs, d, m - i_full);
            } else {
                matvec_multi_accel(acc, &mut [MvJob { w: &blk.wq(), out: qo, ostride: dh }], xs, d, m - i_full);
            }
        }
    }
}

/// Keys into `k` and values into `v` for all m positions, in one matvec call
/// with the router (when `with_r`) and the queries (when given: only when
/// every position is mixed, so the router is needed everywhere too).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn group(acc: Accel, blk: &Block, k: &mut [f32], v: Option<&mut [f32]>, r: &mut [f32], q: Option<&mut [f32]>, with_r: bool, hc: &[f32], d: usize, dh: usize, m: usize) {
    let kj = MvJob { w: &blk.wk(), out: k, ostride: dh };
    let rj = MvJob { w: &blk.router(), out: r, ostride: 3 };
    let Some(v) = v else {
        // (The lazy value cache: no values here.)
        return match q {
            Some(q) => matvec_multi_accel(acc, &mut [kj, rj, MvJob { w: &blk.wq(), out: q, ostride: dh }], hc, d, m),
            None if with_r => matvec_multi_accel(acc, &mut [kj, rj], hc, d, m),
            None => matvec_multi_accel(acc, &mut [kj], hc, d, m),
        };
    };
    let vj = MvJob { w: &blk.wv(), out: v, ostride: d };
    match q {
        Some(q) => matvec_multi_accel(acc, &mut [kj, vj, rj, MvJob { w: &blk.wq(), out: q, ostride: dh }], hc, d, m),
        None if with_r => matvec_multi_accel(acc, &mut [kj, vj, rj], hc, d, m),
        None => matvec_multi_accel(acc, &mut [kj, vj], hc, d, m),
    }
}

/// The values of the keys that position c0 + i's attention chose, from the
/// normalized rows the lazy value cache holds, in place: W_v h_j into x row
/// 0 (scratch: not mixed in the last layer, n >= 2), then into row j.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn chosen_values(sc: &Scratch, mem: &mut LayerMem, blk: &Block, x: &mut [f32], i: usize, t: usize, topk: usize, d: usize) {
    let slot_i = sc.slots.get((sc.chunk.max(1) * topk).min(sc.slots.len())..).unwrap_or(&[]);
    let Some(tmp) = x.get_mut(..d) else { return };
    // The keff slots attend filled (distinct keys; the rest may be stale).
    let keff = topk.min(t + 1);
    for &ix in slot_i.get(i * topk..i * topk + keff).unwrap_or(&[]) {
        let Some(row) = slot_key(ix).and_then(|j| mem.v.get_mut(j * d..(j + 1) * d)) else { continue };
        matvec_batch_accel(sc.accel, &blk.wv(), row, d, 1, tmp, d);
        copy(row, tmp);
    }
}

/// out[i * ostride + j] = (W xs_i)[j] for the rows xs_i (W.cols floats each)
/// of positions from..m.
#[cfg_attr(all(atome_portable, not(feature = "size-first")), inline(never))]
#[cfg_attr(feature = "size-first", inline(always))]
fn project_one(acc: Accel, w: &Tensor, xs: &[f32], from: usize, m: usize, out: &mut [f32], ostride: usize) {
    let (xs, out) = (xs.get(from * w.cols..).unwrap_or(&[]), out.get_mut(from * ostride..).unwrap_or(&mut []));
    matvec_batch_accel(acc, w, xs, w.cols, m.saturating_sub(from), out, ostride);
}

/// Attention slots (probabilities and key numbers) of the mixed positions.
// (Not inlined in the microcontrollers' default build, like `mix`: their
// lane arrays stay out of the frame that is live under the matvecs, so the
// device matvec kernels have that stack. Inlined elsewhere: the size-first
// build (less code), and x86-64, where the AVX2 lanes need the caller's
// target feature, which a separate function would not have.)
#[cfg_attr(atome_device, inline(never))]
#[cfg_attr(not(atome_device), inline(always))]
fn attend<K: KeyLayout, S: Lanes<N>, const N: usize>(sc: &mut Scratch, mem: &LayerMem, kc: K, ch: Chunk, topk: usize, inv_sqrt_dh: f32) {
    let Chunk { c0, m, i_full, .. } = ch;
    let dh = kc.dh();
    let (slot_p, slot_i) = sc.slots.split_at_mut((sc.chunk.max(1) * topk).min(sc.slots.len()));
    for i in i_full..m {
        let t = c0 + i;
        let keff = topk.min(t + 1);
        let (Some(q), Some(sp), Some(si)) = (
            sc.q.get(i * dh..i * dh + dh),
            slot_p.get_mut(i * topk..i * topk + keff),
            slot_i.get_mut(i * topk..i * topk + keff),
        ) else {
            continue;
        };
        score_keys::<K, S, N>(q, mem.k, kc, t, inv_sqrt_dh, sp, si);
        slot_probs(sp);
    }
}

/// Mixes the three pathways into x at the mixed positions and advances the
/// SSM state over all of them, N channels at a time: fixed-size lanes let
/// the compiler use vector instructions; every lane keeps its own contract
/// expression. Conv rows are decoded once per channel block and chunk.
#[cfg_attr(atome_device, inline(never))]
#[cfg_attr(not(atome_device), inline(always))]
#[allow(clippy::too_many_arguments)]
fn mix<S: Lanes<N>, const N: usize>(x: &mut [f32], sc: &mut Scratch, mem: &mut LayerMem, blk: &Block, ch: Chunk, d: usize, kk: usize, topk: usize) {
    let Chunk { c0, m, i_full, .. } = ch;
    let hist_rows = kk - 1;
    let (slot_p, slot_i) = sc.slots.split_at((sc.chunk.max(1) * topk).min(sc.slots.len()));
    let (q, h, r) = (&mut *sc.q, &*sc.h, &*sc.r);
    let (tanh_a, hs_mem, v) = (&*mem.tanh_a, &mut *mem.hs, &*mem.v);
    // Conv weights are decoded CW channels at a time (one decode call per
    // CW channels: narrow lanes would pay its per-call cost per channel).
    // (Microcontrollers' default build; elsewhere N = CONV_LANES or the
    // narrower lanes keep their own blocks.)
    let cw = if SIZE_FIRST && !cfg!(feature = "size-first") { CONV_LANES } else { N };
    let mut ch0 = 0;
    while ch0 < d {
        let nb = (d - ch0).min(N);
        // Conv weights per tap as lane floats, in the query area (the
        // queries are no longer needed).
        let co = if cw == N { 0 } else { ch0 % cw };
        if i_full < m && co == 0 {
            if cw == N {
                conv_lanes::<N>(&blk.conv(), ch0, nb, kk, q);
            } else {
                conv_lanes::<CONV_LANES>(&blk.conv(), ch0, (d - ch0).min(CONV_LANES), kk, q);
            }
        }
        let th = S::ld(tanh_a, ch0, nb);
        let mut hs = S::ld(hs_mem, ch0, nb);
        let ssm = blk.ssm();
        let bc = S::ld_bytes(ssm.b.bytes(), ch0, nb);
        let cc = S::ld_bytes(ssm.c_out.bytes(), ch0, nb);
        let scale = S::splat(blk.conv().scale);
        for i in 0..m {
            let t = c0 + i;
            let at = (hist_rows + i) * d + ch0;
            // state
            let hv = S::ld(h, at, nb);
            hs = th.mul(hs).mul_add(bc, hv);
            if i < i_full {
                continue;
            }
            let state = cc.mul(hs);
            // local: tap k reads the normalized row of position t - k.
            let mut local = S::zero();
            let fast = if cfg!(feature = "size-first") || !SIZE_FIRST || nb != N {
                None
            } else {
                let taps = kk.min(t + 1);
                let qe = (taps.max(1) - 1) * cw + co + N;
                let ok = at.checked_sub((taps.max(1) - 1) * d).is_some() && at + N <= h.len() && qe <= q.len();
                ok.then_some(taps)
            };
            if let Some(taps) = fast {
                // Microcontrollers, default build: the taps' bounds checked
                // once (the last tap's are the extreme ones), not per tap.
                let (mut hp, mut qp) = (at, co);
                for _ in 0..taps {
                    // SAFETY: tap k reads h[at - k*d..][..N] and
                    // q[co + k*cw..][..N], within the bounds checked above
                    // for k = taps - 1 (at - k*d >= 0, at + N <= h.len(),
                    // co + k*cw + N <= q.len()).
                    let (w, hh) = unsafe { (&*(q.as_ptr().add(qp) as *const [f32; N]), &*(h.as_ptr().add(hp) as *const [f32; N])) };
                    local = local.add_mul_nz(S::load(w), S::load(hh));
                    qp += cw;
                    hp = hp.wrapping_sub(d);
                }
            } else {
                for k in 0..kk.min(t + 1) {
                    let wk = S::ld(q, k * cw + co, N);
                    let hr = S::ld(h, at - k * d, nb);
                    local = local.add_mul_nz(wk, hr);
                }
            }
            // sparse: slots in order, empty ones skipped.
            let keff = topk.min(t + 1);
            let mut sparse = S::zero();
            let at_s = i * topk..i * topk + keff;
            if let (Some(ps), Some(is)) = (slot_p.get(at_s.clone()), slot_i.get(at_s)) {
                for (&p, &ix) in ps.iter().zip(is) {
                    if let Some(row) = slot_key(ix) {
                        let vr = S::ld(v, row * d + ch0, nb);
                        sparse = sparse.mul_add(S::splat(p), vr);
                    }
                }
            }
            let (r0, r1, r2) = match r.get(i * 3..i * 3 + 3) {
                Some(r) => (r[0], r[1], r[2]),
                None => (0.0, 0.0, 0.0),
            };
            let xr = S::ld(x, t * d + ch0, nb);
            let out = xr.add(S::splat(r0).mul(local.mul(scale)).mul_add(S::splat(r1), state).mul_add(S::splat(r2), sparse));
            S::st(out, x, t * d + ch0, nb);
        }
        S::st(hs, hs_mem, ch0, nb);
        ch0 += nb;
    }
}
