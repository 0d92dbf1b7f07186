//! The engine's Rust core against the independent reference of
//! tests/common (docs/ARITHMETIC.md, position by position): bit for bit, for odd
//! shapes, every packing, both memory plans, and random call sequences on a
//! cached state. Needs nothing outside the repository.
mod common;
use atome::engine::Engine;
use atome::format::{parse_classifier, parse_model, Dims, Model};
use atome::forward::sample::Sampling;
use atome::runner::{Plan, Runner, State};
use common::*;

fn dims(c: &Cfg) -> Dims {
    Dims { vocab: c.v, d_model: c.d, n_layers: c.l, d_head: c.dh, kernel_size: c.k, top_k: c.topk }
}

/// A state of the runner over vectors, its work area filled with `fill`.
fn state(plan: Plan, d: &Dims, s: usize, fill: f32) -> State<Vec<f32>, Vec<i32>> {
    State::new(plan, *d, s, vec![fill; Runner::work_floats(d, s, plan)], vec![0.0; d.vocab], vec![0; s])
}

/// predict_next on the runner's memory: the id and the logits.
fn predict(st: &mut State<Vec<f32>, Vec<i32>>, m: &Model, toks: &[i32]) -> (usize, Vec<f32>) {
    let mut r = st.runner().unwrap();
    let id = r.predict(m, toks).unwrap();
    (id, r.logits().to_vec())
}

fn lean_predict(m: &Model, toks: &[i32], s: usize) -> (usize, Vec<f32>) {
    predict(&mut state(Plan::Lean, &m.dims, s, f32::NAN), m, toks)
}

const CFGS: &[Cfg] = &[
    Cfg { v: 32, d: 16, l: 2, dh: 8, k: 5, topk: 4 },
    Cfg { v: 40, d: 22, l: 3, dh: 6, k: 3, topk: 2 },
    Cfg { v: 64, d: 32, l: 2, dh: 8, k: 7, topk: 6 },
    Cfg { v: 19, d: 13, l: 1, dh: 5, k: 1, topk: 1 },
    Cfg { v: 256, d: 64, l: 2, dh: 16, k: 5, topk: 4 },
    Cfg { v: 7, d: 9, l: 2, dh: 3, k: 2, topk: 9 },
    Cfg { v: 11, d: 6, l: 1, dh: 2, k: 19, topk: 3 },
    // 8 channels x 17 taps exceed one conv decode block on x86-64.
    Cfg { v: 13, d: 17, l: 1, dh: 4, k: 17, topk: 2 },
];

fn random_tokens(r: &mut SplitMix64, n: usize, v: usize) -> Vec<i32> {
    (0..n)
        .map(|_| match r.below(10) {
            0 => -(r.below(1000) as i32) - 1,
            1 => (v + r.below(1000) as usize) as i32,
            _ => r.below(v as u64) as i32,
        })
        .collect()
}

#[test]
fn lean_and_cached_equal_reference_bit_for_bit() {
    let mut r = SplitMix64(7);
    let mut checked = 0;
    for (ci, cfg) in CFGS.iter().enumerate() {
        for fmt in [Packing::Trit2, Packing::Base3, Packing::P3] {
            let wt = random_model(*cfg, fmt, None, 100 + ci as u64);
            let blob = wt.blob(fmt);
            let m = parse_model(&blob, &dims(cfg)).unwrap();
            for s in [1usize, 5, 16] {
                for _ in 0..4 {
                    let n = 1 + r.below(2 * s as u64 + 2) as usize;
                    let toks = random_tokens(&mut r, n, cfg.v);
                    let (rid, rl) = reference_predict(&wt, &toks, s);
                    let (id, l) = lean_predict(&m, &toks, s);
                    assert!(same_bits(&l, &rl), "lean {cfg:?} {fmt:?} s={s} toks={toks:?}");
                    assert_eq!(id, rid);
                    let (cid, cl) = predict(&mut state(Plan::Cached, &m.dims, s, f32::NAN), &m, &toks);
                    assert!(same_bits(&cl, &rl), "cached {cfg:?} {fmt:?} s={s}");
                    assert_eq!(cid, rid);
                    checked += 1;
                }
            }
        }
    }
    assert_eq!(checked, CFGS.len() * 3 * 3 * 4);
}

#[test]
fn atome02_gives_the_same_bits_as_atome01() {
    let mut r = SplitMix64(11);
    for (ci, cfg) in CFGS.iter().enumerate() {
        let wt = random_model(*cfg, Packing::Trit2, None, 200 + ci as u64);
        let (b1, b2) = (wt.blob(Packing::Trit2), wt.blob(Packing::Base3));
        assert!(b2.len() < b1.len() || cfg.d * cfg.v < 20);
        let (m1, m2) = (parse_model(&b1, &dims(cfg)).unwrap(), parse_model(&b2, &dims(cfg)).unwrap());
        for _ in 0..5 {
            let k = 1 + r.below(12) as usize;
            let toks = random_tokens(&mut r, k, cfg.v);
            let (a, la) = lean_predict(&m1, &toks, 8);
            let (b, lb) = lean_predict(&m2, &toks, 8);
            assert_eq!(a, b);
            assert!(same_bits(&la, &lb));
        }
    }
}

#[test]
fn cached_call_sequences_equal_fresh_results() {
    // Extend, shorten, replace, go past S: every call equals a fresh computation.
    let mut r = SplitMix64(99);
    for (ci, cfg) in CFGS.iter().enumerate().take(5) {
        let wt = random_model(*cfg, Packing::Trit2, None, 300 + ci as u64);
        let blob = wt.blob(Packing::Trit2);
        let m = parse_model(&blob, &dims(cfg)).unwrap();
        let s = 12;
        let mut c = state(Plan::Cached, &m.dims, s, 0.0);
        let mut toks = random_tokens(&mut r, 3, cfg.v);
        for step in 0..40 {
            match r.below(6) {
                0..=2 => { let k = 1 + r.below(3) as usize; toks.extend(random_tokens(&mut r, k, cfg.v)) },
                3 => toks.truncate(1 + r.below(toks.len() as u64) as usize),
                4 => {
                    let i = r.below(toks.len() as u64) as usize;
                    toks[i] = r.below(cfg.v as u64) as i32;
                }
                _ => { let k = 1 + r.below(2 * s as u64) as usize; toks = random_tokens(&mut r, k, cfg.v) }
            }
            let (cid, cl) = predict(&mut c, &m, &toks);
            let (rid, rl) = reference_predict(&wt, &toks, s);
            assert!(same_bits(&cl, &rl), "{cfg:?} step {step}: {toks:?}");
            assert_eq!(cid, rid);
            // The same list twice in a row: nothing new to compute, same answer.
            if step % 7 == 0 {
                let (cid2, cl2) = predict(&mut c, &m, &toks);
                assert!(same_bits(&cl2, &rl));
                assert_eq!(cid2, rid);
            }
        }
    }
}

#[test]
fn cached_state_with_garbage_or_other_model_is_not_trusted() {
    let cfg = CFGS[0];
    let w1 = random_model(cfg, Packing::Trit2, None, 1);
    let w2 = random_model(cfg, Packing::Trit2, None, 2);
    let (b1, b2) = (w1.blob(Packing::Trit2), w2.blob(Packing::Trit2));
    let (m1, m2) = (parse_model(&b1, &dims(&cfg)).unwrap(), parse_model(&b2, &dims(&cfg)).unwrap());
    let toks = [3, 1, 4, 1, 5];
    let mut c = state(Plan::Cached, &m1.dims, 8, 1.0);
    c.magic = 0xdead_beef;
    c.len = 3;
    predict(&mut c, &m1, &toks[..3]);
    let (_, l2) = predict(&mut c, &m2, &toks);
    assert!(same_bits(&l2, &reference_predict(&w2, &toks, 8).1));
}

#[test]
fn classifier_equals_reference() {
    for (ci, cfg) in CFGS.iter().enumerate().take(4) {
        for fmt in [Packing::Trit2, Packing::Base3] {
            let wt = random_model(*cfg, fmt, Some(1 + ci * 3), 400 + ci as u64);
            let blob = wt.blob(fmt);
            let c = parse_classifier(&blob, &dims(cfg), 16).unwrap();
            let toks = [1, 2, 3, 50, -4, 2];
            let (rc, rl) = reference_classify(&wt, &toks, 4);
            for plan in [Plan::Lean, Plan::Cached] {
                let mut st = state(plan, &c.base.dims, 4, 0.0);
                let mut out = vec![0.0; rl.len()];
                let k = st.runner().unwrap().classify(&c, &toks, Some(&mut out)).unwrap();
                assert_eq!(k, rc);
                assert!(same_bits(&out, &rl));
            }
        }
    }
}

#[test]
fn router_entropy_matches_an_independent_computation() {
    let cfg = CFGS[1];
    let wt = random_model(cfg, Packing::Trit2, None, 5);
    let blob = wt.blob(Packing::Trit2);
    let m = parse_model(&blob, &dims(&cfg)).unwrap();
    let toks = [5, 9, 11, 2, 39, 0, 7];
    let (_, routers) = reference_hidden(&wt, &toks, 16);
    for plan in [Plan::Lean, Plan::Cached] {
        let mut st = state(plan, &m.dims, 16, f32::NAN);
        let mut r = st.runner().unwrap();
        let mut ent = vec![f32::NAN; toks.len() * cfg.l];
        assert_eq!(r.router_entropy_all(&m, &toks, &mut ent), Some(toks.len()));
        assert!(same_bits(r.router_entropy(), &ent[(toks.len() - 1) * cfg.l..]));
        for t in 0..toks.len() {
            for l in 0..cfg.l {
                let p = routers[l][t];
                let h: f64 = p.iter().filter(|&&x| x > 0.0).map(|&x| -(x as f64) * (x as f64).ln()).sum();
                let got = ent[t * cfg.l + l] as f64;
                assert!((got - h).abs() < 1e-6, "t{t} l{l}: {got} vs {h}");
                assert!(got >= 0.0 && got <= 3f64.ln() + 1e-6);
            }
        }
    }
}

#[test]
fn generation_is_repeated_prediction_in_both_plans() {
    let cfg = CFGS[0];
    let wt = random_model(cfg, Packing::Trit2, None, 9);
    let blob = wt.blob(Packing::Trit2);
    let m = parse_model(&blob, &dims(&cfg)).unwrap();
    let (prompt, s) = ([4, 8, 15], 10);
    // The reference's greedy continuation, position by position.
    let mut want = Vec::new();
    let mut seq = prompt.to_vec();
    while want.len() < 5 && seq.len() < s {
        let (id, _) = reference_predict(&wt, &seq, s);
        want.push(id as i32);
        seq.push(id as i32);
    }
    let p = Sampling { temperature: 0.0, top_k: 0, top_p: 1.0 };
    let hot = Sampling { temperature: 0.8, top_k: 5, top_p: 0.9 };
    let mut sampled = Vec::new();
    for plan in [Plan::Lean, Plan::Cached] {
        let mut st = state(plan, &m.dims, s, f32::NAN);
        let mut out = [0i32; 5];
        assert_eq!(st.runner().unwrap().generate_greedy(&m, &prompt, &mut out), 5);
        assert_eq!(out.to_vec(), want, "{plan:?}");
        // Temperature 0 is the greedy path; a hot one is the same for both plans.
        let mut out = [0i32; 5];
        assert_eq!(st.runner().unwrap().generate_sampled(&m, &prompt, &mut out, &p, 3), 5);
        assert_eq!(out.to_vec(), want);
        // Nothing is made past the window: 10 - 3 = 7 at most.
        let mut out = [0i32; 9];
        assert_eq!(st.runner().unwrap().generate_sampled(&m, &prompt, &mut out, &hot, 3), 7);
        sampled.push(out);
    }
    assert_eq!(sampled[0], sampled[1]);
    let mut st = state(Plan::Lean, &m.dims, 3, 0.0);
    assert_eq!(st.runner().unwrap().generate_greedy(&m, &prompt, &mut [0; 4]), 0, "a prompt that fills the window");
}

#[test]
fn runner_refuses_short_memory() {
    let d = dims(&CFGS[0]);
    for plan in [Plan::Lean, Plan::Cached] {
        let n = Runner::work_floats(&d, 8, plan);
        let mut st = state(plan, &d, 8, 0.0);
        assert!(st.runner().is_some());
        st.work.truncate(n - 1);
        assert!(st.runner().is_none(), "{plan:?} short work area");
        let mut st = state(plan, &d, 8, 0.0);
        st.logits.truncate(d.vocab - 1);
        assert!(st.runner().is_none(), "{plan:?} short logits");
    }
    let mut st = state(Plan::Cached, &d, 8, 0.0);
    st.tokens.truncate(7);
    assert!(st.runner().is_none(), "cached: short token array");
}
