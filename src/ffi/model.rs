//! atome_init, atome_load, atome_classifier_load, and the safe views the
//! other entry points run on.
use super::types::*;
use crate::config::*;
use crate::container::{self, ContainerError, Kind};
use crate::format::{self, Classifier, LoadError, Model, Norm, Tensor};
use core::ffi::c_int;
use core::ptr;

// Out of line: five uses per block at load, none on the hot path.
#[inline(never)]
fn set_tensor(o: &mut atome_ternary_t, t: &Tensor) {
    *o = atome_ternary_t {
        packed: t.data.as_ptr(),
        scale: t.scale,
        rows: t.rows as u16,
        cols: t.cols as u16,
        packing: t.packing as u8,
    };
}

fn c_norm(n: &Norm) -> atome_norm_t {
    atome_norm_t { gamma: n.gamma.bytes().as_ptr() as *const f32, beta: n.beta.bytes().as_ptr() as *const f32 }
}

/// Fills the reference-visible fields from a parsed model.
fn fill(m: &Model, out: &mut atome_model_t, blob: &[u8]) {
    set_tensor(&mut out.embed, &m.embed());
    for (l, b) in out.blocks.iter_mut().enumerate() {
        // Field by field (no block-sized temporary to copy).
        let blk = m.block(l);
        b.norm = c_norm(&blk.norm());
        let (conv, ssm) = (blk.conv(), blk.ssm());
        b.local_conv = atome_conv_t {
            packed: conv.data.as_ptr(),
            scale: conv.scale,
            channels: conv.rows as u16,
            kernel_size: conv.cols as u16,
            packing: conv.packing as u8,
        };
        b.ssm = atome_ssm_t {
            a: ssm.a.bytes().as_ptr() as *const f32,
            b: ssm.b.bytes().as_ptr() as *const f32,
            c_out: ssm.c_out.bytes().as_ptr() as *const f32,
            channels: ATOME_D_MODEL as u16,
        };
        set_tensor(&mut b.attn.Wq, &blk.wq());
        set_tensor(&mut b.attn.Wk, &blk.wk());
        set_tensor(&mut b.attn.Wv, &blk.wv());
        b.attn.d_head = ATOME_D_HEAD as u16;
        b.attn.top_k = ATOME_TOP_K as u16;
        set_tensor(&mut b.router, &blk.router());
    }
    out.final_norm = c_norm(&m.final_norm());
    set_tensor(&mut out.unembed, &m.unembed());
    out.blob = blob.as_ptr();
    out.blob_len = blob.len();
    out.blob_hash = blob_hash(blob);
    out.valid = MODEL_VALID;
}

/// FNV-1a over the blob, four bytes at a time (once per load).
pub(crate) fn blob_hash(blob: &[u8]) -> u32 {
    let mut h: u32 = 0x811c_9dc5;
    let mut words = blob.chunks_exact(4);
    for w in &mut words {
        h = (h ^ u32::from_le_bytes([w[0], w[1], w[2], w[3]])).wrapping_mul(0x0100_0193);
    }
    for &b in words.remainder() {
        h = (h ^ b as u32).wrapping_mul(0x0100_0193);
    }
    h
}

/// The load-time blob hash of a loaded model (0 for null).
///
/// # Safety
/// `m` null or valid.
pub unsafe fn model_salt(m: *const atome_model_t) -> u32 {
    if m.is_null() {
        return 0;
    }
    // SAFETY: non-null and readable per the contract.
    unsafe { (*m).blob_hash }
}

/// The blob of a model that loaded, as a slice.
///
/// # Safety
/// `m` must point to a readable atome_model_t; when it is marked valid, its
/// blob pointer and length are those given to a successful load, and the
/// caller keeps that blob alive and unchanged (the API's contract).
unsafe fn blob_of<'a>(m: *const atome_model_t) -> Option<&'a [u8]> {
    if m.is_null() {
        return None;
    }
    // SAFETY: non-null and readable per the contract above.
    let m = unsafe { &*m };
    if m.valid != MODEL_VALID || m.blob.is_null() {
        return None;
    }
    // SAFETY: blob/blob_len were set together from a live slice at load.
    Some(unsafe { core::slice::from_raw_parts(m.blob, m.blob_len) })
}

/// Safe view of a loaded model (language model, or a classifier's base).
///
/// # Safety
/// As `blob_of`.
pub unsafe fn model_view<'a>(m: *const atome_model_t) -> Option<Model<'a>> {
    // SAFETY: forwarded contract.
    let blob = unsafe { blob_of(m) }?;
    format::loaded_model(blob, &DIMS)
}

/// Safe view of a loaded classifier.
///
/// # Safety
/// As `blob_of`, for `c->base`.
pub unsafe fn classifier_view<'a>(c: *const atome_classifier_t) -> Option<Classifier<'a>> {
    if c.is_null() {
        return None;
    }
    // SAFETY: non-null and readable per the contract.
    let cr = unsafe { &*c };
    if cr.valid != CLASSIFIER_VALID {
        return None;
    }
    // SAFETY: as above.
    let blob = unsafe { blob_of(&cr.base) }?;
    format::loaded_classifier(blob, &DIMS, ATOME_MAX_CLASSES)
}

/// Zeroes a state. Never needed for correct results (every call is a pure
/// function of model and tokens); kept for the reference's API.
///
/// # Safety
/// `state` is null or points to a writable atome_state_t.
#[no_mangle]
pub unsafe extern "C" fn atome_init(state: *mut atome_state_t) {
    if state.is_null() {
        return;
    }
    // SAFETY: non-null, writable, and all-zero bytes are a valid state.
    unsafe { ptr::write_bytes(state, 0, 1) };
}

/// Loads an ATOME01, ATOME02 or ATOMEP3 blob in place. Returns 0; -1 for a
/// null argument, len < 7 or an unknown magic; -2 when the blob is shorter
/// than this configuration needs; -3 when more than 15 bytes trail it; -4 for
/// an ATOME02 byte above 242. An ATOMEF container (docs/CONTAINER.md) is
/// accepted too: -5 when its dimensions are not this build's, -6 when a CRC
/// does not match (corrupted). On failure the model is marked unusable.
///
/// # Safety
/// `model` is null or writable; `data` is null or readable for `len` bytes
/// and stays alive and unchanged while the model is used.
#[no_mangle]
pub unsafe extern "C" fn atome_load(model: *mut atome_model_t, data: *const u8, len: usize) -> c_int {
    // SAFETY: the contract is this function's.
    unsafe {
        load_into(model, data, len, 7, Kind::Model, |m| m.valid = 0, |m, blob| {
            format::parse_model(blob, &DIMS).map(|x| fill(&x, m, blob))
        })
    }
}

/// The C code of a refused container (docs/API.md#loading).
pub(crate) fn container_code(e: ContainerError) -> c_int {
    match e {
        ContainerError::BadHeader => -1,
        ContainerError::Truncated => -2,
        ContainerError::Trailing => -3,
        ContainerError::Corrupted => -6,
        ContainerError::Mismatch => -8,
    }
}

/// The bare blob of an ATOMEF container (checked: CRCs, the kind, and the
/// dimensions against this build's, -5 when they differ), or `data` itself
/// when it is not a container.
fn unwrap(data: &[u8], kind: Kind) -> Result<&[u8], c_int> {
    // The size-first build keeps the reference's bare-blob loader within its
    // 8 KB engine budget (the container check costs about 0.6 KB there);
    // it opens containers through atome_rt_open instead.
    if cfg!(feature = "size-first") || !container::is_container(data) {
        return Ok(data);
    }
    let c = container::parse(data).map_err(container_code)?;
    if c.info.kind != kind {
        return Err(-1);
    }
    if c.info.dims != DIMS {
        return Err(-5);
    }
    Ok(c.payload)
}

/// The loaders' steps: `out` null is -1; otherwise it is first marked
/// unusable (`invalidate`), then `data` (null or shorter than `min`, the
/// shortest magic: -1) is unwrapped from a container and `parse`d into it;
/// 0, or the refusal's code.
///
/// # Safety
/// `out` null or writable; `data` null or readable for `len` bytes and
/// alive while `out` is used.
#[inline(always)]
unsafe fn load_into<T>(
    out: *mut T,
    data: *const u8,
    len: usize,
    min: usize,
    kind: Kind,
    invalidate: impl FnOnce(&mut T),
    parse: impl FnOnce(&mut T, &[u8]) -> Result<(), LoadError>,
) -> c_int {
    if out.is_null() {
        return -1;
    }
    // SAFETY: non-null and writable per the contract.
    let out = unsafe { &mut *out };
    invalidate(out);
    if data.is_null() || len < min {
        return -1;
    }
    // SAFETY: readable for len bytes per the contract.
    let blob = match unwrap(unsafe { core::slice::from_raw_parts(data, len) }, kind) {
        Ok(b) => b,
        Err(code) => return code,
    };
    match parse(out, blob) {
        Ok(()) => 0,
        Err(e) => load_code(e),
    }
}

fn load_code(e: LoadError) -> c_int {
    match e {
        // The reference's single "bad blob" code covers a bad class count too.
        LoadError::BadClasses => -1,
        e => e as c_int,
    }
}

/// Loads an ATOMECL01 or ATOMECL02 classifier blob in place. Codes as
/// atome_load; n_classes outside 1..=ATOME_MAX_CLASSES is -1.
///
/// # Safety
/// As atome_load.
#[no_mangle]
pub unsafe extern "C" fn atome_classifier_load(clf: *mut atome_classifier_t, data: *const u8, len: usize) -> c_int {
    let invalidate = |c: &mut atome_classifier_t| {
        c.valid = 0;
        c.base.valid = 0;
    };
    // SAFETY: the contract is this function's.
    unsafe {
        load_into(clf, data, len, 9, Kind::Classifier, invalidate, |out, blob| {
            format::parse_classifier(blob, &DIMS, ATOME_MAX_CLASSES).map(|c| {
                fill(&c.base, &mut out.base, blob);
                set_tensor(&mut out.head, &c.head);
                out.n_classes = c.head.rows as c_int;
                out.valid = CLASSIFIER_VALID;
            })
        })
    }
}
