//! The forward passes: predict_next, generate and classify over a model view
//! and caller-provided memory.
//!
//! Layer-major, in chunks of positions: for each layer, each chunk of up to
//! `chunk` positions is normalized, projected by batched matvecs (each weight
//! decoded once per chunk), then conv, state and sparse pathways are mixed into
//! the residual stream. Every value keeps its own SPEC expression, so the
//! result is the same bits as the reference's position-by-position order.
//!
//! Two memory plans share this code: `lean` (one layer's caches, recomputed each
//! call) and `cached` (every layer's caches kept, so a call that extends the
//! previous token list computes only the new positions).

pub mod cached;
pub mod lean;
pub mod sample;

use crate::format::{Classifier, Dims, Model, Tensor};
use crate::kernels::attention::{slot_key, slot_probs};
#[cfg(not(atome_portable))]
use crate::kernels::attention::{clear_slots, insert};
use crate::kernels::matvec::{decode, embed_row, Accel};
#[cfg(not(atome_portable))]
use crate::kernels::matvec::{matvec_multi_accel, MvJob};
use crate::kernels::{argmax, layer_norm};
use crate::math::{lnf, sqrtf, tanhf};

/// A token list that may be two slices back to back (prompt + generated).
#[derive(Clone, Copy)]
pub struct Tokens<'a> {
    /// First part.
    pub head: &'a [i32],
    /// Second part.
    pub tail: &'a [i32],
}

impl<'a> Tokens<'a> {
    /// One slice.
    pub fn new(t: &'a [i32]) -> Self {
        Tokens { head: t, tail: &[] }
    }
    /// Total length.
    pub fn len(&self) -> usize {
        self.head.len() + self.tail.len()
    }
    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Raw id at i.
    pub fn raw(&self, i: usize) -> i32 {
        match self.head.get(i) {
            Some(&t) => t,
            None => self.tail.get(i - self.head.len()).copied().unwrap_or(0),
        }
    }
    /// The list without its first k tokens.
    pub fn skip(&self, k: usize) -> Tokens<'a> {
        if k <= self.head.len() {
            Tokens { head: &self.head[k..], tail: self.tail }
        } else {
            let k2 = (k - self.head.len()).min(self.tail.len());
            Tokens { head: &[], tail: &self.tail[k2..] }
        }
    }
    /// The last `s` tokens (the context window).
    pub fn window(&self, s: usize) -> Tokens<'a> {
        self.skip(self.len().saturating_sub(s))
    }
    /// Id at i as the model reads it: outside [0, vocab) reads as 0.
    pub fn id(&self, i: usize, vocab: usize) -> usize {
        let t = self.raw(i);
        if t < 0 || t as usize >= vocab {
            0
        } else {
            t as usize
        }
    }
}

/// One layer's stored state.
pub struct LayerMem<'w> {
    /// Keys: transposed, DH rows of S (so scores vectorize across keys);
    /// S rows of DH on microcontrollers (`atome_portable`: no copy, plain dots).
    pub k: &'w mut [f32],
    /// Values, S x D.
    pub v: &'w mut [f32],
    /// Normalized rows of the K-1 positions before the first new one.
    pub hist: &'w mut [f32],
    /// SSM hidden vector, D.
    pub hs: &'w mut [f32],
    /// tanh(a) of the layer, D: computed when the call starts at position 0,
    /// kept otherwise (it depends on the model only).
    pub tanh_a: &'w mut [f32],
}

/// Gives each layer's memory (the same memory for every layer in a lean state).
pub trait Layers {
    /// False for memory that keeps nothing across calls (then p0 is 0 and
    /// there are no history rows): the compiler drops that code.
    const KEEPS: bool = true;
    /// Layer l's memory.
    fn layer(&mut self, l: usize) -> LayerMem<'_>;
}

/// Per-call scratch.
pub struct Scratch<'w> {
    /// (K - 1 + chunk) normalized rows.
    pub h: &'w mut [f32],
    /// chunk x DH queries; once the chunk is scored, the conv weights of
    /// the channels being mixed (K x CONV_LANES floats).
    pub q: &'w mut [f32],
    /// chunk x 3 router values.
    pub r: &'w mut [f32],
    /// chunk x TOP_K slot scores (then probabilities), then chunk x TOP_K
    /// slot indices; before the scores, it may hold the chunk's keys.
    pub slots: &'w mut [f32],
    /// Positions per chunk.
    pub chunk: usize,
    /// Vector units, asked once per call.
    pub accel: Accel,
}

impl Scratch<'_> {
    /// Floats of scratch for these dimensions.
    pub fn floats(dims: &Dims, chunk: usize) -> usize {
        (dims.kernel_size - 1 + chunk) * dims.d_model
            + Self::q_floats(dims, chunk)
            + chunk * 3
            + 2 * chunk * dims.top_k
    }

    /// The query area: queries, then conv weights.
    fn q_floats(dims: &Dims, chunk: usize) -> usize {
        (chunk * dims.d_head).max(dims.kernel_size * CONV_LANES)
    }

    /// Splits `buf` into scratch; None when too small.
    pub fn split<'b>(buf: &'b mut [f32], dims: &Dims, chunk: usize) -> Option<(Scratch<'b>, &'b mut [f32])> {
        let (h, rest) = take(buf, (dims.kernel_size - 1 + chunk) * dims.d_model)?;
        let (q, rest) = take(rest, Self::q_floats(dims, chunk))?;
        let (r, rest) = take(rest, chunk * 3)?;
        let (slots, rest) = take(rest, 2 * chunk * dims.top_k)?;
        Some((Scratch { h, q, r, slots, chunk, accel: Accel::detect() }, rest))
    }
}

/// Splits n floats off the front of buf.
pub fn take(buf: &mut [f32], n: usize) -> Option<(&mut [f32], &mut [f32])> {
    if buf.len() < n {
        None
    } else {
        Some(buf.split_at_mut(n))
    }
}

/// Where router entropies go: `last` gets the last position's per layer;
/// `all` (when long enough) gets position-major rows of n_layers values,
/// indexed by absolute position.
pub struct Entropy<'e> {
    /// n_layers values.
    pub last: &'e mut [f32],
    /// positions x n_layers values, or empty.
    pub all: &'e mut [f32],
}

impl Entropy<'_> {
    /// Stores the entropy (nats) of router probabilities `r` of position t (of n)
    /// in layer l where it is kept: entropies cost three logarithms, so only
    /// there. Out of line: one copy however the caller's loops are compiled.
    #[inline(never)]
    fn keep(&mut self, r: &[f32], t: usize, n: usize, l: usize, n_layers: usize) {
        let at = t * n_layers + l;
        if t + 1 != n && self.all.len() <= at {
            return;
        }
        // -sum p ln p in binary32: p ln p of a probability below 2^-126
        // (smallest normal) is under 1e-36 and left out.
        let mut h = 0.0f32;
        for &v in r.iter().take(3) {
            if v >= f32::MIN_POSITIVE {
                h -= v * lnf(v);
            }
        }
        if t + 1 == n {
            if let Some(e) = self.last.get_mut(l) {
                *e = h;
            }
        }
        if let Some(e) = self.all.get_mut(at) {
            *e = h;
        }
    }
}

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
    #[cfg(not(atome_portable))]
    {
        if sc.accel.avx2() {
            // SAFETY: `Accel::detect` found AVX2 usable (CPU and OS support).
            unsafe { run_layers_avx2(model, tokens, p0, n, x, layers, sc, ent) };
            return;
        }
    }
    run_layers_impl::<L, Scalar8>(model, tokens, p0, n, x, layers, sc, ent)
}

/// `run_layers_impl` compiled with AVX2 enabled: the 8-lane loops become one
/// vector instruction each (lane-wise IEEE operations: the same bits; no FMA).
///
/// # Safety
/// AVX2 must be available.
#[cfg(not(atome_portable))]
#[target_feature(enable = "avx2")]
#[allow(clippy::too_many_arguments)]
unsafe fn run_layers_avx2<L: Layers>(
    model: &Model,
    tokens: &Tokens,
    p0: usize,
    n: usize,
    x: &mut [f32],
    layers: &mut L,
    sc: &mut Scratch,
    ent: &mut Entropy,
) {
    run_layers_impl::<L, Avx8>(model, tokens, p0, n, x, layers, sc, ent)
}

#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn run_layers_impl<L: Layers, S: Lanes8>(
    model: &Model,
    tokens: &Tokens,
    p0: usize,
    n: usize,
    x: &mut [f32],
    layers: &mut L,
    sc: &mut Scratch,
    ent: &mut Entropy,
) {
    let dims = model.dims;
    let (d, dh, kk, topk) = (dims.d_model, dims.d_head, dims.kernel_size, dims.top_k);
    let chunk = sc.chunk.max(1);
    let hist_rows = kk - 1;
    let p0 = if L::KEEPS { p0 } else { 0 };
    for t in p0..n {
        if let Some(row) = x.get_mut(t * d..t * d + d) {
            embed_row(&model.embed, tokens.id(t, dims.vocab), row);
        }
    }
    let inv_sqrt_dh = 1.0 / sqrtf(dh as f32);
    let n_layers = dims.n_layers;
    for l in 0..n_layers {
        let blk = model.block(l);
        let mem = layers.layer(l);
        #[cfg(not(atome_portable))]
        let s_max = mem.k.len().checked_div(dh).unwrap_or(0);
        if p0 == 0 {
            for (c, th) in mem.tanh_a.iter_mut().enumerate() {
                *th = tanhf(blk.ssm.a.get(c));
            }
            for v in mem.hs.iter_mut() {
                *v = 0.0;
            }
        }
        // Positions >= full0 are mixed into x; in the last layer only n-1 is
        // (the others only feed its keys, values, conv rows and SSM state).
        let full0 = if l + 1 == n_layers { n.saturating_sub(1) } else { 0 };
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
                    layer_norm(xr, &blk.norm, hr);
                }
            }
            // Chunk positions i >= i_full are mixed; the router is needed
            // there and wherever entropies are kept (a prefix of positions).
            let i_full = full0.saturating_sub(c0).min(m);
            let i_rout = if ent.all.len() > c0 * n_layers + l { 0 } else { i_full };
            let hc = sc.h.get(hl..hl + m * d).unwrap_or(&[]);
            let acc = sc.accel;
            // Projections. Matrices over the same positions share one matvec
            // call (one set of column tables). Keys go through a buffer (the
            // slot area when they fit and the queries are computed in the
            // same call, else the query buffer) into the transposed cache.
            let vdst = mem.v.get_mut(c0 * d..(c0 + m) * d).unwrap_or(&mut []);
            // On microcontrollers one matrix at a time costs the same and
            // takes less code: keys straight into their cache rows (the
            // cache is S x DH there) and values, then router and queries.
            #[cfg(atome_portable)]
            {
                project(acc, &blk.wk, hc, 0, m, mem.k.get_mut(c0 * dh..).unwrap_or(&mut []), dh);
                project(acc, &blk.wv, hc, 0, m, vdst, d);
            }
            #[cfg(not(atome_portable))]
            let keys_in_slots = i_full == 0 && m * dh <= sc.slots.len();
            #[cfg(not(atome_portable))]
            {
                let r_part = sc.r.get_mut(i_rout * 3..).unwrap_or(&mut []);
                let wk = &blk.wk;
                if keys_in_slots {
                    // i_full == 0, so i_rout == 0 too: everything at once.
                    let mut jobs = [
                        MvJob { w: wk, out: &mut *sc.slots, ostride: dh },
                        MvJob { w: &blk.wv, out: vdst, ostride: d },
                        MvJob { w: &blk.router, out: r_part, ostride: 3 },
                        MvJob { w: &blk.wq, out: &mut *sc.q, ostride: dh },
                    ];
                    matvec_multi_accel(acc, &mut jobs, hc, d, m);
                } else if i_rout == 0 {
                    let mut jobs = [
                        MvJob { w: wk, out: &mut *sc.q, ostride: dh },
                        MvJob { w: &blk.wv, out: vdst, ostride: d },
                        MvJob { w: &blk.router, out: r_part, ostride: 3 },
                    ];
                    matvec_multi_accel(acc, &mut jobs, hc, d, m);
                } else {
                    let mut jobs = [MvJob { w: wk, out: &mut *sc.q, ostride: dh }, MvJob { w: &blk.wv, out: vdst, ostride: d }];
                    matvec_multi_accel(acc, &mut jobs, hc, d, m);
                }
            }
            #[cfg(not(atome_portable))]
            {
                let kbuf: &[f32] = if keys_in_slots { sc.slots } else { sc.q };
                if s_max > 0 && dh > 0 {
                    for (dd, krow) in mem.k.chunks_exact_mut(s_max).take(dh).enumerate() {
                        let Some(dst) = krow.get_mut(c0..c0 + m) else { continue };
                        for (i, o) in dst.iter_mut().enumerate() {
                            if let Some(&v) = kbuf.get(i * dh + dd) {
                                *o = v;
                            }
                        }
                    }
                }
            }
            #[cfg(atome_portable)]
            {
                project(acc, &blk.router, hc, i_rout, m, sc.r, 3);
                project(acc, &blk.wq, hc, i_full, m, sc.q, dh);
            }
            #[cfg(not(atome_portable))]
            if !keys_in_slots && i_full < m {
                // Queries (and the router where not done above) of positions i_full..m.
                if let (Some(xs), Some(qo)) = (hc.get(i_full * d..), sc.q.get_mut(i_full * dh..)) {
                    if i_rout == i_full && i_rout > 0 {
                        let ro = sc.r.get_mut(i_rout * 3..).unwrap_or(&mut []);
                        let mut jobs = [MvJob { w: &blk.router, out: ro, ostride: 3 }, MvJob { w: &blk.wq, out: qo, ostride: dh }];
                        matvec_multi_accel(acc, &mut jobs, xs, d, m - i_full);
                    } else {
                        matvec_multi_accel(acc, &mut [MvJob { w: &blk.wq, out: qo, ostride: dh }], xs, d, m - i_full);
                    }
                }
            }
            // Router probabilities (and entropies where kept).
            for i in i_rout..m {
                let t = c0 + i;
                let Some(r) = sc.r.get_mut(i * 3..i * 3 + 3) else { continue };
                crate::kernels::softmax(r);
                ent.keep(r, t, n, l, n_layers);
            }
            // Attention slots of the mixed positions.
            let (slot_p, slot_i) = sc.slots.split_at_mut((chunk * topk).min(sc.slots.len()));
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
                #[cfg(not(atome_portable))]
                score_keys::<S>(q, mem.k, s_max, t, inv_sqrt_dh, sp, si);
                #[cfg(atome_portable)]
                crate::kernels::score_topk(q, mem.k, dh, t, inv_sqrt_dh, sp, si);
                slot_probs(sp);
            }
            // Mix, LANES channels at a time: fixed-size lane arrays let the
            // compiler use vector instructions; every lane keeps its own
            // SPEC expression. Conv rows are decoded once per block and chunk.
            let mut ch0 = 0;
            while ch0 < d {
                let nb = (d - ch0).min(LANES);
                // Conv weights per tap as lane floats, in the query area
                // (the queries are no longer needed).
                if i_full < m {
                    conv_lanes(&blk.conv, ch0, nb, kk, sc.q);
                }
                let th = S::ld(mem.tanh_a, ch0, nb);
                let mut hs = S::ld(mem.hs, ch0, nb);
                let bc = S::ld_bytes(blk.ssm.b.bytes(), ch0, nb);
                let cc = S::ld_bytes(blk.ssm.c_out.bytes(), ch0, nb);
                let scale = S::splat(blk.conv.scale);
                for i in 0..m {
                    let t = c0 + i;
                    let at = (hist_rows + i) * d + ch0;
                    // state
                    let hv = S::ld(sc.h, at, nb);
                    hs = th.mul(hs).add(bc.mul(hv));
                    if i < i_full {
                        continue;
                    }
                    let state = cc.mul(hs);
                    // local: tap k reads the normalized row of position t - k.
                    let mut local = S::zero();
                    for k in 0..kk.min(t + 1) {
                        let wk = S::ld(sc.q, k * LANES, LANES);
                        let hr = S::ld(sc.h, at - k * d, nb);
                        local = local.add(wk.mul_nz(hr));
                    }
                    // sparse: slots in order, empty ones skipped.
                    let keff = topk.min(t + 1);
                    let mut sparse = S::zero();
                    let at_s = i * topk..i * topk + keff;
                    if let (Some(ps), Some(is)) = (slot_p.get(at_s.clone()), slot_i.get(at_s)) {
                        for (&p, &ix) in ps.iter().zip(is) {
                            if let Some(row) = slot_key(ix) {
                                let vr = S::ld(mem.v, row * d + ch0, nb);
                                sparse = sparse.add(S::splat(p).mul(vr));
                            }
                        }
                    }
                    let (r0, r1, r2) = match sc.r.get(i * 3..i * 3 + 3) {
                        Some(r) => (r[0], r[1], r[2]),
                        None => (0.0, 0.0, 0.0),
                    };
                    let xr = S::ld(x, t * d + ch0, nb);
                    let out = xr.add(S::splat(r0).mul(local.mul(scale)).add(S::splat(r1).mul(state)).add(S::splat(r2).mul(sparse)));
                    S::st(out, x, t * d + ch0, nb);
                }
                S::st(hs, mem.hs, ch0, nb);
                ch0 += nb;
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
        if let (true, Some(dst), Some(src)) = (L::KEEPS, mem.hist.get_mut(..hl), sc.h.get(..hl)) {
            copy(dst, src);
        }
    }
}

/// out[i * ostride + j] = (W xs_i)[j] for the rows xs_i (W.cols floats each)
/// of positions from..m.
#[cfg(atome_portable)]
#[inline(never)]
fn project(acc: Accel, w: &Tensor, xs: &[f32], from: usize, m: usize, out: &mut [f32], ostride: usize) {
    let (xs, out) = (xs.get(from * w.cols..).unwrap_or(&[]), out.get_mut(from * ostride..).unwrap_or(&mut []));
    crate::kernels::matvec::matvec_batch_accel(acc, w, xs, w.cols, m.saturating_sub(from), out, ostride);
}

/// dst[i] = src[i] for the common length (copy_from_slice would link a
/// panic path for a length mismatch that cannot happen here).
#[inline]
fn copy(dst: &mut [f32], src: &[f32]) {
    for (d, &s) in dst.iter_mut().zip(src) {
        *d = s;
    }
}

/// Scores keys 0..=t of a transposed key cache (row d holds every position's
/// d-th key value, `s_max` apart) and keeps the top slots. Each key's score
/// is its own sequential sum over d, computed LANES keys at a time.
#[inline(always)]
#[cfg(not(atome_portable))]
fn score_keys<S: Lanes8>(q: &[f32], kt: &[f32], s_max: usize, t: usize, inv_sqrt_dh: f32, score: &mut [f32], idx: &mut [f32]) {
    clear_slots(score, idx);
    let mut j0 = 0;
    while j0 <= t {
        let nb = (t + 1 - j0).min(LANES);
        let mut acc = S::zero();
        for (dd, &qd) in q.iter().enumerate() {
            let kr = S::ld(kt, dd * s_max + j0, nb);
            acc = acc.add(S::splat(qd).mul(kr));
        }
        let mut a = [0.0f32; LANES];
        acc.store(&mut a);
        for (j, &a) in a.iter().enumerate().take(nb) {
            insert(score, idx, a * inv_sqrt_dh, j0 + j);
        }
        j0 += nb;
    }
}

/// Eight f32 lanes: a plain array (any target) or one AVX register. Every
/// operation is lane-wise IEEE binary32 (no fused multiply-add), so both give
/// the same bits.
trait Lanes8: Copy {
    fn zero() -> Self;
    fn splat(v: f32) -> Self;
    fn load(a: &[f32; LANES]) -> Self;
    fn store(self, a: &mut [f32; LANES]);
    fn add(self, o: Self) -> Self;
    fn mul(self, o: Self) -> Self;
    /// self * h in lanes where self != 0.0, +0.0 elsewhere.
    fn mul_nz(self, h: Self) -> Self;

    /// buf[at..at + LANES] (lanes past nb may hold whatever follows; zeros
    /// past the end of buf).
    #[inline(always)]
    fn ld(buf: &[f32], at: usize, nb: usize) -> Self {
        match buf.get(at..at.wrapping_add(LANES)).map(<&[f32; LANES]>::try_from) {
            Some(Ok(a)) => Self::load(a),
            _ => Self::load(&load(buf, at, nb)),
        }
    }

    /// Lanes 0..nb into buf[at..].
    #[inline(always)]
    fn st(self, buf: &mut [f32], at: usize, nb: usize) {
        if nb == LANES {
            if let Some(Ok(a)) = buf.get_mut(at..at.wrapping_add(LANES)).map(<&mut [f32; LANES]>::try_from) {
                self.store(a);
                return;
            }
        }
        let mut a = [0.0f32; LANES];
        self.store(&mut a);
        store(buf, at, nb, &a);
    }

    /// Little-endian floats ch0..ch0 + nb of a byte array (zeros past its end).
    #[inline(always)]
    fn ld_bytes(b: &[u8], ch0: usize, nb: usize) -> Self {
        let mut a = [0.0f32; LANES];
        if let Some(Ok(raw)) = b.get(4 * ch0..4 * ch0 + 4 * LANES).map(<&[u8; 4 * LANES]>::try_from) {
            for (v, &c) in a.iter_mut().zip(raw.as_chunks::<4>().0) {
                *v = f32::from_le_bytes(c);
            }
            return Self::load(&a);
        }
        for (j, v) in a.iter_mut().enumerate().take(nb) {
            let at = 4 * (ch0 + j);
            if let Some(c) = b.get(at..at + 4) {
                *v = f32::from_le_bytes([c[0], c[1], c[2], c[3]]);
            }
        }
        Self::load(&a)
    }
}

/// Lanes as an array (the compiler may vectorize it).
#[derive(Clone, Copy)]
struct Scalar8([f32; LANES]);

impl Lanes8 for Scalar8 {
    #[inline(always)]
    fn zero() -> Self {
        Scalar8([0.0; LANES])
    }
    #[inline(always)]
    fn splat(v: f32) -> Self {
        Scalar8([v; LANES])
    }
    #[inline(always)]
    fn load(a: &[f32; LANES]) -> Self {
        Scalar8(*a)
    }
    #[inline(always)]
    fn store(self, a: &mut [f32; LANES]) {
        *a = self.0;
    }
    #[inline(always)]
    fn add(self, o: Self) -> Self {
        let mut r = self.0;
        for (r, o) in r.iter_mut().zip(o.0) {
            *r += o;
        }
        Scalar8(r)
    }
    #[inline(always)]
    fn mul(self, o: Self) -> Self {
        let mut r = self.0;
        for (r, o) in r.iter_mut().zip(o.0) {
            *r *= o;
        }
        Scalar8(r)
    }
    #[inline(always)]
    fn mul_nz(self, h: Self) -> Self {
        let mut r = [0.0f32; LANES];
        for ((r, w), h) in r.iter_mut().zip(self.0).zip(h.0) {
            let v = w * h;
            *r = if w != 0.0 { v } else { 0.0 };
        }
        Scalar8(r)
    }
}

/// Lanes in one AVX register. Only `run_layers_avx2` (entered only where
/// AVX2 is available) uses this type, so every method runs with AVX present.
#[cfg(not(atome_portable))]
#[derive(Clone, Copy)]
struct Avx8(core::arch::x86_64::__m256);

#[cfg(not(atome_portable))]
impl Lanes8 for Avx8 {
    // SAFETY (every method): AVX is available, see the type's comment; the
    // loads and stores go through references to 8 floats.
    #[inline(always)]
    fn zero() -> Self {
        Avx8(unsafe { core::arch::x86_64::_mm256_setzero_ps() })
    }
    #[inline(always)]
    fn splat(v: f32) -> Self {
        Avx8(unsafe { core::arch::x86_64::_mm256_set1_ps(v) })
    }
    #[inline(always)]
    fn load(a: &[f32; LANES]) -> Self {
        Avx8(unsafe { core::arch::x86_64::_mm256_loadu_ps(a.as_ptr()) })
    }
    #[inline(always)]
    fn store(self, a: &mut [f32; LANES]) {
        unsafe { core::arch::x86_64::_mm256_storeu_ps(a.as_mut_ptr(), self.0) }
    }
    #[inline(always)]
    fn add(self, o: Self) -> Self {
        Avx8(unsafe { core::arch::x86_64::_mm256_add_ps(self.0, o.0) })
    }
    #[inline(always)]
    fn mul(self, o: Self) -> Self {
        Avx8(unsafe { core::arch::x86_64::_mm256_mul_ps(self.0, o.0) })
    }
    #[inline(always)]
    fn mul_nz(self, h: Self) -> Self {
        use core::arch::x86_64::*;
        // NEQ_UQ is Rust's `!=` (true for NaN too).
        Avx8(unsafe {
            let nz = _mm256_cmp_ps::<_CMP_NEQ_UQ>(self.0, _mm256_setzero_ps());
            _mm256_and_ps(nz, _mm256_mul_ps(self.0, h.0))
        })
    }
}

/// Channels mixed together.
// 8 lanes fill an AVX register on x86-64; elsewhere the lanes are scalar
// code, and one lane keeps the stack frame small for microcontrollers.
#[cfg(not(atome_portable))]
const LANES: usize = 8;
#[cfg(atome_portable)]
const LANES: usize = 1;

/// buf[at..at + nb] into lanes (zeros beyond nb or past the end).
#[inline(always)]
fn load(buf: &[f32], at: usize, nb: usize) -> [f32; LANES] {
    let mut r = [0.0f32; LANES];
    // Lanes past nb may hold whatever follows: callers never use them.
    if let Some(s) = buf.get(at..at + LANES) {
        copy(&mut r, s);
        return r;
    }
    for (j, v) in r.iter_mut().enumerate().take(nb) {
        *v = buf.get(at + j).copied().unwrap_or(0.0);
    }
    r
}

/// Lanes 0..nb into buf[at..].
#[inline(always)]
fn store(buf: &mut [f32], at: usize, nb: usize, v: &[f32; LANES]) {
    if nb == LANES {
        if let Some(s) = buf.get_mut(at..at + LANES) {
            copy(s, v);
            return;
        }
    }
    for (j, &x) in v.iter().enumerate().take(nb) {
        if let Some(o) = buf.get_mut(at + j) {
            *o = x;
        }
    }
}

/// Lanes of conv weights the query area has room for (the largest LANES).
const CONV_LANES: usize = 8;

/// Conv weights of channels ch0..ch0+nb (kk taps each) as lane floats per
/// tap: out[k * LANES + j] = weight (ch0 + j, k); lanes past nb are 0.
// Not inlined on microcontrollers: keeps its buffer out of run_layers' frame.
#[cfg_attr(not(atome_portable), inline(always))]
#[cfg_attr(atome_portable, inline(never))]
fn conv_lanes(conv: &Tensor, ch0: usize, nb: usize, kk: usize, out: &mut [f32]) {
    #[cfg(not(atome_portable))]
    if matches!(conv.packing, crate::format::Packing::Trit2) && kk <= 12 {
        // Each channel's kk 2-bit codes from one 32-bit little-endian word
        // (shifted to its first code), then tap by tap across the lanes.
        let mut words = [0u32; LANES];
        for (j, wj) in words.iter_mut().enumerate().take(nb) {
            let n = (ch0 + j) * kk;
            let at = n / 4;
            let raw = match conv.data.get(at..at + 4) {
                Some(s) => u32::from_le_bytes([s[0], s[1], s[2], s[3]]),
                None => {
                    let by = |i: usize| conv.data.get(at + i).copied().unwrap_or(0) as u32;
                    by(0) | by(1) << 8 | by(2) << 16 | by(3) << 24
                }
            };
            *wj = raw >> (2 * (n % 4));
        }
        for (k, fk) in out.chunks_exact_mut(LANES).take(kk).enumerate() {
            for (v, &wj) in fk.iter_mut().zip(words.iter()) {
                // code 01 -> +1, 11 -> -1, 00 and 10 -> 0.
                let c = (wj >> (2 * k)) & 3;
                *v = ((c & 1) as i32 * (1 - (c & 2) as i32)) as f32;
            }
        }
        return;
    }
    // Any packing and kernel size; lanes past nb read as 0.
    let mut codes = [0i8; CONV_CODES];
    let total = nb * kk;
    if !cfg!(atome_portable) && total <= CONV_CODES {
        // The nb channels' weights are contiguous: one decode call (base-3
        // decoding has a per-call cost), channel rows to their lanes.
        let codes = &mut codes[..total];
        decode(conv, ch0 * kk, codes);
        for (j, row) in codes.chunks_exact(kk.max(1)).enumerate() {
            for (o, &c) in out.chunks_exact_mut(LANES).zip(row) {
                if let Some(v) = o.get_mut(j) {
                    *v = c as f32;
                }
            }
        }
        for o in out.chunks_exact_mut(LANES).take(kk) {
            for v in o.iter_mut().skip(nb) {
                *v = 0.0;
            }
        }
        return;
    }
    // Channel by channel (microcontrollers: one lane; elsewhere kernels
    // longer than the buffer allows at once).
    for j in 0..LANES {
        let mut k0 = 0;
        while k0 < kk {
            let len = (kk - k0).min(CONV_CODES);
            let codes = &mut codes[..len];
            if j < nb {
                decode(conv, (ch0 + j) * kk + k0, codes);
            } else {
                codes.fill(0);
            }
            for (k, &c) in codes.iter().enumerate() {
                if let Some(o) = out.get_mut((k0 + k) * LANES + j) {
                    *o = c as f32;
                }
            }
            k0 += len;
        }
    }
}

/// Conv weights decoded per block (a stack buffer).
#[cfg(not(atome_portable))]
const CONV_CODES: usize = 128;
#[cfg(atome_portable)]
const CONV_CODES: usize = 16;

/// Final LayerNorm of one residual row into `h` (D floats).
pub fn final_norm(model: &Model, xrow: &[f32], h: &mut [f32]) {
    layer_norm(xrow, &model.final_norm, h);
}

/// logits = unembed(h); returns the argmax.
pub fn head(w: &Tensor, h: &[f32], logits: &mut [f32]) -> usize {
    crate::kernels::matvec::matvec_batch(w, h, w.cols, 1, logits, w.rows);
    argmax(logits.get(..w.rows).unwrap_or(logits))
}

/// Classifier head on the final normalized row: writes n_classes logits into
/// `out` when given and returns the argmax (strict `>` from class 0),
/// computed a few rows at a time so no n_classes buffer is needed.
pub fn classify_head(clf: &Classifier, h: &[f32], mut out: Option<&mut [f32]>) -> usize {
    let w = &clf.head;
    let mut best = 0;
    let mut best_v = 0.0f32;
    let mut buf = [0.0f32; 8];
    let mut j0 = 0;
    while j0 < w.rows {
        let m = (w.rows - j0).min(buf.len());
        crate::kernels::matvec::matvec_rows_at(w, j0, h, &mut buf[..m]);
        for (i, &v) in buf[..m].iter().enumerate() {
            let j = j0 + i;
            if j == 0 || v > best_v {
                best = j;
                best_v = v;
            }
            if let Some(o) = out.as_deref_mut().and_then(|o| o.get_mut(j)) {
                *o = v;
            }
        }
        j0 += m;
    }
    best
}
