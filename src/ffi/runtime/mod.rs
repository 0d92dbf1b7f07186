//! The runtime-dimension API: one build of the library runs any model, in
//! any of the four modes (float or q15, lean or cached: the flags word,
//! whatever ATOME_DTYPE and ATOME_STATE the library was built with). The
//! dimensions come from an ATOMEF container's header (or, for a bare blob,
//! from the caller); the memory is one caller buffer sized by
//! `atome_rt_work_size` or the header's `ATOME_RT_WORK_SIZE` macro.
//!
//! Buffer layout, in 4-byte words: for a cached mode a cache header (float:
//! 4 words, magic, model key, cached length, reserved; q15: the first 3)
//! and S token ids; then V logits; then the float runner's work area
//! (`Runner::work_floats`) or the q15 runner's int32 area and int16 area
//! (`Q15Layout` / `Q15CachedLayout`).
use super::model::{blob_hash, container_code};
use crate::container::{self, Kind};
use crate::format::{self, Dims, LoadError};
use crate::modes::{Dtype, Mode};
use crate::q15::{Q15CachedLayout, Q15Layout};
use crate::runner::{Plan, Runner};
use core::ffi::c_int;

mod calls;
pub use calls::*;

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
    /// The flags it was opened with (ATOME_RT_CACHED, ATOME_RT_Q15).
    pub flags: i32,
    /// Hash of the blob taken at open (keys the cache).
    pub salt: u32,
    /// RT_VALID after a successful open.
    pub valid: u32,
}

/// Flag of `atome_rt_work_size` and `atome_rt_open`: the cached plan (a
/// call whose tokens extend the last call's computes only the new
/// positions). Without it, the lean plan.
pub const ATOME_RT_CACHED: c_int = 1;
/// Flag of `atome_rt_work_size` and `atome_rt_open`: the q15 integer mode
/// (docs/Q15.md). Without it, the float mode.
pub const ATOME_RT_Q15: c_int = 2;

pub(crate) const RT_VALID: u32 = 0x4154_5254;
/// Cache header words in a float cached buffer.
pub(crate) const HEADER_WORDS: usize = 4;
/// Cache header words in a q15 cached buffer (no reserved word).
pub(crate) const Q15_HEADER_WORDS: usize = 3;

/// The built-in bound on every dimension (the C structs' u16 fields).
pub(crate) const DIM_MAX: i32 = 65535;

impl atome_dims_t {
    /// The C struct for these dimensions and window (n_classes 0; values
    /// above i32::MAX read as -1, which every call refuses).
    pub fn new(d: &Dims, max_seq: usize) -> atome_dims_t {
        let num = |v: usize| i32::try_from(v).unwrap_or(-1);
        atome_dims_t {
            vocab_size: num(d.vocab),
            d_model: num(d.d_model),
            n_layers: num(d.n_layers),
            d_head: num(d.d_head),
            kernel_size: num(d.kernel_size),
            top_k: num(d.top_k),
            max_seq: num(max_seq),
            n_classes: 0,
        }
    }

    /// The dimensions and window, or None when one is outside 1..=65535.
    pub fn dims(&self) -> Option<(Dims, usize)> {
        dims_of(self)
    }
}

pub(crate) fn dims_of(d: &atome_dims_t) -> Option<(Dims, usize)> {
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

/// The mode of a flags word; None when a bit other than ATOME_RT_CACHED
/// and ATOME_RT_Q15 is set.
pub(crate) fn mode_of(flags: c_int) -> Option<Mode> {
    if flags & !(ATOME_RT_CACHED | ATOME_RT_Q15) != 0 {
        return None;
    }
    let dtype = if flags & ATOME_RT_Q15 != 0 { Dtype::Q15 } else { Dtype::F32 };
    let plan = if flags & ATOME_RT_CACHED != 0 { Plan::Cached } else { Plan::Lean };
    Some(Mode { dtype, plan })
}

/// Words in front of the logits: for a cached mode the cache header and S
/// token ids, nothing for a lean one (saturating: no overflow path).
pub(crate) fn header_words(mode: Mode, s: usize) -> usize {
    match (mode.plan, mode.dtype) {
        (Plan::Lean, _) => 0,
        (Plan::Cached, Dtype::F32) => HEADER_WORDS.saturating_add(s),
        (Plan::Cached, Dtype::Q15) => Q15_HEADER_WORDS.saturating_add(s),
    }
}

/// The float plan's words (the header's ATOME_RT_WORK_SIZE formula, term by
/// term) in 64 bits: every dimension is at most 65535, so no term passes
/// 2^50.
fn float_words_u64(dims: &Dims, s: usize, plan: Plan) -> u64 {
    let [v, d, l, dh, k, tk, s64] = [dims.vocab, dims.d_model, dims.n_layers, dims.d_head, dims.kernel_size, dims.top_k, s].map(|x| x as u64);
    match plan {
        Plan::Cached => {
            4 + s64 + v + s64 * d + l * s64 * dh + l * s64 * d + l * (k - 1) * d + 2 * l * d + s64 * l + l + (k + 7) * d
                + (8 * dh).max(8 * k)
                + 24
                + 16 * tk
        }
        Plan::Lean => v + 2 * s64 * d + s64 * dh + (k + 5) * d + l + (4 * dh).max(8 * k) + 12 + 8 * tk,
    }
}

/// How many times the float cached plan's words bound a q15 buffer's
/// words: the q15 sizes are computed in usize only when this bound fits.
pub(crate) const Q15_BOUND: u64 = 4;

/// Words of buffer for these dimensions, window and mode, or None when the
/// byte count does not fit `usize_max` (the target's usize::MAX; a
/// parameter so that a test runs the 32-bit arithmetic on any host).
///
/// Float: the sum is taken in 64 bits ([`float_words_u64`]): on a 32-bit
/// target the runner's own usize arithmetic would wrap for large
/// dimensions, and a wrapped size would let `atome_rt_open` accept a buffer
/// far too small. When the total fits, every term of the runner's layout
/// fits too, and the runner's count is returned.
///
/// q15: the q15 layouts' own byte counts (`Q15Layout::bytes`,
/// `Q15CachedLayout::bytes`), rounded up to whole words, computed only when
/// [`Q15_BOUND`] times the float cached plan's bytes fits: every q15 buffer
/// is smaller than that bound (a test checks it over random dimensions), so
/// no term of the q15 layouts wraps either.
pub(crate) fn words_within(dims: &Dims, s: usize, mode: Mode, usize_max: u64) -> Option<usize> {
    match mode.dtype {
        Dtype::F32 => {
            if float_words_u64(dims, s, mode.plan).checked_mul(4)? > usize_max {
                return None;
            }
            Some(header_words(mode, s) + dims.vocab + Runner::work_floats(dims, s, mode.plan))
        }
        Dtype::Q15 => {
            if float_words_u64(dims, s, Plan::Cached).checked_mul(4 * Q15_BOUND)? > usize_max {
                return None;
            }
            let bytes = match mode.plan {
                Plan::Lean => Q15Layout::new(dims, s).bytes(dims),
                Plan::Cached => Q15CachedLayout::new(dims, s).bytes(dims, s),
            };
            Some(bytes.div_ceil(4))
        }
    }
}

/// Bytes of buffer `atome_rt_open` needs for these dimensions (max_seq is
/// the window) and mode (`flags`: ATOME_RT_CACHED for the cached plan,
/// ATOME_RT_Q15 for the q15 integer mode, or both; 0 is the float lean
/// mode); 0 for a null pointer, another flag bit, a dimension outside
/// 1..=65535 or a size that does not fit a `size_t` (on a 32-bit target,
/// dimensions whose buffer passes 4 GiB; for the q15 modes, whose float
/// cached buffer passes 1 GiB). The same value as the header's
/// `ATOME_RT_WORK_SIZE` macro, for every input.
///
/// # Safety
/// `dims` null or readable.
#[no_mangle]
pub unsafe extern "C" fn atome_rt_work_size(dims: *const atome_dims_t, flags: c_int) -> usize {
    if dims.is_null() {
        return 0;
    }
    // SAFETY: non-null and readable per the contract.
    let d = unsafe { *dims };
    match (dims_of(&d), mode_of(flags)) {
        (Some((dims, s)), Some(mode)) => words_within(&dims, s, mode, usize::MAX as u64).map_or(0, |w| 4 * w),
        _ => 0,
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
/// for the same flags or more) in the mode of `flags` (ATOME_RT_CACHED,
/// ATOME_RT_Q15, both or 0, in any build of the library). For a container
/// `dims` may be null; when given, its max_seq (if above 0) chooses the
/// window, and its other fields must be 0 or equal the header's. Returns 0,
/// or: -1 null pointer, another flag bit, fewer than 7 bytes, unknown magic
/// or a dimension outside 1..=65535; -2 truncated; -3 more than 15 trailing bytes; -4
/// invalid ATOME02 byte; -5 dims that disagree with the container; -6 a
/// CRC mismatch (corrupted); -7 a buffer too small, not 4-byte aligned or
/// one whose size does not fit a `size_t`; -8 a container header whose
/// dimensions or class count do not describe its payload exactly; -9
/// dimensions missing (a bare blob with `dims` null, or a container without
/// a window opened with `dims` null or its max_seq 0). On failure `rt` is
/// marked unusable.
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
    flags: c_int,
    work: *mut core::ffi::c_void,
    work_len: usize,
) -> c_int {
    if rt.is_null() {
        return -1;
    }
    // SAFETY: non-null and writable per the contract; the handle is plain data.
    let rt = unsafe { &mut *rt };
    rt.valid = 0;
    // Shorter than any magic: -1, as atome_load.
    if data.is_null() || work.is_null() || len < format::LM_MAGIC_LEN {
        return -1;
    }
    let Some(mode) = mode_of(flags) else { return -1 };
    // SAFETY: readable for len bytes per the contract.
    let bytes = unsafe { core::slice::from_raw_parts(data, len) };
    // SAFETY: null or readable per the contract.
    let given = if dims.is_null() { None } else { Some(unsafe { *dims }) };
    let (payload, d) = match opened(bytes, given) {
        Ok(v) => v,
        Err(code) => return code,
    };
    let Some((dm, s)) = dims_of(&d) else { return -1 };
    let Some(need) = words_within(&dm, s, mode, usize::MAX as u64) else { return -7 };
    if !(work as usize).is_multiple_of(4) || work_len / 4 < need {
        return -7;
    }
    // SAFETY: 4-byte aligned (checked above) and writable for work_len
    // bytes per the contract; no other reference to it is live here.
    let words = unsafe { core::slice::from_raw_parts_mut(work as *mut u32, work_len / 4) };
    // The buffer carves into the mode's areas (checked once here, so that a
    // handle that opened runs).
    if crate::ffi::engine::rt_run(words, mode, &dm, s, 0, |_| Some(())).is_none() {
        return -7;
    }
    // The cache header starts invalid (a caller's buffer holds anything).
    if mode.plan == Plan::Cached {
        if let Some(magic) = words.first_mut() {
            *magic = 0;
        }
    }
    *rt = atome_rt_t {
        dims: d,
        blob: payload.as_ptr(),
        blob_len: payload.len(),
        work: work as *mut u32,
        work_words: work_len / 4,
        kind: if d.n_classes > 0 { 2 } else { 1 },
        flags,
        salt: blob_hash(payload),
        valid: RT_VALID,
    };
    0
}

/// The bare blob of `bytes`, parsed and checked, and its dimensions.
fn opened(bytes: &[u8], given: Option<atome_dims_t>) -> Result<(&[u8], atome_dims_t), c_int> {
    let (payload, mut d) = if container::is_container(bytes) {
        let c = container::parse(bytes).map_err(container_code)?;
        let i = c.info;
        let mut d = atome_dims_t::new(&i.dims, i.max_seq);
        if i.kind == Kind::Classifier {
            d.n_classes = i32::try_from(i.n_classes).unwrap_or(-1);
        }
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
    } else if let Some(g) = given {
        (bytes, g)
    } else {
        // A known blob without its dims: -9; anything else: unknown magic.
        return Err(if format::Format::detect(bytes).is_some() { -9 } else { -1 });
    };
    if let Some(g) = given {
        if g.max_seq > 0 {
            d.max_seq = g.max_seq;
        }
    }
    // A window neither the header nor the caller gives.
    if d.max_seq == 0 {
        return Err(-9);
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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The float buffer bytes in 128-bit arithmetic (no overflow for any
    /// i32 dims), written from the header's ATOME_RT_WORK_SIZE formula.
    fn exact(d: &atome_dims_t, cached: bool) -> u128 {
        let [v, dm, l, dh, k, tk, s] =
            [d.vocab_size, d.d_model, d.n_layers, d.d_head, d.kernel_size, d.top_k, d.max_seq].map(|x| x as u128);
        let w = if cached {
            4 + s + v + s * dm + l * s * dh + l * s * dm + l * (k - 1) * dm + 2 * l * dm + s * l + l + (k + 7) * dm + (8 * dh).max(8 * k) + 24 + 16 * tk
        } else {
            v + 2 * s * dm + s * dh + (k + 5) * dm + l + (4 * dh).max(8 * k) + 12 + 8 * tk
        };
        4 * w
    }

    /// The q15 buffer bytes from the q15 layouts (a 64-bit host: no term
    /// of theirs overflows for dimensions up to 65535), in whole words.
    fn q15_bytes(dims: &Dims, s: usize, cached: bool) -> u128 {
        let b = if cached { Q15CachedLayout::new(dims, s).bytes(dims, s) } else { Q15Layout::new(dims, s).bytes(dims) };
        b.div_ceil(4) as u128 * 4
    }

    /// Small values, the full range, and the bounds.
    fn dim() -> impl Strategy<Value = i32> {
        prop_oneof![1..=64i32, 1..=65535i32, Just(65535), Just(1)]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4000))]
        /// On a 64-bit usize and on a simulated 32-bit one, the size of
        /// each of the four modes is the exact one when it fits (float) or
        /// its bound fits (q15), and None (0 from the C call) otherwise: no
        /// dimensions wrap to a small buffer. The q15 sizes are below their
        /// bound.
        #[test]
        fn work_size_is_exact_or_refused_on_both_widths(v in dim(), d in dim(), l in dim(), dh in dim(), k in dim(), tk in dim(), s in dim()) {
            let c = atome_dims_t { vocab_size: v, d_model: d, n_layers: l, d_head: dh, kernel_size: k, top_k: tk, max_seq: s, n_classes: 0 };
            let (dims, s) = dims_of(&c).unwrap();
            let bound = Q15_BOUND as u128 * exact(&c, true);
            for flags in 0..4 {
                let mode = mode_of(flags).unwrap();
                let (want, limit) = match mode.dtype {
                    Dtype::F32 => (exact(&c, mode.plan == Plan::Cached), exact(&c, mode.plan == Plan::Cached)),
                    Dtype::Q15 => (q15_bytes(&dims, s, mode.plan == Plan::Cached), bound),
                };
                prop_assert!(want <= limit, "q15 size {} above its bound {}", want, limit);
                for max in [u32::MAX as u64, u64::MAX] {
                    let got = words_within(&dims, s, mode, max).map(|w| 4 * w as u128);
                    prop_assert_eq!(got, (limit <= max as u128).then_some(want), "usize max {}", max);
                }
                // SAFETY: a live struct.
                let f = unsafe { atome_rt_work_size(&c, flags) } as u128;
                prop_assert_eq!(f, if limit <= usize::MAX as u128 { want } else { 0 });
            }
        }

        /// Any dimension outside 1..=65535, or a flag bit other than the
        /// two, gives 0.
        #[test]
        fn out_of_range_dims_and_flags_give_zero(at in 0..7usize, bad in prop_oneof![i32::MIN..=0, 65536..=i32::MAX], flags in prop_oneof![i32::MIN..=-1, 4..=i32::MAX]) {
            let mut f = [1, 1, 1, 1, 1, 1, 1];
            f[at] = bad;
            let c = atome_dims_t { vocab_size: f[0], d_model: f[1], n_layers: f[2], d_head: f[3], kernel_size: f[4], top_k: f[5], max_seq: f[6], n_classes: 0 };
            for fl in 0..4 {
                // SAFETY: a live struct.
                prop_assert_eq!(unsafe { atome_rt_work_size(&c, fl) }, 0);
            }
            let ok = atome_dims_t { vocab_size: 1, d_model: 1, n_layers: 1, d_head: 1, kernel_size: 1, top_k: 1, max_seq: 1, n_classes: 0 };
            // SAFETY: a live struct.
            prop_assert_eq!(unsafe { atome_rt_work_size(&ok, flags) }, 0);
        }
    }

    /// The case found on thumbv7m: 17,180,917,852 bytes, which a 32-bit
    /// usize wrapped to 1,048,668. Refused on 32 bits in every mode.
    #[test]
    fn the_32_bit_wrap_case() {
        let c = atome_dims_t { vocab_size: 1, d_model: 1, n_layers: 1, d_head: 65535, kernel_size: 1, top_k: 1, max_seq: 65535, n_classes: 0 };
        let (dims, s) = dims_of(&c).unwrap();
        assert_eq!(exact(&c, false), 17_180_917_852);
        let lean = mode_of(0).unwrap();
        assert_eq!(words_within(&dims, s, lean, u32::MAX as u64), None);
        assert_eq!(words_within(&dims, s, lean, u64::MAX).map(|w| 4 * w as u128), Some(17_180_917_852));
        for flags in 1..4 {
            assert_eq!(words_within(&dims, s, mode_of(flags).unwrap(), u32::MAX as u64), None, "flags {flags}");
        }
    }

    /// The flags word: 0..=3 are the four modes, in the documented order.
    #[test]
    fn flags_name_the_modes() {
        let modes: [Option<Mode>; 4] = [0, 1, 2, 3].map(mode_of);
        assert_eq!(modes, Mode::ALL.map(Some));
        assert_eq!(mode_of(4), None);
        assert_eq!(mode_of(-1), None);
    }
}
