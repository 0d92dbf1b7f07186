//! atome_predict_next, atome_get_logits, atome_generate, atome_classify.
use super::model::{classifier_view, model_salt, model_view};
use super::types::*;
use crate::config::*;
use crate::format::Model;
use crate::forward::{self, Tokens};
use core::ffi::c_int;

/// Runs the forward pass in `work` with this build's memory plan, then `f`
/// on (final residual row of the last position, D scratch floats, last
/// entropies). `ent_all` receives per-position entropies when long enough.
#[cfg(not(atome_cached))]
pub(crate) fn forward_with<R>(
    state: &mut atome_state_t,
    model: &Model,
    salt: u32,
    toks: &Tokens,
    ent_all: &mut [f32],
    f: impl FnOnce(&[f32], &mut [f32], &[f32], &mut [f32]) -> R,
) -> Option<R> {
    let atome_state_t { logits, work } = state;
    let _ = salt; // a lean state keeps nothing across calls
    let mut mem = forward::lean::LeanMem::split(work, &DIMS, ATOME_MAX_SEQ)?;
    mem.forward(model, toks, ent_all, |xr, h, e| f(xr, h, e, logits))
}

/// As above, for the cached memory plan.
#[cfg(atome_cached)]
pub(crate) fn forward_with<R>(
    state: &mut atome_state_t,
    model: &Model,
    salt: u32,
    toks: &Tokens,
    ent_all: &mut [f32],
    f: impl FnOnce(&[f32], &mut [f32], &[f32], &mut [f32]) -> R,
) -> Option<R> {
    let atome_state_t { logits, work, cache_magic, cache_model, cache_len, cache_tokens } = state;
    let mut meta = forward::cached::CacheMeta {
        magic: cache_magic,
        fingerprint: cache_model,
        n: cache_len,
        tokens: cache_tokens,
    };
    let mut mem = forward::cached::CachedMem::split(work, &DIMS, ATOME_MAX_SEQ)?;
    mem.forward_salted(&mut meta, model, salt, toks, ent_all, |xr, h, e| f(xr, h, e, logits))
}

/// predict_next on a safe view; the id, or None.
pub(crate) fn predict(state: &mut atome_state_t, model: &Model, salt: u32, toks: &Tokens, ent_all: &mut [f32]) -> Option<usize> {
    forward_with(state, model, salt, toks, ent_all, |xr, h, _, logits| {
        forward::final_norm(model, xr, h);
        forward::head(&model.unembed, h, logits)
    })
}

/// Predicts the token after `tokens[0..n]` (the last ATOME_MAX_SEQ of them);
/// the logits are then in state->logits. Returns the id, or -1 for a null
/// pointer, n < 1 or a model that did not load.
///
/// # Safety
/// `model` and `state` are null or valid; `tokens` is null or readable for n ints.
#[no_mangle]
pub unsafe extern "C" fn atome_predict_next(
    model: *const atome_model_t,
    state: *mut atome_state_t,
    tokens: *const c_int,
    n_tokens: c_int,
) -> c_int {
    if state.is_null() || tokens.is_null() || n_tokens < 1 {
        return -1;
    }
    // SAFETY: checked for null; validity per the contract.
    let Some(m) = (unsafe { model_view(model) }) else { return -1 };
    // SAFETY: readable for n_tokens ints per the contract.
    let toks = unsafe { core::slice::from_raw_parts(tokens as *const i32, n_tokens as usize) };
    // SAFETY: non-null, exclusive for the call.
    let st = unsafe { &mut *state };
    // SAFETY: as model_view above.
    let salt = unsafe { model_salt(model) };
    match predict(st, &m, salt, &Tokens::new(toks), &mut []) {
        Some(id) => id as c_int,
        None => -1,
    }
}

/// The V logits of the last predict_next (state->logits); null for a null state.
///
/// # Safety
/// `state` is null or valid.
#[no_mangle]
pub unsafe extern "C" fn atome_get_logits(state: *mut atome_state_t) -> *const f32 {
    if state.is_null() {
        return core::ptr::null();
    }
    // SAFETY: non-null; only the field's address is taken.
    unsafe { core::ptr::addr_of!((*state).logits) as *const f32 }
}

/// Greedy (or sampled, with `pick`) generation shared by both entry points.
pub(crate) fn generate_with(
    state: &mut atome_state_t,
    model: &Model,
    salt: u32,
    prompt: &[i32],
    out: &mut [i32],
    mut pick: impl FnMut(usize, &[f32]) -> usize,
) -> usize {
    if prompt.len() >= ATOME_MAX_SEQ {
        return 0;
    }
    let mut count = 0;
    while count < out.len() && prompt.len() + count < ATOME_MAX_SEQ {
        let (done, rest) = out.split_at_mut(count);
        let toks = Tokens { head: prompt, tail: done };
        let Some(greedy) = predict(state, model, salt, &toks, &mut []) else { break };
        let next = pick(greedy, &state.logits);
        let Some(slot) = rest.first_mut() else { break };
        *slot = next as i32;
        count += 1;
    }
    count
}

/// Output ints a generate call can write: max_tokens, but never past the window.
pub(crate) fn room(prompt_len: c_int, max_tokens: c_int) -> usize {
    (max_tokens.max(0) as usize).min(ATOME_MAX_SEQ.saturating_sub(prompt_len.max(0) as usize))
}

/// Greedy continuation: appends predict_next of the working sequence (the
/// prompt, then what was generated) while fewer than max_tokens were made and
/// the sequence is shorter than ATOME_MAX_SEQ. Returns the count; 0 for null
/// pointers, prompt_len < 1, max_tokens < 1 or a prompt that fills the window.
///
/// # Safety
/// Pointers null or valid: prompt readable for prompt_len ints, output
/// writable for max_tokens ints.
#[no_mangle]
pub unsafe extern "C" fn atome_generate(
    model: *const atome_model_t,
    state: *mut atome_state_t,
    prompt: *const c_int,
    prompt_len: c_int,
    output: *mut c_int,
    max_tokens: c_int,
) -> c_int {
    if state.is_null() || prompt.is_null() || output.is_null() || prompt_len < 1 || max_tokens < 1 {
        return 0;
    }
    // SAFETY: checked for null; validity per the contract.
    let Some(m) = (unsafe { model_view(model) }) else { return 0 };
    let room = room(prompt_len, max_tokens);
    // SAFETY: per the contract; at most `room` ints are ever written (the
    // reference's bound), so no longer slice is formed over the output.
    let (p, out, st, salt) = unsafe {
        (
            core::slice::from_raw_parts(prompt as *const i32, prompt_len as usize),
            core::slice::from_raw_parts_mut(output as *mut i32, room),
            &mut *state,
            model_salt(model),
        )
    };
    generate_with(st, &m, salt, p, out, |g, _| g) as c_int
}

/// Classifies `tokens[0..n]`: the forward pass to the final LayerNorm of the
/// last position, then the head. Writes n_classes logits to class_logits when
/// it is non-null; returns the class, or -1 for a null pointer, n < 1 or a
/// classifier that did not load.
///
/// # Safety
/// Pointers null or valid; class_logits writable for n_classes floats.
#[no_mangle]
pub unsafe extern "C" fn atome_classify(
    clf: *const atome_classifier_t,
    state: *mut atome_state_t,
    tokens: *const c_int,
    n_tokens: c_int,
    class_logits: *mut f32,
) -> c_int {
    if state.is_null() || tokens.is_null() || n_tokens < 1 {
        return -1;
    }
    // SAFETY: checked for null; validity per the contract.
    let Some(c) = (unsafe { classifier_view(clf) }) else { return -1 };
    // SAFETY: per the contract.
    let toks = unsafe { core::slice::from_raw_parts(tokens as *const i32, n_tokens as usize) };
    // SAFETY: non-null, exclusive for the call.
    let st = unsafe { &mut *state };
    let nc = c.head.rows;
    // SAFETY: clf was checked by classifier_view.
    let salt = unsafe { model_salt(&(*clf).base) };
    let r = forward_with(st, &c.base, salt, &Tokens::new(toks), &mut [], |xr, h, _, _| {
        forward::final_norm(&c.base, xr, h);
        if class_logits.is_null() {
            forward::classify_head(&c, h, None)
        } else {
            // SAFETY: writable for n_classes floats per the contract.
            let out = unsafe { core::slice::from_raw_parts_mut(class_logits, nc) };
            forward::classify_head(&c, h, Some(out))
        }
    });
    match r {
        Some(k) => k as c_int,
        None => -1,
    }
}
