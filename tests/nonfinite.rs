//! NaN and infinity in the weights (scales, LayerNorm gamma/beta, SSM a/b/c)
//! and in the activations: behaviour must stay defined. Loads succeed (floats
//! are not validated), every call returns an in-range id / class / count,
//! the id is the contract (docs/) argmax of the logits (first index, strict `>` from 0,
//! so NaN logits give 0), nothing hangs, nothing is written out of bounds.
//! And docs/ARITHMETIC.md: a top-k slot left without an index (NaN scores)
//! contributes nothing.
//!
//! In a q15 build (ATOME_DTYPE=q15) the same calls run through the integer
//! engine, whose contract is stricter (docs/Q15.md#non-finite-and-degenerate-inputs):
//! a NaN parameter reads as 0 and +-inf as +-FLT_MAX, so no logit is ever
//! NaN and entropies are numbers; those readings are checked bit for bit.
#[path = "../fuzz/src/blobgen.rs"]
mod blobgen;

use atome::config::*;
use atome::ffi::extra::*;
use atome::ffi::kernels::*;
use atome::ffi::model::*;
use atome::ffi::run::*;
use atome::ffi::types::*;
use blobgen::{generate, Blob, Field, Format};
use std::sync::Once;

const V: usize = ATOME_VOCAB_SIZE;
const S: usize = ATOME_MAX_SEQ;
const L: usize = ATOME_N_LAYERS;
const D: usize = ATOME_D_MODEL;
/// A library built with ATOME_DTYPE=q15 (the integer engine behind the C API).
const Q15: bool = ATOME_DTYPE_Q15 == 1;

const FIELDS: [Field; 15] = Field::ALL;

const VALUES: [f32; 7] = [f32::NAN, f32::INFINITY, f32::NEG_INFINITY, 3.0e38, -3.0e38, -0.0, 1.0e-45];

/// Aborts the test binary if a case hangs (a hang is a failure, not a wait).
fn watchdog() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        std::thread::spawn(|| {
            std::thread::sleep(std::time::Duration::from_secs(600));
            eprintln!("nonfinite: a case did not finish in 600 s (hang)");
            std::process::abort();
        });
    });
}

fn zeroed<T>() -> Box<T> {
    // SAFETY: the C structs are valid when all-zero.
    unsafe { Box::<T>::new_zeroed().assume_init() }
}

fn argmax(v: &[f32]) -> usize {
    let mut b = 0;
    for i in 1..v.len() {
        if v[i] > v[b] {
            b = i;
        }
    }
    b
}

fn token_lists() -> Vec<Vec<i32>> {
    let mut out = vec![vec![5 % V as i32]];
    out.push((0..S as i32 + 3).map(|i| (i * 37 + 1) % V as i32).collect());
    out
}

/// Runs the language-model entry points and checks what must hold whatever the floats.
fn run_lm(blob: &Blob, what: &str) {
    let mut m = zeroed::<atome_model_t>();
    let mut st = zeroed::<atome_state_t>();
    // SAFETY: valid pointers and lengths; the blob outlives the model.
    unsafe {
        assert_eq!(atome_load(&mut *m, blob.bytes.as_ptr(), blob.bytes.len()), 0, "{what}: load");
        for t in token_lists() {
            let n = t.len() as i32;
            let id = atome_predict_next(&*m, &mut *st, t.as_ptr(), n);
            assert!(id >= 0 && (id as usize) < V, "{what}: id {id}");
            let lg = std::slice::from_raw_parts(atome_get_logits(&mut *st), V).to_vec();
            assert_eq!(id as usize, argmax(&lg), "{what}: id is not the contract (docs/) argmax");
            if Q15 {
                assert!(lg.iter().all(|x| !x.is_nan()), "{what}: q15 logits are never NaN");
            }
            let mut ent = [-5.0f32; 64];
            assert_eq!(atome_router_entropy(&*st, ent.as_mut_ptr()), L as i32);
            for &e in &ent[..L.min(64)] {
                assert!((e.is_nan() && !Q15) || (0.0..=1.0987).contains(&e), "{what}: entropy {e}");
            }
            // The same call on the same state: the same bits.
            assert_eq!(atome_predict_next(&*m, &mut *st, t.as_ptr(), n), id, "{what}: second call");
            let lg2 = std::slice::from_raw_parts(atome_get_logits(&mut *st), V);
            assert!(lg.iter().zip(lg2).all(|(a, b)| a.to_bits() == b.to_bits()), "{what}: second call's bits");
            let mut out = [-1i32; 3];
            let cnt = atome_generate(&*m, &mut *st, t.as_ptr(), n, out.as_mut_ptr(), 2);
            let want = 2.min(S.saturating_sub(t.len()));
            assert_eq!(cnt as usize, want, "{what}: generate count");
            assert!(out[..want].iter().all(|&x| x >= 0 && (x as usize) < V) && out[2] == -1, "{what}: generated {out:?}");
            if want > 0 {
                assert_eq!(out[0], id, "{what}: generate != predict_next");
            }
            for temp in [1.0f32, f32::INFINITY, f32::NAN, 1e-30] {
                let prm = atome_sampling_t { temperature: temp, top_k: 3, top_p: 0.9, reserved: 0, seed: 11 };
                let mut out = [-1i32; 3];
                let cnt = atome_generate_sampled(&*m, &mut *st, t.as_ptr(), n, out.as_mut_ptr(), 2, &prm);
                assert_eq!(cnt as usize, want, "{what}: sampled count (T={temp})");
                assert!(out[..want].iter().all(|&x| x >= 0 && (x as usize) < V) && out[2] == -1, "{what}: sampled {out:?}");
            }
        }
    }
}

fn run_clf(blob: &Blob, nc: i32, what: &str) {
    let mut c = zeroed::<atome_classifier_t>();
    let mut st = zeroed::<atome_state_t>();
    // SAFETY: as run_lm; class_logits holds nc + 1 floats.
    unsafe {
        assert_eq!(atome_classifier_load(&mut *c, blob.bytes.as_ptr(), blob.bytes.len()), 0, "{what}: load");
        for t in token_lists() {
            let mut out = vec![-2.5f32; nc as usize + 1];
            let k = atome_classify(&*c, &mut *st, t.as_ptr(), t.len() as i32, out.as_mut_ptr());
            assert!(k >= 0 && k < nc, "{what}: class {k}");
            assert_eq!(k as usize, argmax(&out[..nc as usize]), "{what}: class is not the contract (docs/) argmax");
            if Q15 {
                assert!(out.iter().all(|x| !x.is_nan()), "{what}: q15 class logits are never NaN");
            }
            assert_eq!(out[nc as usize], -2.5, "{what}: wrote past n_classes");
        }
    }
}

#[test]
fn nonfinite_language_model_weights() {
    watchdog();
    for (i, f) in FIELDS.iter().enumerate().filter(|(_, f)| **f != Field::Head) {
        for (j, &v) in VALUES.iter().enumerate() {
            let fmt = [Format::Atome01, Format::Atome02, Format::AtomeP3][(i + j) % 3];
            let mut b = generate(&DIMS, fmt, 1, 100 + i as u64);
            assert!(b.set_field(*f, v) > 0);
            run_lm(&b, &format!("{fmt:?} {f:?} = {v:e}"));
        }
    }
}

#[test]
fn nonfinite_classifier_weights() {
    watchdog();
    let nc = 5;
    for (i, f) in FIELDS.iter().enumerate() {
        for (j, &v) in VALUES.iter().enumerate().filter(|(j, _)| j % 2 == i % 2 || *j == 0) {
            let fmt = if (i + j) % 2 == 0 { Format::AtomeCl01 } else { Format::AtomeCl02 };
            let mut b = generate(&DIMS, fmt, nc, 200 + i as u64);
            assert!(b.set_field(*f, v) > 0);
            run_clf(&b, nc, &format!("{fmt:?} {f:?} = {v:e}"));
        }
    }
}

/// One NaN/inf float at a time, everywhere (sampled positions).
#[test]
fn single_nonfinite_floats() {
    watchdog();
    let base = generate(&DIMS, Format::Atome01, 1, 7);
    let n = base.floats.len();
    let step = (n / 40).max(1);
    for (k, idx) in (0..n).step_by(step).enumerate() {
        let mut b = base.clone();
        let off = b.floats[idx].0;
        b.set_f32(off, VALUES[k % 3]);
        run_lm(&b, &format!("float #{idx} ({:?}) = {:e}", b.floats[idx].1, VALUES[k % 3]));
    }
}

/// docs/ARITHMETIC.md: with NaN attention scores no slot gets an index, and such
/// a slot contributes nothing: the sparse pathway's output is +0.0, exactly
/// as when every value vector is zero (Wv scale 0).
#[test]
fn nan_scores_leave_slots_empty_and_contribute_nothing() {
    watchdog();
    if Q15 {
        // The integer engine has no NaN score (a NaN scale reads as 0):
        // its own rule is checked instead.
        return q15_nonfinite_parameters_read_as_zero_or_flt_max();
    }
    for fmt in [Format::Atome01, Format::Atome02, Format::AtomeP3] {
        let seed = 31;
        let mut zero_v = generate(&DIMS, fmt, 1, seed);
        zero_v.set_field(Field::Wv, 0.0);
        for nan_field in [Field::Wq, Field::Wk] {
            let mut nan_q = generate(&DIMS, fmt, 1, seed);
            nan_q.set_field(nan_field, f32::NAN);
            let logits = |b: &Blob| -> (i32, Vec<u32>) {
                let mut m = zeroed::<atome_model_t>();
                let mut st = zeroed::<atome_state_t>();
                let t: Vec<i32> = (0..S as i32).map(|i| (i * 11 + 3) % V as i32).collect();
                // SAFETY: valid pointers and lengths.
                unsafe {
                    assert_eq!(atome_load(&mut *m, b.bytes.as_ptr(), b.bytes.len()), 0);
                    let id = atome_predict_next(&*m, &mut *st, t.as_ptr(), S as i32);
                    let lg = std::slice::from_raw_parts(atome_get_logits(&mut *st), V);
                    (id, lg.iter().map(|x| x.to_bits()).collect())
                }
            };
            let (a, la) = logits(&zero_v);
            let (b, lb) = logits(&nan_q);
            assert!(la.iter().all(|&x| f32::from_bits(x).is_finite()), "{fmt:?}: reference logits finite");
            assert_eq!(a, b, "{fmt:?} {nan_field:?} NaN: id");
            assert_eq!(la, lb, "{fmt:?} {nan_field:?} NaN: an empty slot must contribute nothing");
        }
    }
}

/// The kernels with NaN/inf inputs: zero weights add nothing (so a NaN input
/// under a zero weight does not reach the output), and the attention kernel
/// leaves empty slots out.
#[test]
fn kernels_with_nonfinite_inputs() {
    watchdog();
    let cols = 12usize;
    // Row 0: all zero weights; row 1: +1 on column 0 only.
    let mut payload = vec![0u8; (2 * cols).div_ceil(4)];
    payload[cols / 4] |= 1 << (2 * (cols % 4));
    let w = atome_ternary_t { packed: payload.as_ptr(), scale: 2.0, rows: 2, cols: cols as u16, packing: 0 };
    let mut x = vec![1.0f32; cols];
    x[3] = f32::NAN;
    x[5] = f32::INFINITY;
    let mut y = [9.0f32; 3];
    // SAFETY: buffers sized from the shapes.
    unsafe { atome_ternary_matvec(&w, x.as_ptr(), y.as_mut_ptr()) };
    assert_eq!(y[0].to_bits(), 0.0f32.to_bits(), "zero weights skip NaN/inf inputs");
    assert_eq!(y[1], 2.0);
    assert_eq!(y[2], 9.0);

    // LayerNorm of a vector holding inf: NaN out, no trap.
    let g = vec![1.0f32; D];
    let bta = vec![0.0f32; D];
    let mut v: Vec<f32> = (0..D).map(|i| i as f32).collect();
    v[0] = f32::INFINITY;
    // SAFETY: D floats each.
    unsafe { atome_layer_norm(v.as_mut_ptr(), D as i32, &atome_norm_t { gamma: g.as_ptr(), beta: bta.as_ptr() }) };
    assert!(v.iter().all(|x| x.is_nan()));

    // Sparse attention with NaN query scale: every output is +0.0.
    let n = 3.min(S);
    let pay = vec![0b0101_0101u8; (D * D).div_ceil(4)];
    let t = |rows: usize, scale: f32| atome_ternary_t { packed: pay.as_ptr(), scale, rows: rows as u16, cols: D as u16, packing: 0 };
    let attn = atome_attn_t { Wq: t(ATOME_D_HEAD, f32::NAN), Wk: t(ATOME_D_HEAD, 1.0), Wv: t(D, 1.0), d_head: ATOME_D_HEAD as u16, top_k: ATOME_TOP_K as u16 };
    let xs: Vec<f32> = (0..n * D).map(|i| (i % 5) as f32 - 2.0).collect();
    let mut out = vec![7.0f32; n * D];
    let mut st = zeroed::<atome_state_t>();
    // SAFETY: n rows of D floats; payloads sized D x D.
    unsafe { atome_sparse_attn(xs.as_ptr() as *const [f32; D], n as i32, &attn, &mut *st, out.as_mut_ptr() as *mut [f32; D]) };
    assert!(out.iter().all(|x| x.to_bits() == 0), "empty slots contribute nothing: {:?}", &out[..4]);

    // SSM with a = NaN / b = inf.
    let a = vec![f32::NAN; D];
    let b = vec![f32::INFINITY; D];
    let c = vec![1.0f32; D];
    let mut h = vec![0.0f32; D];
    let mut so = vec![0.0f32; n * D];
    let p = atome_ssm_t { a: a.as_ptr(), b: b.as_ptr(), c_out: c.as_ptr(), channels: D as u16 };
    // SAFETY: n rows; D-float parameter arrays.
    unsafe { atome_ssm_forward(xs.as_ptr() as *const [f32; D], n as i32, &p, h.as_mut_ptr(), so.as_mut_ptr() as *mut [f32; D]) };
    assert!(so.iter().all(|x| x.is_nan()));
}

/// docs/Q15.md#non-finite-and-degenerate-inputs: in a q15 build a NaN
/// parameter (any scale, gamma, beta, a, b, c_out) reads as 0 and +-inf as
/// +-FLT_MAX. So a blob with NaN in a field gives exactly the logits of the
/// blob with 0.0 there, +inf those of f32::MAX and -inf those of -f32::MAX
/// (language models in the three packings, and classifiers).
fn q15_nonfinite_parameters_read_as_zero_or_flt_max() {
    let t: Vec<i32> = (0..S as i32 + 2).map(|i| (i * 11 + 3) % V as i32).collect();
    let lm = |b: &Blob| -> (i32, Vec<u32>) {
        let mut m = zeroed::<atome_model_t>();
        let mut st = zeroed::<atome_state_t>();
        // SAFETY: valid pointers and lengths.
        unsafe {
            assert_eq!(atome_load(&mut *m, b.bytes.as_ptr(), b.bytes.len()), 0);
            let id = atome_predict_next(&*m, &mut *st, t.as_ptr(), t.len() as i32);
            let lg = std::slice::from_raw_parts(atome_get_logits(&mut *st), V);
            (id, lg.iter().map(|x| x.to_bits()).collect())
        }
    };
    let clf = |b: &Blob| -> (i32, Vec<u32>) {
        let mut c = zeroed::<atome_classifier_t>();
        let mut st = zeroed::<atome_state_t>();
        let mut out = [0.0f32; 4];
        // SAFETY: valid pointers and lengths; out holds n_classes floats.
        unsafe {
            assert_eq!(atome_classifier_load(&mut *c, b.bytes.as_ptr(), b.bytes.len()), 0);
            let k = atome_classify(&*c, &mut *st, t.as_ptr(), t.len() as i32, out.as_mut_ptr());
            (k, out.iter().map(|x| x.to_bits()).collect())
        }
    };
    let pairs = [(f32::NAN, 0.0f32), (f32::INFINITY, f32::MAX), (f32::NEG_INFINITY, -f32::MAX), (-f32::NAN, -0.0)];
    let mut differ = 0;
    for (i, f) in FIELDS.iter().enumerate() {
        let formats: &[Format] = if *f == Field::Head { &[Format::AtomeCl01, Format::AtomeCl02] } else { &[Format::Atome01, Format::Atome02, Format::AtomeP3] };
        for (j, fmt) in formats.iter().enumerate() {
            let (bad, same) = pairs[(i + j) % pairs.len()];
            let base = generate(&DIMS, *fmt, 4, 300 + i as u64);
            let (mut a, mut b) = (base.clone(), base.clone());
            assert!(a.set_field(*f, bad) > 0);
            b.set_field(*f, same);
            let (ra, rb, r0) = if fmt.is_classifier() { (clf(&a), clf(&b), clf(&base)) } else { (lm(&a), lm(&b), lm(&base)) };
            let what = format!("{fmt:?} {f:?} = {bad:e} vs {same:e}");
            assert_eq!(ra.0, rb.0, "{what}: id");
            assert_eq!(ra.1, rb.1, "{what}: logits");
            assert!(ra.1.iter().all(|&x| !f32::from_bits(x).is_nan()), "{what}: a NaN logit");
            differ += (ra.1 != r0.1) as usize;
        }
    }
    // The substitutions change the result (the check above compares something).
    assert!(differ >= 20, "only {differ} substitutions changed the logits");
}
