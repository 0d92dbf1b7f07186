//! The memory the forward pass runs in: each layer's stored state, the
//! per-call scratch and where router entropies go.
use crate::format::Dims;
use crate::kernels::conv::CONV_LANES;
use crate::kernels::isa::Accel;
use crate::math::lnf;

/// One layer's stored state.
pub struct LayerMem<'w> {
    /// Keys, S x DH floats in the build's key-cache layout
    /// ([`crate::kernels::choice::KeyCache`]).
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

/// Splits n elements off the front of buf (the float and q15 work areas).
pub fn take<T>(buf: &mut [T], n: usize) -> Option<(&mut [T], &mut [T])> {
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
    pub(super) fn keep(&mut self, r: &[f32], t: usize, n: usize, l: usize, n_layers: usize) {
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
