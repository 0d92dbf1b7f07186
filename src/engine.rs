//! What the two inference engines share: [`Engine`], the calls a caller
//! makes (predict, logits, classify, generate, router entropy), implemented
//! by the float [`crate::runner::Runner`] and the integer
//! [`crate::q15::Q15Runner`]. Each engine gives its forward pass and its two
//! heads; predict, classify and the generation loops are written here once.
//! The C APIs name one engine type per build and call it through this trait.
use crate::format::{Classifier, Model};
use crate::forward::sample::{sampled_pick, Sampling};
use crate::forward::tokens::generate_loop;
use crate::forward::Tokens;

/// An inference engine over caller-owned memory.
pub trait Engine {
    /// What the heads read of the last position after [`Engine::body`].
    type Last: Copy;

    /// The context window S: the model sees the last S tokens.
    fn window(&self) -> usize;

    /// The V logits of the last predict.
    fn logits(&self) -> &[f32];

    /// Writes the router entropy (nats) of each layer at the last position
    /// of the last predict or classify into `out` (L floats, or fewer when
    /// `out` is shorter).
    fn last_entropy(&self, out: &mut [f32]);

    /// Runs every layer of `model` over the window of `tokens`; None for an
    /// empty list or a model of other dimensions.
    fn body(&mut self, model: &Model, tokens: &Tokens) -> Option<Self::Last>;

    /// The final LayerNorm of the last position and the language-model
    /// head into [`Engine::logits`]; the first largest logit's id.
    fn lm_head(&mut self, model: &Model, last: Self::Last) -> Option<usize>;

    /// [`Engine::lm_head`]'s id for a greedy generation step; `fin`: the
    /// call's last step. A step before the last has its logits read by
    /// nobody: an engine that can find the first largest logit without
    /// writing every logit does so there, and leaves [`Engine::logits`]
    /// unspecified.
    fn lm_pick(&mut self, model: &Model, last: Self::Last, fin: bool) -> Option<usize> {
        let _ = fin;
        self.lm_head(model, last)
    }

    /// The final LayerNorm of the last position and the classifier's head:
    /// the class logits into `out` when given; the first largest class.
    fn class_head(&mut self, clf: &Classifier, last: Self::Last, out: Option<&mut [f32]>) -> Option<usize>;

    /// predict_next that also writes the router entropy of every layer at
    /// every position of the window: out[t * L + l]. Returns the positions
    /// n = min(len, S); None as predict, when `out` is shorter than n * L,
    /// or for an engine that keeps the last position's entropies only.
    fn router_entropy_all(&mut self, model: &Model, tokens: &[i32], out: &mut [f32]) -> Option<usize>;

    /// predict_next on a token list given as [`Tokens`].
    fn predict_tokens(&mut self, model: &Model, tokens: &Tokens) -> Option<usize> {
        self.predict_pick(model, tokens, true)
    }

    /// [`Engine::predict_tokens`] as a generation step ([`Engine::lm_pick`]:
    /// `fin` false, the logits need not be written, nor the router
    /// entropies: the call's last step writes both). One body for predict
    /// and generate.
    fn predict_pick(&mut self, model: &Model, tokens: &Tokens, fin: bool) -> Option<usize> {
        let last = self.body(model, tokens)?;
        self.lm_pick(model, last, fin)
    }

    /// predict_next: the id of the token after the last S of `tokens` (the
    /// first index of the largest logit); the logits are then
    /// [`Engine::logits`]. None for an empty list or a model of other
    /// dimensions.
    fn predict(&mut self, model: &Model, tokens: &[i32]) -> Option<usize> {
        self.predict_tokens(model, &Tokens::new(tokens))
    }

    /// classify: the forward pass of the classifier's body, its final
    /// LayerNorm at the last position, then the head. Writes the class
    /// logits to `out` when given; returns the class (the first largest).
    fn classify(&mut self, clf: &Classifier, tokens: &[i32], out: Option<&mut [f32]>) -> Option<usize> {
        let last = self.body(&clf.base, &Tokens::new(tokens))?;
        self.class_head(clf, last, out)
    }

    /// Generation: while fewer than out.len() tokens were made and the
    /// sequence (prompt, then what was made) is shorter than S, predicts the
    /// next token and appends `pick(greedy id, logits)`. Returns the count;
    /// 0 for a prompt that fills the window. `logits`: whether `pick` reads
    /// the logits at every step; else only the last step's are written
    /// ([`Engine::lm_pick`]), and [`Engine::logits`] after the call are
    /// that step's either way.
    fn generate(&mut self, model: &Model, prompt: &[i32], out: &mut [i32], logits: bool, mut pick: impl FnMut(usize, &[f32]) -> usize) -> usize
    where
        Self: Sized,
    {
        let (s, n) = (self.window(), out.len());
        generate_loop(s, prompt, out, |toks| {
            let greedy = self.predict_pick(model, toks, logits || toks.len() + 1 >= s || toks.tail.len() + 1 >= n)?;
            Some(pick(greedy, self.logits()))
        })
    }

    /// Greedy generation (atome_generate).
    fn generate_greedy(&mut self, model: &Model, prompt: &[i32], out: &mut [i32]) -> usize
    where
        Self: Sized,
    {
        self.generate(model, prompt, out, false, |greedy, _| greedy)
    }

    /// Sampled generation (atome_generate_sampled): one splitmix64 draw from
    /// `seed` per token, or exactly the greedy tokens when the temperature
    /// is not above 0.
    fn generate_sampled(&mut self, model: &Model, prompt: &[i32], out: &mut [i32], p: &Sampling, seed: u64) -> usize
    where
        Self: Sized,
    {
        self.generate(model, prompt, out, true, sampled_pick(p, seed))
    }
}
