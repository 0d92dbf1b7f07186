//! The four ways to run a model, chosen at run time: float or q15
//! arithmetic ([`Dtype`]), lean or cached memory plan ([`Plan`]), as one
//! [`Engine`]: [`AnyRunner`]. The runtime C API (`atome_rt_*`, any build)
//! and the CLI run every mode through it; each variant is the mode's own
//! runner, so the results are that runner's bits.
use crate::engine::Engine;
use crate::format::{Classifier, Model};
use crate::forward::Tokens;
use crate::q15::{Q15CachedRunner, Q15Runner};
use crate::runner::{Plan, Runner};

/// Arithmetic of a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dtype {
    /// The float engine (docs/ARITHMETIC.md): the reference's bits.
    F32,
    /// The q15 integer engine (docs/Q15.md).
    Q15,
}

impl Dtype {
    /// "f32" or "q15" (the ATOME_DTYPE values).
    pub fn name(self) -> &'static str {
        match self {
            Dtype::F32 => "f32",
            Dtype::Q15 => "q15",
        }
    }
}

/// A mode: arithmetic and memory plan.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mode {
    /// Arithmetic.
    pub dtype: Dtype,
    /// Memory plan.
    pub plan: Plan,
}

impl Mode {
    /// The four modes.
    pub const ALL: [Mode; 4] = [
        Mode { dtype: Dtype::F32, plan: Plan::Lean },
        Mode { dtype: Dtype::F32, plan: Plan::Cached },
        Mode { dtype: Dtype::Q15, plan: Plan::Lean },
        Mode { dtype: Dtype::Q15, plan: Plan::Cached },
    ];
}

/// The runner of one mode, over a caller's memory.
pub enum AnyRunner<'w> {
    /// Float, either plan.
    F32(Runner<'w>),
    /// q15, lean plan.
    Q15(Q15Runner<'w>),
    /// q15, cached plan.
    Q15Cached(Q15CachedRunner<'w>),
}

impl AnyRunner<'_> {
    /// This runner's mode.
    pub fn mode(&self) -> Mode {
        match self {
            AnyRunner::F32(r) => Mode { dtype: Dtype::F32, plan: r.plan() },
            AnyRunner::Q15(_) => Mode { dtype: Dtype::Q15, plan: Plan::Lean },
            AnyRunner::Q15Cached(_) => Mode { dtype: Dtype::Q15, plan: Plan::Cached },
        }
    }
}

/// What the heads read of the last position: the float runner's position
/// count or the q15 runners' final row exponent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AnyLast {
    /// From the float runner.
    F32(usize),
    /// From a q15 runner.
    Q15(i32),
}

impl Engine for AnyRunner<'_> {
    type Last = AnyLast;

    fn window(&self) -> usize {
        match self {
            AnyRunner::F32(r) => r.window(),
            AnyRunner::Q15(r) => r.window(),
            AnyRunner::Q15Cached(r) => r.window(),
        }
    }

    fn logits(&self) -> &[f32] {
        match self {
            AnyRunner::F32(r) => r.logits(),
            AnyRunner::Q15(r) => r.logits(),
            AnyRunner::Q15Cached(r) => r.logits(),
        }
    }

    fn last_entropy(&self, out: &mut [f32]) {
        match self {
            AnyRunner::F32(r) => r.last_entropy(out),
            AnyRunner::Q15(r) => r.last_entropy(out),
            AnyRunner::Q15Cached(r) => r.last_entropy(out),
        }
    }

    fn body(&mut self, model: &Model, tokens: &Tokens) -> Option<AnyLast> {
        match self {
            AnyRunner::F32(r) => r.body(model, tokens).map(AnyLast::F32),
            AnyRunner::Q15(r) => r.body(model, tokens).map(AnyLast::Q15),
            AnyRunner::Q15Cached(r) => r.body(model, tokens).map(AnyLast::Q15),
        }
    }

    fn lm_head(&mut self, model: &Model, last: AnyLast) -> Option<usize> {
        match (self, last) {
            (AnyRunner::F32(r), AnyLast::F32(n)) => r.lm_head(model, n),
            (AnyRunner::Q15(r), AnyLast::Q15(e)) => r.lm_head(model, e),
            (AnyRunner::Q15Cached(r), AnyLast::Q15(e)) => r.lm_head(model, e),
            _ => None,
        }
    }

    fn lm_pick(&mut self, model: &Model, last: AnyLast, fin: bool) -> Option<usize> {
        match (self, last) {
            (AnyRunner::F32(r), AnyLast::F32(n)) => r.lm_pick(model, n, fin),
            (AnyRunner::Q15(r), AnyLast::Q15(e)) => r.lm_pick(model, e, fin),
            (AnyRunner::Q15Cached(r), AnyLast::Q15(e)) => r.lm_pick(model, e, fin),
            _ => None,
        }
    }

    fn class_head(&mut self, clf: &Classifier, last: AnyLast, out: Option<&mut [f32]>) -> Option<usize> {
        match (self, last) {
            (AnyRunner::F32(r), AnyLast::F32(n)) => r.class_head(clf, n, out),
            (AnyRunner::Q15(r), AnyLast::Q15(e)) => r.class_head(clf, e, out),
            (AnyRunner::Q15Cached(r), AnyLast::Q15(e)) => r.class_head(clf, e, out),
            _ => None,
        }
    }

    fn router_entropy_all(&mut self, model: &Model, tokens: &[i32], out: &mut [f32]) -> Option<usize> {
        match self {
            AnyRunner::F32(r) => r.router_entropy_all(model, tokens, out),
            AnyRunner::Q15(r) => r.router_entropy_all(model, tokens, out),
            AnyRunner::Q15Cached(r) => r.router_entropy_all(model, tokens, out),
        }
    }
}
