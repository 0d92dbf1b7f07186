//! The q15 cached plan against the q15 lean plan (docs/Q15.md, "Lean and
//! cached"): on every golden configuration's blob, the same logits, ids,
//! classes, generated tokens and router entropies bit for bit; a call whose
//! window extends the cached prefix gives the bits of a fresh call; the
//! window sliding past S; and the state sizes.
mod common;
use atome::engine::Engine;
use atome::format::{parse_classifier, parse_model, Dims, Packing};
use atome::forward::sample::Sampling;
use atome::q15::{Q15CachedLayout, Q15CachedState, Q15Layout, Q15State};
use common::*;
use proptest::prelude::*;

type Lean = Q15State<Vec<i16>, Vec<i32>, Vec<f32>>;
type Cached = Q15CachedState<Vec<i16>, Vec<i32>, Vec<f32>, Vec<i32>>;

fn lean(dims: Dims, s: usize) -> Lean {
    let lay = Q15Layout::new(&dims, s);
    Q15State::new(dims, s, vec![0; lay.i16s], vec![0; lay.i32s], vec![0.0; dims.vocab])
}

fn cached(dims: Dims, s: usize) -> Cached {
    let lay = Q15CachedLayout::new(&dims, s);
    // Garbage in the areas: a fresh state must not depend on them.
    Q15CachedState::new(dims, s, vec![0x5a5a; lay.i16s], vec![-7; lay.i32s], vec![1.5; dims.vocab], vec![3; s])
}

fn lean_predict(st: &mut Lean, m: &atome::format::Model, t: &[i32]) -> (usize, Vec<f32>, Vec<f32>) {
    let mut r = st.runner().unwrap();
    let id = r.predict(m, t).unwrap();
    let mut ent = vec![0f32; st.dims.n_layers];
    let r = st.runner().unwrap();
    r.last_entropy(&mut ent);
    (id, r.logits().to_vec(), ent)
}

fn cached_predict(st: &mut Cached, m: &atome::format::Model, t: &[i32]) -> (usize, Vec<f32>, Vec<f32>) {
    let mut ent = vec![0f32; st.dims.n_layers];
    let mut r = st.runner().unwrap();
    let id = r.predict(m, t).unwrap();
    r.last_entropy(&mut ent);
    (id, r.logits().to_vec(), ent)
}

fn assert_same(a: &(usize, Vec<f32>, Vec<f32>), b: &(usize, Vec<f32>, Vec<f32>), what: &str) {
    assert_eq!(a.0, b.0, "{what}: id");
    assert!(same_bits(&a.1, &b.1), "{what}: logits");
    assert!(same_bits(&a.2, &b.2), "{what}: router entropies");
}

#[test]
fn cached_equals_lean_on_every_golden_configuration() {
    let Some(sh) = shared() else { return };
    for &(name, file, c) in GOLDEN_MODELS {
        let (dims, s) = golden_dims(c);
        let blob = std::fs::read(sh.join("models").join(file)).unwrap();
        let m = parse_model(&blob, &dims).unwrap();
        let mut le = lean(dims, s);
        let mut ca = cached(dims, s);
        let long = oob_tokens(s + 5, dims.vocab, 1);
        // Growing prefixes on one cached state (each call one new position),
        // then shorter, unrelated and longer-than-S lists (a fresh start).
        let mut cases: Vec<Vec<i32>> = (1..=s.min(20)).map(|n| long[..n].to_vec()).collect();
        cases.push(long[..s].to_vec());
        cases.push(long[..s].to_vec());
        cases.push(long[..3].to_vec());
        cases.push(oob_tokens(s / 2 + 1, dims.vocab, 2));
        cases.push(long.clone());
        cases.push(long[1..].to_vec());
        for (i, t) in cases.iter().enumerate() {
            let a = lean_predict(&mut le, &m, t);
            let b = cached_predict(&mut ca, &m, t);
            assert_same(&a, &b, &format!("{name} case {i} (n = {})", t.len()));
        }
    }
}

#[test]
fn cached_generation_equals_lean() {
    let Some(sh) = shared() else { return };
    for &(name, file, c) in GOLDEN_MODELS {
        let (dims, s) = golden_dims(c);
        let blob = std::fs::read(sh.join("models").join(file)).unwrap();
        let m = parse_model(&blob, &dims).unwrap();
        let mut le = lean(dims, s);
        let mut ca = cached(dims, s);
        for (pl, mt) in [(1, s), (s / 2, 5), (s - 1, 4), (3, 2)] {
            let p = oob_tokens(pl, dims.vocab, pl as u64);
            let (mut o1, mut o2) = (vec![-1; mt], vec![-1; mt]);
            let n1 = le.runner().unwrap().generate_greedy(&m, &p, &mut o1);
            let n2 = ca.runner().unwrap().generate_greedy(&m, &p, &mut o2);
            assert_eq!((n1, &o1), (n2, &o2), "{name} greedy prompt {pl}");
            assert!(same_bits(le.runner().unwrap().logits(), ca.runner().unwrap().logits()), "{name} last logits");
            let (mut e1, mut e2) = (vec![0f32; dims.n_layers], vec![1f32; dims.n_layers]);
            le.runner().unwrap().last_entropy(&mut e1);
            ca.runner().unwrap().last_entropy(&mut e2);
            assert!(same_bits(&e1, &e2), "{name} greedy prompt {pl}: router entropies");
            let sp = Sampling { temperature: 0.8, top_k: 20, top_p: 0.9 };
            let (mut o1, mut o2) = (vec![-1; mt], vec![-1; mt]);
            let n1 = le.runner().unwrap().generate_sampled(&m, &p, &mut o1, &sp, 42 + pl as u64);
            let n2 = ca.runner().unwrap().generate_sampled(&m, &p, &mut o2, &sp, 42 + pl as u64);
            assert_eq!((n1, &o1), (n2, &o2), "{name} sampled prompt {pl}");
        }
    }
}

#[test]
fn cached_router_entropy_all_is_every_prefix_s_last_entropies() {
    let Some(sh) = shared() else { return };
    for &(name, file, c) in &GOLDEN_MODELS[..5] {
        let (dims, s) = golden_dims(c);
        let blob = std::fs::read(sh.join("models").join(file)).unwrap();
        let m = parse_model(&blob, &dims).unwrap();
        let l = dims.n_layers;
        let t = oob_tokens(s.min(12), dims.vocab, 5);
        let mut le = lean(dims, s);
        let mut ca = cached(dims, s);
        // A cached prefix first: the call must still give every position.
        ca.runner().unwrap().predict(&m, &t[..4]).unwrap();
        let mut all = vec![f32::NAN; t.len() * l];
        let n = ca.runner().unwrap().router_entropy_all(&m, &t, &mut all).unwrap();
        assert_eq!(n, t.len());
        let mut all_lean = vec![f32::NAN; t.len() * l];
        assert_eq!(le.runner().unwrap().router_entropy_all(&m, &t, &mut all_lean), Some(t.len()));
        assert!(same_bits(&all, &all_lean), "{name}: lean and cached entropies of every position");
        for p in 1..=t.len() {
            let a = lean_predict(&mut le, &m, &t[..p]);
            assert!(same_bits(&all[(p - 1) * l..p * l], &a.2), "{name} position {}", p - 1);
        }
        // The logits of the call are predict's.
        let a = lean_predict(&mut le, &m, &t);
        assert!(same_bits(ca.runner().unwrap().logits(), &a.1));
        assert!(ca.runner().unwrap().router_entropy_all(&m, &t, &mut all[..t.len() * l - 1]).is_none());
    }
}

#[test]
fn cached_classify_equals_lean() {
    let Some(sh) = shared() else { return };
    for &(file, c) in GOLDEN_CLASSIFIERS {
        let (dims, s) = golden_dims(c);
        let blob = std::fs::read(sh.join("models").join(file)).unwrap();
        let clf = parse_classifier(&blob, &dims, 16).unwrap();
        let mut le = lean(dims, s);
        let mut ca = cached(dims, s);
        let long = oob_tokens(s + 3, dims.vocab, 9);
        for n in [1, 2, 5, s - 1, s, s + 3] {
            let t = &long[..n];
            let (mut o1, mut o2) = (vec![0f32; clf.head.rows], vec![0f32; clf.head.rows]);
            let a = le.runner().unwrap().classify(&clf, t, Some(&mut o1));
            let b = ca.runner().unwrap().classify(&clf, t, Some(&mut o2));
            assert_eq!(a, b, "{file} n {n}");
            assert!(same_bits(&o1, &o2), "{file} n {n}");
        }
        // A language-model call on the same state after the classifier's
        // starts over (another model's key).
        let m = &clf.base;
        let a = lean_predict(&mut le, m, &long[..4]);
        let b = cached_predict(&mut ca, m, &long[..4]);
        assert_same(&a, &b, file);
    }
}

#[test]
fn state_layout_equals_build_rs() {
    use atome::config::*;
    if ATOME_STATE_CACHED == 1 {
        let lay = Q15CachedLayout::new(&DIMS, ATOME_MAX_SEQ);
        assert_eq!((lay.i16s, lay.i32s), (ATOME_Q15_I16, ATOME_Q15_I32));
        if ATOME_DTYPE_Q15 == 1 {
            // The C struct is the two areas, the logits and the header, with
            // at most two bytes of tail padding.
            let sz = std::mem::size_of::<atome::ffi::types::atome_state_t>();
            let b = lay.bytes(&DIMS, ATOME_MAX_SEQ);
            assert!(sz == b || sz == b + 2, "{sz} {b}");
        }
    }
}

#[test]
fn state_sizes_fit_the_budgets() {
    let d944 = Dims { vocab: 256, d_model: 256, n_layers: 8, d_head: 64, kernel_size: 5, top_k: 4 };
    let def = Dims { vocab: 256, d_model: 64, n_layers: 4, d_head: 16, kernel_size: 5, top_k: 4 };
    let b = |d: &Dims, s: usize| Q15CachedLayout::new(d, s).bytes(d, s);
    assert!(b(&d944, 64) <= 365_000, "{}", b(&d944, 64));
    assert!(b(&d944, 32) <= 200_000, "{}", b(&d944, 32));
    assert!(b(&def, 32) <= 30_000, "{}", b(&def, 32));
}

/// The kept parameter vectors (tanh(a), the SSM gain, gamma and beta in the value
/// rows the window has not reached): kept after a call that stops short of
/// those rows, given up when a position reaches them, kept again when the
/// cache starts over; the bits of a fresh lean call at every step, for
/// every packing and for windows around the rows' size (S <= 9 keeps none).
#[test]
fn kept_parameter_vectors_give_fresh_bits() {
    for (p, &pk) in Packing::ALL.iter().enumerate() {
        for s in [3usize, 9, 10, 11, 16] {
            let cfg = Cfg { v: 30, d: 12, l: 3, dh: 4, k: 3, topk: 2 };
            let dims = cfg.dims();
            let blob = random_model(cfg, pk, None, 40 + p as u64).blob(pk);
            let m = parse_model(&blob, &dims).unwrap();
            let long = oob_tokens(2 * s + 3, cfg.v, 7 + s as u64);
            let other = oob_tokens(2 * s + 3, cfg.v, 99);
            let mut le = lean(dims, s);
            let mut ca = cached(dims, s);
            let room = s.saturating_sub(9);
            // (list, length, kept afterwards)
            let steps: Vec<(&[i32], usize, bool)> = vec![
                (&long, 1, room > 0),
                (&long, room.max(1), room > 0 && room.max(1) <= room),
                (&long, room + 1, false),
                (&long, s, false),
                (&long, s + 2, false),
                (&other, 1, room > 0),
                (&other, room.max(1), room > 0),
                (&long, room.max(1), room > 0),
                (&long, s, false),
            ];
            for (i, &(list, n, kept)) in steps.iter().enumerate() {
                let a = lean_predict(&mut le, &m, &list[..n]);
                let b = cached_predict(&mut ca, &m, &list[..n]);
                assert_same(&a, &b, &format!("packing {p} S {s} step {i} n {n}"));
                assert_eq!(ca.runner().unwrap().params_kept(), kept, "packing {p} S {s} step {i} n {n}");
            }
            // Generation across the rows: the lean plan's tokens.
            let mut ca = cached(dims, s);
            let (mut g1, mut g2) = (vec![0; s], vec![0; s]);
            let n1 = le.runner().unwrap().generate_greedy(&m, &long[..1], &mut g1);
            let n2 = ca.runner().unwrap().generate_greedy(&m, &long[..1], &mut g2);
            assert_eq!(g1[..n1], g2[..n2], "packing {p} S {s}: generation");
        }
    }
}

/// The kept vectors live until the window reaches their rows (the final
/// norm's gamma and beta in layer 0's five rows below the others, then
/// the layers' gamma, beta, SSM gain and tanh(a), two rows each): calls
/// that stop at every length, then lists that leave the cached one after a
/// shorter prefix (the cache starts over and keeps the vectors again: rows
/// earlier calls wrote are never read as kept vectors), each against a
/// fresh lean call.
#[test]
fn kept_vectors_die_row_by_row_with_fresh_bits() {
    for (p, &pk) in Packing::ALL.iter().enumerate() {
        for s in [16usize, 19] {
            let cfg = Cfg { v: 30, d: 12, l: 3, dh: 4, k: 3, topk: 2 };
            let dims = cfg.dims();
            let blob = random_model(cfg, pk, None, 70 + p as u64).blob(pk);
            let m = parse_model(&blob, &dims).unwrap();
            let (ts, fs) = (s - 9, s - 14);
            let a = oob_tokens(s + 1, cfg.v, 11 + s as u64);
            let mut le = lean(dims, s);
            let mut ca = cached(dims, s);
            for n in 1..=s {
                let x = lean_predict(&mut le, &m, &a[..n]);
                assert_same(&x, &cached_predict(&mut ca, &m, &a[..n]), &format!("packing {p} S {s} n {n}"));
                assert_eq!(ca.runner().unwrap().params_kept(), n <= ts, "packing {p} S {s} n {n}");
            }
            // Other tokens after a shared prefix, at every length, from a
            // cache that went to each length first.
            for first in fs..=s {
                for keep in [fs - 1, fs, fs + 1, ts - 1, ts, ts + 1, ts + 3] {
                    let mut b = a.clone();
                    for (i, t) in b.iter_mut().enumerate().skip(keep) {
                        *t = (*t + 3 + i as i32) % cfg.v as i32;
                    }
                    let mut ca = cached(dims, s);
                    let _ = cached_predict(&mut ca, &m, &a[..ts - 1]);
                    let _ = cached_predict(&mut ca, &m, &a[..first]);
                    for n in [keep + 1, s] {
                        let n = n.min(s);
                        let x = lean_predict(&mut le, &m, &b[..n]);
                        assert_same(&x, &cached_predict(&mut ca, &m, &b[..n]), &format!("packing {p} S {s} first {first} keep {keep} n {n}"));
                    }
                }
            }
        }
    }
}

/// Models wide enough for the one-position byte tables (on the
/// microcontroller code path, `--features portable`): D = 128 (the logits
/// and parameter areas lend 256 words each: two tables a pass) and D =
/// 256 (the parameter area 768 words: four tables a pass); at least 192
/// rows (2 DH + D + 3). The lean plan's bits for every packing (Trit2 runs
/// the byte tables, the others fall back), predicting and generating.
#[test]
fn wide_model_gives_lean_bits() {
    let s = 20;
    for (p, (pk, d)) in Packing::ALL.iter().flat_map(|&pk| [(pk, 128), (pk, 256)]).enumerate() {
        let cfg = Cfg { v: 256, d, l: 2, dh: 32, k: 5, topk: 4 };
        let dims = cfg.dims();
        let blob = random_model(cfg, pk, None, 60 + p as u64).blob(pk);
        let m = parse_model(&blob, &dims).unwrap();
        let list = oob_tokens(s + 2, cfg.v, 3 + p as u64);
        let mut le = lean(dims, s);
        let mut ca = cached(dims, s);
        for n in [1usize, 5, 6, 13, s, s + 2] {
            let a = lean_predict(&mut le, &m, &list[..n]);
            let b = cached_predict(&mut ca, &m, &list[..n]);
            assert_same(&a, &b, &format!("case {p} D {d} n {n}"));
        }
        let mut ca = cached(dims, s);
        // Generation to a full window and to a token count: the tokens, and
        // the router entropies of the last step (the cached steps before it
        // keep none).
        for len in [s, 5] {
            let (mut g1, mut g2) = (vec![0; len], vec![0; len]);
            let n1 = le.runner().unwrap().generate_greedy(&m, &list[..2], &mut g1);
            let n2 = ca.runner().unwrap().generate_greedy(&m, &list[..2], &mut g2);
            assert_eq!(g1[..n1], g2[..n2], "case {p} D {d}: generation");
            let (mut e1, mut e2) = (vec![0f32; dims.n_layers], vec![1f32; dims.n_layers]);
            le.runner().unwrap().last_entropy(&mut e1);
            ca.runner().unwrap().last_entropy(&mut e2);
            assert!(same_bits(&e1, &e2), "case {p} D {d} len {len}: router entropies after generation");
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]
    /// Random models and token lists: a cached state that went through any
    /// sequence of calls gives a fresh lean call's bits.
    #[test]
    fn any_call_sequence_gives_fresh_bits(seed in 0u64..1000, cuts in proptest::collection::vec(1usize..20, 1..6), k in 1usize..6, p in 0usize..3) {
        let cfg = Cfg { v: 30, d: 12, l: 2, dh: 4, k, topk: 1 + (seed as usize % 3) };
        let dims = cfg.dims();
        let s = 12;
        let blob = random_model(cfg, Packing::ALL[p], None, seed).blob(Packing::ALL[p]);
        let m = parse_model(&blob, &dims).unwrap();
        let long = oob_tokens(24, cfg.v, seed);
        let mut le = lean(dims, s);
        let mut ca = cached(dims, s);
        for &n in &cuts {
            let a = lean_predict(&mut le, &m, &long[..n]);
            let b = cached_predict(&mut ca, &m, &long[..n]);
            prop_assert_eq!(a.0, b.0);
            prop_assert!(same_bits(&a.1, &b.1) && same_bits(&a.2, &b.2), "n {}", n);
        }
    }
}
