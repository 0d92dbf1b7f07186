//! The CLI's state: the library's runner over vectors, for dimensions and a
//! memory plan chosen at run time.
use atome::engine::Engine as _;
use atome::format::{Classifier, Dims, Model};
pub use atome::runner::Plan;
use atome::runner::{Runner, State};

/// A state for one configuration and context length.
pub struct Engine {
    st: State<Vec<f32>, Vec<i32>>,
    /// Logits of the last predict (V floats) or class logits of the last classify.
    pub logits: Vec<f32>,
}

impl Engine {
    /// A fresh state.
    pub fn new(dims: Dims, s: usize, plan: Plan) -> Engine {
        let work = vec![0.0; Runner::work_floats(&dims, s, plan)];
        Engine { st: State::new(plan, dims, s, work, vec![0.0; dims.vocab], vec![0; s]), logits: Vec::new() }
    }

    /// Bytes of working memory (the state, logits aside).
    pub fn state_bytes(&self) -> usize {
        4 * self.st.work.len() + 4 * self.st.tokens.len()
    }

    /// predict_next: the id (first index of the largest logit); logits in self.logits.
    pub fn predict(&mut self, model: &Model, toks: &[i32]) -> Option<usize> {
        let mut r = self.st.runner()?;
        let id = r.predict(model, toks)?;
        self.logits.clear();
        self.logits.extend_from_slice(r.logits());
        Some(id)
    }

    /// classify: the class; class logits in self.logits.
    pub fn classify(&mut self, clf: &Classifier, toks: &[i32]) -> Option<usize> {
        self.logits.resize(clf.head.rows, 0.0);
        self.st.runner()?.classify(clf, toks, Some(&mut self.logits))
    }

    /// Greedy generation (atome_generate's semantics): tokens in out, their count.
    pub fn generate(&mut self, model: &Model, prompt: &[i32], out: &mut [i32]) -> Option<usize> {
        Some(self.st.runner()?.generate_greedy(model, prompt, out))
    }
}
