//! The runner: one safe type that turns a caller's memory (a work area, the
//! logits and, for the cached plan, a cache header) into the float engine's
//! [`Engine`] (predict_next, classify, generate and router entropy), for any
//! dimensions and window given at run time. The C ABI, the CLI, the benches
//! and the tests all run the model through it.
//!
//! The work area is one float buffer split in this order (the C header's
//! `ATOME_STATE_WORK` formula is its total for the build's plan):
//! residual rows, keys, values, conv history rows, SSM vectors, tanh(a),
//! stored entropies, last entropies, then per-call scratch. A lean state
//! holds one layer's keys and values and no history or stored entropies; a
//! cached state holds every layer's.
//!
//! Which plan a runner uses is its `K` parameter: [`NoCache`] (lean) or a
//! [`CacheHeader`] (cached) fix it at compile time, so the C ABI links only
//! the plan of its build; `Option<CacheHeader>` (the default) chooses at run
//! time, for the CLI, the benches and the tests.
use crate::engine::Engine;
use crate::format::{Classifier, Dims, Model};
use crate::forward::cached::{self, AllLayers, CacheHeader, CACHED_CHUNK};
use crate::forward::lean::{OneLayer, LEAN_CHUNK};
use crate::forward::{classify_head, final_norm, head, run_layers, take, Entropy, LayerMem, Scratch, Tokens};
use crate::kernels::copy;

/// Memory plan.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Plan {
    /// Everything recomputed at each call: the smallest state.
    Lean,
    /// Every layer's caches kept: a call whose token list extends the last
    /// one computes only the new positions (the same bits as a fresh call).
    Cached,
}

impl Plan {
    /// "lean" or "cached" (the ATOME_STATE values).
    pub fn name(self) -> &'static str {
        match self {
            Plan::Lean => "lean",
            Plan::Cached => "cached",
        }
    }
}

/// What a runner keeps across calls besides its floats: nothing (lean) or a
/// cache header (cached).
pub trait Keep<'w> {
    /// The header, or None for the lean plan (a constant for [`NoCache`] and
    /// [`CacheHeader`], so the other plan's code is not even compiled in).
    fn header(&mut self) -> Option<&mut CacheHeader<'w>>;
}

/// The lean plan keeps nothing.
pub struct NoCache;

impl<'w> Keep<'w> for NoCache {
    #[inline(always)]
    fn header(&mut self) -> Option<&mut CacheHeader<'w>> {
        None
    }
}

impl<'w> Keep<'w> for CacheHeader<'w> {
    #[inline(always)]
    fn header(&mut self) -> Option<&mut CacheHeader<'w>> {
        Some(self)
    }
}

impl<'w> Keep<'w> for Option<CacheHeader<'w>> {
    #[inline(always)]
    fn header(&mut self) -> Option<&mut CacheHeader<'w>> {
        self.as_mut()
    }
}

/// Floats of each part of the work area, in buffer order: the one
/// description behind the size, the split and the entropy read-out.
struct Layout {
    x: usize,
    k: usize,
    v: usize,
    hist: usize,
    hs: usize,
    tanh_a: usize,
    ent_all: usize,
    ent_last: usize,
    chunk: usize,
}

impl Layout {
    #[inline(always)]
    fn new(dims: &Dims, s: usize, plan: Plan) -> Layout {
        let (d, l) = (dims.d_model, dims.n_layers);
        // Layers stored, history rows per layer, positions of stored entropies.
        let (ls, hr, es, chunk) = match plan {
            Plan::Lean => (1, 0, 0, LEAN_CHUNK),
            Plan::Cached => (l, dims.kernel_size - 1, s, CACHED_CHUNK),
        };
        Layout {
            x: s * d,
            k: ls * s * dims.d_head,
            v: ls * s * d,
            hist: ls * hr * d,
            hs: ls * d,
            tanh_a: ls * d,
            ent_all: es * l,
            ent_last: l,
            chunk,
        }
    }

    /// Where the last position's entropies start.
    fn ent_last_at(&self) -> usize {
        self.x + self.k + self.v + self.hist + self.hs + self.tanh_a + self.ent_all
    }
}

/// The float parts of a runner's work area.
struct Mem<'w> {
    /// Residual rows, S x D.
    x: &'w mut [f32],
    /// Keys, values, history rows, SSM vectors and tanh(a): one layer's
    /// (lean) or every layer's (cached).
    layers: LayerMem<'w>,
    /// Stored entropies of the cached positions (cached plan), S x L.
    ent_all: &'w mut [f32],
    /// The last position's entropies, L.
    ent_last: &'w mut [f32],
    /// Per-call scratch.
    sc: Scratch<'w>,
}

impl<'w> Mem<'w> {
    /// The final LayerNorm of position n-1 into the scratch row; that row.
    fn final_row(&mut self, model: &Model, n: usize) -> Option<&[f32]> {
        let d = model.dims.d_model;
        let xr = self.x.get((n - 1) * d..n * d)?;
        let h = self.sc.h.get_mut(..d)?;
        final_norm(model, xr, h);
        Some(h)
    }

    // Inlined: with the plan known at the call, the empty parts cost nothing.
    #[inline(always)]
    fn split(buf: &'w mut [f32], dims: &Dims, lay: &Layout) -> Option<Mem<'w>> {
        let (x, rest) = take(buf, lay.x)?;
        let (k, rest) = take(rest, lay.k)?;
        let (v, rest) = take(rest, lay.v)?;
        let (hist, rest) = take(rest, lay.hist)?;
        let (hs, rest) = take(rest, lay.hs)?;
        let (tanh_a, rest) = take(rest, lay.tanh_a)?;
        let (ent_all, rest) = take(rest, lay.ent_all)?;
        let (ent_last, rest) = take(rest, lay.ent_last)?;
        let (sc, _) = Scratch::split(rest, dims, lay.chunk)?;
        Some(Mem { x, layers: LayerMem { k, v, hist, hs, tanh_a }, ent_all, ent_last, sc })
    }

    /// Lean: every layer over all n positions of the window. (Inlined in
    /// the size-first build: its own frame would sit under the layers'.)
    #[cfg_attr(not(feature = "size-first"), inline(never))]
    #[cfg_attr(feature = "size-first", inline(always))]
    fn run_lean(&mut self, model: &Model, toks: &Tokens, n: usize, ent_out: &mut [f32]) {
        let mut layers = OneLayer(&mut self.layers);
        let mut ent = Entropy { last: &mut *self.ent_last, all: ent_out };
        run_layers(model, toks, 0, n, self.x, &mut layers, &mut self.sc, &mut ent);
    }

    /// Cached: only the positions after the stored prefix, when the header
    /// says the stored state belongs to this model and a prefix of `toks`.
    /// (Inlined in the size-first build, as `run_lean`.)
    #[cfg_attr(not(feature = "size-first"), inline(never))]
    #[cfg_attr(feature = "size-first", inline(always))]
    #[allow(clippy::too_many_arguments)]
    fn run_cached(&mut self, hd: &mut CacheHeader, model: &Model, salt: u32, s: usize, toks: &Tokens, n: usize, ent_out: &mut [f32]) {
        let dims = model.dims;
        let key = cached::key(model, salt);
        let p0 = hd.reusable(key, toks, s, dims.vocab);
        let mut layers = AllLayers { all: &mut self.layers, dims: &dims, s };
        let l = dims.n_layers;
        if p0 < n {
            let mut ent = Entropy { last: &mut *self.ent_last, all: &mut *self.ent_all };
            run_layers(model, toks, p0, n, self.x, &mut layers, &mut self.sc, &mut ent);
        } else if let Some(src) = self.ent_all.get((n - 1) * l..n * l) {
            // Nothing new: the last position's entropies are stored.
            copy(self.ent_last, src);
        }
        copy(ent_out, self.ent_all.get(..n * l).unwrap_or(&[]));
        hd.commit(key, toks, n, dims.vocab);
    }
}

/// Runs the model in a caller's memory. Build one per call or keep it: it
/// holds only borrows, and every result is a pure function of the model and
/// the tokens (a cached state reuses only what a fresh call would compute).
pub struct Runner<'w, K: Keep<'w> = Option<CacheHeader<'w>>> {
    mem: Mem<'w>,
    keep: K,
    logits: &'w mut [f32],
    plan: Plan,
    dims: Dims,
    s: usize,
    salt: u32,
}

impl<'w> Runner<'w> {
    /// Floats of work area a runner needs for these dimensions, window `s`
    /// and plan (the logits and the cache header aside).
    pub fn work_floats(dims: &Dims, s: usize, plan: Plan) -> usize {
        let lay = Layout::new(dims, s, plan);
        lay.ent_last_at() + lay.ent_last + Scratch::floats(dims, lay.chunk)
    }

    /// A runner whose plan is chosen at run time; `header` is used by the
    /// cached plan only. None when `work` is shorter than `work_floats`,
    /// `logits` than V or the header's token array than `s`.
    pub fn new(plan: Plan, work: &'w mut [f32], logits: &'w mut [f32], header: CacheHeader<'w>, dims: &Dims, s: usize) -> Option<Runner<'w>> {
        let keep = match plan {
            Plan::Lean => None,
            Plan::Cached => Some(header),
        };
        Runner::with(keep, work, logits, dims, s)
    }

    /// The last position's router entropies (L floats) of the last predict
    /// or classify run in `work` with this plan, read without a runner (the
    /// C API's read-out of a const state). None when `work` is too short.
    pub fn stored_last_entropy<'a>(work: &'a [f32], dims: &Dims, s: usize, plan: Plan) -> Option<&'a [f32]> {
        let lay = Layout::new(dims, s, plan);
        let at = lay.ent_last_at();
        work.get(at..at + lay.ent_last)
    }
}

impl<'w> Runner<'w, NoCache> {
    /// A lean runner: `work` holds at least `work_floats(dims, s, Lean)`.
    #[inline]
    pub fn lean(work: &'w mut [f32], logits: &'w mut [f32], dims: &Dims, s: usize) -> Option<Self> {
        Runner::with(NoCache, work, logits, dims, s)
    }
}

impl<'w> Runner<'w, CacheHeader<'w>> {
    /// A cached runner: `work` holds at least `work_floats(dims, s, Cached)`
    /// and the header's token array `s` ids.
    #[inline]
    pub fn cached(work: &'w mut [f32], logits: &'w mut [f32], header: CacheHeader<'w>, dims: &Dims, s: usize) -> Option<Self> {
        Runner::with(header, work, logits, dims, s)
    }
}

impl<'w, K: Keep<'w>> Runner<'w, K> {
    #[inline(always)]
    fn with(mut keep: K, work: &'w mut [f32], logits: &'w mut [f32], dims: &Dims, s: usize) -> Option<Self> {
        let plan = match keep.header() {
            None => Plan::Lean,
            Some(h) if h.tokens.len() >= s => Plan::Cached,
            Some(_) => return None,
        };
        if logits.len() < dims.vocab {
            return None;
        }
        let mem = Mem::split(work, dims, &Layout::new(dims, s, plan))?;
        Some(Runner { mem, keep, logits, plan, dims: *dims, s, salt: 0 })
    }

    /// Joins `salt` to the cache's model key: the C API passes a hash of the
    /// blob's bytes taken at load, so a blob rewritten in place and loaded
    /// again does not reuse the old caches. No effect on a lean runner.
    #[inline]
    pub fn salted(mut self, salt: u32) -> Self {
        self.salt = salt;
        self
    }

    /// This runner's plan.
    pub fn plan(&self) -> Plan {
        self.plan
    }

    /// Runs every layer over the window of `tokens`; the number of positions
    /// n, or None for an empty list or a model of other dimensions. Then the
    /// residual row n-1 is the last position's. `ent_out` receives the
    /// position-major per-layer entropies when long enough.
    #[inline(always)]
    fn run(&mut self, model: &Model, tokens: &Tokens, ent_out: &mut [f32]) -> Option<usize> {
        let toks = tokens.window(self.s);
        let n = toks.len();
        if n == 0 || model.dims != self.dims {
            return None;
        }
        match self.keep.header() {
            None => self.mem.run_lean(model, &toks, n, ent_out),
            Some(hd) => self.mem.run_cached(hd, model, self.salt, self.s, &toks, n, ent_out),
        }
        Some(n)
    }

    /// The last position's router entropies (L floats) of the last predict
    /// or classify.
    pub fn router_entropy(&self) -> &[f32] {
        self.mem.ent_last
    }
}

impl<'w, K: Keep<'w>> Engine for Runner<'w, K> {
    /// The number of positions run.
    type Last = usize;

    // body and the heads are always inlined: predict and classify are then
    // one function each, as small on the stack as a hand-written one.

    fn window(&self) -> usize {
        self.s
    }

    fn logits(&self) -> &[f32] {
        self.logits.get(..self.dims.vocab).unwrap_or(self.logits)
    }

    fn last_entropy(&self, out: &mut [f32]) {
        copy(out, self.mem.ent_last);
    }

    #[inline(always)]
    fn body(&mut self, model: &Model, tokens: &Tokens) -> Option<usize> {
        self.run(model, tokens, &mut [])
    }

    #[inline(always)]
    fn lm_head(&mut self, model: &Model, n: usize) -> Option<usize> {
        let h = self.mem.final_row(model, n)?;
        Some(head(&model.unembed(), h, self.logits))
    }

    #[inline(always)]
    fn class_head(&mut self, clf: &Classifier, n: usize, out: Option<&mut [f32]>) -> Option<usize> {
        let h = self.mem.final_row(&clf.base, n)?;
        Some(classify_head(clf, h, out))
    }

    fn router_entropy_all(&mut self, model: &Model, tokens: &[i32], out: &mut [f32]) -> Option<usize> {
        let n = tokens.len().min(self.s);
        let out = out.get_mut(..n * self.dims.n_layers)?;
        let run = self.run(model, &Tokens::new(tokens), out)?;
        self.lm_head(model, run)?;
        Some(n)
    }
}

/// A runner's memory held in one value (vectors, arrays): what a Rust
/// caller keeps between calls, as a C caller keeps an atome_state_t.
pub struct State<F, I> {
    /// Memory plan.
    pub plan: Plan,
    /// Model dimensions.
    pub dims: Dims,
    /// Context window.
    pub s: usize,
    /// Work area, `Runner::work_floats(dims, s, plan)` floats.
    pub work: F,
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

impl<F: AsMut<[f32]>, I: AsMut<[i32]>> State<F, I> {
    /// A state over the given buffers (see the fields for their sizes).
    pub fn new(plan: Plan, dims: Dims, s: usize, work: F, logits: F, tokens: I) -> Self {
        State { plan, dims, s, work, logits, magic: 0, fingerprint: 0, len: 0, tokens }
    }

    /// A runner on this memory; None when a buffer is too short.
    pub fn runner(&mut self) -> Option<Runner<'_>> {
        let header = CacheHeader {
            magic: &mut self.magic,
            fingerprint: &mut self.fingerprint,
            len: &mut self.len,
            tokens: self.tokens.as_mut(),
        };
        Runner::new(self.plan, self.work.as_mut(), self.logits.as_mut(), header, &self.dims, self.s)
    }

    /// Forgets any cache, as a freshly zeroed C state.
    pub fn forget(&mut self) {
        self.magic = 0;
    }
}
