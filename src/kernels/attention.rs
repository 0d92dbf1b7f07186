//! Sparse attention: scores, top-k selection and the weighted sum of values.
//!
//! Slots are two parallel slices: `score` and `idx`. An index slot holds the
//! key number's bits (`f32::from_bits(j)`, read back with [`slot_key`]) so
//! slots live in the float scratch without a float-integer conversion per
//! use; copies keep bits, and no arithmetic ever touches them.
// `!(a > b)` is meant: it is true when either side is NaN.
#![allow(clippy::neg_cmp_op_on_partial_ord)]
use super::keys::{score_keys, KeyLayout, Rows};
use super::lanes::Scalar;
use super::softmax;

/// Index bits of a slot no key filled.
pub const NO_INDEX: u32 = u32::MAX;

/// The key number a slot holds, or None for an empty slot.
#[inline(always)]
pub fn slot_key(ix: f32) -> Option<usize> {
    let b = ix.to_bits();
    if b == NO_INDEX {
        None
    } else {
        Some(b as usize)
    }
}

/// Resets k_eff slots (score -1e30, no index).
pub fn clear_slots(score: &mut [f32], idx: &mut [f32]) {
    for s in score.iter_mut() {
        *s = -1e30;
    }
    for i in idx.iter_mut() {
        *i = f32::from_bits(NO_INDEX);
    }
}

/// Scores keys 0..=t (rows of `keys`, `dh` floats each) against q and keeps
/// the best score.len() of them (the caller passes k_eff slots): the one
/// scoring routine, [`score_keys`], on a cache of rows, one key at a time.
pub fn score_topk(q: &[f32], keys: &[f32], dh: usize, t: usize, inv_sqrt_dh: f32, score: &mut [f32], idx: &mut [f32]) {
    score_keys::<Rows, Scalar<1>, 1>(q, keys, Rows::new(keys.len(), dh), t, inv_sqrt_dh, score, idx);
}

/// Inserts a scored key: it replaces the last slot when strictly greater, then
/// bubbles toward the front while strictly greater than its neighbour, so ties
/// keep the earlier key.
// Out of line on microcontrollers (code size); inlined where vectors score keys.
#[cfg_attr(not(atome_portable), inline)]
#[cfg_attr(atome_portable, inline(never))]
pub fn insert(score: &mut [f32], idx: &mut [f32], s: f32, j: usize) {
    let n = score.len().min(idx.len());
    let (score, idx) = (&mut score[..n], &mut idx[..n]);
    let Some(last) = n.checked_sub(1) else { return };
    if !super::device::sf::gt(s, score[last]) {
        return;
    }
    score[last] = s;
    idx[last] = f32::from_bits(j as u32);
    let mut i = last;
    while i > 0 && super::device::sf::gt(score[i], score[i - 1]) {
        score.swap(i, i - 1);
        idx.swap(i, i - 1);
        i -= 1;
    }
}

/// Turns slot scores into probabilities in place (softmax over all k_eff slots).
pub fn slot_probs(score: &mut [f32]) {
    softmax(score);
}

/// The sparse output of one channel: +0.0, then + p_i * val_{idx_i}[ch] for
/// each slot in order; slots without an index contribute nothing.
#[inline]
pub fn attend_channel(p: &[f32], idx: &[f32], values: &[f32], d: usize, ch: usize) -> f32 {
    let mut o = 0.0f32;
    for (&pi, &ix) in p.iter().zip(idx) {
        if let Some(&v) = slot_key(ix).and_then(|j| values.get(j * d + ch)) {
            o = super::device::sf::mul_add(o, pi, v);
        }
    }
    o
}
