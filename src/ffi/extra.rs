//! Beyond the reference: build configuration, router entropy, sampled generation.
use super::engine::stored_entropy;
use super::run::{generate_call, ints, with_runner};
use super::types::*;
use crate::config::*;
use crate::engine::Engine;
use crate::forward::sample::Sampling;
use core::ffi::c_int;

/// Writes the configuration this library was built with. 0, or -1 for null.
///
/// # Safety
/// `out` is null or writable.
#[no_mangle]
pub unsafe extern "C" fn atome_get_build_config(out: *mut atome_build_config_t) -> c_int {
    if out.is_null() {
        return -1;
    }
    let c = atome_build_config_t {
        vocab_size: ATOME_VOCAB_SIZE as i32,
        d_model: ATOME_D_MODEL as i32,
        max_seq: ATOME_MAX_SEQ as i32,
        n_layers: ATOME_N_LAYERS as i32,
        n_pathways: ATOME_N_PATHWAYS as i32,
        d_head: ATOME_D_HEAD as i32,
        kernel_size: ATOME_KERNEL_SIZE as i32,
        top_k: ATOME_TOP_K as i32,
        max_classes: ATOME_MAX_CLASSES as i32,
        // Bit 0: the cached plan; bit 1: the q15 integer mode
        // (ATOME_DTYPE=q15); bit 2: the tiny plan (ATOME_STATE=tiny).
        state_cached: (ATOME_STATE_CACHED | ATOME_DTYPE_Q15 << 1 | ATOME_STATE_TINY << 2) as i32,
        state_size: core::mem::size_of::<atome_state_t>() as u32,
        model_size: core::mem::size_of::<atome_model_t>() as u32,
        classifier_size: core::mem::size_of::<atome_classifier_t>() as u32,
    };
    // SAFETY: non-null and writable per the contract.
    unsafe { out.write(c) };
    0
}

/// Router entropy (nats, at most ln 3) of each layer at the last position of
/// the last predict_next or classify on this state: writes ATOME_N_LAYERS
/// floats and returns ATOME_N_LAYERS; -1 for a null pointer. Before any
/// forward pass the values are unspecified (but finite memory is read).
///
/// # Safety
/// `state` null or valid; `out` null or writable for ATOME_N_LAYERS floats.
#[no_mangle]
pub unsafe extern "C" fn atome_router_entropy(state: *const atome_state_t, out: *mut f32) -> c_int {
    if state.is_null() || out.is_null() {
        return -1;
    }
    // SAFETY: non-null, readable.
    let st = unsafe { &*state };
    // SAFETY: writable for ATOME_N_LAYERS floats.
    let dst = unsafe { core::slice::from_raw_parts_mut(out, ATOME_N_LAYERS) };
    if !stored_entropy(st, dst) {
        return -1;
    }
    ATOME_N_LAYERS as c_int
}

/// Runs predict_next on `tokens` (so state->logits is updated as by
/// atome_predict_next) and writes the router entropy of every layer at every
/// position of the window: out[t * ATOME_N_LAYERS + l] for the n' = min(n,
/// ATOME_MAX_SEQ) positions. Returns n', or -1 for a null pointer, n < 1, a
/// model that did not load, or out_len < n' * ATOME_N_LAYERS.
///
/// # Safety
/// As atome_predict_next; `out` writable for out_len floats.
#[no_mangle]
pub unsafe extern "C" fn atome_router_entropy_all(
    model: *const atome_model_t,
    state: *mut atome_state_t,
    tokens: *const c_int,
    n_tokens: c_int,
    out: *mut f32,
    out_len: c_int,
) -> c_int {
    if state.is_null() || tokens.is_null() || out.is_null() || n_tokens < 1 || out_len < 0 {
        return -1;
    }
    let n = (n_tokens as usize).min(ATOME_MAX_SEQ);
    if (out_len as usize) < n * ATOME_N_LAYERS {
        return -1;
    }
    // SAFETY: checked; validity per the contract; only the n * L floats
    // written are sliced.
    let r = unsafe {
        with_runner(model, state, |m, r| {
            r.router_entropy_all(m, ints(tokens, n_tokens), core::slice::from_raw_parts_mut(out, n * ATOME_N_LAYERS))
        })
    };
    match r {
        Some(n) => n as c_int,
        None => -1,
    }
}

/// atome_generate with sampling (temperature, top-k, top-p, seeded
/// splitmix64; see docs/CONTRACT.md). Temperature <= 0 gives exactly the
/// greedy tokens. Returns the count; 0 for null pointers or bad lengths.
///
/// # Safety
/// As atome_generate; `params` null or readable.
#[no_mangle]
pub unsafe extern "C" fn atome_generate_sampled(
    model: *const atome_model_t,
    state: *mut atome_state_t,
    prompt: *const c_int,
    prompt_len: c_int,
    output: *mut c_int,
    max_tokens: c_int,
    params: *const atome_sampling_t,
) -> c_int {
    if params.is_null() {
        return 0;
    }
    // SAFETY: the contract is atome_generate's; params is non-null and readable.
    unsafe {
        generate_call(model, state, (prompt, prompt_len), (output, max_tokens), |m, r, p, out| {
            let prm = *params;
            let s = Sampling { temperature: prm.temperature, top_k: prm.top_k, top_p: prm.top_p };
            r.generate_sampled(m, p, out, &s, prm.seed)
        })
    }
}
