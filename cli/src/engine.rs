//! The CLI's state: the library's runners over vectors, for dimensions, an
//! arithmetic (float or q15) and a memory plan chosen at run time. Each mode
//! is the library's own safe type (`runner::State`, `q15::Q15State`,
//! `q15::Q15CachedState`), run through `modes::AnyRunner`, the one the
//! runtime C API runs.
use atome::engine::Engine as _;
use atome::format::{Classifier, Dims, Model};
use atome::modes::AnyRunner;
pub use atome::modes::{Dtype, Mode};
pub use atome::runner::Plan;
use atome::q15::{Q15CachedLayout, Q15CachedState, Q15Layout, Q15State};
use atome::runner::{Runner, State};

/// One mode's memory.
enum Mem {
    F32(State<Vec<f32>, Vec<i32>>),
    Q15(Q15State<Vec<i16>, Vec<i32>, Vec<f32>>),
    Q15Cached(Q15CachedState<Vec<i16>, Vec<i32>, Vec<f32>, Vec<i32>>),
}

/// A state for one configuration, context length and mode.
pub struct Engine {
    mem: Mem,
    /// Logits of the last predict (V floats) or class logits of the last classify.
    pub logits: Vec<f32>,
}

impl Engine {
    /// A fresh state.
    pub fn new(dims: Dims, s: usize, mode: Mode) -> Engine {
        let v = dims.vocab;
        let mem = match (mode.dtype, mode.plan) {
            (Dtype::F32, plan) => {
                let work = vec![0.0; Runner::work_floats(&dims, s, plan)];
                Mem::F32(State::new(plan, dims, s, work, vec![0.0; v], vec![0; s]))
            }
            (Dtype::Q15, Plan::Lean) => {
                let lay = Q15Layout::new(&dims, s);
                Mem::Q15(Q15State::new(dims, s, vec![0; lay.i16s], vec![0; lay.i32s], vec![0.0; v]))
            }
            (Dtype::Q15, Plan::Cached) => {
                let lay = Q15CachedLayout::new(&dims, s);
                Mem::Q15Cached(Q15CachedState::new(dims, s, vec![0; lay.i16s], vec![0; lay.i32s], vec![0.0; v], vec![0; s]))
            }
        };
        Engine { mem, logits: Vec::new() }
    }

    /// Bytes of working memory (the state, logits aside).
    pub fn state_bytes(&self) -> usize {
        match &self.mem {
            Mem::F32(st) => 4 * st.work.len() + 4 * st.tokens.len(),
            Mem::Q15(st) => 2 * st.i16s.len() + 4 * st.i32s.len(),
            Mem::Q15Cached(st) => 2 * st.i16s.len() + 4 * st.i32s.len() + 4 * st.tokens.len() + 12,
        }
    }

    /// The runner of this state's mode.
    fn runner(&mut self) -> Option<AnyRunner<'_>> {
        match &mut self.mem {
            Mem::F32(st) => st.runner().map(AnyRunner::F32),
            Mem::Q15(st) => st.runner().map(AnyRunner::Q15),
            Mem::Q15Cached(st) => st.runner().map(AnyRunner::Q15Cached),
        }
    }

    /// predict_next: the id (first index of the largest logit); logits in self.logits.
    pub fn predict(&mut self, model: &Model, toks: &[i32]) -> Option<usize> {
        let mut r = self.runner()?;
        let id = r.predict(model, toks)?;
        let lg = r.logits().to_vec();
        self.logits = lg;
        Some(id)
    }

    /// classify: the class; class logits in self.logits.
    pub fn classify(&mut self, clf: &Classifier, toks: &[i32]) -> Option<usize> {
        let mut out = vec![0.0; clf.head.rows];
        let k = self.runner()?.classify(clf, toks, Some(&mut out))?;
        self.logits = out;
        Some(k)
    }

    /// Greedy generation (atome_generate's semantics): tokens in out, their count.
    pub fn generate(&mut self, model: &Model, prompt: &[i32], out: &mut [i32]) -> Option<usize> {
        Some(self.runner()?.generate_greedy(model, prompt, out))
    }
}
