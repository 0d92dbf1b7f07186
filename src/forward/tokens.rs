//! Token lists as the forward pass reads them.

/// A token list that may be two slices back to back (prompt + generated).
#[derive(Clone, Copy)]
pub struct Tokens<'a> {
    /// First part.
    pub head: &'a [i32],
    /// Second part.
    pub tail: &'a [i32],
}

impl<'a> Tokens<'a> {
    /// One slice.
    pub fn new(t: &'a [i32]) -> Self {
        Tokens { head: t, tail: &[] }
    }
    /// Total length.
    pub fn len(&self) -> usize {
        self.head.len() + self.tail.len()
    }
    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Raw id at i.
    pub fn raw(&self, i: usize) -> i32 {
        match self.head.get(i) {
            Some(&t) => t,
            None => self.tail.get(i - self.head.len()).copied().unwrap_or(0),
        }
    }
    /// The list without its first k tokens.
    pub fn skip(&self, k: usize) -> Tokens<'a> {
        if k <= self.head.len() {
            Tokens { head: &self.head[k..], tail: self.tail }
        } else {
            let k2 = (k - self.head.len()).min(self.tail.len());
            Tokens { head: &[], tail: &self.tail[k2..] }
        }
    }
    /// The last `s` tokens (the context window).
    pub fn window(&self, s: usize) -> Tokens<'a> {
        self.skip(self.len().saturating_sub(s))
    }
    /// Id at i as the model reads it: outside [0, vocab) reads as 0.
    pub fn id(&self, i: usize, vocab: usize) -> usize {
        let t = self.raw(i);
        if t < 0 || t as usize >= vocab {
            0
        } else {
            t as usize
        }
    }
}

/// The generation loop of both arithmetic modes: while fewer than out.len()
/// tokens were made and the sequence (prompt, then what was made) is
/// shorter than `s`, `next` predicts from the sequence so far and gives the
/// token to append (None stops). Returns the count; 0 for a prompt that
/// fills the window. Always inlined: an out-of-line copy costs its own stack
/// frame under the forward pass (measured: +128 B peak on Cortex-M0).
#[inline(always)]
pub fn generate_loop(s: usize, prompt: &[i32], out: &mut [i32], mut next: impl FnMut(&Tokens) -> Option<usize>) -> usize {
    if prompt.len() >= s {
        return 0;
    }
    let mut count = 0;
    while count < out.len() && prompt.len() + count < s {
        let (done, rest) = out.split_at_mut(count);
        let Some(tok) = next(&Tokens { head: prompt, tail: done }) else { break };
        let Some(slot) = rest.first_mut() else { break };
        *slot = tok as i32;
        count += 1;
    }
    count
}
