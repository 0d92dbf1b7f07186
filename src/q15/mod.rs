//! The q15 integer inference mode (docs/Q15.md): 16-bit activations with one
//! power-of-two exponent per row, exact integer sums, the same bits on every
//! target and as the numpy reference (python/tests/q15_ref.py).
//!
//! [`Q15Runner`] is an [`Engine`] as the float [`crate::runner::Runner`] is
//! (predict, logits, classify, generate, router entropy), over caller-owned memory: an
//! int16 area, an int32 area and the V logits, sized by [`Q15Layout`].
//! [`Q15Runner`] is the lean plan (every call recomputes the window);
//! [`Q15CachedRunner`] the cached one (engine/cached: only new positions).

/// The q15 runners' [`Engine::predict_pick`]: the trait's, inlined into
/// generate (one frame less on the deepest call path; the float runner
/// keeps it out of line, so that its body is compiled once).
macro_rules! predict_pick_inline {
    () => {
        #[inline(always)]
        fn predict_pick(&mut self, model: &Model, tokens: &Tokens, fin: bool) -> Option<usize> {
            let last = self.body(model, tokens)?;
            self.lm_pick(model, last, fin)
        }
    };
}

pub mod arith;
pub mod engine;
pub mod params;

use crate::engine::Engine;
use crate::format::{Classifier, Dims, Model};
use crate::forward::{take, Tokens};
use engine::Bufs;
pub use engine::cached::{Q15CachedLayout, Q15CachedRunner, Q15CachedState};
pub use engine::tiny::{Q15TinyLayout, Q15TinyRunner, Q15TinyState};

/// Element counts of a q15 lean state's two areas (docs/PERFORMANCE.md#ram-of-the-q15-lean-state).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Q15Layout {
    /// int16 elements: residual, keys, values (one layer), the K normalized
    /// rows, the query, the sparse output, and the exponents of each row.
    pub i16s: usize,
    /// int32 elements: SSM state, matvec outputs (DH + D + 3 + DH), attention slots, router
    /// entropies and the part of one layer's four D-vectors (tanh(a),
    /// gamma, beta, the SSM gain) that the logits area (unused until the
    /// head) cannot hold: [`param_ints`].
    pub i32s: usize,
}

impl Q15Layout {
    /// The counts for these dimensions and window s.
    pub const fn new(dims: &Dims, s: usize) -> Q15Layout {
        let (d, dh, k) = (dims.d_model, dims.d_head, dims.kernel_size);
        // Matvec outputs: keys, values, router and query of one position
        // (one call shares the table kernels' tables among them).
        let mvn = d + 2 * dh + 3;
        Q15Layout {
            i16s: s * d + s + s * dh + s + s * d + s + k * d + k + dh + d,
            i32s: d + mvn + 4 * dims.top_k + dims.n_layers + param_ints(dims),
        }
    }

    /// Bytes of the two areas and the logits.
    pub const fn bytes(&self, dims: &Dims) -> usize {
        2 * self.i16s + 4 * self.i32s + 4 * dims.vocab
    }
}

/// int32 elements for the four per-layer D-vectors beyond the whole
/// D-chunks of the V logits (0 when V >= 4 D, as in the default
/// configuration).
pub const fn param_ints(dims: &Dims) -> usize {
    let (d, v) = (dims.d_model, dims.vocab);
    let inl = match v.checked_div(d) {
        Some(q) if q < 4 => q,
        _ => 4,
    };
    (4 - inl) * d
}

/// int32 elements of the cached plan's parameter area: [`param_ints`], and
/// for D >= 64 at least [`CACHED_TABLE_INTS`], so that the one-position
/// projections have four byte tables (with the logits area's one) and the
/// head two.
pub const fn cached_param_ints(dims: &Dims) -> usize {
    let p = param_ints(dims);
    if dims.d_model >= 64 && p < CACHED_TABLE_INTS {
        CACHED_TABLE_INTS
    } else {
        p
    }
}

/// Three byte tables of 256 int32 ([`cached_param_ints`]).
pub const CACHED_TABLE_INTS: usize = 768;

/// Runs the q15 engine in a caller's memory (lean plan).
pub struct Q15Runner<'w> {
    b: Bufs<'w>,
    logits: &'w mut [f32],
    /// (Borrowed, not copied: one word on the stack of every call, not six.)
    dims: &'w Dims,
    s: usize,
}

impl<'w> Q15Runner<'w> {
    /// A runner over `i16s`, `i32s` (at least [`Q15Layout::new`]'s counts)
    /// and `logits` (at least V); None when one is too short or a dimension is 0.
    pub fn new(i16s: &'w mut [i16], i32s: &'w mut [i32], logits: &'w mut [f32], dims: &'w Dims, s: usize) -> Option<Self> {
        let (d, dh, k) = (dims.d_model, dims.d_head, dims.kernel_size);
        if d == 0 || dh == 0 || k == 0 || s == 0 || dims.top_k == 0 || dims.vocab == 0 || logits.len() < dims.vocab {
            return None;
        }
        let lay = Q15Layout::new(dims, s);
        let (x, r) = take(i16s, s * d)?;
        let (ex, r) = take(r, s)?;
        let (kc, r) = take(r, s * dh)?;
        let (ek, r) = take(r, s)?;
        let (v, r) = take(r, s * d)?;
        let (ev, r) = take(r, s)?;
        let (ring, r) = take(r, k * d)?;
        let (ering, r) = take(r, k)?;
        let (q, r) = take(r, dh)?;
        let (sparse, _) = take(r, d)?;
        let mvn = lay.i32s - d - 4 * dims.top_k - dims.n_layers - param_ints(dims);
        let (hs, r) = take(i32s, d)?;
        let (mv, r) = take(r, mvn)?;
        let (slots, r) = take(r, 4 * dims.top_k)?;
        let (ent, r) = take(r, dims.n_layers)?;
        let (pa, _) = take(r, param_ints(dims))?;
        let b = Bufs { x, ex, k: kc, ek, v, ev, ring, ering, q, sparse, hs, mv, slots, pa, ent };
        Some(Q15Runner { b, logits, dims, s })
    }
}

impl Engine for Q15Runner<'_> {
    /// The final row's exponent (the row is in the ring's first D values).
    type Last = i32;

    /// p = r * 2^-30 as binary32, then the float mode's formula.
    fn last_entropy(&self, out: &mut [f32]) {
        entropies(out, self.b.ent);
    }

    /// The layers and the final LayerNorm.
    fn body(&mut self, model: &Model, tokens: &Tokens) -> Option<i32> {
        self.run_body(model, tokens, &mut [])
    }

    fn lm_head(&mut self, model: &Model, eh: i32) -> Option<usize> {
        let h = self.b.ring.get(..self.dims.d_model)?;
        Some(engine::head_logits(&model.unembed(), h, eh, self.b.mv, Some(self.logits)))
    }

    predict_pick_inline!();

    fn lm_pick(&mut self, model: &Model, eh: i32, fin: bool) -> Option<usize> {
        if fin {
            return self.lm_head(model, eh);
        }
        let h = self.b.ring.get(..self.dims.d_model)?;
        Some(engine::head_argmax::<false>(&model.unembed(), h, eh, engine::logit_words(self.logits), self.b.mv, &mut [], false))
    }

    fn class_head(&mut self, clf: &Classifier, eh: i32, out: Option<&mut [f32]>) -> Option<usize> {
        let h = self.b.ring.get(..self.dims.d_model)?;
        Some(engine::head_logits(&clf.head, h, eh, self.b.mv, out))
    }

    fn window(&self) -> usize {
        self.s
    }

    fn logits(&self) -> &[f32] {
        self.logits.get(..self.dims.vocab).unwrap_or(self.logits)
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

impl Q15Runner<'_> {
    /// Runs the layers (every position's router entropies into `all` when
    /// it is not empty: n x L) and the final LayerNorm; the final row's
    /// exponent. (Size-first: inlined, a frame less on the deepest path.)
    #[cfg_attr(atome_small, inline(always))]
    fn run_body(&mut self, model: &Model, tokens: &Tokens, all: &mut [f32]) -> Option<i32> {
        let toks = tokens.window(self.s);
        let n = toks.len();
        if n == 0 || model.dims != *self.dims {
            return None;
        }
        engine::run(model, &toks, n, &mut self.b, self.logits, all)?;
        engine::final_row(model, n, &mut self.b)
    }

    /// The last position's router entropies stored in a q15 state's int32
    /// area, read without a runner (the C API's read-out of a const state);
    /// false when the area is too short.
    pub fn stored_entropy(i32s: &[i32], dims: &Dims, s: usize, out: &mut [f32]) -> bool {
        let lay = Q15Layout::new(dims, s);
        let d = dims.d_model;
        let mvn = lay.i32s - d - 4 * dims.top_k - dims.n_layers - param_ints(dims);
        let at = d + mvn + 4 * dims.top_k;
        let Some(src) = i32s.get(at..at + dims.n_layers) else { return false };
        entropies(out, src);
        true
    }
}

/// The stored entropies (binary32 bit patterns in the int32 area) as floats.
fn entropies(out: &mut [f32], src: &[i32]) {
    for (o, &e) in out.iter_mut().zip(src) {
        *o = f32::from_bits(e as u32);
    }
}

/// A q15 runner's memory held in one value (vectors, arrays): what a Rust
/// caller keeps between calls, as a C caller keeps an atome_state_t.
pub struct Q15State<A, B, F> {
    /// Model dimensions.
    pub dims: Dims,
    /// Context window.
    pub s: usize,
    /// int16 area, `Q15Layout::new(dims, s).i16s` elements.
    pub i16s: A,
    /// int32 area, `Q15Layout::new(dims, s).i32s` elements.
    pub i32s: B,
    /// Logits, V floats.
    pub logits: F,
}

impl<A: AsMut<[i16]>, B: AsMut<[i32]>, F: AsMut<[f32]>> Q15State<A, B, F> {
    /// A state over the given buffers (see the fields for their sizes).
    pub fn new(dims: Dims, s: usize, i16s: A, i32s: B, logits: F) -> Self {
        Q15State { dims, s, i16s, i32s, logits }
    }

    /// A runner on this memory; None when a buffer is too short.
    pub fn runner(&mut self) -> Option<Q15Runner<'_>> {
        Q15Runner::new(self.i16s.as_mut(), self.i32s.as_mut(), self.logits.as_mut(), &self.dims, self.s)
    }
}
