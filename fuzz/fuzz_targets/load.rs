//! atome_load and atome_classifier_load on arbitrary bytes (at a misaligned
//! address too). The return code must be exactly the one docs/API.md#loading
//! (plus the library's -3/-4) gives for these bytes; a failed load must leave
//! the model refused by every later call; a successful one must run.
#![no_main]
use atome::config::*;
use atome_fuzz::api::*;
use atome_fuzz::blobgen::expected_load_code;
use atome_fuzz::{zeroed, Shifted, V};
use libfuzzer_sys::fuzz_target;
use std::ptr;

fn model_refused(m: &atome_model_t, st: &mut atome_state_t) {
    let toks = [1i32, 2, 3];
    let mut out = [0i32; 4];
    let mut ent = [0.0f32; 64];
    // SAFETY: valid pointers and lengths.
    unsafe {
        assert_eq!(atome_predict_next(m, st, toks.as_ptr(), 3), -1, "predict_next on a model whose load failed");
        assert_eq!(atome_generate(m, st, toks.as_ptr(), 3, out.as_mut_ptr(), 4), 0, "generate on a failed model");
        assert_eq!(atome_router_entropy_all(m, st, toks.as_ptr(), 3, ent.as_mut_ptr(), 64), -1, "entropy_all on a failed model");
    }
}

fn clf_refused(c: &atome_classifier_t, st: &mut atome_state_t) {
    let toks = [1i32, 2, 3];
    // SAFETY: valid pointers and lengths.
    unsafe {
        assert_eq!(atome_classify(c, st, toks.as_ptr(), 3, ptr::null_mut()), -1, "classify on a failed classifier");
        assert_eq!(atome_predict_next(&c.base, st, toks.as_ptr(), 3), -1, "predict_next on a failed classifier's base");
    }
}

fuzz_target!(|data: &[u8]| {
    let mut model = zeroed::<atome_model_t>();
    let mut clf = zeroed::<atome_classifier_t>();
    let mut st = zeroed::<atome_state_t>();
    let blob = Shifted::new(data, data.len() % 7);
    let b = blob.as_slice();
    // SAFETY: every pointer is valid for the length given; the blob outlives its use.
    unsafe {
        assert_eq!(atome_load(ptr::null_mut(), b.as_ptr(), b.len()), -1);
        assert_eq!(atome_load(&mut *model, ptr::null(), b.len()), -1);
        assert_eq!(atome_classifier_load(ptr::null_mut(), b.as_ptr(), b.len()), -1);
        assert_eq!(atome_classifier_load(&mut *clf, ptr::null(), b.len()), -1);
        model_refused(&model, &mut st);
        clf_refused(&clf, &mut st);

        let rl = atome_load(&mut *model, b.as_ptr(), b.len());
        let want = expected_load_code(&DIMS, ATOME_MAX_CLASSES, b, false);
        assert_eq!(rl, want, "atome_load code");
        let rc = atome_classifier_load(&mut *clf, b.as_ptr(), b.len());
        let want = expected_load_code(&DIMS, ATOME_MAX_CLASSES, b, true);
        assert_eq!(rc, want, "atome_classifier_load code");
        // The same bytes at every shorter length are a truncation (or too short).
        if rl == 0 || rc == 0 {
            let cut = b.len() - 1 - (data.first().copied().unwrap_or(0) as usize % b.len().min(64));
            let r2 = if rl == 0 { atome_load(&mut *model, b.as_ptr(), cut) } else { atome_classifier_load(&mut *clf, b.as_ptr(), cut) };
            assert!(r2 == 0 || r2 == -2 || r2 == -1, "cut to {cut}: {r2}");
            if r2 != 0 && rl == 0 {
                model_refused(&model, &mut st);
            }
            if r2 != 0 && rl != 0 {
                clf_refused(&clf, &mut st);
            }
            // Load again at full length for the runs below.
            let _ = if rl == 0 { atome_load(&mut *model, b.as_ptr(), b.len()) } else { atome_classifier_load(&mut *clf, b.as_ptr(), b.len()) };
        }
        let toks = [0i32, (V - 1) as i32, -1, i32::MAX, 7];
        if rl == 0 {
            let id = atome_predict_next(&*model, &mut *st, toks.as_ptr(), toks.len() as i32);
            assert!(id >= 0 && (id as usize) < V, "predict_next on a loaded model: {id}");
        } else {
            model_refused(&model, &mut st);
        }
        if rc != 0 {
            clf_refused(&clf, &mut st);
        }
        if rc == 0 {
            let mut cl = vec![f32::NAN; clf.n_classes as usize + 1];
            let k = atome_classify(&*clf, &mut *st, toks.as_ptr(), toks.len() as i32, cl.as_mut_ptr());
            assert!(k >= 0 && k < clf.n_classes, "classify: {k} of {}", clf.n_classes);
            assert!(cl[clf.n_classes as usize].is_nan(), "classify wrote past n_classes");
        }
        // A failed load after a good one leaves nothing usable.
        if rl == 0 {
            assert_eq!(atome_load(&mut *model, b.as_ptr(), 3), -1);
            model_refused(&model, &mut st);
        }
    }
});
