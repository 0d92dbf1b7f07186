//! This build's engine behind the reference C API, chosen here once: the
//! float [`crate::runner::Runner`] or, with ATOME_DTYPE=q15, the integer
//! [`crate::q15::Q15Runner`] (or [`crate::q15::Q15CachedRunner`] with
//! ATOME_STATE=cached). The rest of the ffi layer calls it through
//! [`crate::engine::Engine`] and the few functions below, which know the
//! engine's memory: the runner over a C state, the stored entropies of a
//! const state and the float scratch the kernel entry points borrow. The
//! runtime API's runner ([`rt_run`]) is the same in every build: any of the
//! four modes, chosen when a handle is opened.

#[cfg(not(atome_q15))]
pub(crate) use float::*;
#[cfg(atome_q15)]
pub(crate) use q15::*;

use crate::ffi::runtime::{header_words, HEADER_WORDS, Q15_HEADER_WORDS};
use crate::format::Dims;
use crate::forward::cached::CacheHeader;
use crate::modes::{AnyRunner, Dtype, Mode};
use crate::q15::{Q15CachedLayout, Q15CachedRunner, Q15Layout, Q15Runner};
use crate::runner::{Plan, Runner};

/// 4-byte words as floats (same size and alignment; every bit pattern is a
/// float), for the logits and the work area.
fn as_f32(w: &mut [u32]) -> &mut [f32] {
    // SAFETY: u32 and f32 have the same size and alignment and no invalid
    // values; the borrow is moved into the result.
    unsafe { core::slice::from_raw_parts_mut(w.as_mut_ptr() as *mut f32, w.len()) }
}

/// 4-byte words as i32 (token ids, the q15 int32 area).
fn as_i32(w: &mut [u32]) -> &mut [i32] {
    // SAFETY: as `as_f32`, for i32.
    unsafe { core::slice::from_raw_parts_mut(w.as_mut_ptr() as *mut i32, w.len()) }
}

/// 4-byte words as twice as many int16 (the q15 int16 area).
fn as_i16(w: &mut [u32]) -> &mut [i16] {
    // SAFETY: an i16 has half a u32's size and no stricter alignment, and
    // no invalid values; the borrow is moved into the result.
    unsafe { core::slice::from_raw_parts_mut(w.as_mut_ptr() as *mut i16, 2 * w.len()) }
}

/// Runs `f` with the runner of `mode` on a runtime handle's words, keyed by
/// `salt` (the cached plans). The words, in order: the cache header (float
/// cached: magic, model key, cached length, a reserved word, then S ids;
/// q15 cached: the same without the reserved word; lean: none), the V
/// logits, then the float work area, or the q15 int32 area and the int16
/// area (the rest of the buffer). Checked splits only: no panic path for
/// any handle contents; None when the words are too few.
pub(crate) fn rt_run<R>(words: &mut [u32], mode: Mode, dims: &Dims, s: usize, salt: u32, f: impl FnOnce(&mut AnyRunner) -> Option<R>) -> Option<R> {
    let (head, rest) = words.split_at_mut_checked(header_words(mode, s))?;
    let (logits, work) = rest.split_at_mut_checked(dims.vocab)?;
    // The float lean runner's unused header.
    let (mut m0, mut m1, mut m2) = (0u32, 0u32, 0u32);
    let mut no_tokens = [0i32; 0];
    let mut r = match (mode.dtype, mode.plan) {
        (Dtype::F32, Plan::Lean) => {
            let h = CacheHeader { magic: &mut m0, fingerprint: &mut m1, len: &mut m2, tokens: &mut no_tokens };
            AnyRunner::F32(Runner::new(Plan::Lean, as_f32(work), as_f32(logits), h, dims, s)?)
        }
        (Dtype::F32, Plan::Cached) => {
            let ([magic, fp, len, _], toks) = head.split_first_chunk_mut::<HEADER_WORDS>()?;
            let h = CacheHeader { magic, fingerprint: fp, len, tokens: as_i32(toks) };
            AnyRunner::F32(Runner::new(Plan::Cached, as_f32(work), as_f32(logits), h, dims, s)?.salted(salt))
        }
        (Dtype::Q15, Plan::Lean) => {
            let (w32, w16) = work.split_at_mut_checked(Q15Layout::new(dims, s).i32s)?;
            AnyRunner::Q15(Q15Runner::new(as_i16(w16), as_i32(w32), as_f32(logits), dims, s)?)
        }
        (Dtype::Q15, Plan::Cached) => {
            let ([magic, fp, len], toks) = head.split_first_chunk_mut::<Q15_HEADER_WORDS>()?;
            let h = CacheHeader { magic, fingerprint: fp, len, tokens: as_i32(toks) };
            let (w32, w16) = work.split_at_mut_checked(Q15CachedLayout::new(dims, s).i32s)?;
            AnyRunner::Q15Cached(Q15CachedRunner::new(as_i16(w16), as_i32(w32), as_f32(logits), h, dims, s)?.salted(salt))
        }
    };
    f(&mut r)
}

/// The float engine.
#[cfg(not(atome_q15))]
mod float {
    use crate::config::*;
    use crate::ffi::types::atome_state_t;
    #[cfg(atome_cached)]
    use crate::forward::cached::CacheHeader;
    use crate::runner::{Plan, Runner};

    /// This build's memory plan: the layout of atome_state_t.
    const PLAN: Plan = if ATOME_STATE_CACHED == 1 { Plan::Cached } else { Plan::Lean };

    /// The runner type of this build's state.
    #[cfg(not(atome_cached))]
    pub(crate) type StateRunner<'a> = Runner<'a, crate::runner::NoCache>;
    /// The runner type of this build's state.
    #[cfg(atome_cached)]
    pub(crate) type StateRunner<'a> = Runner<'a, CacheHeader<'a>>;

    /// The runner over a lean C state, keyed by `salt`.
    #[cfg(not(atome_cached))]
    pub(crate) fn state_runner(st: &mut atome_state_t, salt: u32) -> Option<StateRunner<'_>> {
        Some(Runner::lean(&mut st.work, &mut st.logits, &DIMS, ATOME_MAX_SEQ)?.salted(salt))
    }

    /// The runner over a cached C state, keyed by `salt`.
    #[cfg(atome_cached)]
    pub(crate) fn state_runner(st: &mut atome_state_t, salt: u32) -> Option<StateRunner<'_>> {
        let atome_state_t { logits, work, cache_magic, cache_model, cache_len, cache_tokens } = st;
        let header = CacheHeader { magic: cache_magic, fingerprint: cache_model, len: cache_len, tokens: cache_tokens };
        Some(Runner::cached(work, logits, header, &DIMS, ATOME_MAX_SEQ)?.salted(salt))
    }

    /// Copies the last position's router entropies of a const state into
    /// `out`; false when the work area is too short.
    pub(crate) fn stored_entropy(st: &atome_state_t, out: &mut [f32]) -> bool {
        let Some(src) = Runner::stored_last_entropy(&st.work, &DIMS, ATOME_MAX_SEQ, PLAN) else { return false };
        crate::kernels::copy(out, src);
        true
    }

    /// The state's memory as float scratch: its work area.
    pub(crate) fn float_work(st: &mut atome_state_t) -> &mut [f32] {
        &mut st.work[..]
    }
}

/// The q15 engine: its lean plan, or with ATOME_STATE=cached its cached
/// plan (keyed by the blob, as the float cached state), or with
/// ATOME_STATE=tiny its tiny plan (no value cache: docs/Q15.md#tiny-plan).
#[cfg(atome_q15)]
mod q15 {
    use crate::config::*;
    use crate::ffi::types::atome_state_t;
    #[cfg(not(any(atome_cached, atome_tiny)))]
    use crate::q15::Q15Runner;
    #[cfg(atome_tiny)]
    use crate::q15::Q15TinyRunner;

    /// The runner type of this build's state.
    #[cfg(not(any(atome_cached, atome_tiny)))]
    pub(crate) type StateRunner<'a> = Q15Runner<'a>;
    /// The runner type of this build's state.
    #[cfg(atome_tiny)]
    pub(crate) type StateRunner<'a> = Q15TinyRunner<'a>;
    /// The runner type of this build's state.
    #[cfg(atome_cached)]
    pub(crate) type StateRunner<'a> = crate::q15::Q15CachedRunner<'a>;

    /// The runner over a q15 lean C state.
    #[cfg(not(any(atome_cached, atome_tiny)))]
    pub(crate) fn state_runner(st: &mut atome_state_t, _salt: u32) -> Option<StateRunner<'_>> {
        Q15Runner::new(&mut st.work16, &mut st.work32, &mut st.logits, &DIMS, ATOME_MAX_SEQ)
    }

    /// The runner over a q15 tiny C state.
    #[cfg(atome_tiny)]
    pub(crate) fn state_runner(st: &mut atome_state_t, _salt: u32) -> Option<StateRunner<'_>> {
        Q15TinyRunner::new(&mut st.work16, &mut st.work32, &mut st.logits, &DIMS, ATOME_MAX_SEQ)
    }

    /// The runner over a q15 cached C state, keyed by `salt`.
    #[cfg(atome_cached)]
    pub(crate) fn state_runner(st: &mut atome_state_t, salt: u32) -> Option<StateRunner<'_>> {
        let atome_state_t { logits, work32, work16, cache_magic, cache_model, cache_len, cache_tokens } = st;
        let header = crate::forward::cached::CacheHeader { magic: cache_magic, fingerprint: cache_model, len: cache_len, tokens: cache_tokens };
        Some(crate::q15::Q15CachedRunner::new(work16, work32, logits, header, &DIMS, ATOME_MAX_SEQ)?.salted(salt))
    }

    /// Copies the last position's router entropies of a const state into
    /// `out`; false when the int32 area is too short.
    #[cfg(not(any(atome_cached, atome_tiny)))]
    pub(crate) fn stored_entropy(st: &atome_state_t, out: &mut [f32]) -> bool {
        Q15Runner::stored_entropy(&st.work32, &DIMS, ATOME_MAX_SEQ, out)
    }

    /// Copies the last position's router entropies of a const state into
    /// `out`; false when the int32 area is too short.
    #[cfg(atome_tiny)]
    pub(crate) fn stored_entropy(st: &atome_state_t, out: &mut [f32]) -> bool {
        Q15TinyRunner::stored_entropy(&st.work32, &DIMS, ATOME_MAX_SEQ, out)
    }

    /// Copies the last position's router entropies of a const state into
    /// `out`; false when the int32 area is too short.
    #[cfg(atome_cached)]
    pub(crate) fn stored_entropy(st: &atome_state_t, out: &mut [f32]) -> bool {
        crate::q15::Q15CachedRunner::stored_entropy(&st.work32, &DIMS, out)
    }

    /// The state's memory as float scratch: the q15 state has no float
    /// area, so its whole memory serves as one.
    pub(crate) fn float_work(st: &mut atome_state_t) -> &mut [f32] {
        // SAFETY: atome_state_t is repr(C) of f32, i32 and i16 arrays (4-byte
        // aligned, every bit pattern valid as f32); `st` is the only reference
        // to it during the borrow, and the slice stays inside its size.
        unsafe { core::slice::from_raw_parts_mut(st as *mut atome_state_t as *mut f32, core::mem::size_of::<atome_state_t>() / 4) }
    }
}
