//! The runtime API's calls on an open handle: predict_next, logits,
//! generate (greedy and sampled), classify, router entropy, dims.
use super::{atome_dims_t, atome_rt_t, dims_of, header_words, mode_of, DIM_MAX, RT_VALID};
use crate::engine::Engine;
use crate::ffi::engine::rt_run;
use crate::ffi::types::atome_sampling_t;
use crate::format::{self, Classifier, Dims, Model};
use crate::forward::sample::Sampling;
use crate::modes::{AnyRunner, Mode};
use core::ffi::c_int;

/// What a call runs on: the opened model and the caller's memory.
struct Open<'a> {
    blob: &'a [u8],
    dims: Dims,
    s: usize,
    mode: Mode,
    // Keys the cached plans' caches.
    salt: u32,
    words: &'a mut [u32],
}

/// The open handle's parts; None for null or a handle that did not open.
///
/// # Safety
/// `rt` null or valid, and what it was opened on still valid (the contract).
unsafe fn open<'a>(rt: *const atome_rt_t) -> Option<Open<'a>> {
    if rt.is_null() {
        return None;
    }
    // SAFETY: non-null and readable per the contract.
    let rt = unsafe { &*rt };
    if rt.valid != RT_VALID {
        return None;
    }
    let (dims, s) = dims_of(&rt.dims)?;
    let mode = mode_of(rt.flags)?;
    // SAFETY: set together from live slices by a successful open; the
    // caller keeps both alive, unmoved and (the blob) unchanged.
    let (blob, words) = unsafe {
        (core::slice::from_raw_parts(rt.blob, rt.blob_len), core::slice::from_raw_parts_mut(rt.work, rt.work_words))
    };
    Some(Open { blob, dims, s, mode, salt: rt.salt, words })
}

impl Open<'_> {
    /// Runs `f` with the runner of the handle's mode on this memory.
    fn run<R>(&mut self, f: impl FnOnce(&mut AnyRunner, &[u8], &Dims) -> Option<R>) -> Option<R> {
        let Open { blob, dims, s, mode, salt, words } = self;
        rt_run(words, *mode, dims, *s, *salt, |r| f(r, blob, dims))
    }
}

fn model_of<'a>(blob: &'a [u8], dims: &Dims) -> Option<Model<'a>> {
    format::lm_packing(blob)?;
    format::loaded_model(blob, dims)
}

fn classifier_of<'a>(blob: &'a [u8], dims: &Dims) -> Option<Classifier<'a>> {
    format::classifier_packing(blob)?;
    format::loaded_classifier(blob, dims, DIM_MAX as usize)
}

/// The window's tokens as a slice; None for null or n < 1.
///
/// # Safety
/// `p` null or readable for n ints.
unsafe fn ints<'a>(p: *const c_int, n: c_int) -> Option<&'a [i32]> {
    if p.is_null() || n < 1 {
        return None;
    }
    // SAFETY: readable for n ints per the contract.
    Some(unsafe { core::slice::from_raw_parts(p, n as usize) })
}

/// The dimensions and window `rt` was opened with. 0, or -1 for a null
/// pointer or a handle that did not open.
///
/// # Safety
/// Pointers null or valid.
#[no_mangle]
pub unsafe extern "C" fn atome_rt_dims(rt: *const atome_rt_t, out: *mut atome_dims_t) -> c_int {
    if rt.is_null() || out.is_null() {
        return -1;
    }
    // SAFETY: non-null and readable.
    let r = unsafe { &*rt };
    if r.valid != RT_VALID {
        return -1;
    }
    // SAFETY: non-null and writable.
    unsafe { out.write(r.dims) };
    0
}

/// predict_next on an open language model: the id, or -1 for a null
/// pointer, n < 1, a classifier or a handle that did not open. The logits
/// are then at `atome_rt_logits`.
///
/// # Safety
/// `rt` null or valid; `tokens` null or readable for n ints.
#[no_mangle]
pub unsafe extern "C" fn atome_rt_predict_next(rt: *mut atome_rt_t, tokens: *const c_int, n: c_int) -> c_int {
    // SAFETY: per the contract.
    let (Some(mut o), Some(t)) = (unsafe { open(rt) }, unsafe { ints(tokens, n) }) else { return -1 };
    let r = o.run(|r, blob, dims| r.predict(&model_of(blob, dims)?, t));
    r.map_or(-1, |id| id as c_int)
}

/// The V logits of the last predict_next on `rt` (unspecified before the
/// first); null for null or a handle that did not open.
///
/// # Safety
/// `rt` null or valid.
#[no_mangle]
pub unsafe extern "C" fn atome_rt_logits(rt: *const atome_rt_t) -> *const f32 {
    // SAFETY: per the contract.
    let Some(o) = (unsafe { open(rt) }) else { return core::ptr::null() };
    o.words.get(header_words(o.mode, o.s)..).map_or(core::ptr::null(), |w| w.as_ptr() as *const f32)
}

/// Output ints a generate call may write: max_tokens, never past the window.
fn room(s: usize, prompt_len: usize, max_tokens: c_int) -> usize {
    (max_tokens.max(0) as usize).min(s.saturating_sub(prompt_len))
}

/// Greedy generation on an open language model, as atome_generate: the
/// count; 0 for null pointers, prompt_len < 1, max_tokens < 1, a classifier
/// or a prompt that fills the window.
///
/// # Safety
/// Pointers null or valid; `out` writable for max_tokens ints.
#[no_mangle]
pub unsafe extern "C" fn atome_rt_generate(
    rt: *mut atome_rt_t,
    prompt: *const c_int,
    prompt_len: c_int,
    out: *mut c_int,
    max_tokens: c_int,
) -> c_int {
    // SAFETY: per the contract.
    unsafe { generate(rt, prompt, prompt_len, out, max_tokens, None) }
}

/// Sampled generation on an open language model, as atome_generate_sampled.
///
/// # Safety
/// As atome_rt_generate; `params` null or readable.
#[no_mangle]
pub unsafe extern "C" fn atome_rt_generate_sampled(
    rt: *mut atome_rt_t,
    prompt: *const c_int,
    prompt_len: c_int,
    out: *mut c_int,
    max_tokens: c_int,
    params: *const atome_sampling_t,
) -> c_int {
    if params.is_null() {
        return 0;
    }
    // SAFETY: non-null and readable per the contract.
    let p = unsafe { *params };
    // SAFETY: per the contract.
    unsafe { generate(rt, prompt, prompt_len, out, max_tokens, Some(p)) }
}

/// # Safety
/// As atome_rt_generate.
unsafe fn generate(
    rt: *mut atome_rt_t,
    prompt: *const c_int,
    prompt_len: c_int,
    out: *mut c_int,
    max_tokens: c_int,
    params: Option<atome_sampling_t>,
) -> c_int {
    if out.is_null() || max_tokens < 1 {
        return 0;
    }
    // SAFETY: per the contract.
    let (Some(mut o), Some(p)) = (unsafe { open(rt) }, unsafe { ints(prompt, prompt_len) }) else { return 0 };
    let room = room(o.s, p.len(), max_tokens);
    // SAFETY: writable for max_tokens >= room ints per the contract.
    let dst = unsafe { core::slice::from_raw_parts_mut(out, room) };
    let n = o.run(|r, blob, dims| {
        let m = model_of(blob, dims)?;
        Some(match params {
            None => r.generate_greedy(&m, p, dst),
            Some(q) => {
                let s = Sampling { temperature: q.temperature, top_k: q.top_k, top_p: q.top_p };
                r.generate_sampled(&m, p, dst, &s, q.seed)
            }
        })
    });
    n.unwrap_or(0) as c_int
}

/// Classifies on an open classifier, as atome_classify: the class, or -1
/// for a null pointer, n < 1, a language model or a handle that did not
/// open. Writes n_classes logits when `class_logits` is not null.
///
/// # Safety
/// Pointers null or valid; `class_logits` writable for n_classes floats.
#[no_mangle]
pub unsafe extern "C" fn atome_rt_classify(rt: *mut atome_rt_t, tokens: *const c_int, n: c_int, class_logits: *mut f32) -> c_int {
    // SAFETY: per the contract.
    let (Some(mut o), Some(t)) = (unsafe { open(rt) }, unsafe { ints(tokens, n) }) else { return -1 };
    let r = o.run(|r, blob, dims| {
        let c = classifier_of(blob, dims)?;
        let out = if class_logits.is_null() {
            None
        } else {
            // SAFETY: writable for n_classes floats per the contract.
            Some(unsafe { core::slice::from_raw_parts_mut(class_logits, c.head.rows) })
        };
        r.classify(&c, t, out)
    });
    r.map_or(-1, |k| k as c_int)
}

/// Router entropy (nats) of each layer at the last position of the last
/// predict_next or classify on `rt`: writes L floats, returns L; -1 for a
/// null pointer or a handle that did not open.
///
/// # Safety
/// `rt` null or valid; `out` null or writable for L floats.
#[no_mangle]
pub unsafe extern "C" fn atome_rt_router_entropy(rt: *mut atome_rt_t, out: *mut f32) -> c_int {
    if out.is_null() {
        return -1;
    }
    // SAFETY: per the contract.
    let Some(mut o) = (unsafe { open(rt) }) else { return -1 };
    let l = o.dims.n_layers;
    let r = o.run(|r, _, _| {
        // SAFETY: writable for L floats per the contract.
        let dst = unsafe { core::slice::from_raw_parts_mut(out, l) };
        r.last_entropy(dst);
        Some(l)
    });
    r.map_or(-1, |l| l as c_int)
}
