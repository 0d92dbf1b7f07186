//! Lean memory plan: the residual stream, one layer's key/value caches, a few
//! normalized rows and small vectors. Everything is recomputed at each call.
//! (The work area's layout and the call sequence are `crate::runner`'s.)
use super::{LayerMem, Layers};

/// Positions per chunk in a lean state.
pub const LEAN_CHUNK: usize = 4;

/// One layer's memory, which every layer uses in turn (no history rows).
/// Borrowed, not moved in: the layer loop's caller keeps one pointer on its
/// stack, not a copy of the five buffers.
pub struct OneLayer<'a, 'w>(pub &'a mut LayerMem<'w>);

impl Layers for OneLayer<'_, '_> {
    const KEEPS: bool = false;
    fn layer(&mut self, _l: usize) -> LayerMem<'_> {
        let m = &mut *self.0;
        LayerMem { k: m.k, v: m.v, hist: &mut [], hs: m.hs, tanh_a: m.tanh_a }
    }
}
