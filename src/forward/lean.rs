//! Lean memory plan: the residual stream, one layer's key/value caches, a few
//! normalized rows and small vectors. Everything is recomputed at each call.
//! (The work area's layout and the call sequence are `crate::runner`'s.)
use super::{LayerMem, Layers};

/// Positions per chunk in a lean state.
pub const LEAN_CHUNK: usize = 4;

/// The one layer's memory every layer uses in turn.
pub struct OneLayer<'a> {
    /// Keys of one layer.
    pub k: &'a mut [f32],
    /// Values of one layer, S x D.
    pub v: &'a mut [f32],
    /// SSM hidden vector, D.
    pub hs: &'a mut [f32],
    /// tanh(a), D.
    pub tanh_a: &'a mut [f32],
}

impl Layers for OneLayer<'_> {
    const KEEPS: bool = false;
    fn layer(&mut self, _l: usize) -> LayerMem<'_> {
        LayerMem { k: self.k, v: self.v, hist: &mut [], hs: self.hs, tanh_a: self.tanh_a }
    }
}
