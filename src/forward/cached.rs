//! Cached memory plan: every layer's keys, values, last normalized rows and
//! SSM vector are kept with the token list they were computed for. A call whose
//! token list extends the stored one computes only the new positions; any
//! other call starts over. What is reused is exactly what a fresh computation
//! would produce, so results are the same bits.
//! (The work area's layout and the call sequence are `crate::runner`'s.)
use super::{LayerMem, Layers, Tokens};
use crate::format::{Dims, Model};

/// Positions per chunk in a cached state.
pub const CACHED_CHUNK: usize = 8;
/// Marks a cache written by this code (garbage rarely matches it and the fingerprint).
pub const CACHE_MAGIC: u32 = 0xA70E_CAC4;

/// Integer header of a cached state: which token list its floats hold.
pub struct CacheHeader<'w> {
    /// CACHE_MAGIC when valid.
    pub magic: &'w mut u32,
    /// Key of the model the cache belongs to (see [`key`]).
    pub fingerprint: &'w mut u32,
    /// Positions cached.
    pub len: &'w mut u32,
    /// Ids (as read: out-of-range ones already 0) of the cached positions, S.
    pub tokens: &'w mut [i32],
}

impl CacheHeader<'_> {
    /// How many leading positions of `toks` (a window of at most s tokens)
    /// the stored state holds for the model keyed `key`: the stored length
    /// when the header is valid and its ids are a prefix of `toks`, else 0.
    /// Marks the header invalid until [`Self::commit`].
    pub fn reusable(&mut self, key: u32, toks: &Tokens, s: usize, vocab: usize) -> usize {
        let n = toks.len();
        let old = *self.len as usize;
        let valid = *self.magic == CACHE_MAGIC && *self.fingerprint == key && old >= 1 && old <= s && old <= n;
        let prefix_ok = valid
            && self.tokens.get(..old).is_some_and(|t| t.iter().enumerate().all(|(i, &id)| id as usize == toks.id(i, vocab)));
        *self.magic = 0;
        if prefix_ok {
            old
        } else {
            0
        }
    }

    /// Records that the state now holds the n positions of `toks` for `key`.
    pub fn commit(&mut self, key: u32, toks: &Tokens, n: usize, vocab: usize) {
        for (i, t) in self.tokens.iter_mut().enumerate().take(n) {
            *t = toks.id(i, vocab) as i32;
        }
        *self.len = n as u32;
        *self.fingerprint = key;
        *self.magic = CACHE_MAGIC;
    }
}

/// Every layer's memory: each buffer of `all` holds the layers' parts one
/// after another (keys S x DH, values S x D, history rows (K - 1) x D, SSM
/// vector D, tanh(a) D per layer).
/// (Borrowed, like [`super::lean::OneLayer`]'s.)
pub struct AllLayers<'a, 'w> {
    /// The layers' buffers.
    pub all: &'a mut LayerMem<'w>,
    /// Dimensions.
    pub dims: &'a Dims,
    /// Window.
    pub s: usize,
}

fn part(buf: &mut [f32], l: usize, n: usize) -> &mut [f32] {
    buf.get_mut(l * n..(l + 1) * n).unwrap_or(&mut [])
}

impl Layers for AllLayers<'_, '_> {
    fn layer(&mut self, l: usize) -> LayerMem<'_> {
        let (d, dh, s) = (self.dims.d_model, self.dims.d_head, self.s);
        let hr = self.dims.kernel_size - 1;
        let m = &mut *self.all;
        LayerMem {
            k: part(m.k, l, s * dh),
            v: part(m.v, l, s * d),
            hist: part(m.hist, l, hr * d),
            hs: part(m.hs, l, d),
            tanh_a: part(m.tanh_a, l, d),
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
    mix(model.embed().data.as_ptr() as usize as u64);
    mix(model.embed().data.len() as u64);
    mix(model.blocks_bytes().as_ptr() as usize as u64);
    mix(model.unembed().data.as_ptr() as usize as u64);
    mix(model.embed().scale.to_bits() as u64 | (model.unembed().scale.to_bits() as u64) << 32);
    mix(model.packing as u64);
    h
}

/// The key a cache is stored under: the fingerprint joined with `salt` (the
/// C API passes a hash of the blob's bytes taken at load).
pub fn key(model: &Model, salt: u32) -> u32 {
    fingerprint(model) ^ salt.wrapping_mul(0x9E37_79B1)
}
