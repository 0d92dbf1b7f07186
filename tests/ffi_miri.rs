//! The C API's unsafe layer (src/ffi) driven from Rust on small synthetic
//! blobs, written to run under Miri (scripts/miri.sh): every entry point,
//! every blob format at misaligned addresses, the error paths with null
//! pointers and bad lengths, garbage states, and the kernels on
//! caller-built structs with misaligned float arrays. Also a plain test.
//!
//! Works in any library configuration, the q15 mode (ATOME_DTYPE=q15)
//! included; scripts/miri.sh builds a tiny one
//! (D=8, L=1, V=16, DH=4, K=3, TOP_K=2, S=6) so that Miri stays fast.
#[path = "../fuzz/src/blobgen.rs"]
mod blobgen;

use atome::config::*;
use atome::ffi::extra::*;
use atome::ffi::kernels::*;
use atome::ffi::model::*;
use atome::ffi::run::*;
use atome::ffi::types::*;
use blobgen::{generate, Format};
use std::ptr;

const V: usize = ATOME_VOCAB_SIZE;
const D: usize = ATOME_D_MODEL;
const S: usize = ATOME_MAX_SEQ;
const L: usize = ATOME_N_LAYERS;

fn zeroed<T>() -> Box<T> {
    // SAFETY: the C structs are integers, floats and raw pointers; all-zero
    // bytes are a valid value of each.
    unsafe { Box::<T>::new_zeroed().assume_init() }
}

/// The bytes at an address `shift` past 8-aligned (the blob is kept alive by the Vec).
fn placed(bytes: &[u8], shift: usize) -> (Vec<u64>, *const u8, usize) {
    let mut buf = vec![0u64; (bytes.len() + shift).div_ceil(8) + 1];
    // SAFETY: buf holds bytes.len() + shift bytes.
    let p = unsafe { (buf.as_mut_ptr() as *mut u8).add(shift) };
    // SAFETY: as above; the regions do not overlap.
    unsafe { ptr::copy_nonoverlapping(bytes.as_ptr(), p, bytes.len()) };
    (buf, p as *const u8, bytes.len())
}

fn toks(n: usize) -> Vec<i32> {
    (0..n).map(|i| match i % 5 {
        0 => -3,
        1 => i32::MAX,
        2 => V as i32,
        _ => (i * 7 % V) as i32,
    }).collect()
}

#[test]
fn every_format_loads_misaligned_and_runs() {
    let mut st = zeroed::<atome_state_t>();
    for (k, &fmt) in Format::ALL.iter().enumerate() {
        let nc = 3;
        let b = generate(&DIMS, fmt, nc, 40 + k as u64);
        assert_eq!(b.bytes.len(), atome::format::blob_bytes(&DIMS, fmt, nc as usize));
        let shift = 1 + k % 3;
        let (_keep, p, len) = placed(&b.bytes, shift);
        let t = toks(S + 2);
        // SAFETY: every pointer below is valid for the lengths passed; the
        // blob (`_keep`) outlives the models.
        unsafe {
            if fmt.is_classifier() {
                let mut c = zeroed::<atome_classifier_t>();
                assert_eq!(atome_load(&mut c.base, p, len), -1, "a classifier blob is not a language model");
                assert_eq!(atome_classifier_load(&mut *c, p, len), 0);
                assert_eq!(c.n_classes, nc);
                let mut out = [f32::NAN; 4];
                let cls = atome_classify(&*c, &mut *st, t.as_ptr(), 3, out.as_mut_ptr());
                assert!((0..nc).contains(&cls));
                assert!(out[..3].iter().all(|v| v.is_finite()) && out[3].is_nan());
                assert_eq!(atome_classify(&*c, &mut *st, t.as_ptr(), 3, ptr::null_mut()), cls);
                // The base of a classifier runs as a language model.
                let id = atome_predict_next(&c.base, &mut *st, t.as_ptr(), 2);
                assert!(id >= 0 && (id as usize) < V);
                // Moving the classifier struct keeps it usable (it points at the blob, not itself).
                let moved: Box<atome_classifier_t> = c;
                assert_eq!(atome_classify(&*moved, &mut *st, t.as_ptr(), 3, ptr::null_mut()), cls);
            } else {
                let mut m = zeroed::<atome_model_t>();
                let mut c = zeroed::<atome_classifier_t>();
                assert_eq!(atome_classifier_load(&mut *c, p, len), -1);
                assert_eq!(atome_load(&mut *m, p, len), 0);
                let n = t.len() as i32;
                let id = atome_predict_next(&*m, &mut *st, t.as_ptr(), n);
                assert!(id >= 0 && (id as usize) < V);
                let lg = std::slice::from_raw_parts(atome_get_logits(&mut *st), V);
                assert!(lg.iter().all(|v| v.is_finite()));
                // n > S uses the last S tokens.
                assert_eq!(atome_predict_next(&*m, &mut *st, t.as_ptr().add(t.len() - S), S as i32), id);
                let mut out = [-9i32; 4];
                let cnt = atome_generate(&*m, &mut *st, t.as_ptr(), 1, out.as_mut_ptr(), 3);
                assert_eq!(cnt as usize, 3.min(S - 1));
                assert_eq!(out[3], -9);
                let prm = atome_sampling_t { temperature: 0.8, top_k: 3, top_p: 0.9, reserved: 0, seed: 7 };
                let cnt2 = atome_generate_sampled(&*m, &mut *st, t.as_ptr(), 1, out.as_mut_ptr(), 2, &prm);
                assert_eq!(cnt2 as usize, 2.min(S - 1));
                assert!(out[..cnt2 as usize].iter().all(|&x| x >= 0 && (x as usize) < V));
                let mut e = vec![-1.0f32; S * L + 1];
                let r = atome_router_entropy_all(&*m, &mut *st, t.as_ptr(), 2, e.as_mut_ptr(), (S * L) as i32);
                let mut last = vec![0.0f32; L];
                // (Both arithmetic modes.)
                assert_eq!(r, 2);
                assert!(e[..2 * L].iter().all(|&x| (0.0..=1.0987).contains(&x)));
                assert_eq!(e[2 * L], -1.0);
                assert_eq!(atome_router_entropy(&*st, last.as_mut_ptr()), L as i32);
                assert_eq!(&last[..], &e[L..2 * L]);
            }
        }
    }
}

#[test]
fn error_paths() {
    let b = generate(&DIMS, Format::Atome01, 1, 3);
    let cb = generate(&DIMS, Format::AtomeCl02, 2, 4);
    let mut m = zeroed::<atome_model_t>();
    let mut c = zeroed::<atome_classifier_t>();
    let mut st = zeroed::<atome_state_t>();
    let t = toks(4);
    let mut out = [0i32; 4];
    let mut fl = [0.0f32; 64];
    let prm = atome_sampling_t { temperature: 1.0, top_k: 0, top_p: 0.0, reserved: 0, seed: 1 };
    // SAFETY: valid pointers (or null) and lengths.
    unsafe {
        // Unloaded (zeroed) model and classifier: refused everywhere.
        assert_eq!(atome_predict_next(&*m, &mut *st, t.as_ptr(), 4), -1);
        assert_eq!(atome_generate(&*m, &mut *st, t.as_ptr(), 4, out.as_mut_ptr(), 4), 0);
        assert_eq!(atome_generate_sampled(&*m, &mut *st, t.as_ptr(), 4, out.as_mut_ptr(), 4, &prm), 0);
        assert_eq!(atome_router_entropy_all(&*m, &mut *st, t.as_ptr(), 4, fl.as_mut_ptr(), 64), -1);
        assert_eq!(atome_classify(&*c, &mut *st, t.as_ptr(), 4, fl.as_mut_ptr()), -1);
        // Load codes.
        assert_eq!(atome_load(ptr::null_mut(), b.bytes.as_ptr(), b.bytes.len()), -1);
        assert_eq!(atome_load(&mut *m, ptr::null(), b.bytes.len()), -1);
        assert_eq!(atome_load(&mut *m, b.bytes.as_ptr(), 6), -1);
        assert_eq!(atome_load(&mut *m, b"ATOME09xxxxxxxxx".as_ptr(), 16), -1);
        assert_eq!(atome_load(&mut *m, b.bytes.as_ptr(), b.bytes.len() - 1), -2);
        assert_eq!(atome_load(&mut *m, b.bytes.as_ptr(), 7), -2);
        let mut long = b.bytes.clone();
        long.extend_from_slice(&[0u8; 15]);
        assert_eq!(atome_load(&mut *m, long.as_ptr(), long.len()), 0, "15 trailing bytes are accepted");
        long.push(0);
        assert_eq!(atome_load(&mut *m, long.as_ptr(), long.len()), -3, "16 are not");
        assert_eq!(atome_predict_next(&*m, &mut *st, t.as_ptr(), 4), -1, "a failed load leaves the model refused");
        let mut bad = cb.bytes.clone();
        for n in [0i32, -1, ATOME_MAX_CLASSES as i32 + 1, i32::MIN] {
            bad[9..13].copy_from_slice(&n.to_le_bytes());
            assert_eq!(atome_classifier_load(&mut *c, bad.as_ptr(), bad.len()), -1, "n_classes {n}");
        }
        assert_eq!(atome_classifier_load(&mut *c, cb.bytes.as_ptr(), 12), -2);
        // A base-3 byte above 242.
        let mut b3 = cb.bytes.clone();
        b3[13 + 4] = 243;
        assert_eq!(atome_classifier_load(&mut *c, b3.as_ptr(), b3.len()), -4);
        // Good loads, then bad arguments.
        assert_eq!(atome_load(&mut *m, b.bytes.as_ptr(), b.bytes.len()), 0);
        assert_eq!(atome_classifier_load(&mut *c, cb.bytes.as_ptr(), cb.bytes.len()), 0);
        for n in [0, -1, i32::MIN] {
            assert_eq!(atome_predict_next(&*m, &mut *st, t.as_ptr(), n), -1);
            assert_eq!(atome_generate(&*m, &mut *st, t.as_ptr(), n, out.as_mut_ptr(), 4), 0);
            assert_eq!(atome_generate(&*m, &mut *st, t.as_ptr(), 4, out.as_mut_ptr(), n), 0);
            assert_eq!(atome_classify(&*c, &mut *st, t.as_ptr(), n, fl.as_mut_ptr()), -1);
            assert_eq!(atome_router_entropy_all(&*m, &mut *st, t.as_ptr(), n, fl.as_mut_ptr(), 64), -1);
        }
        assert_eq!(atome_predict_next(ptr::null(), &mut *st, t.as_ptr(), 4), -1);
        assert_eq!(atome_predict_next(&*m, ptr::null_mut(), t.as_ptr(), 4), -1);
        assert_eq!(atome_predict_next(&*m, &mut *st, ptr::null(), 4), -1);
        assert_eq!(atome_generate(&*m, &mut *st, t.as_ptr(), 4, ptr::null_mut(), 4), 0);
        assert_eq!(atome_generate_sampled(&*m, &mut *st, t.as_ptr(), 4, out.as_mut_ptr(), 4, ptr::null()), 0);
        assert_eq!(atome_classify(ptr::null(), &mut *st, t.as_ptr(), 4, ptr::null_mut()), -1);
        assert_eq!(atome_classify(&*c, ptr::null_mut(), t.as_ptr(), 4, ptr::null_mut()), -1);
        assert_eq!(atome_classify(&*c, &mut *st, ptr::null(), 4, ptr::null_mut()), -1);
        assert_eq!(atome_router_entropy(ptr::null(), fl.as_mut_ptr()), -1);
        assert_eq!(atome_router_entropy(&*st, ptr::null_mut()), -1);
        assert_eq!(atome_router_entropy_all(&*m, &mut *st, t.as_ptr(), 4, fl.as_mut_ptr(), (L * 4 - 1) as i32), -1);
        assert_eq!(atome_router_entropy_all(&*m, &mut *st, t.as_ptr(), 4, fl.as_mut_ptr(), -1), -1);
        assert!(atome_get_logits(ptr::null_mut()).is_null());
        atome_init(ptr::null_mut());
        let mut cfg = atome_build_config_t::default();
        assert_eq!(atome_get_build_config(ptr::null_mut()), -1);
        assert_eq!(atome_get_build_config(&mut cfg), 0);
        assert_eq!(cfg.state_size as usize, std::mem::size_of::<atome_state_t>());
        assert_eq!(cfg.d_model as usize, D);
        // A prompt that fills the window generates nothing.
        let full = toks(S);
        assert_eq!(atome_generate(&*m, &mut *st, full.as_ptr(), S as i32, out.as_mut_ptr(), 4), 0);
        // Garbage state: same results as a fresh one.
        let mut fresh = zeroed::<atome_state_t>();
        atome_init(&mut *fresh);
        let a = atome_predict_next(&*m, &mut *fresh, t.as_ptr(), 4);
        let la = std::slice::from_raw_parts(atome_get_logits(&mut *fresh), V).to_vec();
        let raw = std::slice::from_raw_parts_mut(&mut *st as *mut atome_state_t as *mut u8, std::mem::size_of::<atome_state_t>());
        for (i, x) in raw.iter_mut().enumerate() {
            *x = (i as u8).wrapping_mul(151) ^ 0x7f;
        }
        assert_eq!(atome_predict_next(&*m, &mut *st, t.as_ptr(), 4), a);
        let lb = std::slice::from_raw_parts(atome_get_logits(&mut *st), V);
        assert!(la.iter().zip(lb).all(|(x, y)| x.to_bits() == y.to_bits()));
    }
}

#[test]
fn kernels_on_misaligned_params() {
    let mut st = zeroed::<atome_state_t>();
    let n = 3.min(S);
    let x: Vec<f32> = (0..n * D).map(|i| (i % 7) as f32 * 0.25 - 0.5).collect();
    let mut out = vec![0.0f32; n * D];
    // Floats at odd addresses.
    let mut fb = vec![0u8; 1 + 4 * 3 * D];
    for i in 0..3 * D {
        fb[1 + 4 * i..5 + 4 * i].copy_from_slice(&(0.5 + i as f32 * 0.01).to_le_bytes());
    }
    let f0 = fb[1..].as_ptr() as *const f32;
    let payload = vec![0b0111_0001u8; 3 * (D * D).div_ceil(8) + 1];
    // SAFETY: every buffer is sized from the shapes passed.
    unsafe {
        let fp = |k: usize| (f0 as *const u8).add(4 * k * D) as *const f32;
        for packing in 0..3u8 {
            let w = atome_ternary_t { packed: payload[1..].as_ptr(), scale: 0.5, rows: 5, cols: D as u16, packing };
            let mut y = [0.0f32; 6];
            atome_ternary_matvec(&w, x.as_ptr(), y.as_mut_ptr());
            assert!(y[..5].iter().all(|v| v.is_finite()) && y[5] == 0.0);
        }
        let mut xn = x[..D].to_vec();
        atome_layer_norm(xn.as_mut_ptr(), D as i32, &atome_norm_t { gamma: fp(0), beta: fp(1) });
        assert!(xn.iter().all(|v| v.is_finite()));
        let conv = atome_conv_t { packed: payload[1..].as_ptr(), scale: 0.3, channels: D as u16, kernel_size: ATOME_KERNEL_SIZE as u16, packing: 1 };
        atome_causal_conv(x.as_ptr() as *const [f32; D], n as i32, &conv, out.as_mut_ptr() as *mut [f32; D]);
        let ssm = atome_ssm_t { a: fp(0), b: fp(1), c_out: fp(2), channels: D as u16 };
        let mut h = vec![0.0f32; D];
        atome_ssm_forward(x.as_ptr() as *const [f32; D], n as i32, &ssm, h.as_mut_ptr(), out.as_mut_ptr() as *mut [f32; D]);
        let t = |rows: usize| atome_ternary_t { packed: payload[1..].as_ptr(), scale: 0.2, rows: rows as u16, cols: D as u16, packing: 2 };
        let attn = atome_attn_t { Wq: t(ATOME_D_HEAD), Wk: t(ATOME_D_HEAD), Wv: t(D), d_head: ATOME_D_HEAD as u16, top_k: ATOME_TOP_K as u16 };
        atome_sparse_attn(x.as_ptr() as *const [f32; D], n as i32, &attn, &mut *st, out.as_mut_ptr() as *mut [f32; D]);
        assert!(out.iter().all(|v| v.is_finite()));
        // Null and bad arguments are ignored.
        atome_ternary_matvec(ptr::null(), x.as_ptr(), out.as_mut_ptr());
        atome_layer_norm(ptr::null_mut(), 4, ptr::null());
        atome_causal_conv(x.as_ptr() as *const [f32; D], 0, &conv, out.as_mut_ptr() as *mut [f32; D]);
        atome_ssm_forward(x.as_ptr() as *const [f32; D], -1, &ssm, h.as_mut_ptr(), out.as_mut_ptr() as *mut [f32; D]);
        atome_sparse_attn(x.as_ptr() as *const [f32; D], 1, &attn, ptr::null_mut(), out.as_mut_ptr() as *mut [f32; D]);
        let bad = atome_ternary_t { packed: payload.as_ptr(), scale: 1.0, rows: 2, cols: 2, packing: 9 };
        let mut y = [7.0f32; 2];
        atome_ternary_matvec(&bad, x.as_ptr(), y.as_mut_ptr());
        assert_eq!(y, [7.0, 7.0], "an unknown packing tag is a no-op");
    }
}

/// docs/ARITHMETIC.md: "the state's contents before a call never change its
/// result" — also when the state was last used with another blob that sat at
/// the same address (a model region rewritten in place, then loaded again).
/// This was a bug in ATOME_STATE=cached builds (the cache fingerprint covered
/// the blob's address, the embedding/unembedding scales and the packing, not the
/// block weights); fixed: the load-time blob hash now keys cached states.
#[test]
fn state_reused_after_reloading_a_blob_in_place() {
    let a = generate(&DIMS, Format::Atome01, 1, 1);
    let mut b = a.clone();
    let off = b.floats.iter().find(|f| f.1 == blobgen::Field::Wv).unwrap().0;
    b.set_f32(off, 5.0);
    let mut buf = a.bytes.clone();
    let t: Vec<i32> = (0..S.min(8) as i32).map(|i| (i * 13) % V as i32).collect();
    let n = t.len() as i32;
    let mut m = zeroed::<atome_model_t>();
    let mut st = zeroed::<atome_state_t>();
    let mut fresh = zeroed::<atome_state_t>();
    // SAFETY: valid pointers; the buffer outlives every use of the model.
    unsafe {
        assert_eq!(atome_load(&mut *m, buf.as_ptr(), buf.len()), 0);
        atome_predict_next(&*m, &mut *st, t.as_ptr(), n);
        buf.copy_from_slice(&b.bytes);
        assert_eq!(atome_load(&mut *m, buf.as_ptr(), buf.len()), 0);
        let reused = atome_predict_next(&*m, &mut *st, t.as_ptr(), n);
        let lr: Vec<u32> = std::slice::from_raw_parts(atome_get_logits(&mut *st), V).iter().map(|x| x.to_bits()).collect();
        let want = atome_predict_next(&*m, &mut *fresh, t.as_ptr(), n);
        let lf: Vec<u32> = std::slice::from_raw_parts(atome_get_logits(&mut *fresh), V).iter().map(|x| x.to_bits()).collect();
        assert_eq!(reused, want, "stale state after reloading a rewritten blob at the same address");
        assert_eq!(lr, lf, "stale logits after reloading a rewritten blob at the same address");
    }
}

/// atome_generate / atome_generate_sampled never write more than
/// min(max_tokens, S - prompt_len) tokens (docs/ARITHMETIC.md), so a C caller of
/// the reference could pass a buffer of that size with a larger max_tokens
/// ("as many as fit"). This was undefined behaviour that Miri reported: the
/// library formed a Rust slice of max_tokens ints over that buffer; fixed:
/// the output slice is clamped to the window first.
#[test]
fn generate_with_max_tokens_beyond_the_window() {
    let b = generate(&DIMS, Format::Atome01, 1, 9);
    let mut m = zeroed::<atome_model_t>();
    let mut st = zeroed::<atome_state_t>();
    let prompt = [1i32, 2];
    let room = S.saturating_sub(2);
    let mut out = vec![-1i32; room.max(1)];
    let prm = atome_sampling_t { temperature: 0.7, top_k: 0, top_p: 0.0, reserved: 0, seed: 3 };
    // SAFETY: the buffer holds every token that can be generated.
    unsafe {
        assert_eq!(atome_load(&mut *m, b.bytes.as_ptr(), b.bytes.len()), 0);
        let p = prompt.as_ptr();
        let n = atome_generate(&*m, &mut *st, p, 2.min(S as i32), out.as_mut_ptr(), 1000);
        assert_eq!(n as usize, room);
        let n = atome_generate_sampled(&*m, &mut *st, p, 2.min(S as i32), out.as_mut_ptr(), i32::MAX, &prm);
        assert_eq!(n as usize, room);
    }
}

/// An int16 area `.1` elements into its vector.
struct Off(Vec<i16>, usize);

impl AsMut<[i16]> for Off {
    fn as_mut(&mut self) -> &mut [i16] {
        &mut self.0[self.1..]
    }
}

/// The q15 cached plan's kept parameter vectors (int32 words read through
/// `align_to` from int16 value rows): an int16 area at an odd element
/// offset (2 bytes past a word), a window long enough to keep them, and
/// every prefix against the q15 lean plan, bit for bit.
#[test]
fn q15_cached_kept_parameters_at_any_alignment() {
    use atome::engine::Engine;
    use atome::q15::{Q15CachedLayout, Q15CachedState, Q15Layout, Q15State};
    let s = 12;
    let b = generate(&DIMS, Format::Atome01, 1, 5);
    let m = atome::format::parse_model(&b.bytes, &DIMS).unwrap();
    let t = toks(s);
    for shift in [0usize, 1] {
        let lay = Q15CachedLayout::new(&DIMS, s);
        let mut ca = Q15CachedState::new(DIMS, s, Off(vec![0i16; lay.i16s + shift], shift), vec![0; lay.i32s], vec![0.0; V], vec![0; s]);
        let ll = Q15Layout::new(&DIMS, s);
        let mut le = Q15State::new(DIMS, s, vec![0i16; ll.i16s], vec![0; ll.i32s], vec![0.0; V]);
        for n in 1..=s {
            let (a, la) = {
                let mut r = le.runner().unwrap();
                (r.predict(&m, &t[..n]), r.logits().iter().map(|f| f.to_bits()).collect::<Vec<_>>())
            };
            let mut r = ca.runner().unwrap();
            let c = r.predict(&m, &t[..n]);
            let lc: Vec<u32> = r.logits().iter().map(|f| f.to_bits()).collect();
            assert_eq!((a, la), (c, lc), "shift {shift} n {n}");
            if n == 1 && !cfg!(miri) {
                assert!(r.params_kept(), "shift {shift}");
            }
        }
    }
}
