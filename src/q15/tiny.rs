//! The q15 tiny plan (docs/Q15.md, "Tiny plan"): the lean plan's bits
//! without the value cache. Layer by layer as the lean plan, but every
//! value row is recomputed, when attention chooses it, from its position's
//! residual row; the SSM runs forward once over the window (keys and
//! checkpoints of its state every C positions), then again block by block
//! from the last block down (each block's states kept for its C positions)
//! while the positions are mixed in descending order, so that the residual
//! rows a position still needs (its own and the earlier ones) are this
//! layer's input when it is mixed. Every row has its own exponent and every
//! sum is exact: a quantity computed in another order, or twice, has the
//! same bits.
//!
//! This is a child of `engine` so that it calls the lean plan's kernels
//! (embedding, LayerNorm, SSM step, conv, attention, mix, head) themselves.
use super::super::params::{Area, LayerQ, PSrc, Vals};
use super::super::{param_ints, take};
use super::*;
use crate::engine::Engine;
use crate::format::{Block, Classifier, Dims, Model};
use crate::forward::Tokens;
use crate::kernels::isa::Accel;
#[cfg(atome_small)]
use crate::kernels::q15::matvec::matvec_q_accel;
#[cfg(not(atome_small))]
use crate::kernels::q15::{matvec_q_multi_checked, trit2_no_code10, MvJobQ};

/// Positions per SSM block for window s: the smallest power of two C with
/// C^2 >= s (so that the checkpoints, about s / C, and one block's states,
/// C, take about 2 sqrt(s) rows together; a power of two, so that the C
/// header's constant expression for the state's size can name it).
pub const fn block_len(s: usize) -> usize {
    let mut c = 1usize;
    while c.saturating_mul(c) < s {
        c *= 2;
    }
    c
}

/// Stored SSM checkpoints for window s: the states before positions C, 2C,
/// .. below s (the one before position 0 is the zero block).
pub const fn checkpoints(s: usize) -> usize {
    // ceil(s / C) - 1 (C >= 1; checked, so that no division can panic).
    match s.saturating_sub(1).checked_div(block_len(s)) {
        Some(q) => q,
        None => 0,
    }
}

/// int32 elements of the matvec outputs: a LayerNorm's or a value's D
/// temporaries, or a key with the router (DH + 3), or the router with the
/// query (3 + DH).
const fn mv_len(dims: &Dims) -> usize {
    let (d, dh) = (dims.d_model, dims.d_head);
    if d > dh + 3 {
        d
    } else {
        dh + 3
    }
}

/// Element counts of a q15 tiny state's two areas.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Q15TinyLayout {
    /// int16 elements: residual S x D, keys S x DH (one layer), the ring of K
    /// normalized rows, TOP_K value rows, the query (DH), the sparse output
    /// (D), and the exponents of each row.
    pub i16s: usize,
    /// int32 elements: one SSM block's states (C x D) and the checkpoints
    /// ([`checkpoints`] x D) with one exponent each, the matvec outputs
    /// (max(D, DH + 3)), attention slots (4 TOP_K), the last position's
    /// router entropies (L), the positions that the ring's K rows and the
    /// TOP_K value rows hold, and [`param_ints`].
    pub i32s: usize,
}

impl Q15TinyLayout {
    /// The counts for these dimensions and window s.
    pub const fn new(dims: &Dims, s: usize) -> Q15TinyLayout {
        let (d, dh, k, tk, l) = (dims.d_model, dims.d_head, dims.kernel_size, dims.top_k, dims.n_layers);
        let (c, nck) = (block_len(s), checkpoints(s));
        Q15TinyLayout {
            i16s: s * d + s + s * dh + s + k * d + k + tk * d + tk + dh + d,
            i32s: c * d + c + nck * d + nck + mv_len(dims) + 4 * tk + l + k + tk + param_ints(dims),
        }
    }

    /// Bytes of the two areas and the logits.
    pub const fn bytes(&self, dims: &Dims) -> usize {
        2 * self.i16s + 4 * self.i32s + 4 * dims.vocab
    }
}

/// The buffers of a tiny runner: the engine's [`Bufs`] (its `v`, `ev`: the
/// TOP_K value rows; its `hs`: one block's SSM states, C x D) and the
/// plan's own.
struct Tb<'w> {
    b: Bufs<'w>,
    /// Exponents of the block's SSM states, C.
    est: &'w mut [i32],
    /// SSM checkpoints: row i is the state before position (i + 1) C.
    ck: &'w mut [i32],
    /// Their exponents.
    eck: &'w mut [i32],
    /// Position whose normalized row each ring row holds (-1: none).
    rpos: &'w mut [i32],
    /// Position whose value each value row holds (-1: none).
    vpos: &'w mut [i32],
}

/// Runs the q15 engine in a caller's memory, tiny plan.
pub struct Q15TinyRunner<'w> {
    t: Tb<'w>,
    /// What the logits area cannot hold of one layer's parameter vectors.
    pa: &'w mut [i32],
    logits: &'w mut [f32],
    dims: Dims,
    s: usize,
}

impl<'w> Q15TinyRunner<'w> {
    /// A runner over `i16s`, `i32s` (at least [`Q15TinyLayout::new`]'s
    /// counts) and `logits` (at least V); None when one is too short or a
    /// dimension is 0.
    pub fn new(i16s: &'w mut [i16], i32s: &'w mut [i32], logits: &'w mut [f32], dims: &Dims, s: usize) -> Option<Self> {
        let (d, dh, k, tk) = (dims.d_model, dims.d_head, dims.kernel_size, dims.top_k);
        if d == 0 || dh == 0 || k == 0 || s == 0 || tk == 0 || dims.vocab == 0 || logits.len() < dims.vocab {
            return None;
        }
        let (c, nck) = (block_len(s), checkpoints(s));
        let (x, r) = take(i16s, s * d)?;
        let (ex, r) = take(r, s)?;
        let (kc, r) = take(r, s * dh)?;
        let (ek, r) = take(r, s)?;
        let (ring, r) = take(r, k * d)?;
        let (ering, r) = take(r, k)?;
        let (v, r) = take(r, tk * d)?;
        let (ev, r) = take(r, tk)?;
        let (q, r) = take(r, dh)?;
        let (sparse, _) = take(r, d)?;
        let (hs, r) = take(i32s, c * d)?;
        let (est, r) = take(r, c)?;
        let (ck, r) = take(r, nck * d)?;
        let (eck, r) = take(r, nck)?;
        let (mv, r) = take(r, mv_len(dims))?;
        let (slots, r) = take(r, 4 * tk)?;
        let (ent, r) = take(r, dims.n_layers)?;
        let (rpos, r) = take(r, k)?;
        let (vpos, r) = take(r, tk)?;
        let (pa, _) = take(r, param_ints(dims))?;
        let b = Bufs { x, ex, k: kc, ek, v, ev, ring, ering, q, sparse, hs, mv, slots, pa: &mut [], ent };
        let t = Tb { b, est, ck, eck, rpos, vpos };
        Some(Q15TinyRunner { t, pa, logits, dims: *dims, s })
    }

    /// The last position's router entropies stored in a q15 tiny state's
    /// int32 area (as [`Q15TinyRunner::new`] carves it), read without a
    /// runner; false when the area is too short.
    pub fn stored_entropy(i32s: &[i32], dims: &Dims, s: usize, out: &mut [f32]) -> bool {
        let (d, tk) = (dims.d_model, dims.top_k);
        let (c, nck) = (block_len(s), checkpoints(s));
        let at = c * d + c + nck * d + nck + mv_len(dims) + 4 * tk;
        let Some(src) = i32s.get(at..at + dims.n_layers) else { return false };
        for (o, &e) in out.iter_mut().zip(src) {
            *o = f32::from_bits(e as u32);
        }
        true
    }

    /// Runs the layers (every position's router entropies into `all` when
    /// it is not empty: n x L) and the final LayerNorm; the final row's
    /// exponent.
    fn run_body(&mut self, model: &Model, tokens: &Tokens, all: &mut [f32]) -> Option<i32> {
        let toks = tokens.window(self.s);
        let n = toks.len();
        if n == 0 || model.dims != self.dims {
            return None;
        }
        layers(model, &toks, n, &mut self.t, self.pa, self.logits, all, block_len(self.s))?;
        final_row(model, n, &mut self.t.b)
    }
}

/// One layer's parameters, as the lean plan holds them.
struct Layer<'r> {
    bl: &'r Block<'r>,
    p: &'r LayerQ<'r>,
    tanh: Vals<'r>,
    pg: PSrc<'r>,
    pb: PSrc<'r>,
    psb: PSrc<'r>,
    /// conv::conv_clean of the conv tensor.
    clean: bool,
    /// No code `10` in the projections (AVX2's decode; see
    /// [`trit2_no_code10`]).
    #[cfg_attr(atome_small, allow(dead_code))]
    nc10: bool,
    /// Layer index.
    l: usize,
    /// Positions per SSM block.
    c: usize,
    /// Positions of the window.
    n: usize,
}

/// The embedding and every layer of the tiny plan (module docs): the
/// residual rows after the last layer (row n-1 mixed there).
#[allow(clippy::too_many_arguments)]
fn layers(model: &Model, toks: &Tokens, n: usize, tb: &mut Tb, pa: &mut [i32], logits: &mut [f32], all: &mut [f32], c: usize) -> Option<()> {
    let dims = model.dims;
    let (d, dh, kk, l_n) = (dims.d_model, dims.d_head, dims.kernel_size, dims.n_layers);
    if d == 0 || kk == 0 || c == 0 {
        return None;
    }
    if model.packing == Packing::P3 && (d > 7281 || kk > 7281) {
        return None;
    }
    let accel = Accel::detect();
    for t in 0..n {
        embed(&model.embed(), toks.id(t, dims.vocab), t, &mut tb.b)?;
    }
    let nb = n.div_ceil(c);
    for l in 0..l_n {
        let bl = model.block(l);
        let p = LayerQ::new(&bl, d, dh);
        // tanh(a), gamma, beta and the SSM gain as int32, where the lean
        // plan keeps them (the logits area, then the int32 area).
        let mut areas = logits.chunks_exact_mut(d).map(Area::Bits).chain(pa.chunks_exact_mut(d).map(Area::Ints));
        let a = bl.ssm().a;
        let tanh = areas.next()?.fill(|i| tanh_q30(a.get(i)));
        let pg = PSrc::new(p.g, areas.next());
        let pb = PSrc::new(p.b, areas.next());
        let psb = PSrc::new(p.sb, areas.next());
        #[cfg(not(atome_small))]
        let nc10 = accel.avx2() && [&bl.wk(), &bl.wv(), &bl.router(), &bl.wq()].into_iter().all(|w| trit2_no_code10(accel, w));
        #[cfg(atome_small)]
        let nc10 = false;
        let ly = Layer { bl: &bl, p: &p, tanh, pg, pb, psb, clean: conv::conv_clean(&bl.conv(), d), nc10, l, c, n };
        // The ring's and the value rows' contents are the previous layer's.
        tb.rpos.fill(-1);
        tb.vpos.fill(-1);
        // Pass A: keys, the SSM and its checkpoints (the last block's
        // states stay in the block area).
        for cb in 0..nb {
            forward(accel, &ly, tb, cb, true, all)?;
        }
        if l + 1 == l_n {
            // The last layer mixes only its last position.
            mix_at(accel, &ly, tb, n - 1, all)?;
            continue;
        }
        // Pass B: the blocks from the last down, each position of a block
        // from its last down.
        for cb in (0..nb).rev() {
            if cb + 1 < nb {
                forward(accel, &ly, tb, cb, false, all)?;
            }
            let lo = cb * c;
            for t in (lo..(lo + c).min(n)).rev() {
                mix_at(accel, &ly, tb, t, all)?;
            }
        }
    }
    Some(())
}

/// Copies `src` into `dst` (as far as both go).
#[inline(always)]
fn copy<T: Copy>(src: &[T], dst: &mut [T]) {
    for (o, &v) in dst.iter_mut().zip(src) {
        *o = v;
    }
}

/// Ring row j mod K holds h_j = LayerNorm(x_j) (computed unless it is
/// there already); its exponent and the ring row.
#[inline(never)]
fn ensure(accel: Accel, ly: &Layer, tb: &mut Tb, j: usize) -> Option<(i32, usize)> {
    let d = tb.b.sparse.len();
    let slot = j.checked_rem(tb.b.ering.len())?;
    let pos = i32::try_from(j).ok()?;
    let held = tb.rpos.get_mut(slot)?;
    if *held == pos {
        return Some((i32::from(*tb.b.ering.get(slot)?), slot));
    }
    let xr = tb.b.x.get(j * d..(j + 1) * d)?;
    let ex = i32::from(*tb.b.ex.get(j)?);
    let out = tb.b.ring.get_mut(slot * d..(slot + 1) * d)?;
    let eh = norm::layer_norm(accel, xr, ex, &ly.pg, &ly.pb, tb.b.mv.get_mut(..d)?, out);
    *tb.b.ering.get_mut(slot)? = eh as i16;
    *held = pos;
    Some((eh, slot))
}

/// SSM block `cb` forward from its checkpoint: each position's normalized
/// row into the ring and its state into the block area. In pass A
/// (`pass_a`) also the keys, the router where only the entropies read it
/// (the last layer's positions before n-1), and the next block's
/// checkpoint.
#[inline(never)]
fn forward(accel: Accel, ly: &Layer, tb: &mut Tb, cb: usize, pass_a: bool, all: &mut [f32]) -> Option<()> {
    let (d, dh) = (tb.b.sparse.len(), tb.b.q.len());
    let l_n = tb.b.ent.len();
    let last = ly.l + 1 == l_n;
    let lo = cb * ly.c;
    let hi = (lo + ly.c).min(ly.n);
    for t in lo..hi {
        let i = t - lo;
        let (eh, slot) = ensure(accel, ly, tb, t)?;
        let h = tb.b.ring.get(slot * d..(slot + 1) * d)?;
        // State i from the one before it: the previous position's, the
        // block's checkpoint, or the zero block.
        let (prev, rest) = tb.b.hs.split_at_mut_checked(i * d)?;
        let row = rest.get_mut(..d)?;
        let e0 = if i > 0 {
            copy(prev.get((i - 1) * d..)?, row);
            *tb.est.get(i - 1)?
        } else if cb > 0 {
            copy(tb.ck.get((cb - 1) * d..cb * d)?, row);
            *tb.eck.get(cb - 1)?
        } else {
            row.fill(0);
            E_ZERO
        };
        *tb.est.get_mut(i)? = ssm::ssm_step(accel, &ly.psb, ly.tanh, row, e0, h, eh);
        if !pass_a {
            continue;
        }
        let router = last && !all.is_empty() && t + 1 < ly.n;
        #[cfg(atome_small)]
        {
            matvec_q_accel(accel, &ly.bl.wk(), h, d, 1, tb.b.mv.get_mut(..dh)?, dh);
            if router {
                matvec_q_accel(accel, &ly.bl.router(), h, d, 1, tb.b.mv.get_mut(dh..dh + 3)?, 3);
            }
        }
        #[cfg(not(atome_small))]
        {
            let (ok, r) = tb.b.mv.split_at_mut_checked(dh)?;
            let or = r.get_mut(..3)?;
            let (wk, wr) = (MvJobQ { w: &ly.bl.wk(), out: ok, ostride: dh }, MvJobQ { w: &ly.bl.router(), out: or, ostride: 3 });
            if router {
                matvec_q_multi_checked(accel, &mut [wk, wr], h, d, 1, ly.nc10);
            } else {
                matvec_q_multi_checked(accel, &mut [wk], h, d, 1, ly.nc10);
            }
        }
        let e = quant::quant_into(accel, tb.b.mv.get(..dh)?, eh, tb.b.k.get_mut(t * dh..(t + 1) * dh)?);
        *tb.b.ek.get_mut(t)? = e as i16;
        if router {
            let r = mix::router(ly.p.router, tb.b.mv.get(dh..dh + 3)?, eh);
            if let Some(o) = all.get_mut(t * l_n + ly.l) {
                *o = f32::from_bits(mix::entropy(r) as u32);
            }
        }
    }
    if pass_a && hi < ly.n {
        // The checkpoint before position hi: the block's last state.
        let i = hi - lo - 1;
        copy(tb.b.hs.get(i * d..(i + 1) * d)?, tb.ck.get_mut(cb * d..(cb + 1) * d)?);
        *tb.eck.get_mut(cb)? = *tb.est.get(i)?;
    }
    Some(())
}

/// The mix of position t (its SSM state in the block area, the rows
/// t-K+1 .. t of the residual still this layer's input): the router, the
/// query, attention over keys 0..=t with the chosen values recomputed, the
/// conv and the mix into x_t, as the lean plan at t.
#[inline(never)]
fn mix_at(accel: Accel, ly: &Layer, tb: &mut Tb, t: usize, all: &mut [f32]) -> Option<()> {
    let (d, dh, kk, top_k) = (tb.b.sparse.len(), tb.b.q.len(), tb.b.ering.len(), tb.vpos.len());
    let l_n = tb.b.ent.len();
    for j in (t + 1).saturating_sub(kk)..t {
        ensure(accel, ly, tb, j)?;
    }
    let (eh, slot) = ensure(accel, ly, tb, t)?;
    let h = tb.b.ring.get(slot * d..(slot + 1) * d)?;
    // The router and the query.
    #[cfg(atome_small)]
    {
        matvec_q_accel(accel, &ly.bl.router(), h, d, 1, tb.b.mv.get_mut(..3)?, 3);
        matvec_q_accel(accel, &ly.bl.wq(), h, d, 1, tb.b.mv.get_mut(3..3 + dh)?, dh);
    }
    #[cfg(not(atome_small))]
    {
        let (or, r) = tb.b.mv.split_at_mut_checked(3)?;
        let oq = r.get_mut(..dh)?;
        let (wr, wq) = (MvJobQ { w: &ly.bl.router(), out: or, ostride: 3 }, MvJobQ { w: &ly.bl.wq(), out: oq, ostride: dh });
        matvec_q_multi_checked(accel, &mut [wr, wq], h, d, 1, ly.nc10);
    }
    let r = mix::router(ly.p.router, tb.b.mv.get(..3)?, eh);
    if let Some(o) = all.get_mut(t * l_n + ly.l) {
        *o = f32::from_bits(mix::entropy(r) as u32);
    }
    if t + 1 == ly.n {
        *tb.b.ent.get_mut(ly.l)? = mix::entropy(r);
    }
    let eq = quant::quant_into(accel, tb.b.mv.get(3..3 + dh)?, eh, tb.b.q.get_mut(..dh)?);
    let keff = attention::attention_top(accel, dh, &ly.p.cq, t, eq, top_k, &mut tb.b)?;
    values(accel, ly, tb, keff)?;
    let esp = attention::attention_sum(accel, top_k, keff, &mut tb.b)?;
    let (mxl, et) = conv::conv_sums(accel, accel.avx2(), ly.clean, &ly.bl.conv(), tb.b.ring, tb.b.ering, t, d, tb.b.mv.get_mut(..d)?);
    let i = t.checked_rem(ly.c)?;
    let ex = i32::from(*tb.b.ex.get(t)?);
    let st = mix::State { hs: tb.b.hs.get(i * d..(i + 1) * d)?, ehs: *tb.est.get(i)? };
    let e = mix::mix(accel, &ly.p.conv, &ly.p.wv, st, tb.b.mv.get_mut(..d)?, (mxl, et), (tb.b.sparse.get_mut(..d)?, esp), r, tb.b.x.get_mut(t * d..(t + 1) * d)?, ex);
    *tb.b.ex.get_mut(t)? = e as i16;
    Some(())
}

/// The values of the `keff` keys in the attention slots into the value
/// rows (a row that already holds one is kept), and each slot's index
/// rewritten to its value row, where attention_sum reads it.
#[inline(never)]
fn values(accel: Accel, ly: &Layer, tb: &mut Tb, keff: usize) -> Option<()> {
    let idx = tb.b.slots.get(..keff)?;
    // Rows no slot chose are free: at least as many as the chosen keys
    // that no row holds.
    for vp in tb.vpos.iter_mut() {
        if *vp >= 0 && !idx.contains(vp) {
            *vp = -1;
        }
    }
    for i in 0..keff {
        let j = *tb.b.slots.get(i)?;
        let s = match tb.vpos.iter().position(|&p| p == j) {
            Some(s) => s,
            None => {
                let s = tb.vpos.iter().position(|&p| p < 0)?;
                value_row(accel, ly, tb, usize::try_from(j).ok()?, s)?;
                *tb.vpos.get_mut(s)? = j;
                s
            }
        };
        *tb.b.slots.get_mut(i)? = i32::try_from(s).ok()?;
    }
    Some(())
}

/// v_j = quant15(Wv h_j) into value row s, h_j from the ring when it is
/// there, else LayerNorm(x_j) (x_j is still this layer's input).
#[inline(never)]
fn value_row(accel: Accel, ly: &Layer, tb: &mut Tb, j: usize, s: usize) -> Option<()> {
    let d = tb.b.sparse.len();
    let row = tb.b.v.get_mut(s * d..(s + 1) * d)?;
    let rs = j.checked_rem(tb.b.ering.len())?;
    let eh = if *tb.rpos.get(rs)? == i32::try_from(j).ok()? {
        copy(tb.b.ring.get(rs * d..(rs + 1) * d)?, row);
        i32::from(*tb.b.ering.get(rs)?)
    } else {
        let xr = tb.b.x.get(j * d..(j + 1) * d)?;
        let ex = i32::from(*tb.b.ex.get(j)?);
        norm::layer_norm(accel, xr, ex, &ly.pg, &ly.pb, tb.b.mv.get_mut(..d)?, row)
    };
    let out = tb.b.mv.get_mut(..d)?;
    #[cfg(atome_small)]
    matvec_q_accel(accel, &ly.bl.wv(), row, d, 1, out, d);
    #[cfg(not(atome_small))]
    matvec_q_multi_checked(accel, &mut [MvJobQ { w: &ly.bl.wv(), out, ostride: d }], row, d, 1, ly.nc10);
    let e = quant::quant_into(accel, tb.b.mv.get(..d)?, eh, row);
    *tb.b.ev.get_mut(s)? = e as i16;
    Some(())
}

impl Engine for Q15TinyRunner<'_> {
    /// The final row's exponent (the row is in the ring's first D values).
    type Last = i32;

    fn window(&self) -> usize {
        self.s
    }

    fn logits(&self) -> &[f32] {
        self.logits.get(..self.dims.vocab).unwrap_or(self.logits)
    }

    /// p = r * 2^-30 as binary32, then the float mode's formula.
    fn last_entropy(&self, out: &mut [f32]) {
        for (o, &e) in out.iter_mut().zip(self.t.b.ent.iter()) {
            *o = f32::from_bits(e as u32);
        }
    }

    /// The layers and the final LayerNorm.
    fn body(&mut self, model: &Model, tokens: &Tokens) -> Option<i32> {
        self.run_body(model, tokens, &mut [])
    }

    fn lm_head(&mut self, model: &Model, eh: i32) -> Option<usize> {
        let h = self.t.b.ring.get(..self.dims.d_model)?;
        Some(head_logits(&model.unembed(), h, eh, self.t.b.mv, Some(self.logits)))
    }

    predict_pick_inline!();

    fn lm_pick(&mut self, model: &Model, eh: i32, fin: bool) -> Option<usize> {
        if fin {
            return self.lm_head(model, eh);
        }
        let h = self.t.b.ring.get(..self.dims.d_model)?;
        Some(head_argmax::<false>(&model.unembed(), h, eh, logit_words(self.logits), self.t.b.mv, &mut [], false))
    }

    fn class_head(&mut self, clf: &Classifier, eh: i32, out: Option<&mut [f32]>) -> Option<usize> {
        let h = self.t.b.ring.get(..self.dims.d_model)?;
        Some(head_logits(&clf.head, h, eh, self.t.b.mv, out))
    }

    /// The window's run writes every position's entropies as it goes.
    fn router_entropy_all(&mut self, model: &Model, tokens: &[i32], out: &mut [f32]) -> Option<usize> {
        let n = tokens.len().min(self.s);
        let out = out.get_mut(..n * self.dims.n_layers)?;
        if out.is_empty() {
            return None;
        }
        let eh = self.run_body(model, &Tokens::new(tokens), out)?;
        self.lm_head(model, eh)?;
        Some(n)
    }
}

/// A q15 tiny runner's memory held in one value (vectors, arrays): what a
/// Rust caller keeps between calls, as a C caller keeps an atome_state_t.
pub struct Q15TinyState<A, B, F> {
    /// Model dimensions.
    pub dims: Dims,
    /// Context window.
    pub s: usize,
    /// int16 area, `Q15TinyLayout::new(dims, s).i16s` elements.
    pub i16s: A,
    /// int32 area, `Q15TinyLayout::new(dims, s).i32s` elements.
    pub i32s: B,
    /// Logits, V floats.
    pub logits: F,
}

impl<A: AsMut<[i16]>, B: AsMut<[i32]>, F: AsMut<[f32]>> Q15TinyState<A, B, F> {
    /// A state over the given buffers (see the fields for their sizes).
    pub fn new(dims: Dims, s: usize, i16s: A, i32s: B, logits: F) -> Self {
        Q15TinyState { dims, s, i16s, i32s, logits }
    }

    /// A runner on this memory; None when a buffer is too short.
    pub fn runner(&mut self) -> Option<Q15TinyRunner<'_>> {
        Q15TinyRunner::new(self.i16s.as_mut(), self.i32s.as_mut(), self.logits.as_mut(), &self.dims, self.s)
    }
}
