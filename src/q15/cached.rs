//! The q15 cached plan (docs/Q15.md, "Lean and cached"): every layer's keys,
//! values, last K - 1 normalized rows and SSM state are kept, in int16 (int32
//! for the SSM state) with one exponent per row, with the token list they
//! belong to. A call whose window extends the stored one runs only the new
//! positions, each through every layer with one-position work buffers.
//! Every row has its own exponent and every sum is exact, so this order gives
//! the bits of the lean plan's layer-at-a-time order.
//!
//! This is a child of `engine` so that it calls the lean plan's kernels
//! (LayerNorm, SSM step, conv, attention, mix, head) themselves.
use super::super::params::{Area, LayerQ, PSrc, Scale, Vals, LAYER_WORDS};
use super::super::{cached_param_ints, take};
use super::*;
use crate::format::{Classifier, Dims, Floats, Model, Tensor};
use crate::forward::cached::{key, CacheHeader, CACHE_MAGIC};
use crate::engine::Engine;
use crate::forward::Tokens;
use crate::kernels::isa::Accel;
use crate::kernels::q15::matvec::{bytes_pay, matvec_q_bytes, BYTES_HERE};
use crate::kernels::q15::{matvec_q_multi_checked, trit2_no_code10, MvJobQ};

/// Element counts of a q15 cached state's two areas.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Q15CachedLayout {
    /// int16 elements: per layer keys S x DH, values S x D, the last K - 1
    /// normalized rows and one exponent per row of each; then the work rows
    /// (the K-row conv ring, residual D, query DH, sparse output D) and
    /// their exponents.
    pub i16s: usize,
    /// int32 elements: per layer the SSM state (D) and its exponent; then the
    /// matvec outputs (D + 2 DH + 3), attention slots, the last position's
    /// entropies, [`cached_param_ints`], and the model's stored scalars
    /// ([`stored_words`]).
    pub i32s: usize,
}

impl Q15CachedLayout {
    /// The counts for these dimensions and window s.
    pub const fn new(dims: &Dims, s: usize) -> Q15CachedLayout {
        let (d, dh, k, l) = (dims.d_model, dims.d_head, dims.kernel_size, dims.n_layers);
        Q15CachedLayout {
            i16s: l * Self::layer16(dims, s) + d + 1 + k * d + k + dh + d,
            i32s: l * (d + 1) + (d + 2 * dh + 3) + 4 * dims.top_k + l + cached_param_ints(dims) + stored_words(dims),
        }
    }

    /// int16 elements of one layer's cache.
    const fn layer16(dims: &Dims, s: usize) -> usize {
        let (d, dh, k) = (dims.d_model, dims.d_head, dims.kernel_size);
        s * dh + s + s * d + s + (k - 1) * d + (k - 1)
    }

    /// Bytes of the two areas, the logits and the cache header (three
    /// words and S ids).
    pub const fn bytes(&self, dims: &Dims, s: usize) -> usize {
        2 * self.i16s + 4 * self.i32s + 4 * dims.vocab + 12 + 4 * s
    }
}

/// int32 words of the scalars a cached state keeps of its model: per layer
/// [`LayerQ::words`], then the final LayerNorm's two block exponents, then
/// the marker of the kept parameter vectors ([`KEPT_TAG`]). Found once when
/// the cache starts from position 0, they spare every new position the
/// blob scans.
pub const fn stored_words(dims: &Dims) -> usize {
    dims.n_layers * LAYER_WORDS + 3
}

/// Value-cache rows per layer that hold the layer's kept parameter vectors
/// while the window has not reached them: gamma, beta, the SSM gain and
/// tanh(a), D int32 each (8 D int16: two rows each, in that order), and
/// one row more, so that 4 D aligned words fit at any 2-byte alignment of
/// the rows.
const PROWS: usize = 9;

/// Layer 0's value-cache rows below the kept parameter vectors' (from S -
/// PROWS - FROWS on) that hold the final LayerNorm's gamma and beta while
/// the window has not reached them: D int32 each, and one row more for
/// the alignment.
const FROWS: usize = 5;

/// The marker word's bit 14: layer 0's value rows from [`fin_from`] on
/// hold the final LayerNorm's vectors (kept with the layers' vectors).
const FIN_KEPT: u32 = 0x4000;

/// The first value-cache row of the kept final-norm vectors: S - PROWS -
/// FROWS, or None for a window too short to spare them.
fn fin_from(s: usize) -> Option<usize> {
    s.checked_sub(PROWS + FROWS).filter(|&t| t > 0)
}

/// The marker word's upper half while the value-cache rows from S - PROWS
/// on hold the kept vectors (any other value: they do not). They are kept
/// only when the cache starts over, and a cache only grows from there, so
/// at position t the rows from t on are still whole.
const KEPT_TAG: u32 = 0x5052_0000;

/// The marker word's bit 15: no payload of the blocks' projections or of
/// the head holds the Trit2 code 10 (found with the scalars), so that
/// their byte tables need only the other bytes' entries.
const CLEAN: u32 = 0x8000;

/// Where a position stands in its call ([`Q15CachedRunner::position`]; one
/// byte, as a bool: no more stack on the deepest call path).
#[derive(Clone, Copy, PartialEq, Eq)]
enum At {
    /// Before the call's last position.
    Inner,
    /// The call's last position; its router entropies are kept.
    Last,
    /// The last position of a generation step before the last: the next
    /// step's entropies replace its own, so none are computed.
    LastNoEntropy,
}

/// The first value-cache row of the kept parameter vectors: S - PROWS, or
/// None for a window too short to spare them.
fn kept_from(s: usize) -> Option<usize> {
    s.checked_sub(PROWS).filter(|&t| t > 0)
}

/// Whether the marker word `m` says the vectors are kept ([`KEPT_TAG`]).
fn kept_mark(m: i32) -> bool {
    m as u32 & 0xFFFF_0000 == KEPT_TAG
}

/// Whether the marker word says [`CLEAN`].
fn clean_mark(lp: &[i32], l_n: usize) -> bool {
    lp.get(l_n * LAYER_WORDS + 2).is_some_and(|&m| m as u32 & CLEAN != 0)
}

/// Which kept parameter vectors position t may read, as `8 ts + v0` (ts:
/// their first row; vectors v0.. of gamma, beta, the SSM gain, tanh(a) are
/// whole: each starts at row ts + 2 v, which no position has written yet),
/// or 0 when none are kept. A layer's value row t is written after its
/// LayerNorm and SSM step, so a vector that starts at row t still serves
/// them. Every vector lives until the window reaches its rows: gamma the
/// shortest and tanh(a), the dearest to convert, the longest. (Out of
/// line: the position loop's frame is on the deepest call path.)
#[inline(never)]
fn kept_rows(lp: &[i32], l_n: usize, s: usize, t: usize) -> usize {
    let (Some(&m), Some(ts)) = (lp.get(l_n * LAYER_WORDS + 2), kept_from(s)) else { return 0 };
    // The first whole vector: the least v with ts + 2 v >= t (4: none).
    let v0 = t.saturating_sub(ts).div_ceil(2);
    if !kept_mark(m) || v0 >= 4 {
        return 0;
    }
    8 * ts + v0
}

/// The first `n` aligned int32 words of value-cache rows: the kept
/// vectors (a layer's gamma, beta, SSM gain and tanh(a) in its rows from
/// [`kept_from`] on, 4 D words; the final norm's gamma and beta in layer
/// 0's rows from [`fin_from`] on, 2 D words). None when the rows give
/// fewer (never for PROWS, or FROWS, rows of an int16 buffer).
fn kept_words(rows: &[i16], n: usize) -> Option<&[i32]> {
    // SAFETY: every bit pattern is a valid i32, and align_to yields only
    // aligned words inside `rows`, borrowed from it.
    let (_, w, _) = unsafe { rows.align_to::<i32>() };
    w.get(..n)
}

/// [`kept_words`], writable.
fn kept_words_mut(rows: &mut [i16], n: usize) -> Option<&mut [i32]> {
    // SAFETY: as in kept_words.
    let (_, w, _) = unsafe { rows.align_to_mut::<i32>() };
    w.get_mut(..n)
}

/// Layer l's value-cache rows `rows` as a range of the int16 caches
/// (after the layer's keys and their exponents).
fn value_rows(dims: &Dims, s: usize, l: usize, rows: core::ops::Range<usize>) -> core::ops::Range<usize> {
    let (d, v0) = (dims.d_model, l * Q15CachedLayout::layer16(dims, s) + s * dims.d_head + s);
    v0 + rows.start * d..v0 + rows.end * d
}

/// The work buffers as the engine's [`Bufs`] over one layer's keys, values
/// and SSM state (field by field: the parameter vectors may hold the
/// logits area meanwhile).
macro_rules! bufs {
    ($r:expr, $k:expr, $ek:expr, $v:expr, $ev:expr, $hs:expr) => {
        Bufs {
            x: &mut *$r.x,
            ex: &mut *$r.ex,
            k: $k,
            ek: $ek,
            v: $v,
            ev: $ev,
            ring: &mut *$r.ring,
            ering: &mut *$r.ering,
            q: &mut *$r.q,
            sparse: &mut *$r.sparse,
            hs: $hs,
            mv: &mut *$r.mv,
            slots: &mut *$r.slots,
            pa: &mut [],
            ent: &mut *$r.ent,
        }
    };
}

/// Runs the q15 engine in a caller's memory, cached plan.
pub struct Q15CachedRunner<'w> {
    /// Every layer's int16 caches.
    c16: &'w mut [i16],
    /// Every layer's SSM states.
    c32: &'w mut [i32],
    /// Residual row of the position in flight (the last position's after
    /// every layer between calls) and its exponent.
    x: &'w mut [i16],
    ex: &'w mut [i16],
    ring: &'w mut [i16],
    ering: &'w mut [i16],
    q: &'w mut [i16],
    sparse: &'w mut [i16],
    mv: &'w mut [i32],
    slots: &'w mut [i32],
    ent: &'w mut [i32],
    pa: &'w mut [i32],
    /// The model's stored scalars ([`stored_words`]).
    lp: &'w mut [i32],
    logits: &'w mut [f32],
    hd: CacheHeader<'w>,
    dims: Dims,
    s: usize,
    salt: u32,
}

impl<'w> Q15CachedRunner<'w> {
    /// A runner over `i16s`, `i32s` (at least [`Q15CachedLayout::new`]'s
    /// counts), `logits` (at least V) and a cache header whose token array
    /// holds `s` ids; None when one is too short or a dimension is 0.
    pub fn new(i16s: &'w mut [i16], i32s: &'w mut [i32], logits: &'w mut [f32], hd: CacheHeader<'w>, dims: &Dims, s: usize) -> Option<Self> {
        let (d, dh, k, l) = (dims.d_model, dims.d_head, dims.kernel_size, dims.n_layers);
        if d == 0 || dh == 0 || k == 0 || s == 0 || l == 0 || dims.top_k == 0 || dims.vocab == 0 || logits.len() < dims.vocab || hd.tokens.len() < s {
            return None;
        }
        // (The ring right after the caches: its rows and the kept ones
        // share their alignment, so copies between them go by words.)
        let (c16, r) = take(i16s, l * Q15CachedLayout::layer16(dims, s))?;
        let (ring, r) = take(r, k * d)?;
        let (x, r) = take(r, d)?;
        let (ex, r) = take(r, 1)?;
        let (ering, r) = take(r, k)?;
        let (q, r) = take(r, dh)?;
        let (sparse, _) = take(r, d)?;
        let (c32, r) = take(i32s, l * (d + 1))?;
        let (mv, r) = take(r, d + 2 * dh + 3)?;
        let (slots, r) = take(r, 4 * dims.top_k)?;
        let (ent, r) = take(r, l)?;
        let (pa, r) = take(r, cached_param_ints(dims))?;
        let (lp, _) = take(r, stored_words(dims))?;
        Some(Q15CachedRunner { c16, c32, x, ex, ring, ering, q, sparse, mv, slots, ent, pa, lp, logits, hd, dims: *dims, s, salt: 0 })
    }

    /// Joins `salt` to the cache's model key (as the float cached runner).
    pub fn salted(mut self, salt: u32) -> Self {
        self.salt = salt;
        self
    }

    /// Whether this state's value caches hold the kept parameter vectors
    /// now ([`Q15CachedRunner::keep_params`]): a speed matter only (the
    /// bits are the same either way), reported for tests and benches.
    pub fn params_kept(&self) -> bool {
        let m = self.lp.get(self.dims.n_layers * LAYER_WORDS + 2).is_some_and(|&m| kept_mark(m));
        // (All four whole: the cached positions have not reached their rows.)
        m && *self.hd.magic == CACHE_MAGIC && kept_from(self.s).is_some_and(|ts| *self.hd.len as usize <= ts)
    }

    /// Runs the new positions of the window of `tokens` through every
    /// layer, then the final LayerNorm of the last one into the ring's first
    /// row; that row's exponent. `all` (when not empty: n x L) receives every
    /// position's router entropies, which needs a run from position 0.
    /// `ent`: the last position's entropies are kept (false for a
    /// generation step before the last, which the next one overwrites).
    fn run_body(&mut self, model: &Model, tokens: &Tokens, all: &mut [f32], ent: bool) -> Option<i32> {
        let toks = tokens.window(self.s);
        let n = toks.len();
        let dims = self.dims;
        if n == 0 || model.dims != dims {
            return None;
        }
        let (d, kk) = (dims.d_model, dims.kernel_size);
        if model.packing == Packing::P3 && (d > 7281 || kk > 7281) {
            return None;
        }
        let key = key(model, self.salt);
        let p0 = if all.is_empty() {
            self.hd.reusable(key, &toks, self.s, dims.vocab)
        } else {
            *self.hd.magic = 0;
            0
        };
        if p0 == 0 {
            self.store_scalars(model)?;
        }
        self.keep_params(model, p0)?;
        for t in p0..n {
            let at = match (t + 1 == n, ent) {
                (false, _) => At::Inner,
                (true, true) => At::Last,
                (true, false) => At::LastNoEntropy,
            };
            self.position(model, toks.id(t, dims.vocab), t, at, all)?;
        }
        self.hd.commit(key, &toks, n, dims.vocab);
        self.final_row(model, n - 1)
    }

    /// The final LayerNorm of the residual row into the ring's first row;
    /// its exponent. (Out of line, as [`Self::embed_row`].)
    /// At position t, the final norm's vectors come from layer 0's value
    /// rows while those hold them and t has not reached them (row t was
    /// written at this position).
    #[inline(never)]
    fn final_row(&mut self, model: &Model, t: usize) -> Option<i32> {
        let (d, s) = (self.dims.d_model, self.s);
        let fe = self.lp.get(self.dims.n_layers * LAYER_WORDS..)?;
        let (fe, m) = ([*fe.first()?, *fe.get(1)?], *fe.get(2)?);
        let kept = match fin_from(s) {
            Some(fs) if t < fs && kept_mark(m) && m as u32 & FIN_KEPT != 0 => {
                let rows = self.c16.get(value_rows(&self.dims, s, 0, fs..fs + FROWS))?;
                kept_words(rows, 2 * d)?.split_at_checked(d)
            }
            _ => None,
        };
        let mut b = bufs!(self, &mut [], &mut [], &mut [], &mut [], &mut []);
        final_row_at(model, 1, &mut b, fe, kept)
    }

    /// Token `tok`'s embedding into the residual row. (Out of line: its
    /// work buffers stay out of the position loop's frame, which is on the
    /// deepest call path.)
    #[inline(never)]
    fn embed_row(&mut self, model: &Model, tok: usize) -> Option<()> {
        let mut b = bufs!(self, &mut [], &mut [], &mut [], &mut [], &mut []);
        embed(&model.embed(), tok, 0, &mut b)
    }

    /// The model's scalars into `lp` ([`stored_words`]).
    #[inline(never)]
    fn store_scalars(&mut self, model: &Model) -> Option<()> {
        let (d, dh) = (self.dims.d_model, self.dims.d_head);
        let (layers, fin) = self.lp.split_at_mut_checked(self.dims.n_layers * LAYER_WORDS)?;
        for (l, w) in layers.chunks_exact_mut(LAYER_WORDS).enumerate() {
            w.copy_from_slice(&LayerQ::new(&model.block(l), d, dh).words());
        }
        fin.get_mut(..2)?.copy_from_slice(&final_exps(model));
        // (A new cache: its value rows hold no kept vectors yet.)
        // (The scan only where byte tables can run: this build, and a
        // parameter area that lends them.)
        let clean = BYTES_HERE && self.pa.len() >= 256 && clean_payloads(model);
        *fin.get_mut(2)? = if clean { CLEAN as i32 } else { 0 };
        Some(())
    }

    /// Every layer's tanh(a), SSM gain, gamma and beta (the values the
    /// lean plan converts at each use) into its value-cache rows from [`kept_from`]
    /// on, when they are not there yet and no cached position uses those
    /// rows (`p0`, the cached positions, at most S - PROWS). A position
    /// then reads them instead of converting them again: until the window
    /// reaches those rows, a new position costs no parameter conversion.
    /// The same integers, so the same bits.
    #[inline(never)]
    fn keep_params(&mut self, model: &Model, p0: usize) -> Option<()> {
        let (d, l_n, s) = (self.dims.d_model, self.dims.n_layers, self.s);
        let mark = l_n * LAYER_WORDS + 2;
        let Some(ts) = kept_from(s) else { return Some(()) };
        // (Kept: nothing to do; the cached positions reach the rows: no
        // room.)
        if kept_mark(*self.lp.get(mark)?) || p0 > ts {
            return Some(());
        }
        let tail = |l: usize| value_rows(&self.dims, s, l, ts..s);
        // Every layer's rows must give 4 D aligned words (checked before
        // any conversion).
        for l in 0..l_n {
            if kept_words(self.c16.get(tail(l))?, 4 * d).is_none() {
                return Some(());
            }
        }
        for l in 0..l_n {
            let lw: &[i32; LAYER_WORDS] = self.lp.get(l * LAYER_WORDS..(l + 1) * LAYER_WORDS)?.try_into().ok()?;
            let (p, a) = layer_q(model, l, lw);
            let w = kept_words_mut(self.c16.get_mut(tail(l))?, 4 * d)?;
            let (wg, w) = w.split_at_mut_checked(d)?;
            let (wb, w) = w.split_at_mut_checked(d)?;
            let (ws, wt) = w.split_at_mut_checked(d)?;
            for (c, o) in wt.iter_mut().enumerate() {
                *o = tanh_q30(a.get(c));
            }
            p.sb.fill(ws);
            p.g.fill(wg);
            p.b.fill(wb);
        }
        // The final norm's gamma and beta below them, where the cached
        // positions have not reached those rows either.
        let mut fin = 0;
        if let Some(fs) = fin_from(s).filter(|&fs| p0 <= fs) {
            let fe = self.lp.get(l_n * LAYER_WORDS..l_n * LAYER_WORDS + 2)?;
            let (g, b) = (PVec::with_exp(model.final_norm().gamma, QA, *fe.first()?), PVec::with_exp(model.final_norm().beta, QA, *fe.get(1)?));
            let rows = self.c16.get_mut(value_rows(&self.dims, s, 0, fs..fs + FROWS))?;
            if let Some((wg, wb)) = kept_words_mut(rows, 2 * d).and_then(|w| w.split_at_mut_checked(d)) {
                g.fill(wg);
                b.fill(wb);
                fin = FIN_KEPT;
            }
        }
        let m = self.lp.get_mut(mark)?;
        *m = (KEPT_TAG | (*m as u32 & CLEAN) | fin) as i32;
        Some(())
    }

    /// Position t (token `tok`) through every layer: the same steps as the
    /// lean plan's [`blocks`] at that position. The last layer mixes only
    /// the call's last position (`fin`), unless `all` asks for every
    /// position's entropies (then it computes the router there too).
    fn position(&mut self, model: &Model, tok: usize, t: usize, at: At, all: &mut [f32]) -> Option<()> {
        let fin = at != At::Inner;
        let dims = self.dims;
        let (d, dh, kk, l_n, s) = (dims.d_model, dims.d_head, dims.kernel_size, dims.n_layers, self.s);
        let accel = Accel::detect();
        self.embed_row(model, tok)?;
        let per16 = Q15CachedLayout::layer16(&dims, s);
        let hr = kk - 1;
        // (Checked remainders: no division panic path, whatever the dims.)
        let slot = t.checked_rem(kk)?;
        let c16 = core::mem::take(&mut self.c16);
        let c32 = core::mem::take(&mut self.c32);
        let pa = core::mem::take(&mut self.pa);
        let lp = core::mem::take(&mut self.lp);
        let r = (|| -> Option<()> {
            for l in 0..l_n {
                let last = l + 1 == l_n;
                let mixes = !last || fin;
                let ents = !all.is_empty();
                // Layer l's cache.
                let lc = c16.get_mut(l * per16..(l + 1) * per16)?;
                let (kc, r) = take(lc, s * dh)?;
                let (ek, r) = take(r, s)?;
                let (vc, r) = take(r, s * d)?;
                let (ev, r) = take(r, s)?;
                let (hist, r) = take(r, hr * d)?;
                let (ehist, _) = take(r, hr)?;
                let (hs, r) = take(c32.get_mut(l * (d + 1)..(l + 1) * (d + 1))?, d)?;
                let ehs = r.first_mut()?;
                if t == 0 {
                    hs.fill(0);
                    *ehs = E_ZERO;
                }
                ring_from_hist(self.ring, self.ering, hist, ehist, t, kk, d)?;
                let mut b = bufs!(self, kc, ek, vc, ev, hs);
                let kept_at = kept_rows(lp, l_n, s, t);
                let lw: &[i32; LAYER_WORDS] = lp.get(l * LAYER_WORDS..(l + 1) * LAYER_WORDS)?.try_into().ok()?;
                let eh = norm_ssm(accel, model, l, lw, kept_at, &mut *self.logits, &mut *pa, &mut b, ehs, slot)?;
                let h = b.ring.get(slot * d..(slot + 1) * d)?;
                let tabs = byte_tables(&mut *self.logits, &mut *pa, clean_mark(lp, l_n));
                let r = project(accel, model, l, lw, h, b.mv, tabs, (d, dh), (mixes, ents), eh)?;
                let e = quant::quant_into(accel, b.mv.get(..dh)?, eh, b.k.get_mut(t * dh..(t + 1) * dh)?);
                *b.ek.get_mut(t)? = e as i16;
                let e = quant::quant_into(accel, b.mv.get(dh..dh + d)?, eh, b.v.get_mut(t * d..(t + 1) * d)?);
                *b.ev.get_mut(t)? = e as i16;
                if hr > 0 {
                    let dst = t.checked_rem(hr)?;
                    hist.get_mut(dst * d..(dst + 1) * d)?.copy_from_slice(b.ring.get(slot * d..(slot + 1) * d)?);
                    *ehist.get_mut(dst)? = eh as i16;
                }
                if !mixes && !ents {
                    continue;
                }
                if let Some(o) = all.get_mut(t * l_n + l) {
                    *o = f32::from_bits(mix::entropy(r) as u32);
                }
                if !mixes {
                    continue;
                }
                if at == At::Last {
                    *b.ent.get_mut(l)? = mix::entropy(r);
                }
                let esp = attend(accel, lw, &mut b, eh, t, (d, dh, dims.top_k))?;
                let cs = conv_step(accel, model, l, &mut b, t, d)?;
                mix_step(accel, lw, &mut b, *ehs, cs, esp, r, d)?;
            }
            Some(())
        })();
        self.c16 = c16;
        self.c32 = c32;
        self.pa = pa;
        self.lp = lp;
        r
    }

    /// The last position's router entropies stored in a q15 cached state's
    /// int32 area, read without a runner; false when the area is too short.
    pub fn stored_entropy(i32s: &[i32], dims: &Dims, out: &mut [f32]) -> bool {
        let (d, dh, l) = (dims.d_model, dims.d_head, dims.n_layers);
        let at = l * (d + 1) + d + 2 * dh + 3 + 4 * dims.top_k;
        let Some(src) = i32s.get(at..at + l) else { return false };
        for (o, &e) in out.iter_mut().zip(src) {
            *o = f32::from_bits(e as u32);
        }
        true
    }
}

/// Layer l's integer parameters from its stored words `w`. Each step
/// below reads the layer's tensors itself (model.block is offset
/// arithmetic), so that no Block is held on the stack across the deepest
/// calls.
#[inline(never)]
fn layer_q<'a>(model: &Model<'a>, l: usize, w: &[i32; LAYER_WORDS]) -> (LayerQ<'a>, Floats<'a>) {
    let bl = model.block(l);
    (LayerQ::from_words(&bl, w), bl.ssm().a)
}

/// LayerNorm of the residual row into ring row `slot` and the SSM step of
/// one layer at one position; the row's exponent. Its own frame (the
/// parameter sources live only here), so that it does not add to the
/// attention and mix frames on the deepest call path.
#[inline(never)]
#[allow(clippy::too_many_arguments)]
fn norm_ssm(accel: Accel, model: &Model, l: usize, w: &[i32; LAYER_WORDS], kept_at: usize, logits: &mut [f32], pa: &mut [i32], b: &mut Bufs, ehs: &mut i32, slot: usize) -> Option<i32> {
    let d = model.dims.d_model;
    if d == 0 {
        return None;
    }
    let (p, a) = layer_q(model, l, w);
    // The layer's parameter vectors as in the lean plan (the logits area,
    // then the int32 area), or the kept copies where they are whole
    // ([`Q15CachedRunner::keep_params`], [`kept_rows`]: `kept_at` = 8 ts +
    // v0, 0: none), in value rows this position's attention does not read.
    let (ts, v0) = (kept_at / 8, kept_at % 8);
    let kept = if kept_at > 0 { b.v.get(ts * d..).and_then(|t| kept_words(t, 4 * d)) } else { None };
    let kv = |v: usize| kept.filter(|_| v >= v0).and_then(|k| k.get(v * d..(v + 1) * d));
    let mut areas = logits.chunks_exact_mut(d).map(Area::Bits).chain(pa.chunks_exact_mut(d).map(Area::Ints));
    let tanh = match kv(3) {
        Some(k) => Vals(k),
        None => areas.next()?.fill(|c| tanh_q30(a.get(c))),
    };
    let pg = match kv(0) {
        Some(k) => PSrc::stored(p.g, k),
        None => PSrc::new(p.g, areas.next()),
    };
    let pb = match kv(1) {
        Some(k) => PSrc::stored(p.b, k),
        None => PSrc::new(p.b, areas.next()),
    };
    let psb = match kv(2) {
        Some(k) => PSrc::stored(p.sb, k),
        None => PSrc::new(p.sb, areas.next()),
    };
    let eh = {
        let xr = b.x.get(..d)?;
        let ex = i32::from(*b.ex.first()?);
        let out = b.ring.get_mut(slot * d..(slot + 1) * d)?;
        norm::layer_norm(accel, xr, ex, &pg, &pb, b.mv.get_mut(..d)?, out)
    };
    *b.ering.get_mut(slot)? = eh as i16;
    let h = b.ring.get(slot * d..(slot + 1) * d)?;
    *ehs = ssm::ssm_step(accel, &psb, tanh, b.hs.get_mut(..d)?, *ehs, h, eh);
    Some(eh)
}

/// The key, value, router and query projections of normalized row `h`
/// into `mv` (keys DH, values D, router 3, query DH); the router only where
/// it is read, the query only where the layer mixes.
#[inline(never)]
#[allow(clippy::too_many_arguments)]
fn project(accel: Accel, model: &Model, l: usize, w: &[i32; LAYER_WORDS], h: &[i16], mv: &mut [i32], tabs: Option<Tabs>, (d, dh): (usize, usize), (mixes, ents): (bool, bool), eh: i32) -> Option<[i32; 3]> {
    let [tk, tv, tr, tq] = projections(model, l);
    // (The stored CLEAN bit, where the cache found it, spares the scan.)
    let clean = tabs.as_ref().is_some_and(|t| t.2);
    let nc10 = accel.avx2() && (clean || [&tk, &tv, &tr, &tq].into_iter().all(|w| trit2_no_code10(accel, w)));
    let (ok, r) = mv.split_at_mut_checked(dh)?;
    let (ov, r) = r.split_at_mut_checked(d)?;
    let (or, r) = r.split_at_mut_checked(3)?;
    let oq = r.get_mut(..dh)?;
    let (wk, wv, wr, wq) = (
        MvJobQ { w: &tk, out: ok, ostride: dh },
        MvJobQ { w: &tv, out: ov, ostride: d },
        MvJobQ { w: &tr, out: or, ostride: 3 },
        MvJobQ { w: &tq, out: oq, ostride: dh },
    );
    let mut all = [wk, wv, wr, wq];
    let jobs = match (mixes, ents) {
        (true, _) => &mut all[..],
        (false, true) => &mut all[..3],
        (false, false) => &mut all[..2],
    };
    // One position: byte tables where enough rows share them and the
    // logits and parameter areas can lend their memory.
    let rows: usize = jobs.iter().map(|j| j.w.rows).sum();
    let bytes = match tabs {
        Some((t0, more, clean)) if bytes_pay(accel, rows, more.len(), clean) => matvec_q_bytes(jobs, h, t0, more, clean),
        _ => false,
    };
    if !bytes {
        matvec_q_multi_checked(accel, jobs, h, d, 1, nc10);
    }
    // The router weights, where they are read.
    if !mixes && !ents {
        return Some([0; 3]);
    }
    Some(mix::router(Scale::at(w, 7), mv.get(dh + d..dh + d + 3)?, eh))
}

/// The byte tables' memory (the one-position matvec's): the first table
/// and room for up to three more; and whether the payloads are [`CLEAN`].
type Tabs<'a> = (&'a mut [i32; 256], &'a mut [i32], bool);

/// The byte tables' memory lent by the logits area and the parameter
/// area (free from a layer's LayerNorm and SSM step to its next), when
/// both hold 256 words at least.
fn byte_tables<'a>(logits: &'a mut [f32], pa: &'a mut [i32], clean: bool) -> Option<Tabs<'a>> {
    let t0 = logit_words(logits).first_chunk_mut::<256>()?;
    // (Room for a second table at least: else none, and no attempt.)
    (pa.len() >= 256).then_some((t0, pa, clean))
}

/// Whether no payload of the blocks' projections (keys, values, router,
/// queries) and of the head holds the Trit2 code 10 (false for another
/// packing): one scan when the cache starts over.
#[inline(never)]
fn clean_payloads(model: &Model) -> bool {
    let acc = Accel::detect();
    (0..model.dims.n_layers).all(|l| projections(model, l).iter().all(|w| trit2_no_code10(acc, w))) && trit2_no_code10(acc, &model.unembed())
}

/// The query of one layer at position t and attention over the cached
/// keys and values (row exponent `eh`): the sparse output in `b.sparse`,
/// its exponent returned.
#[inline(never)]
#[allow(clippy::too_many_arguments)]
fn attend(accel: Accel, w: &[i32; LAYER_WORDS], b: &mut Bufs, eh: i32, t: usize, (d, dh, top_k): (usize, usize, usize)) -> Option<i32> {
    let p = LayerQ::scales(w);
    let eq = quant::quant_into(accel, b.mv.get(dh + d + 3..2 * dh + d + 3)?, eh, b.q.get_mut(..dh)?);
    let keff = attention::attention_top(accel, dh, &p.cq, t, eq, top_k, b)?;
    attention::attention_sum(accel, top_k, keff, b)
}

/// The stored rows t-K+1 .. t-1 (row j at j mod (K-1) in `hist`, its
/// exponent in `ehist`) into the work ring (at j mod K). The places are
/// stepped from the first row's, two remainders in all (on Armv6-M each
/// is a library division). Out of line: its counters stay out of the
/// position loop's frame.
#[inline(never)]
fn ring_from_hist(ring: &mut [i16], ering: &mut [i16], hist: &[i16], ehist: &[i16], t: usize, kk: usize, d: usize) -> Option<()> {
    let hr = kk.checked_sub(1)?;
    let j0 = t.saturating_sub(hr);
    let (mut src, mut dst) = (j0.checked_rem(hr).unwrap_or(0), j0.checked_rem(kk)?);
    for _ in j0..t {
        ring.get_mut(dst * d..(dst + 1) * d)?.copy_from_slice(hist.get(src * d..(src + 1) * d)?);
        *ering.get_mut(dst)? = *ehist.get(src)?;
        src = if src + 1 == hr { 0 } else { src + 1 };
        dst = if dst + 1 == kk { 0 } else { dst + 1 };
    }
    Some(())
}

/// Layer l's key, value, router and query tensors (no Block in the
/// matvec's frame).
#[inline(never)]
fn projections<'a>(model: &Model<'a>, l: usize) -> [Tensor<'a>; 4] {
    let bl = model.block(l);
    [Tensor::clone(&bl.wk()), Tensor::clone(&bl.wv()), Tensor::clone(&bl.router()), Tensor::clone(&bl.wq())]
}

/// Layer l's conv tensor alone (no Block on the conv's call path).
#[inline(never)]
fn conv_tensor<'a>(model: &Model<'a>, l: usize) -> Tensor<'a> {
    Tensor::clone(&model.block(l).conv())
}

/// The conv sums of one layer at position t into `b.mv[..d]`.
#[inline(never)]
fn conv_step(accel: Accel, model: &Model, l: usize, b: &mut Bufs, t: usize, d: usize) -> Option<(u32, i32)> {
    let cv = conv_tensor(model, l);
    let clean = conv::conv_clean(&cv, d);
    Some(conv::conv_sums(accel, accel.avx2(), clean, &cv, b.ring, b.ering, t, d, b.mv.get_mut(..d)?))
}

/// The mix of one layer (conv sums in `b.mv[..d]`, sparse output exponent
/// `esp`, SSM state exponent `ehs`, router weights `r`): the new residual
/// row and its exponent in `b.x`, `b.ex`.
#[inline(never)]
#[allow(clippy::too_many_arguments)]
fn mix_step(accel: Accel, w: &[i32; LAYER_WORDS], b: &mut Bufs, ehs: i32, conv: (u32, i32), esp: i32, r: [i32; 3], d: usize) -> Option<()> {
    let p = LayerQ::scales(w);
    let ex = i32::from(*b.ex.first()?);
    let st = mix::State { hs: b.hs.get(..d)?, ehs };
    let e = mix::mix(accel, &p.conv, &p.wv, st, b.mv.get_mut(..d)?, conv, (b.sparse.get_mut(..d)?, esp), r, b.x.get_mut(..d)?, ex);
    *b.ex.first_mut()? = e as i16;
    Some(())
}

impl Engine for Q15CachedRunner<'_> {
    /// The final row's exponent (the row is in the ring's first D values).
    type Last = i32;

    fn window(&self) -> usize {
        self.s
    }

    fn logits(&self) -> &[f32] {
        self.logits.get(..self.dims.vocab).unwrap_or(self.logits)
    }

    fn last_entropy(&self, out: &mut [f32]) {
        for (o, &e) in out.iter_mut().zip(self.ent.iter()) {
            *o = f32::from_bits(e as u32);
        }
    }

    /// The new positions of the window through every layer, then the final
    /// LayerNorm.
    fn body(&mut self, model: &Model, tokens: &Tokens) -> Option<i32> {
        self.run_body(model, tokens, &mut [], true)
    }

    fn lm_head(&mut self, model: &Model, eh: i32) -> Option<usize> {
        let h = self.ring.get(..self.dims.d_model)?;
        Some(head_logits(&model.unembed(), h, eh, self.mv, Some(self.logits)))
    }

    /// (Inlined, as the other q15 runners' one; a generation step before the
    /// last keeps no router entropies: the next step's replace them, and
    /// they cost soft-float logarithms on most cores.)
    #[inline(always)]
    fn predict_pick(&mut self, model: &Model, tokens: &Tokens, fin: bool) -> Option<usize> {
        let last = self.run_body(model, tokens, &mut [], fin)?;
        self.lm_pick(model, last, fin)
    }

    fn lm_pick(&mut self, model: &Model, eh: i32, fin: bool) -> Option<usize> {
        if fin {
            return self.lm_head(model, eh);
        }
        let h = self.ring.get(..self.dims.d_model)?;
        let clean = clean_mark(self.lp, self.dims.n_layers);
        // The byte tables: in the matvec outputs and the parameter area, or
        // where the outputs are shorter than a table, two in the parameter
        // area.
        let (mv, more) = if self.mv.len() >= 256 { (&mut *self.mv, &mut *self.pa) } else { self.pa.split_at_mut(self.pa.len().min(256)) };
        Some(head_argmax::<true>(&model.unembed(), h, eh, logit_words(self.logits), mv, more, clean))
    }

    fn class_head(&mut self, clf: &Classifier, eh: i32, out: Option<&mut [f32]>) -> Option<usize> {
        let h = self.ring.get(..self.dims.d_model)?;
        Some(head_logits(&clf.head, h, eh, self.mv, out))
    }

    /// A run from the first position (the cache keeps no past entropies).
    fn router_entropy_all(&mut self, model: &Model, tokens: &[i32], out: &mut [f32]) -> Option<usize> {
        let n = tokens.len().min(self.s);
        let out = out.get_mut(..n * self.dims.n_layers)?;
        if out.is_empty() {
            return None;
        }
        let eh = self.run_body(model, &Tokens::new(tokens), out, true)?;
        self.lm_head(model, eh)?;
        Some(n)
    }
}

/// A q15 cached runner's memory held in one value: what a Rust caller keeps
/// between calls, as a C caller keeps an atome_state_t.
pub struct Q15CachedState<A, B, F, I> {
    /// Model dimensions.
    pub dims: Dims,
    /// Context window.
    pub s: usize,
    /// int16 area, `Q15CachedLayout::new(dims, s).i16s` elements.
    pub i16s: A,
    /// int32 area, `Q15CachedLayout::new(dims, s).i32s` elements.
    pub i32s: B,
    /// Logits, V floats.
    pub logits: F,
    /// Cache validity marker.
    pub magic: u32,
    /// Key of the model the cache belongs to.
    pub fingerprint: u32,
    /// Positions cached.
    pub len: u32,
    /// Ids of the cached positions, S.
    pub tokens: I,
}

impl<A: AsMut<[i16]>, B: AsMut<[i32]>, F: AsMut<[f32]>, I: AsMut<[i32]>> Q15CachedState<A, B, F, I> {
    /// A state over the given buffers (see the fields for their sizes).
    pub fn new(dims: Dims, s: usize, i16s: A, i32s: B, logits: F, tokens: I) -> Self {
        Q15CachedState { dims, s, i16s, i32s, logits, magic: 0, fingerprint: 0, len: 0, tokens }
    }

    /// A runner on this memory; None when a buffer is too short.
    pub fn runner(&mut self) -> Option<Q15CachedRunner<'_>> {
        let hd = CacheHeader { magic: &mut self.magic, fingerprint: &mut self.fingerprint, len: &mut self.len, tokens: self.tokens.as_mut() };
        Q15CachedRunner::new(self.i16s.as_mut(), self.i32s.as_mut(), self.logits.as_mut(), hd, &self.dims, self.s)
    }

    /// Forgets any cache, as a freshly zeroed C state.
    pub fn forget(&mut self) {
        self.magic = 0;
    }
}
