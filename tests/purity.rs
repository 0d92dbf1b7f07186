//! predict_next (and classify) are pure functions of (model, tokens): no prior
//! content of the state — earlier calls, garbage bytes — changes a bit of any
//! result. Runs on this build's memory plan (the suite runs it for lean and
//! for cached builds).
mod common;
use atome::config::*;
use atome::ffi::model::*;
use atome::ffi::run::*;
use atome::ffi::*;
use common::*;
use proptest::prelude::*;

fn cfg() -> Cfg {
    Cfg { v: ATOME_VOCAB_SIZE, d: ATOME_D_MODEL, l: ATOME_N_LAYERS, dh: ATOME_D_HEAD, k: ATOME_KERNEL_SIZE, topk: ATOME_TOP_K }
}

fn zeroed<T>() -> Box<T> {
    // SAFETY: plain data; all-zero bytes are valid.
    unsafe { Box::new_zeroed().assume_init() }
}

fn garbage_state(seed: u64) -> Box<atome_state_t> {
    let mut s = zeroed::<atome_state_t>();
    let mut r = SplitMix64(seed | 1);
    // SAFETY: any bytes are a valid atome_state_t (floats and integers).
    let bytes = unsafe {
        std::slice::from_raw_parts_mut(&mut *s as *mut atome_state_t as *mut u8, std::mem::size_of::<atome_state_t>())
    };
    for b in bytes.iter_mut() {
        *b = r.next_u64() as u8;
    }
    s
}

struct Fixture {
    _blob: Vec<u8>,
    _blob2: Vec<u8>,
    m: Box<atome_model_t>,
    m2: Box<atome_model_t>,
}

fn fixture() -> Fixture {
    let blob = random_model(cfg(), Packing::Trit2, None, 3).blob(Packing::Trit2);
    let blob2 = random_model(cfg(), Packing::Trit2, None, 4).blob(Packing::Trit2);
    let mut m = zeroed::<atome_model_t>();
    let mut m2 = zeroed::<atome_model_t>();
    // SAFETY: every pointer is valid (or null on purpose) for the length passed.
    unsafe {
        assert_eq!(atome_load(&mut *m, blob.as_ptr(), blob.len()), 0);
        assert_eq!(atome_load(&mut *m2, blob2.as_ptr(), blob2.len()), 0);
    }
    Fixture { _blob: blob, _blob2: blob2, m, m2 }
}

fn call(m: &atome_model_t, s: &mut atome_state_t, t: &[i32]) -> (i32, Vec<u32>) {
    // SAFETY: every pointer is valid (or null on purpose) for the length passed.
    let id = unsafe { atome_predict_next(m, s, t.as_ptr(), t.len() as i32) };
    (id, s.logits.iter().map(|f| f.to_bits()).collect())
}

fn toks_strategy() -> impl Strategy<Value = Vec<i32>> {
    prop::collection::vec(prop_oneof![8 => 0..ATOME_VOCAB_SIZE as i32, 1 => any::<i32>()], 1..ATOME_MAX_SEQ + 6)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]
    #[test]
    fn results_do_not_depend_on_prior_state(
        toks in toks_strategy(),
        before in prop::collection::vec(toks_strategy(), 0..4),
        seed in any::<u64>(),
        other_model in any::<bool>(),
    ) {
        let f = fixture();
        let mut fresh = zeroed::<atome_state_t>();
        let want = call(&f.m, &mut fresh, &toks);
        // Garbage bytes, then earlier calls (some on another model, some on
        // prefixes and extensions of this list), then the call under test.
        let mut s = garbage_state(seed);
        for b in &before {
            let mm = if other_model { &f.m2 } else { &f.m };
            call(mm, &mut s, b);
            let mut ext = b.clone();
            ext.extend_from_slice(&toks[..toks.len().min(3)]);
            call(&f.m, &mut s, &ext);
        }
        if toks.len() > 1 {
            call(&f.m, &mut s, &toks[..toks.len() - 1]);
        }
        prop_assert_eq!(call(&f.m, &mut s, &toks), want.clone());
        // Scribbling over the public logits does not matter either.
        for l in s.logits.iter_mut() { *l = f32::NAN; }
        prop_assert_eq!(call(&f.m, &mut s, &toks), want.clone());
        let mut g = garbage_state(seed ^ 0x55);
        prop_assert_eq!(call(&f.m, &mut g, &toks), want);
    }
}

#[test]
fn classify_is_pure() {
    let b = random_model(cfg(), Packing::Trit2, Some(4), 8).blob(Packing::Trit2);
    let mut c = zeroed::<atome_classifier_t>();
    // SAFETY: every pointer is valid (or null on purpose) for the length passed.
    unsafe { assert_eq!(atome_classifier_load(&mut *c, b.as_ptr(), b.len()), 0) };
    let t = [7, 7, 1, 200, 3];
    let run = |s: &mut atome_state_t| {
        let mut lg = [0.0f32; 4];
        // SAFETY: every pointer is valid (or null on purpose) for the length passed.
        let k = unsafe { atome_classify(&*c, s, t.as_ptr(), 5, lg.as_mut_ptr()) };
        (k, lg.map(f32::to_bits))
    };
    let want = run(&mut zeroed::<atome_state_t>());
    for seed in 0..6 {
        assert_eq!(run(&mut garbage_state(seed)), want);
    }
}
