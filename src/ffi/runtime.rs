//! The runtime-dimension API: one build of the library runs any model. The
//! dimensions come from an ATOMEF container's header (or, for a bare blob,
//! from the caller); the memory is one caller buffer sized by
//! `atome_rt_work_size` or the header's `ATOME_RT_WORK_SIZE` macro.
//!
//! Buffer layout, in 4-byte words: for the cached plan a cache header (4
//! words: magic, model key, cached length, reserved) and S token ids; then
//! V logits; then the runner's work area (`Runner::work_floats`).
use super::types::atome_sampling_t;
use super::model::{blob_hash, container_code};
use crate::container::{self, Kind};
use crate::format::{self, Classifier, Dims, LoadError, Model};
use crate::forward::cached::CacheHeader;
use crate::forward::sample::Sampling;
use crate::runner::{Plan, Runner};
use core::ffi::c_int;

/// Model dimensions at run time (the build knobs, as values).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct atome_dims_t {
    /// V, vocabulary size.
    pub vocab_size: i32,
    /// D, residual width.
    pub d_model: i32,
    /// L, blocks.
    pub n_layers: i32,
    /// DH, attention head width.
    pub d_head: i32,
    /// K, conv taps.
    pub kernel_size: i32,
    /// Keys kept per query.
    pub top_k: i32,
    /// S, the context window.
    pub max_seq: i32,
    /// Classes of a classifier (0 for a language model).
    pub n_classes: i32,
}

/// An open model or classifier over a caller's blob and buffer. Its fields
/// are the library's; C code only declares one and passes its address.
#[repr(C)]
pub struct atome_rt_t {
    /// The model's dimensions and window, as opened.
    pub dims: atome_dims_t,
    /// The bare blob inside the caller's bytes.
    pub blob: *const u8,
    /// Its length.
    pub blob_len: usize,
    /// The caller's buffer.
    pub work: *mut u32,
    /// Its length in 4-byte words.
    pub work_words: usize,
    /// 1 language model, 2 classifier.
    pub kind: i32,
    /// 1 for the cached plan.
    pub cached: i32,
    /// Hash of the blob taken at open (keys the cache).
    pub salt: u32,
    /// RT_VALID after a successful open.
    pub valid: u32,
}

const RT_VALID: u32 = 0x4154_5254;
/// Cache header words in a cached buffer.
const HEADER_WORDS: usize = 4;

/// The built-in bound on every dimension (the C structs' u16 fields).
const DIM_MAX: i32 = 65535;

fn dims_of(d: &atome_dims_t) -> Option<(Dims, usize)> {
    let ok = |v: i32| (1..=DIM_MAX).contains(&v);
    if !(ok(d.vocab_size) && ok(d.d_model) && ok(d.n_layers) && ok(d.d_head) && ok(d.kernel_size) && ok(d.top_k) && ok(d.max_seq)) {
        return None;
    }
    let dims = Dims {
        vocab: d.vocab_size as usize,
        d_model: d.d_model as usize,
        n_layers: d.n_layers as usize,
        d_head: d.d_head as usize,
        kernel_size: d.kernel_size as usize,
        top_k: d.top_k as usize,
    };
    Some((dims, d.max_seq as usize))
}

/// Words of buffer for these dimensions, window and plan.
fn words(dims: &Dims, s: usize, plan: Plan) -> usize {
    let head = match plan {
        Plan::Lean => 0,
        Plan::Cached => HEADER_WORDS + s,
    };
    head + dims.vocab + Runner::work_floats(dims, s, plan)
}

fn plan_of(cached: c_int) -> Plan {
    if cached != 0 {
        Plan::Cached
    } else {
        Plan::Lean
    }
}

/// Bytes of buffer `atome_rt_open` needs for these dimensions (max_seq is
/// the window) and plan (`cached` nonzero: the cached plan); 0 for a null
/// pointer or a dimension outside 1..=65535. The same value as the
/// header's `ATOME_RT_WORK_SIZE` macro.
///
/// # Safety
/// `dims` null or readable.
#[no_mangle]
pub unsafe extern "C" fn atome_rt_work_size(dims: *const atome_dims_t, cached: c_int) -> usize {
    if dims.is_null() {
        return 0;
    }
    // SAFETY: non-null and readable per the contract.
    let d = unsafe { *dims };
    match dims_of(&d) {
        Some((dims, s)) => 4 * words(&dims, s, plan_of(cached)),
        None => 0,
    }
}

fn load_code(e: LoadError) -> c_int {
    match e {
        LoadError::BadClasses => -1,
        e => e as c_int,
    }
}

/// Opens `data` (an ATOMEF container, or a bare blob with `dims` given) in
/// the caller's `work` buffer (4-byte aligned, `atome_rt_work_size` bytes
/// or more) with the cached plan when `cached` is nonzero. For a container
/// `dims` may be null; when given, its max_seq (if above 0) chooses the
/// window, and its other fields must be 0 or equal the header's. Returns 0,
/// or: -1 null pointer, unknown magic or bad dimensions; -2 truncated; -3
/// more than 15 trailing bytes; -4 invalid ATOME02 byte; -5 dims that
/// disagree with the container; -6 a CRC mismatch (corrupted); -7 a buffer
/// too small or not 4-byte aligned. On failure `rt` is marked unusable.
///
/// # Safety
/// Pointers null or valid: `data` readable for `len` bytes and `work`
/// writable for `work_len` bytes, both kept alive and unmoved (and `data`
/// unchanged) while `rt` is used; `rt` writable.
#[no_mangle]
pub unsafe extern "C" fn atome_rt_open(
    rt: *mut atome_rt_t,
    data: *const u8,
    len: usize,
    dims: *const atome_dims_t,
    cached: c_int,
    work: *mut core::ffi::c_void,
    work_len: usize,
) -> c_int {
    if rt.is_null() {
        return -1;
    }
    // SAFETY: non-null and writable per the contract; the handle is plain data.
    let rt = unsafe { &mut *rt };
    rt.valid = 0;
    if data.is_null() || work.is_null() {
        return -1;
    }
    // SAFETY: readable for len bytes per the contract.
    let bytes = unsafe { core::slice::from_raw_parts(data, len) };
    // SAFETY: null or readable per the contract.
    let given = if dims.is_null() { None } else { Some(unsafe { *dims }) };
    let (payload, d) = match opened(bytes, given) {
        Ok(v) => v,
        Err(code) => return code,
    };
    let Some((dm, s)) = dims_of(&d) else { return -1 };
    let plan = plan_of(cached);
    let need = words(&dm, s, plan);
    if !(work as usize).is_multiple_of(4) || work_len / 4 < need {
        return -7;
    }
    *rt = atome_rt_t {
        dims: d,
        blob: payload.as_ptr(),
        blob_len: payload.len(),
        work: work as *mut u32,
        work_words: work_len / 4,
        kind: if d.n_classes > 0 { 2 } else { 1 },
        cached: (plan == Plan::Cached) as i32,
        salt: blob_hash(payload),
        valid: RT_VALID,
    };
    // The cache header starts invalid (a caller's buffer holds anything).
    if plan == Plan::Cached {
        // SAFETY: the buffer was checked above to hold `need` words.
        unsafe { rt.work.write(0) };
    }
    0
}

/// The bare blob of `bytes`, parsed and checked, and its dimensions.
fn opened(bytes: &[u8], given: Option<atome_dims_t>) -> Result<(&[u8], atome_dims_t), c_int> {
    let (payload, mut d) = if container::is_container(bytes) {
        let c = container::parse(bytes).map_err(container_code)?;
        let i = c.info;
        let num = |v: usize| i32::try_from(v).unwrap_or(-1);
        let d = atome_dims_t {
            vocab_size: num(i.dims.vocab),
            d_model: num(i.dims.d_model),
            n_layers: num(i.dims.n_layers),
            d_head: num(i.dims.d_head),
            kernel_size: num(i.dims.kernel_size),
            top_k: num(i.dims.top_k),
            max_seq: num(i.max_seq),
            n_classes: if i.kind == Kind::Classifier { num(i.n_classes) } else { 0 },
        };
        if let Some(g) = given {
            let pairs = [
                (g.vocab_size, d.vocab_size),
                (g.d_model, d.d_model),
                (g.n_layers, d.n_layers),
                (g.d_head, d.d_head),
                (g.kernel_size, d.kernel_size),
                (g.top_k, d.top_k),
                (g.n_classes, d.n_classes),
            ];
            if pairs.iter().any(|&(a, b)| a != 0 && a != b) {
                return Err(-5);
            }
        }
        (c.payload, d)
    } else {
        (bytes, given.ok_or(-1)?)
    };
    if let Some(g) = given {
        if g.max_seq > 0 {
            d.max_seq = g.max_seq;
        }
    }
    let (dm, _) = dims_of(&d).ok_or(-1)?;
    if format::lm_packing(payload).is_some() {
        format::parse_model(payload, &dm).map_err(load_code)?;
        d.n_classes = 0;
    } else {
        let c = format::parse_classifier(payload, &dm, DIM_MAX as usize).map_err(load_code)?;
        d.n_classes = c.head.rows as i32;
    }
    Ok((payload, d))
}

/// What a call runs on: the opened model and the caller's memory.
struct Open<'a> {
    blob: &'a [u8],
    dims: Dims,
    s: usize,
    plan: Plan,
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
    // SAFETY: set together from live slices by a successful open; the
    // caller keeps both alive, unmoved and (the blob) unchanged.
    let (blob, words) = unsafe {
        (core::slice::from_raw_parts(rt.blob, rt.blob_len), core::slice::from_raw_parts_mut(rt.work, rt.work_words))
    };
    Some(Open { blob, dims, s, plan: plan_of(rt.cached), salt: rt.salt, words })
}

/// 4-byte words as floats (same size and alignment; every bit pattern is a
/// float), for the logits and the work area.
fn as_f32(w: &mut [u32]) -> &mut [f32] {
    // SAFETY: u32 and f32 have the same size and alignment and no invalid
    // values; the borrow is moved into the result.
    unsafe { core::slice::from_raw_parts_mut(w.as_mut_ptr() as *mut f32, w.len()) }
}

/// 4-byte words as token ids.
fn as_i32(w: &mut [u32]) -> &mut [i32] {
    // SAFETY: as `as_f32`, for i32.
    unsafe { core::slice::from_raw_parts_mut(w.as_mut_ptr() as *mut i32, w.len()) }
}

impl Open<'_> {
    /// Runs `f` with a runner on this memory.
    fn run<R>(&mut self, f: impl FnOnce(&mut Runner, &[u8], &Dims) -> Option<R>) -> Option<R> {
        let (s, v) = (self.s, self.dims.vocab);
        let (mut m0, mut m1, mut m2) = (0u32, 0u32, 0u32);
        let mut no_tokens = [0i32; 0];
        let (header, rest) = match self.plan {
            Plan::Lean => {
                let h = CacheHeader { magic: &mut m0, fingerprint: &mut m1, len: &mut m2, tokens: &mut no_tokens };
                (h, &mut *self.words)
            }
            Plan::Cached => {
                let (h, rest) = self.words.split_at_mut_checked(HEADER_WORDS + s)?;
                let (hw, toks) = h.split_at_mut(HEADER_WORDS);
                let [magic, fp, len, _] = hw else { return None };
                (CacheHeader { magic, fingerprint: fp, len, tokens: as_i32(toks) }, rest)
            }
        };
        let (logits, work) = rest.split_at_mut_checked(v)?;
        let mut r = Runner::new(self.plan, as_f32(work), as_f32(logits), header, &self.dims, s)?.salted(self.salt);
        f(&mut r, self.blob, &self.dims)
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
    let at = match o.plan {
        Plan::Lean => 0,
        Plan::Cached => HEADER_WORDS + o.s,
    };
    o.words.get(at..).map_or(core::ptr::null(), |w| w.as_ptr() as *const f32)
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
        for (d, &s) in dst.iter_mut().zip(r.router_entropy()) {
            *d = s;
        }
        Some(l)
    });
    r.map_or(-1, |l| l as c_int)
}
