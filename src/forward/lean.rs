//! Lean memory plan: the residual stream, one layer's key/value caches, a few
//! normalized rows and small vectors. Everything is recomputed at each call.
use super::{run_layers, Entropy, LayerMem, Layers, Scratch, Tokens};
use crate::format::{Dims, Model};

/// Positions per chunk in a lean state.
pub const LEAN_CHUNK: usize = 4;

/// A lean state's memory, split out of one float buffer.
pub struct LeanMem<'w> {
    x: &'w mut [f32],
    k: &'w mut [f32],
    v: &'w mut [f32],
    hs: &'w mut [f32],
    tanh_a: &'w mut [f32],
    /// Last position's router entropy per layer.
    pub ent_last: &'w mut [f32],
    sc: Scratch<'w>,
    s: usize,
}

struct One<'a> {
    k: &'a mut [f32],
    v: &'a mut [f32],
    hs: &'a mut [f32],
    tanh_a: &'a mut [f32],
}

impl Layers for One<'_> {
    const KEEPS: bool = false;
    fn layer(&mut self, _l: usize) -> LayerMem<'_> {
        LayerMem { k: self.k, v: self.v, hist: &mut [], hs: self.hs, tanh_a: self.tanh_a }
    }
}

impl<'w> LeanMem<'w> {
    /// Floats needed for a context of `s` positions.
    pub fn floats(dims: &Dims, s: usize) -> usize {
        Self::ent_last_offset(dims, s) + dims.n_layers + Scratch::floats(dims, LEAN_CHUNK)
    }

    /// Where the last position's entropies start in the buffer.
    pub fn ent_last_offset(dims: &Dims, s: usize) -> usize {
        2 * s * dims.d_model + s * dims.d_head + 2 * dims.d_model
    }

    /// Splits `buf`; None when too small.
    pub fn split(buf: &'w mut [f32], dims: &Dims, s: usize) -> Option<LeanMem<'w>> {
        let d = dims.d_model;
        let (x, rest) = super::take(buf, s * d)?;
        let (k, rest) = super::take(rest, s * dims.d_head)?;
        let (v, rest) = super::take(rest, s * d)?;
        let (hs, rest) = super::take(rest, d)?;
        let (tanh_a, rest) = super::take(rest, d)?;
        let (ent_last, rest) = super::take(rest, dims.n_layers)?;
        let (sc, _) = Scratch::split(rest, dims, LEAN_CHUNK)?;
        Some(LeanMem { x, k, v, hs, tanh_a, ent_last, sc, s })
    }

    /// Runs the model on the last S tokens, then calls `f` with the final
    /// residual row of the last position, a D-float scratch row and the last
    /// position's entropies. `ent_all` receives position-major per-layer
    /// entropies when long enough. None for an empty token list.
    pub fn forward<R>(
        &mut self,
        model: &Model,
        tokens: &Tokens,
        ent_all: &mut [f32],
        f: impl FnOnce(&[f32], &mut [f32], &[f32]) -> R,
    ) -> Option<R> {
        let toks = tokens.window(self.s);
        let n = toks.len();
        if n == 0 || model.dims.d_model * self.s > self.x.len() {
            return None;
        }
        let mut layers = One { k: &mut *self.k, v: &mut *self.v, hs: &mut *self.hs, tanh_a: &mut *self.tanh_a };
        let mut ent = Entropy { last: &mut *self.ent_last, all: ent_all };
        run_layers(model, &toks, 0, n, self.x, &mut layers, &mut self.sc, &mut ent);
        let d = model.dims.d_model;
        let xr = self.x.get((n - 1) * d..n * d)?;
        let h = self.sc.h.get_mut(..d)?;
        Some(f(xr, h, self.ent_last))
    }
}
