//! Every error path of docs/API.md#loading and docs/ARITHMETIC.md through the C API (this build's
//! configuration; cargo test builds the default one unless ATOME_* are set).
mod common;
use atome::config::*;
use atome::ffi::extra::*;
use atome::ffi::model::*;
use atome::ffi::run::*;
use atome::ffi::*;
use common::*;
use std::ptr::{null, null_mut};

fn cfg() -> Cfg {
    Cfg { v: ATOME_VOCAB_SIZE, d: ATOME_D_MODEL, l: ATOME_N_LAYERS, dh: ATOME_D_HEAD, k: ATOME_KERNEL_SIZE, topk: ATOME_TOP_K }
}

fn zeroed<T>() -> Box<T> {
    // SAFETY: the API structs are plain data for which all-zero bytes are valid.
    unsafe { Box::new_zeroed().assume_init() }
}

fn load(blob: &[u8]) -> (Box<atome_model_t>, i32) {
    let mut m = zeroed::<atome_model_t>();
    // SAFETY: every pointer is valid (or null on purpose) for the length passed.
    let rc = unsafe { atome_load(&mut *m, blob.as_ptr(), blob.len()) };
    (m, rc)
}

fn predict(m: &atome_model_t, toks: &[i32]) -> (i32, Vec<f32>) {
    let mut s = zeroed::<atome_state_t>();
    // SAFETY: every pointer is valid (or null on purpose) for the length passed.
    let id = unsafe { atome_predict_next(m, &mut *s, toks.as_ptr(), toks.len() as i32) };
    (id, s.logits.to_vec())
}

fn blob(fmt: Packing) -> Vec<u8> {
    random_model(cfg(), fmt, None, 42).blob(fmt)
}

#[test]
fn load_codes() {
    let b = blob(Packing::Trit2);
    assert_eq!(load(&b).1, 0);
    // Null arguments.
    let mut m = zeroed::<atome_model_t>();
    // SAFETY: every pointer is valid (or null on purpose) for the length passed.
    assert_eq!(unsafe { atome_load(null_mut(), b.as_ptr(), b.len()) }, -1);
    // SAFETY: every pointer is valid (or null on purpose) for the length passed.
    assert_eq!(unsafe { atome_load(&mut *m, null(), b.len()) }, -1);
    // Shorter than the magic, wrong magic.
    for n in 0..7 {
        assert_eq!(load(&b[..n]).1, -1, "len {n}");
    }
    let mut bad = b.clone();
    bad[6] = b'9';
    assert_eq!(load(&bad).1, -1);
    // Every truncation is -2.
    for n in 7..b.len() {
        assert_eq!(load(&b[..n]).1, -2, "len {n}");
    }
    // Up to 15 bytes of padding accepted, more refused with -3.
    for extra in 1..=40usize {
        let mut p = b.clone();
        p.extend(std::iter::repeat_n(0xffu8, extra));
        assert_eq!(load(&p).1, if extra <= 15 { 0 } else { -3 }, "extra {extra}");
    }
    // ATOME02 and ATOMEP3 dispatch on the magic; an ATOME02 byte above 242 is -4.
    assert_eq!(load(&blob(Packing::Base3)).1, 0);
    assert_eq!(load(&blob(Packing::P3)).1, 0);
    let mut b2 = blob(Packing::Base3);
    let last = b2.len() - 1;
    b2[last] = 243;
    assert_eq!(load(&b2).1, -4);
}

#[test]
fn failed_load_is_refused_later() {
    let b = blob(Packing::Trit2);
    let (mut m, rc) = load(&b);
    assert_eq!(rc, 0);
    assert!(predict(&m, &[1, 2]).0 >= 0);
    // SAFETY: every pointer is valid (or null on purpose) for the length passed.
    assert_eq!(unsafe { atome_load(&mut *m, b.as_ptr(), 100) }, -2);
    let mut s = zeroed::<atome_state_t>();
    let toks = [1, 2, 3];
    // SAFETY: every pointer is valid (or null on purpose) for the length passed.
    assert_eq!(unsafe { atome_predict_next(&*m, &mut *s, toks.as_ptr(), 3) }, -1);
    let mut out = [0i32; 4];
    // SAFETY: every pointer is valid (or null on purpose) for the length passed.
    assert_eq!(unsafe { atome_generate(&*m, &mut *s, toks.as_ptr(), 3, out.as_mut_ptr(), 4) }, 0);
    // Never loaded (zeroed) is refused too.
    let never = zeroed::<atome_model_t>();
    // SAFETY: every pointer is valid (or null on purpose) for the length passed.
    assert_eq!(unsafe { atome_predict_next(&*never, &mut *s, toks.as_ptr(), 3) }, -1);
}

#[test]
fn predict_next_edges() {
    let b = blob(Packing::Trit2);
    let (m, _) = load(&b);
    let mut s = zeroed::<atome_state_t>();
    let toks = [1, 2, 3];
    // SAFETY: every pointer is valid (or null on purpose) for the length passed.
    unsafe {
        assert_eq!(atome_predict_next(null(), &mut *s, toks.as_ptr(), 3), -1);
        assert_eq!(atome_predict_next(&*m, null_mut(), toks.as_ptr(), 3), -1);
        assert_eq!(atome_predict_next(&*m, &mut *s, null(), 3), -1);
        assert_eq!(atome_predict_next(&*m, &mut *s, toks.as_ptr(), 0), -1);
        assert_eq!(atome_predict_next(&*m, &mut *s, toks.as_ptr(), -5), -1);
        assert!(atome_get_logits(null_mut()).is_null());
    }
    // Ids outside [0, V) read as 0.
    let v = ATOME_VOCAB_SIZE as i32;
    let a = predict(&m, &[v, -1, 7, i32::MIN, i32::MAX]);
    let z = predict(&m, &[0, 0, 7, 0, 0]);
    assert!(a.0 >= 0 && a.0 < v);
    assert_eq!(a.0, z.0);
    assert!(same_bits(&a.1, &z.1));
    // n > S: the last S tokens.
    let long: Vec<i32> = (0..ATOME_MAX_SEQ as i32 + 9).map(|i| (i * 37) % v).collect();
    let tail = &long[long.len() - ATOME_MAX_SEQ..];
    let (x, y) = (predict(&m, &long), predict(&m, tail));
    assert_eq!(x.0, y.0);
    assert!(same_bits(&x.1, &y.1));
    // And that is the reference's answer for the window (q15 build: the
    // integer engine's, close to the float reference's).
    let wt = random_model(cfg(), Packing::Trit2, None, 42);
    dtype::check_predict(&wt, &b, &long, ATOME_MAX_SEQ, x.0, &x.1);
}

/// A refused call writes nothing: not the state (logits included), not the
/// output buffers; and a second identical call gives the same bits.
#[test]
fn refused_calls_write_nothing_and_results_repeat() {
    let b = blob(Packing::P3);
    let (m, _) = load(&b);
    let never = zeroed::<atome_model_t>();
    let mut s = zeroed::<atome_state_t>();
    let size = std::mem::size_of::<atome_state_t>();
    let bytes = |s: &atome_state_t| -> Vec<u8> {
        // SAFETY: the state is plain data of `size` bytes.
        unsafe { std::slice::from_raw_parts(s as *const atome_state_t as *const u8, size).to_vec() }
    };
    // SAFETY: the state is plain data of `size` bytes; any bytes are a valid state.
    for (i, x) in unsafe { std::slice::from_raw_parts_mut(&mut *s as *mut atome_state_t as *mut u8, size) }.iter_mut().enumerate() {
        *x = (i as u8).wrapping_mul(29) ^ 0x5a;
    }
    let before = bytes(&s);
    let t = [3, 1, 4, 1, 5];
    let mut out = [-7i32; 8];
    let mut cl = [-2.5f32; 4];
    let c = zeroed::<atome_classifier_t>();
    let prm = atome_sampling_t { temperature: 0.9, top_k: 2, top_p: 0.9, reserved: 0, seed: 5 };
    // SAFETY: every pointer is valid (or null on purpose) for the length passed.
    unsafe {
        assert_eq!(atome_predict_next(&*never, &mut *s, t.as_ptr(), 5), -1);
        assert_eq!(atome_predict_next(&*m, &mut *s, t.as_ptr(), 0), -1);
        assert_eq!(atome_predict_next(&*m, &mut *s, null(), 5), -1);
        assert_eq!(atome_generate(&*never, &mut *s, t.as_ptr(), 5, out.as_mut_ptr(), 3), 0);
        assert_eq!(atome_generate(&*m, &mut *s, t.as_ptr(), -1, out.as_mut_ptr(), 3), 0);
        assert_eq!(atome_generate_sampled(&*never, &mut *s, t.as_ptr(), 5, out.as_mut_ptr(), 3, &prm), 0);
        assert_eq!(atome_classify(&*c, &mut *s, t.as_ptr(), 5, cl.as_mut_ptr()), -1);
    }
    assert!(bytes(&s) == before, "a refused call wrote into the state");
    assert_eq!(out, [-7; 8]);
    assert_eq!(cl, [-2.5; 4]);
    let a = predict(&m, &t);
    let again = predict(&m, &t);
    assert_eq!(a.0, again.0);
    assert!(a.1.iter().zip(&again.1).all(|(x, y)| x.to_bits() == y.to_bits()), "same call, same bits");
}

#[test]
fn generate_edges_and_greedy_equivalence() {
    let b = blob(Packing::Trit2);
    let (m, _) = load(&b);
    let mut s = zeroed::<atome_state_t>();
    let p = [10, 20, 30];
    let mut out = [-7i32; 64];
    // SAFETY: every pointer is valid (or null on purpose) for the length passed.
    unsafe {
        assert_eq!(atome_generate(null(), &mut *s, p.as_ptr(), 3, out.as_mut_ptr(), 4), 0);
        assert_eq!(atome_generate(&*m, null_mut(), p.as_ptr(), 3, out.as_mut_ptr(), 4), 0);
        assert_eq!(atome_generate(&*m, &mut *s, null(), 3, out.as_mut_ptr(), 4), 0);
        assert_eq!(atome_generate(&*m, &mut *s, p.as_ptr(), 3, null_mut(), 4), 0);
        assert_eq!(atome_generate(&*m, &mut *s, p.as_ptr(), 0, out.as_mut_ptr(), 4), 0);
        assert_eq!(atome_generate(&*m, &mut *s, p.as_ptr(), 3, out.as_mut_ptr(), 0), 0);
        assert_eq!(out[0], -7, "nothing written on refusal");
        // A prompt that fills the window generates nothing.
        let full: Vec<i32> = vec![5; ATOME_MAX_SEQ];
        assert_eq!(atome_generate(&*m, &mut *s, full.as_ptr(), full.len() as i32, out.as_mut_ptr(), 4), 0);
        // Stops at the window.
        let n = atome_generate(&*m, &mut *s, p.as_ptr(), 3, out.as_mut_ptr(), 64);
        assert_eq!(n as usize, (ATOME_MAX_SEQ - 3).min(64));
    }
    // Greedy generation equals repeated predict_next.
    let mut seq = p.to_vec();
    for &t in out.iter().take((ATOME_MAX_SEQ - 3).min(64)) {
        let (id, _) = predict(&m, &seq);
        assert_eq!(id, t);
        seq.push(id);
    }
}

#[test]
fn sampling_contract() {
    let b = blob(Packing::Trit2);
    let (m, _) = load(&b);
    let mut s = zeroed::<atome_state_t>();
    let p = [10, 20, 30];
    let run = |s: &mut atome_state_t, t: f32, k: i32, pp: f32, seed: u64| {
        let prm = atome_sampling_t { temperature: t, top_k: k, top_p: pp, reserved: 0, seed };
        let mut out = [0i32; 12];
        // SAFETY: every pointer is valid (or null on purpose) for the length passed.
        let n = unsafe { atome_generate_sampled(&*m, s, p.as_ptr(), 3, out.as_mut_ptr(), 12, &prm) };
        out[..n as usize].to_vec()
    };
    let mut greedy = [0i32; 12];
    // SAFETY: every pointer is valid (or null on purpose) for the length passed.
    let n = unsafe { atome_generate(&*m, &mut *s, p.as_ptr(), 3, greedy.as_mut_ptr(), 12) };
    assert_eq!(run(&mut s, 0.0, 0, 0.0, 1), greedy[..n as usize].to_vec());
    assert_eq!(run(&mut s, 1.0, 1, 0.0, 5), greedy[..n as usize].to_vec(), "top_k 1 is greedy");
    let a = run(&mut s, 1.3, 0, 0.95, 77);
    assert_eq!(a, run(&mut s, 1.3, 0, 0.95, 77), "deterministic per seed");
    let distinct: std::collections::HashSet<Vec<i32>> = (0..8).map(|seed| run(&mut s, 1.5, 0, 1.0, seed)).collect();
    assert!(distinct.len() > 1, "seeds change the draw");
    let prm = atome_sampling_t { temperature: 1.0, top_k: 0, top_p: 1.0, reserved: 0, seed: 0 };
    let mut out = [0i32; 4];
    // SAFETY: every pointer is valid (or null on purpose) for the length passed.
    unsafe {
        assert_eq!(atome_generate_sampled(&*m, &mut *s, p.as_ptr(), 3, out.as_mut_ptr(), 4, null()), 0);
        assert_eq!(atome_generate_sampled(null(), &mut *s, p.as_ptr(), 3, out.as_mut_ptr(), 4, &prm), 0);
    }
}

fn clf_blob(n_classes: i32) -> Vec<u8> {
    let mut b = random_model(cfg(), Packing::Trit2, Some(3), 9).blob(Packing::Trit2);
    b[9..13].copy_from_slice(&n_classes.to_le_bytes());
    b
}

#[test]
fn classifier_edges() {
    let b = random_model(cfg(), Packing::Trit2, Some(5), 9).blob(Packing::Trit2);
    let mut c = zeroed::<atome_classifier_t>();
    let mut s = zeroed::<atome_state_t>();
    // SAFETY: every pointer is valid (or null on purpose) for the length passed.
    unsafe {
        assert_eq!(atome_classifier_load(&mut *c, b.as_ptr(), b.len()), 0);
        assert_eq!(c.n_classes, 5);
        let t = [1, 2, 3];
        let mut lg = [f32::NAN; 5];
        let k = atome_classify(&*c, &mut *s, t.as_ptr(), 3, lg.as_mut_ptr());
        assert!((0..5).contains(&k));
        assert_eq!(atome_classify(&*c, &mut *s, t.as_ptr(), 3, null_mut()), k, "null logits is fine");
        assert_eq!(atome_classify(&*c, &mut *s, t.as_ptr(), 0, lg.as_mut_ptr()), -1);
        assert_eq!(atome_classify(&*c, &mut *s, t.as_ptr(), -1, lg.as_mut_ptr()), -1);
        assert_eq!(atome_classify(&*c, &mut *s, null(), 3, lg.as_mut_ptr()), -1);
        assert_eq!(atome_classify(null(), &mut *s, t.as_ptr(), 3, lg.as_mut_ptr()), -1);
        assert_eq!(atome_classify(&*c, null_mut(), t.as_ptr(), 3, lg.as_mut_ptr()), -1);
        assert_eq!(atome_classifier_load(null_mut(), b.as_ptr(), b.len()), -1);
        assert_eq!(atome_classifier_load(&mut *c, null(), b.len()), -1);
        assert_eq!(atome_classifier_load(&mut *c, b.as_ptr(), 8), -1);
        assert_eq!(atome_classifier_load(&mut *c, b.as_ptr(), 11), -2);
        // Refused after a failed load.
        assert_eq!(atome_classify(&*c, &mut *s, t.as_ptr(), 3, lg.as_mut_ptr()), -1);
        // n_classes out of range.
        for n in [0, -1, ATOME_MAX_CLASSES as i32 + 1, i32::MAX, i32::MIN] {
            let bb = clf_blob(n);
            assert_eq!(atome_classifier_load(&mut *c, bb.as_ptr(), bb.len()), -1, "n_classes {n}");
        }
        // A language-model blob is not a classifier and vice versa.
        let lm = blob(Packing::Trit2);
        assert_eq!(atome_classifier_load(&mut *c, lm.as_ptr(), lm.len()), -1);
        let mut m = zeroed::<atome_model_t>();
        assert_eq!(atome_load(&mut *m, b.as_ptr(), b.len()), -1);
        // ATOMECL02.
        let b2 = random_model(cfg(), Packing::Base3, Some(5), 9).blob(Packing::Base3);
        assert_eq!(atome_classifier_load(&mut *c, b2.as_ptr(), b2.len()), 0);
        let mut lg2 = [0.0f32; 5];
        assert_eq!(atome_classify(&*c, &mut *s, t.as_ptr(), 3, lg2.as_mut_ptr()), k);
        assert!(same_bits(&lg, &lg2));
    }
}

#[test]
fn misaligned_blob_gives_the_same_bits() {
    let b = blob(Packing::Trit2);
    let (m0, _) = load(&b);
    let r0 = predict(&m0, &[4, 8, 15, 16, 23, 42]);
    for off in 1..8 {
        let mut buf = vec![0u8; b.len() + off];
        buf[off..].copy_from_slice(&b);
        let (m, rc) = load(&buf[off..]);
        assert_eq!(rc, 0);
        let r = predict(&m, &[4, 8, 15, 16, 23, 42]);
        assert_eq!(r.0, r0.0);
        assert!(same_bits(&r.1, &r0.1), "offset {off}");
    }
}

#[test]
fn build_config_and_entropy_api() {
    let mut c = atome_build_config_t::default();
    // SAFETY: every pointer is valid (or null on purpose) for the length passed.
    unsafe {
        assert_eq!(atome_get_build_config(null_mut()), -1);
        assert_eq!(atome_get_build_config(&mut c), 0);
    }
    assert_eq!(c.d_model as usize, ATOME_D_MODEL);
    assert_eq!(c.state_size as usize, std::mem::size_of::<atome_state_t>());
    // Bit 1 of state_cached reports the q15 mode (docs/Q15.md).
    assert_eq!(c.state_cached & 2, if dtype::Q15 { 2 } else { 0 });
    let b = blob(Packing::Trit2);
    let (m, _) = load(&b);
    let mut s = zeroed::<atome_state_t>();
    let toks = [1, 2, 3, 4, 5];
    let l = ATOME_N_LAYERS;
    let mut all = vec![f32::NAN; toks.len() * l];
    let mut last = vec![f32::NAN; l];
    let wt = random_model(cfg(), Packing::Trit2, None, 42);
    let (_, routers) = reference_hidden(&wt, &toks, ATOME_MAX_SEQ);
    let entropy = |r: &[f32; 3]| -> f64 { r.iter().filter(|&&x| x > 0.0).map(|&x| -(x as f64) * (x as f64).ln()).sum() };
    if dtype::Q15 {
        // SAFETY: every pointer is valid (or null on purpose) for the length passed.
        unsafe {
            assert_eq!(atome_router_entropy_all(&*m, &mut *s, toks.as_ptr(), 5, all.as_mut_ptr(), 3), -1);
            assert!(all.iter().all(|x| x.is_nan()), "q15: refused, nothing written");
            assert_eq!(atome_router_entropy_all(&*m, &mut *s, toks.as_ptr(), 5, all.as_mut_ptr(), all.len() as i32), 5);
            let mut after = vec![f32::NAN; l];
            assert_eq!(atome_router_entropy(&*s, after.as_mut_ptr()), l as i32);
            assert!(same_bits(&after, &all[4 * l..]), "the all-positions call's last position is the stored one");
            assert_eq!(atome_predict_next(&*m, &mut *s, toks.as_ptr(), 5), predict(&m, &toks).0);
            assert_eq!(atome_router_entropy(&*s, last.as_mut_ptr()), l as i32);
            assert_eq!(atome_router_entropy(null(), last.as_mut_ptr()), -1);
        }
        assert!(same_bits(&last, &all[4 * l..]));
        // From the integer router probabilities: close to the float ones'.
        for t in 0..5 {
            for li in 0..l {
                let h = entropy(&routers[li][t]);
                assert!((all[t * l + li] as f64 - h).abs() < 1e-3, "position {t} layer {li}: q15 {} float {h}", all[t * l + li]);
            }
        }
        return;
    }
    // SAFETY: every pointer is valid (or null on purpose) for the length passed.
    unsafe {
        assert_eq!(atome_router_entropy_all(&*m, &mut *s, toks.as_ptr(), 5, all.as_mut_ptr(), all.len() as i32), 5);
        assert_eq!(atome_router_entropy(&*s, last.as_mut_ptr()), l as i32);
        assert_eq!(atome_router_entropy(null(), last.as_mut_ptr()), -1);
        assert_eq!(atome_router_entropy_all(&*m, &mut *s, toks.as_ptr(), 5, all.as_mut_ptr(), 3), -1);
    }
    assert!(same_bits(&last, &all[4 * l..]));
    for t in 0..5 {
        for li in 0..l {
            assert!((all[t * l + li] as f64 - entropy(&routers[li][t])).abs() < 1e-6);
        }
    }
    // After predict_next, the last position's entropies are those of the call.
    let (id, _) = predict(&m, &toks);
    assert!(id >= 0);
}

#[test]
fn state_work_area_matches_the_memory_plan() {
    use atome::runner::{Plan, Runner};
    if dtype::Q15 {
        // logits, then the int32 and int16 areas of the q15 plan.
        // (The cached state adds every layer's caches and the header.)
        let (i16s, i32s, head) = if ATOME_STATE_CACHED == 1 {
            let lay = atome::q15::Q15CachedLayout::new(&atome::config::DIMS, ATOME_MAX_SEQ);
            (lay.i16s, lay.i32s, 12 + 4 * ATOME_MAX_SEQ)
        } else if ATOME_STATE_TINY == 1 {
            let lay = atome::q15::Q15TinyLayout::new(&atome::config::DIMS, ATOME_MAX_SEQ);
            (lay.i16s, lay.i32s, 0)
        } else {
            let lay = atome::q15::Q15Layout::new(&atome::config::DIMS, ATOME_MAX_SEQ);
            (lay.i16s, lay.i32s, 0)
        };
        assert_eq!((ATOME_Q15_I16, ATOME_Q15_I32), (i16s, i32s), "build.rs and include/atome.h formulas must equal the q15 plan's");
        let raw = 4 * ATOME_VOCAB_SIZE + head + 4 * i32s + 2 * i16s;
        assert_eq!(std::mem::size_of::<atome_state_t>(), raw.div_ceil(4) * 4);
        return;
    }
    let plan = if ATOME_STATE_CACHED == 1 { Plan::Cached } else { Plan::Lean };
    let want = Runner::work_floats(&atome::config::DIMS, ATOME_MAX_SEQ, plan);
    assert_eq!(ATOME_STATE_WORK, want, "build.rs and include/atome.h formulas must equal the plan's");
}
