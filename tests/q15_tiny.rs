//! The q15 tiny plan against the q15 lean plan (docs/Q15.md, "Tiny
//! plan"): the same logits, ids, router entropies (last position and every
//! position), classes and generated tokens bit for bit, on random models of
//! odd shapes (windows shorter than an SSM block, not a multiple of it, one
//! token, longer than S; K = 1..6, TOP_K = 1..5) and on every golden
//! configuration's blob (skipped without ../shared); and the state sizes.
mod common;
use atome::engine::Engine;
use atome::format::{parse_classifier, parse_model, Dims, Model, Packing};
use atome::forward::sample::Sampling;
use atome::q15::engine::tiny::block_len;
use atome::q15::engine::{Q15TinyLayout, Q15TinyState};
use atome::q15::{Q15Layout, Q15State};
use common::*;
use proptest::prelude::*;

type Lean = Q15State<Vec<i16>, Vec<i32>, Vec<f32>>;
type Tiny = Q15TinyState<Vec<i16>, Vec<i32>, Vec<f32>>;

fn lean(dims: Dims, s: usize) -> Lean {
    let lay = Q15Layout::new(&dims, s);
    Q15State::new(dims, s, vec![0; lay.i16s], vec![0; lay.i32s], vec![0.0; dims.vocab])
}

fn tiny(dims: Dims, s: usize) -> Tiny {
    let lay = Q15TinyLayout::new(&dims, s);
    // Garbage in the areas: a run must not depend on them.
    Q15TinyState::new(dims, s, vec![0x5a5a; lay.i16s], vec![-7; lay.i32s], vec![1.5; dims.vocab])
}

type Out = (usize, Vec<f32>, Vec<f32>);

fn lean_predict(st: &mut Lean, m: &Model, t: &[i32]) -> Out {
    let mut ent = vec![0f32; st.dims.n_layers];
    let mut r = st.runner().unwrap();
    let id = r.predict(m, t).unwrap();
    r.last_entropy(&mut ent);
    (id, r.logits().to_vec(), ent)
}

fn tiny_predict(st: &mut Tiny, m: &Model, t: &[i32]) -> Out {
    let mut ent = vec![0f32; st.dims.n_layers];
    let mut r = st.runner().unwrap();
    let id = r.predict(m, t).unwrap();
    r.last_entropy(&mut ent);
    (id, r.logits().to_vec(), ent)
}

fn same(a: &Out, b: &Out) -> bool {
    a.0 == b.0 && same_bits(&a.1, &b.1) && same_bits(&a.2, &b.2)
}

/// Every position's entropies of both plans (and the logits of the call).
fn all_entropies(le: &mut Lean, ti: &mut Tiny, m: &Model, t: &[i32]) -> bool {
    let l = le.dims.n_layers;
    let n = t.len().min(le.s);
    let (mut a, mut b) = (vec![f32::NAN; n * l], vec![f32::NAN; n * l]);
    let na = le.runner().unwrap().router_entropy_all(m, t, &mut a);
    let nb = ti.runner().unwrap().router_entropy_all(m, t, &mut b);
    na == Some(n) && nb == Some(n) && same_bits(&a, &b) && same_bits(le.runner().unwrap().logits(), ti.runner().unwrap().logits())
}

/// Window lengths around the SSM blocks of window s: 1, 2, below, at and
/// past C, not a multiple of C, S - 1, S, and longer than S.
fn lengths(s: usize) -> Vec<usize> {
    let c = block_len(s);
    let mut v = vec![1, 2, c - 1, c, c + 1, 2 * c + 1, s / 2 + 1, s - 1, s, s + 1, s + 5];
    v.retain(|&n| n >= 1);
    v.dedup();
    v
}

#[test]
fn tiny_equals_lean_on_every_golden_configuration() {
    let Some(sh) = shared() else { return };
    for &(name, file, c) in GOLDEN_MODELS {
        let (dims, s) = golden_dims(c);
        let blob = std::fs::read(sh.join("models").join(file)).unwrap();
        let m = parse_model(&blob, &dims).unwrap();
        let mut le = lean(dims, s);
        let mut ti = tiny(dims, s);
        let long = oob_tokens(s + 5, dims.vocab, 1);
        for n in lengths(s) {
            let t = &long[..n];
            let (a, b) = (lean_predict(&mut le, &m, t), tiny_predict(&mut ti, &m, t));
            assert!(same(&a, &b), "{name} n = {n}: id {} {}", a.0, b.0);
        }
        let t = oob_tokens(s / 2 + 3, dims.vocab, 2);
        assert!(same(&lean_predict(&mut le, &m, &t), &tiny_predict(&mut ti, &m, &t)), "{name} other tokens");
    }
}

#[test]
fn tiny_router_entropy_all_equals_lean() {
    let Some(sh) = shared() else { return };
    for &(name, file, c) in GOLDEN_MODELS {
        let (dims, s) = golden_dims(c);
        let blob = std::fs::read(sh.join("models").join(file)).unwrap();
        let m = parse_model(&blob, &dims).unwrap();
        let mut le = lean(dims, s);
        let mut ti = tiny(dims, s);
        let long = oob_tokens(s + 3, dims.vocab, 5);
        for n in [1, block_len(s) + 1, s, s + 3] {
            assert!(all_entropies(&mut le, &mut ti, &m, &long[..n]), "{name} n = {n}");
        }
        // Too short an output: None, as the lean plan.
        let mut short = vec![0f32; 2 * dims.n_layers - 1];
        assert!(ti.runner().unwrap().router_entropy_all(&m, &long[..2], &mut short).is_none());
    }
}

#[test]
fn tiny_generation_equals_lean() {
    let Some(sh) = shared() else { return };
    for &(name, file, c) in GOLDEN_MODELS {
        let (dims, s) = golden_dims(c);
        let blob = std::fs::read(sh.join("models").join(file)).unwrap();
        let m = parse_model(&blob, &dims).unwrap();
        let mut le = lean(dims, s);
        let mut ti = tiny(dims, s);
        for (pl, mt) in [(1, s), (s / 2, 5), (s - 1, 4)] {
            let p = oob_tokens(pl, dims.vocab, pl as u64);
            let (mut o1, mut o2) = (vec![-1; mt], vec![-1; mt]);
            let n1 = le.runner().unwrap().generate_greedy(&m, &p, &mut o1);
            let n2 = ti.runner().unwrap().generate_greedy(&m, &p, &mut o2);
            assert_eq!((n1, &o1), (n2, &o2), "{name} greedy prompt {pl}");
            assert!(same_bits(le.runner().unwrap().logits(), ti.runner().unwrap().logits()), "{name} last logits");
            let sp = Sampling { temperature: 0.8, top_k: 20, top_p: 0.9 };
            let (mut o1, mut o2) = (vec![-1; mt], vec![-1; mt]);
            let n1 = le.runner().unwrap().generate_sampled(&m, &p, &mut o1, &sp, 42 + pl as u64);
            let n2 = ti.runner().unwrap().generate_sampled(&m, &p, &mut o2, &sp, 42 + pl as u64);
            assert_eq!((n1, &o1), (n2, &o2), "{name} sampled prompt {pl}");
        }
    }
}

#[test]
fn tiny_classify_equals_lean() {
    let Some(sh) = shared() else { return };
    for &(file, c) in GOLDEN_CLASSIFIERS {
        let (dims, s) = golden_dims(c);
        let blob = std::fs::read(sh.join("models").join(file)).unwrap();
        let clf = parse_classifier(&blob, &dims, 16).unwrap();
        let mut le = lean(dims, s);
        let mut ti = tiny(dims, s);
        let long = oob_tokens(s + 3, dims.vocab, 9);
        for n in [1, 2, 5, s - 1, s, s + 3] {
            let t = &long[..n];
            let (mut o1, mut o2) = (vec![0f32; clf.head.rows], vec![0f32; clf.head.rows]);
            let a = le.runner().unwrap().classify(&clf, t, Some(&mut o1));
            let b = ti.runner().unwrap().classify(&clf, t, Some(&mut o2));
            assert_eq!(a, b, "{file} n {n}");
            assert!(same_bits(&o1, &o2), "{file} n {n}");
            let (mut e1, mut e2) = (vec![0f32; dims.n_layers], vec![0f32; dims.n_layers]);
            le.runner().unwrap().last_entropy(&mut e1);
            ti.runner().unwrap().last_entropy(&mut e2);
            assert!(same_bits(&e1, &e2), "{file} n {n} entropies");
        }
    }
}

/// The toy model (D=64 L=4 DH=16 K=5 TOP_K=4 V=256) at S=64 fits a 20 KB
/// part with room for its stack.
#[test]
fn tiny_state_sizes() {
    let toy = Dims { vocab: 256, d_model: 64, n_layers: 4, d_head: 16, kernel_size: 5, top_k: 4 };
    let d944 = Dims { vocab: 256, d_model: 256, n_layers: 8, d_head: 64, kernel_size: 5, top_k: 4 };
    let b = |d: &Dims, s: usize| Q15TinyLayout::new(d, s).bytes(d);
    let lb = |d: &Dims, s: usize| Q15Layout::new(d, s).bytes(d);
    eprintln!("tiny bytes: toy S=64 {}, default S=32 {}, 944K S=64 {}", b(&toy, 64), b(&toy, 32), b(&d944, 64));
    eprintln!("lean bytes: toy S=64 {}, default S=32 {}, 944K S=64 {}", lb(&toy, 64), lb(&toy, 32), lb(&d944, 64));
    assert!(b(&toy, 64) < 18_432, "{}", b(&toy, 64));
    for (d, s) in [(toy, 64), (toy, 32), (d944, 64), (d944, 24)] {
        assert!(b(&d, s) < lb(&d, s));
    }
    assert_eq!((block_len(64), block_len(32), block_len(1), block_len(2), block_len(65)), (8, 8, 1, 2, 16));
}

/// A runner needs every element of its layout.
#[test]
fn tiny_runner_needs_its_layout() {
    let dims = Dims { vocab: 30, d_model: 12, n_layers: 2, d_head: 4, kernel_size: 3, top_k: 2 };
    let s = 10;
    let lay = Q15TinyLayout::new(&dims, s);
    let (mut a, mut b, mut lg) = (vec![0i16; lay.i16s], vec![0i32; lay.i32s], vec![0f32; dims.vocab]);
    assert!(atome::q15::engine::Q15TinyRunner::new(&mut a, &mut b, &mut lg, &dims, s).is_some());
    assert!(atome::q15::engine::Q15TinyRunner::new(&mut a[1..], &mut b, &mut lg, &dims, s).is_none());
    assert!(atome::q15::engine::Q15TinyRunner::new(&mut a, &mut b[1..], &mut lg, &dims, s).is_none());
    assert!(atome::q15::engine::Q15TinyRunner::new(&mut a, &mut b, &mut lg[1..], &dims, s).is_none());
    assert!(atome::q15::engine::Q15TinyRunner::new(&mut a, &mut b, &mut lg, &dims, 0).is_none());
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]
    /// Random models of odd shapes: predict (ids, logits, last entropies)
    /// at windows around the SSM blocks, every position's entropies and
    /// greedy generation give the lean plan's bits.
    #[test]
    fn random_models_give_lean_bits(seed in 0u64..1_000_000, d in 1usize..24, l in 1usize..4, dh in 1usize..7, k in 1usize..7, topk in 1usize..6, s in 1usize..27, v in 2usize..40, p in 0usize..3) {
        let cfg = Cfg { v, d, l, dh, k, topk };
        let dims = cfg.dims();
        let blob = random_model(cfg, Packing::ALL[p], None, seed).blob(Packing::ALL[p]);
        let m = parse_model(&blob, &dims).unwrap();
        let long = oob_tokens(s + 5, v, seed);
        let mut le = lean(dims, s);
        let mut ti = tiny(dims, s);
        for n in lengths(s) {
            let t = &long[..n];
            let (a, b) = (lean_predict(&mut le, &m, t), tiny_predict(&mut ti, &m, t));
            prop_assert!(same(&a, &b), "n {}: ids {} {}", n, a.0, b.0);
        }
        prop_assert!(all_entropies(&mut le, &mut ti, &m, &long[..(s + 2) / 2]));
        prop_assert!(all_entropies(&mut le, &mut ti, &m, &long));
        let mt = s.min(6);
        let (mut o1, mut o2) = (vec![-1; mt], vec![-1; mt]);
        let n1 = le.runner().unwrap().generate_greedy(&m, &long[..1], &mut o1);
        let n2 = ti.runner().unwrap().generate_greedy(&m, &long[..1], &mut o2);
        prop_assert_eq!((n1, &o1), (n2, &o2));
    }

    /// Random classifiers: the same classes and class logits.
    #[test]
    fn random_classifiers_give_lean_bits(seed in 0u64..1_000_000, d in 1usize..20, l in 1usize..3, dh in 1usize..6, k in 1usize..7, topk in 1usize..6, s in 1usize..20, nc in 2usize..6, p in 0usize..2) {
        let cfg = Cfg { v: 33, d, l, dh, k, topk };
        let dims = cfg.dims();
        let blob = random_model(cfg, Packing::ALL[p], Some(nc), seed).blob(Packing::ALL[p]);
        let clf = parse_classifier(&blob, &dims, 16).unwrap();
        let long = oob_tokens(s + 3, cfg.v, seed);
        let mut le = lean(dims, s);
        let mut ti = tiny(dims, s);
        for n in [1, s.div_ceil(2), s, s + 3] {
            let t = &long[..n];
            let (mut o1, mut o2) = (vec![0f32; nc], vec![0f32; nc]);
            let a = le.runner().unwrap().classify(&clf, t, Some(&mut o1));
            let b = ti.runner().unwrap().classify(&clf, t, Some(&mut o2));
            prop_assert_eq!(a, b);
            prop_assert!(same_bits(&o1, &o2), "n {}", n);
        }
    }
}

/// The library's layout constants (build.rs) and the C struct (whose sizes
/// come from the header's formulas of the same) against the tiny layout, in
/// a build with ATOME_DTYPE=q15 ATOME_STATE=tiny; and stored_entropy finds
/// the entropies where the runner keeps them.
#[test]
fn state_layout_equals_build_rs() {
    use atome::config::*;
    if ATOME_STATE_TINY != 1 {
        return;
    }
    let lay = Q15TinyLayout::new(&DIMS, ATOME_MAX_SEQ);
    assert_eq!((lay.i16s, lay.i32s), (ATOME_Q15_I16, ATOME_Q15_I32));
    let sz = std::mem::size_of::<atome::ffi::types::atome_state_t>();
    let b = lay.bytes(&DIMS);
    assert!(sz == b || sz == b + 2, "{sz} {b}");
}

#[test]
fn stored_entropy_reads_the_last_positions() {
    for (c, seed) in [([40, 22, 3, 6, 3, 2, 16], 1u64), ([32, 16, 2, 8, 5, 4, 9], 2), ([11, 5, 1, 2, 1, 1, 1], 3)] {
        let (dims, s) = golden_dims(c);
        let cfg = Cfg { v: c[0], d: c[1], l: c[2], dh: c[3], k: c[4], topk: c[5] };
        let blob = random_model(cfg, Packing::Trit2, None, seed).blob(Packing::Trit2);
        let m = parse_model(&blob, &dims).expect("blob");
        let mut st = tiny(dims, s);
        let t = oob_tokens(s + 2, dims.vocab, seed);
        let mut want = vec![0.0f32; dims.n_layers];
        {
            let mut r = st.runner().expect("runner");
            r.predict(&m, &t).expect("predict");
            r.last_entropy(&mut want);
        }
        let mut got = vec![-1.0f32; dims.n_layers];
        assert!(atome::q15::Q15TinyRunner::stored_entropy(&st.i32s, &dims, s, &mut got));
        assert_eq!(got.iter().map(|v| v.to_bits()).collect::<Vec<_>>(), want.iter().map(|v| v.to_bits()).collect::<Vec<_>>());
        assert!(!atome::q15::Q15TinyRunner::stored_entropy(&st.i32s[..3], &dims, s, &mut got));
    }
}
