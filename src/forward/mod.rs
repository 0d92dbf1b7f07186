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
use crate::kernels::attention::{attend_channel, clear_slots, insert, slot_probs};
use crate::kernels::matvec::{decode, embed_row, matvec_batch_accel, Accel};
use crate::kernels::{argmax, layer_norm};
use crate::math::{ln_f64, sqrtf, tanhf};

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
    /// Keys, transposed: DH rows of S (so scores vectorize across keys).
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
    /// Layer l's memory.
    fn layer(&mut self, l: usize) -> LayerMem<'_>;
}

/// Per-call scratch.
pub struct Scratch<'w> {
    /// (K - 1 + chunk) normalized rows.
    pub h: &'w mut [f32],
    /// chunk x DH queries.
    pub q: &'w mut [f32],
    /// chunk x 3 router values.
    pub r: &'w mut [f32],
    /// chunk x TOP_K slot scores, then probabilities.
    pub slot_p: &'w mut [f32],
    /// chunk x TOP_K slot indices.
    pub slot_i: &'w mut [f32],
    /// Positions per chunk.
    pub chunk: usize,
    /// Vector units, asked once per call.
    pub accel: Accel,
}

impl Scratch<'_> {
    /// Floats of scratch for these dimensions.
    pub fn floats(dims: &Dims, chunk: usize) -> usize {
        (dims.kernel_size - 1 + chunk) * dims.d_model
            + chunk * dims.d_head
            + chunk * 3
            + 2 * chunk * dims.top_k
    }

    /// Splits `buf` into scratch; None when too small.
    pub fn split<'b>(buf: &'b mut [f32], dims: &Dims, chunk: usize) -> Option<(Scratch<'b>, &'b mut [f32])> {
        let (h, rest) = take(buf, (dims.kernel_size - 1 + chunk) * dims.d_model)?;
        let (q, rest) = take(rest, chunk * dims.d_head)?;
        let (r, rest) = take(rest, chunk * 3)?;
        let (slot_p, rest) = take(rest, chunk * dims.top_k)?;
        let (slot_i, rest) = take(rest, chunk * dims.top_k)?;
        Some((Scratch { h, q, r, slot_p, slot_i, chunk, accel: Accel::detect() }, rest))
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

/// Entropy (nats) of three probabilities, -sum p ln p, 0 ln 0 = 0.
pub fn entropy3(p: &[f32]) -> f32 {
    let mut h = 0.0f64;
    for &v in p.iter().take(3) {
        let v = v as f64;
        if v > 0.0 {
            h -= v * ln_f64(v);
        }
    }
    h as f32
}

/// Runs every layer over positions p0..n of `tokens` (n <= S), reading
/// x rows 0..p0 as already final for... nothing: each layer's stored state for
/// positions < p0 must come from an earlier call on the same prefix.
/// Afterwards x rows p0..n hold the final residual stream.
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
    let dims = model.dims;
    let (d, dh, kk, topk) = (dims.d_model, dims.d_head, dims.kernel_size, dims.top_k);
    let chunk = sc.chunk.max(1);
    let hist_rows = kk - 1;
    for t in p0..n {
        if let Some(row) = x.get_mut(t * d..t * d + d) {
            embed_row(&model.embed, tokens.id(t, dims.vocab), row);
        }
    }
    let inv_sqrt_dh = 1.0 / sqrtf(dh as f32);
    for l in 0..dims.n_layers {
        let blk = model.block(l);
        let mem = layers.layer(l);
        let s_max = mem.k.len().checked_div(dh).unwrap_or(0);
        if p0 == 0 {
            for (c, th) in mem.tanh_a.iter_mut().enumerate() {
                *th = tanhf(blk.ssm.a.get(c));
            }
            for v in mem.hs.iter_mut() {
                *v = 0.0;
            }
        }
        // Rows 0..K-1 of h hold positions p0-K+1 .. p0-1.
        let hl = hist_rows * d;
        if let (Some(dst), Some(src)) = (sc.h.get_mut(..hl), mem.hist.get(..hl)) {
            dst.copy_from_slice(src);
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
            let hc = &sc.h[hl..hl + m * d];
            let acc = sc.accel;
            matvec_batch_accel(acc, &blk.router, hc, d, m, sc.r, 3);
            // Keys go through the query buffer into the transposed cache.
            matvec_batch_accel(acc, &blk.wk, hc, d, m, sc.q, dh);
            for i in 0..m {
                for dd in 0..dh {
                    if let (Some(dst), Some(&v)) = (mem.k.get_mut(dd * s_max + c0 + i), sc.q.get(i * dh + dd)) {
                        *dst = v;
                    }
                }
            }
            matvec_batch_accel(acc, &blk.wq, hc, d, m, sc.q, dh);
            if let Some(vdst) = mem.v.get_mut(c0 * d..(c0 + m) * d) {
                matvec_batch_accel(acc, &blk.wv, hc, d, m, vdst, d);
            }
            // Router probabilities and attention slots for each position.
            for i in 0..m {
                let t = c0 + i;
                let Some(r) = sc.r.get_mut(i * 3..i * 3 + 3) else { continue };
                crate::kernels::softmax(r);
                // Entropies cost three logarithms: only where someone keeps them.
                let want_all = ent.all.len() > t * dims.n_layers + l;
                if t + 1 == n || want_all {
                    let h = entropy3(r);
                    if t + 1 == n {
                        if let Some(e) = ent.last.get_mut(l) {
                            *e = h;
                        }
                    }
                    if let Some(e) = ent.all.get_mut(t * dims.n_layers + l) {
                        *e = h;
                    }
                }
                let keff = topk.min(t + 1);
                let (Some(q), Some(sp), Some(si)) = (
                    sc.q.get(i * dh..i * dh + dh),
                    sc.slot_p.get_mut(i * topk..i * topk + keff),
                    sc.slot_i.get_mut(i * topk..i * topk + keff),
                ) else {
                    continue;
                };
                score_keys(q, mem.k, s_max, t, inv_sqrt_dh, sp, si);
                slot_probs(sp);
            }
            // Each position's kept value rows as integers (no float->int per channel).
            let mut rows = [NO_ROW; MAX_CHUNK * MAX_FAST_SLOTS];
            let fast_slots = topk <= MAX_FAST_SLOTS && m <= MAX_CHUNK;
            if fast_slots {
                for i in 0..m {
                    let keff = topk.min(c0 + i + 1);
                    for (s, &ix) in sc.slot_i.iter().skip(i * topk).take(keff).enumerate() {
                        if ix >= 0.0 {
                            rows[i * MAX_FAST_SLOTS + s] = ix as u32;
                        }
                    }
                }
            }
            // Mix, LANES channels at a time: fixed-size lane arrays let the
            // compiler use vector instructions; every lane keeps its own
            // SPEC expression. Conv rows are decoded once per block and chunk.
            let fast_taps = kk <= MAX_FAST_TAPS;
            let mut ch0 = 0;
            while ch0 < d {
                let nb = (d - ch0).min(LANES);
                let mut wf = [[0.0f32; LANES]; MAX_FAST_TAPS];
                let mut codes = [0i8; MAX_FAST_TAPS * LANES];
                if fast_taps {
                    // The block's conv rows are consecutive weights: one decode.
                    decode(&blk.conv, ch0 * kk, &mut codes[..nb * kk]);
                }
                let (mut th, mut bc, mut cc, mut hs) = ([0.0f32; LANES], [0.0f32; LANES], [0.0f32; LANES], [0.0f32; LANES]);
                for j in 0..nb {
                    let ch = ch0 + j;
                    if fast_taps {
                        for (wk, &c) in wf.iter_mut().zip(&codes[j * kk..j * kk + kk]) {
                            wk[j] = c as f32;
                        }
                    }
                    th[j] = mem.tanh_a.get(ch).copied().unwrap_or(0.0);
                    bc[j] = blk.ssm.b.get(ch);
                    cc[j] = blk.ssm.c_out.get(ch);
                    hs[j] = mem.hs.get(ch).copied().unwrap_or(0.0);
                }
                for i in 0..m {
                    let t = c0 + i;
                    let taps = kk.min(t + 1);
                    let at = (hist_rows + i) * d + ch0;
                    // local: tap k reads the normalized row of position t - k.
                    let mut local = [0.0f32; LANES];
                    if fast_taps {
                        for (k, wk) in wf.iter().enumerate().take(taps) {
                            let hr = load(sc.h, at - k * d, nb);
                            for j in 0..LANES {
                                let v = wk[j] * hr[j];
                                local[j] += if wk[j] != 0.0 { v } else { 0.0 };
                            }
                        }
                    } else {
                        for (j, l) in local.iter_mut().enumerate().take(nb) {
                            *l = conv_slow(&blk.conv, ch0 + j, taps, sc.h, at + j, d);
                        }
                    }
                    // state
                    let hv = load(sc.h, at, nb);
                    let mut state = [0.0f32; LANES];
                    for j in 0..LANES {
                        hs[j] = th[j] * hs[j] + bc[j] * hv[j];
                        state[j] = cc[j] * hs[j];
                    }
                    // sparse
                    let keff = topk.min(t + 1);
                    let mut sparse = [0.0f32; LANES];
                    if fast_slots {
                        let rs = &rows[i * MAX_FAST_SLOTS..i * MAX_FAST_SLOTS + keff.min(MAX_FAST_SLOTS)];
                        for (&row, &p) in rs.iter().zip(sc.slot_p.iter().skip(i * topk)) {
                            if row == NO_ROW {
                                continue;
                            }
                            let vr = load(mem.v, row as usize * d + ch0, nb);
                            for j in 0..LANES {
                                sparse[j] += p * vr[j];
                            }
                        }
                    } else if let (Some(p), Some(ix)) =
                        (sc.slot_p.get(i * topk..i * topk + keff), sc.slot_i.get(i * topk..i * topk + keff))
                    {
                        for (j, sv) in sparse.iter_mut().enumerate().take(nb) {
                            *sv = attend_channel(p, ix, mem.v, d, ch0 + j);
                        }
                    }
                    let (r0, r1, r2) = match sc.r.get(i * 3..i * 3 + 3) {
                        Some(r) => (r[0], r[1], r[2]),
                        None => (0.0, 0.0, 0.0),
                    };
                    let scale = blk.conv.scale;
                    let xr = load(x, t * d + ch0, nb);
                    let mut out = [0.0f32; LANES];
                    for j in 0..LANES {
                        out[j] = xr[j] + ((r0 * (local[j] * scale) + r1 * state[j]) + r2 * sparse[j]);
                    }
                    store(x, t * d + ch0, nb, &out);
                }
                store(mem.hs, ch0, nb, &hs);
                ch0 += nb;
            }
            // Keep the last K-1 normalized rows in front for the next chunk.
            if hist_rows > 0 {
                sc.h.copy_within(m * d..(m + hist_rows) * d, 0);
            }
            c0 += m;
        }
        if let (Some(dst), Some(src)) = (mem.hist.get_mut(..hl), sc.h.get(..hl)) {
            dst.copy_from_slice(src);
        }
    }
}

/// Scores keys 0..=t of a transposed key cache (row d holds every position's
/// d-th key value, `s_max` apart) and keeps the top slots. Each key's score
/// is its own sequential sum over d, computed LANES keys at a time.
fn score_keys(q: &[f32], kt: &[f32], s_max: usize, t: usize, inv_sqrt_dh: f32, score: &mut [f32], idx: &mut [f32]) {
    clear_slots(score, idx);
    let mut j0 = 0;
    while j0 <= t {
        let nb = (t + 1 - j0).min(LANES);
        let mut acc = [0.0f32; LANES];
        for (dd, &qd) in q.iter().enumerate() {
            let kr = load(kt, dd * s_max + j0, nb);
            for j in 0..LANES {
                acc[j] += qd * kr[j];
            }
        }
        for (j, &a) in acc.iter().enumerate().take(nb) {
            insert(score, idx, a * inv_sqrt_dh, j0 + j);
        }
        j0 += nb;
    }
}

/// Channels mixed together.
const LANES: usize = 8;

/// buf[at..at + nb] into lanes (zeros beyond nb or past the end).
#[inline(always)]
fn load(buf: &[f32], at: usize, nb: usize) -> [f32; LANES] {
    let mut r = [0.0f32; LANES];
    if nb == LANES {
        if let Some(s) = buf.get(at..at + LANES) {
            r.copy_from_slice(s);
            return r;
        }
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
            s.copy_from_slice(v);
            return;
        }
    }
    for (j, &x) in v.iter().enumerate().take(nb) {
        if let Some(o) = buf.get_mut(at + j) {
            *o = x;
        }
    }
}

/// Marks a slot without a key.
const NO_ROW: u32 = u32::MAX;
/// Chunk and top-k sizes up to these keep slot rows on the stack (256 bytes).
const MAX_CHUNK: usize = 8;
const MAX_FAST_SLOTS: usize = 8;

/// Kernel sizes up to this decode a conv row into a stack buffer.
const MAX_FAST_TAPS: usize = 16;

/// Conv accumulation for kernels longer than MAX_FAST_TAPS, decoding as it goes.
fn conv_slow(conv: &Tensor, ch: usize, taps: usize, h: &[f32], at: usize, stride: usize) -> f32 {
    let mut wc = [0i8; MAX_FAST_TAPS];
    let mut acc = 0.0f32;
    let mut k0 = 0;
    while k0 < taps {
        let len = (taps - k0).min(MAX_FAST_TAPS);
        decode(conv, ch * conv.cols + k0, &mut wc[..len]);
        for (j, &wk) in wc[..len].iter().enumerate() {
            if wk == 0 {
                continue;
            }
            let Some(&hv) = h.get(at.wrapping_sub((k0 + j) * stride)) else { continue };
            acc = match wk {
                1 => acc + hv,
                -1 => acc - hv,
                wk => acc + (wk as f32) * hv,
            };
        }
        k0 += len;
    }
    acc
}

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
