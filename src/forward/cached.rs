//! Cached memory plan: every layer's keys, values, last normalized rows and
//! SSM vector are kept with the token list they were computed for. A call whose
//! token list extends the stored one computes only the new positions; any
//! other call starts over. What is reused is exactly what a fresh computation
//! would produce, so results are the same bits.
use super::{run_layers, Entropy, LayerMem, Layers, Scratch, Tokens};
use crate::format::{Dims, Model};

/// Positions per chunk in a cached state.
pub const CACHED_CHUNK: usize = 8;
/// Marks a cache written by this code (garbage rarely matches it and the fingerprint).
pub const CACHE_MAGIC: u32 = 0xA70E_CAC4;

/// Integer metadata of a cached state.
pub struct CacheMeta<'w> {
    /// CACHE_MAGIC when valid.
    pub magic: &'w mut u32,
    /// Fingerprint of the model the cache belongs to.
    pub fingerprint: &'w mut u32,
    /// Positions cached.
    pub n: &'w mut u32,
    /// Ids (as read: out-of-range ones already 0) of the cached positions, S.
    pub tokens: &'w mut [i32],
}

/// A cached state's float memory.
pub struct CachedMem<'w> {
    x: &'w mut [f32],
    k: &'w mut [f32],
    v: &'w mut [f32],
    hist: &'w mut [f32],
    hs: &'w mut [f32],
    tanh_a: &'w mut [f32],
    /// S x L entropies of the cached positions.
    pub ent_all: &'w mut [f32],
    /// L entropies of the last position.
    pub ent_last: &'w mut [f32],
    sc: Scratch<'w>,
    dims: Dims,
    s: usize,
}

struct All<'a> {
    k: &'a mut [f32],
    v: &'a mut [f32],
    hist: &'a mut [f32],
    hs: &'a mut [f32],
    tanh_a: &'a mut [f32],
    dims: Dims,
    s: usize,
}

fn part(buf: &mut [f32], l: usize, n: usize) -> &mut [f32] {
    buf.get_mut(l * n..(l + 1) * n).unwrap_or(&mut [])
}

impl Layers for All<'_> {
    fn layer(&mut self, l: usize) -> LayerMem<'_> {
        let (d, dh, s) = (self.dims.d_model, self.dims.d_head, self.s);
        let hr = self.dims.kernel_size - 1;
        LayerMem {
            k: part(self.k, l, s * dh),
            v: part(self.v, l, s * d),
            hist: part(self.hist, l, hr * d),
            hs: part(self.hs, l, d),
            tanh_a: part(self.tanh_a, l, d),
        }
    }
}

/// Fingerprint of a model view: where its tensors are and their scales.
pub fn fingerprint(model: &Model) -> u32 {
    let mut h: u32 = 0x811c_9dc5;
    let mut mix = |v: u64| {
        for b in v.to_le_bytes() {
            h = (h ^ b as u32).wrapping_mul(0x0100_0193);
        }
    };
    mix(model.embed.data.as_ptr() as usize as u64);
    mix(model.embed.data.len() as u64);
    mix(model.blocks_bytes().as_ptr() as usize as u64);
    mix(model.unembed.data.as_ptr() as usize as u64);
    mix(model.embed.scale.to_bits() as u64 | (model.unembed.scale.to_bits() as u64) << 32);
    mix(model.packing as u64);
    h
}

impl<'w> CachedMem<'w> {
    /// Floats needed.
    pub fn floats(dims: &Dims, s: usize) -> usize {
        Self::ent_last_offset(dims, s) + dims.n_layers + Scratch::floats(dims, CACHED_CHUNK)
    }

    /// Where the last position's entropies start in the buffer.
    pub fn ent_last_offset(dims: &Dims, s: usize) -> usize {
        let (d, l) = (dims.d_model, dims.n_layers);
        s * d + l * s * dims.d_head + l * s * d + l * (dims.kernel_size - 1) * d + 2 * l * d + s * l
    }

    /// Splits `buf`; None when too small.
    pub fn split(buf: &'w mut [f32], dims: &Dims, s: usize) -> Option<CachedMem<'w>> {
        let (d, l) = (dims.d_model, dims.n_layers);
        let (x, rest) = super::take(buf, s * d)?;
        let (k, rest) = super::take(rest, l * s * dims.d_head)?;
        let (v, rest) = super::take(rest, l * s * d)?;
        let (hist, rest) = super::take(rest, l * (dims.kernel_size - 1) * d)?;
        let (hs, rest) = super::take(rest, l * d)?;
        let (tanh_a, rest) = super::take(rest, l * d)?;
        let (ent_all, rest) = super::take(rest, s * l)?;
        let (ent_last, rest) = super::take(rest, l)?;
        let (sc, _) = Scratch::split(rest, dims, CACHED_CHUNK)?;
        Some(CachedMem { x, k, v, hist, hs, tanh_a, ent_all, ent_last, sc, dims: *dims, s })
    }

    /// As LeanMem::forward, reusing the positions that the stored token list
    /// shares with this one when it is a prefix of it. `ent_all` receives the
    /// per-position entropies (from the stored rows for reused positions).
    pub fn forward<R>(
        &mut self,
        meta: &mut CacheMeta,
        model: &Model,
        tokens: &Tokens,
        ent_all: &mut [f32],
        f: impl FnOnce(&[f32], &mut [f32], &[f32]) -> R,
    ) -> Option<R> {
        self.forward_salted(meta, model, 0, tokens, ent_all, f)
    }

    /// As `forward`; `salt` joins the model fingerprint (the C API passes a
    /// hash of the blob's bytes taken at load, so a blob rewritten in place
    /// and loaded again does not reuse the old caches).
    pub fn forward_salted<R>(
        &mut self,
        meta: &mut CacheMeta,
        model: &Model,
        salt: u32,
        tokens: &Tokens,
        ent_all: &mut [f32],
        f: impl FnOnce(&[f32], &mut [f32], &[f32]) -> R,
    ) -> Option<R> {
        let toks = tokens.window(self.s);
        let n = toks.len();
        if n == 0 || model.dims != self.dims {
            return None;
        }
        let fp = fingerprint(model) ^ salt.wrapping_mul(0x9E37_79B1);
        let old = *meta.n as usize;
        let valid = *meta.magic == CACHE_MAGIC && *meta.fingerprint == fp && old >= 1 && old <= self.s && old <= n;
        let prefix_ok = valid
            && meta.tokens.get(..old).is_some_and(|t| t.iter().enumerate().all(|(i, &id)| id as usize == toks.id(i, self.dims.vocab)));
        let p0 = if prefix_ok { old } else { 0 };
        *meta.magic = 0;
        let mut layers = All {
            k: &mut *self.k,
            v: &mut *self.v,
            hist: &mut *self.hist,
            hs: &mut *self.hs,
            tanh_a: &mut *self.tanh_a,
            dims: self.dims,
            s: self.s,
        };
        let l = self.dims.n_layers;
        if p0 < n {
            let mut ent = Entropy { last: &mut *self.ent_last, all: &mut *self.ent_all };
            run_layers(model, &toks, p0, n, self.x, &mut layers, &mut self.sc, &mut ent);
        } else if let Some(src) = self.ent_all.get((n - 1) * l..n * l) {
            // Nothing new: the last position's entropies are stored.
            for (d, s) in self.ent_last.iter_mut().zip(src) {
                *d = *s;
            }
        }
        for (d, s) in ent_all.iter_mut().zip(self.ent_all.iter().take(n * l)) {
            *d = *s;
        }
        for (i, t) in meta.tokens.iter_mut().enumerate().take(n) {
            *t = toks.id(i, self.dims.vocab) as i32;
        }
        *meta.n = n as u32;
        *meta.fingerprint = fp;
        *meta.magic = CACHE_MAGIC;
        let d = self.dims.d_model;
        let xr = self.x.get((n - 1) * d..n * d)?;
        let h = self.sc.h.get_mut(..d)?;
        Some(f(xr, h, self.ent_last))
    }
}
