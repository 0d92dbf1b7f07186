//! Runs the library's generic forward pass for dimensions chosen at run time.
use atome::format::{Classifier, Dims, Model};
use atome::forward::cached::{CacheMeta, CachedMem};
use atome::forward::lean::LeanMem;
use atome::forward::{classify_head, final_norm, head, Tokens};

/// Memory plan (the same two the C API can be built with).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Plan {
    /// Everything recomputed at each call.
    Lean,
    /// Every layer's caches kept: a call that extends the last token list
    /// computes only the new positions.
    Cached,
}

impl Plan {
    /// Name.
    pub fn name(self) -> &'static str {
        match self {
            Plan::Lean => "lean",
            Plan::Cached => "cached",
        }
    }
}

/// A state for one configuration and context length.
pub struct Engine {
    dims: Dims,
    s: usize,
    plan: Plan,
    work: Vec<f32>,
    magic: u32,
    fingerprint: u32,
    n: u32,
    cache_tokens: Vec<i32>,
    /// Logits of the last predict (V floats) or class logits of the last classify.
    pub logits: Vec<f32>,
}

impl Engine {
    /// A fresh state.
    pub fn new(dims: Dims, s: usize, plan: Plan) -> Engine {
        let floats = match plan {
            Plan::Lean => LeanMem::floats(&dims, s),
            Plan::Cached => CachedMem::floats(&dims, s),
        };
        Engine {
            dims,
            s,
            plan,
            work: vec![0.0; floats],
            magic: 0,
            fingerprint: 0,
            n: 0,
            cache_tokens: vec![0; s],
            logits: vec![0.0; dims.vocab],
        }
    }

    /// Bytes of working memory (the state, logits aside).
    pub fn state_bytes(&self) -> usize {
        4 * self.work.len() + 4 * self.cache_tokens.len()
    }

    fn forward<R>(&mut self, model: &Model, toks: &[i32], f: impl FnOnce(&[f32], &mut [f32]) -> R) -> Option<R> {
        let t = Tokens::new(toks);
        match self.plan {
            Plan::Lean => {
                let mut m = LeanMem::split(&mut self.work, &self.dims, self.s)?;
                m.forward(model, &t, &mut [], |xr, h, _| f(xr, h))
            }
            Plan::Cached => {
                let mut meta = CacheMeta {
                    magic: &mut self.magic,
                    fingerprint: &mut self.fingerprint,
                    n: &mut self.n,
                    tokens: &mut self.cache_tokens,
                };
                let mut m = CachedMem::split(&mut self.work, &self.dims, self.s)?;
                m.forward(&mut meta, model, &t, &mut [], |xr, h, _| f(xr, h))
            }
        }
    }

    /// predict_next: the id (first index of the largest logit); logits in self.logits.
    pub fn predict(&mut self, model: &Model, toks: &[i32]) -> Option<usize> {
        let mut logits = std::mem::take(&mut self.logits);
        logits.resize(model.dims.vocab, 0.0);
        let r = self.forward(model, toks, |xr, h| {
            final_norm(model, xr, h);
            head(&model.unembed, h, &mut logits)
        });
        self.logits = logits;
        r
    }

    /// classify: the class; class logits in self.logits.
    pub fn classify(&mut self, clf: &Classifier, toks: &[i32]) -> Option<usize> {
        let mut out = std::mem::take(&mut self.logits);
        out.resize(clf.head.rows, 0.0);
        let r = self.forward(&clf.base, toks, |xr, h| {
            final_norm(&clf.base, xr, h);
            classify_head(clf, h, Some(&mut out))
        });
        self.logits = out;
        r
    }
}
