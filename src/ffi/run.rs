//! atome_predict_next, atome_get_logits, atome_generate, atome_classify: null
//! checks and slices around this build's [`crate::engine::Engine`].
use super::model::{classifier_view, model_salt, model_view};
use super::engine::{state_runner, StateRunner};
use super::types::*;
use crate::config::*;
use crate::engine::Engine;
use crate::format::Model;
use core::ffi::c_int;

/// Runs `f` on the model's view and the state's runner (keyed to the
/// model's load); None for a model that did not load.
///
/// # Safety
/// `model` null or valid; `state` non-null, valid and not otherwise
/// referenced during the call.
#[inline(always)]
pub(crate) unsafe fn with_runner<R>(
    model: *const atome_model_t,
    state: *mut atome_state_t,
    f: impl FnOnce(&Model, &mut StateRunner) -> Option<R>,
) -> Option<R> {
    // SAFETY: per this function's contract.
    let (m, st, salt) = unsafe { (model_view(model), &mut *state, model_salt(model)) };
    // Matched in place (not moved out of the Options): no copies of the
    // model view and the runner on a microcontroller's stack.
    match (&m, &mut state_runner(st, salt)) {
        (Some(m), Some(r)) => f(m, r),
        _ => None,
    }
}

/// `n` ints at `p` (n >= 1).
///
/// # Safety
/// `p` readable for n ints, unchanged during the call.
#[inline(always)]
pub(crate) unsafe fn ints<'a>(p: *const c_int, n: c_int) -> &'a [i32] {
    // SAFETY: per this function's contract.
    unsafe { core::slice::from_raw_parts(p, n as usize) }
}

/// The id, or -1.
fn id_or_error(r: Option<usize>) -> c_int {
    match r {
        Some(id) => id as c_int,
        None => -1,
    }
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
    // SAFETY: checked for null; validity per the contract (tokens readable
    // for n_tokens ints).
    id_or_error(unsafe { with_runner(model, state, |m, r| r.predict(m, ints(tokens, n_tokens))) })
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

/// Output ints a generate call can write: max_tokens, but never past the window.
fn room(prompt_len: c_int, max_tokens: c_int) -> usize {
    (max_tokens.max(0) as usize).min(ATOME_MAX_SEQ.saturating_sub(prompt_len.max(0) as usize))
}

/// Runs `f` on the model's view, the state's runner, the prompt and the
/// output ints a generate call may write; 0 for a null pointer,
/// prompt_len < 1, max_tokens < 1 or a model that did not load. The
/// prompt and the output come as (pointer, length) pairs.
///
/// # Safety
/// As atome_generate.
#[inline(always)]
pub(crate) unsafe fn generate_call(
    model: *const atome_model_t,
    state: *mut atome_state_t,
    (prompt, prompt_len): (*const c_int, c_int),
    (output, max_tokens): (*mut c_int, c_int),
    f: impl FnOnce(&Model, &mut StateRunner, &[i32], &mut [i32]) -> usize,
) -> c_int {
    if state.is_null() || prompt.is_null() || output.is_null() || prompt_len < 1 || max_tokens < 1 {
        return 0;
    }
    let room = room(prompt_len, max_tokens);
    // SAFETY: per the contract; at most `room` ints are ever written (the
    // reference's bound), so no longer slice is formed over the output.
    let r = unsafe {
        with_runner(model, state, |m, r| {
            Some(f(m, r, ints(prompt, prompt_len), core::slice::from_raw_parts_mut(output, room)))
        })
    };
    r.unwrap_or(0) as c_int
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
    // SAFETY: the contract is this function's.
    unsafe { generate_call(model, state, (prompt, prompt_len), (output, max_tokens), |m, r, p, out| r.generate_greedy(m, p, out)) }
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
    // SAFETY: per the contract (tokens readable, state exclusive, clf
    // checked by classifier_view).
    let (toks, st, salt) = unsafe { (ints(tokens, n_tokens), &mut *state, model_salt(&(*clf).base)) };
    let out = if class_logits.is_null() {
        None
    } else {
        // SAFETY: writable for n_classes floats per the contract.
        Some(unsafe { core::slice::from_raw_parts_mut(class_logits, c.head.rows) })
    };
    id_or_error(state_runner(st, salt).and_then(|mut r| r.classify(&c, toks, out)))
}
