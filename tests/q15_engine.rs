//! Properties of the q15 engine that need no numpy (the bit-for-bit
//! comparison with q15_ref is python/tests/test_q15_engine.py): the state
//! layout equals build.rs's, every packing of the same weights gives the
//! same bits, random blobs (non-finite parameters included) never panic
//! and give no NaN, the window rule, generate as the loop of predict, the
//! primitives against f64 math, and agreement with the float engine.
mod common;
use atome::config::*;
use atome::engine::Engine;
use atome::format::{parse_classifier, parse_model, Dims, Field, Packing};
use atome::q15::arith::*;
use atome::q15::{Q15Layout, Q15Runner};
use atome::runner::Runner;
use common::*;

const SMALL: Cfg = Cfg { v: 40, d: 24, l: 2, dh: 8, k: 4, topk: 3 };

use common::dtype::q15_predict as q15;

fn f32_logits(blob: &[u8], dims: &Dims, s: usize, tokens: &[i32]) -> Vec<f32> {
    let m = parse_model(blob, dims).unwrap();
    let mut work = vec![0f32; Runner::work_floats(dims, s, atome::runner::Plan::Lean)];
    let mut lg = vec![0f32; dims.vocab];
    let mut r = Runner::lean(&mut work, &mut lg, dims, s).unwrap();
    r.predict(&m, tokens).unwrap();
    r.logits().to_vec()
}

fn tokens(n: usize, v: usize, seed: u64) -> Vec<i32> {
    (0..n).map(|i| ((i as u64 * 2654435761 + seed * 97) % (v as u64 + 3)) as i32 - 1).collect()
}

#[test]
fn state_layout_equals_build_rs() {
    if ATOME_STATE_CACHED == 1 {
        // (tests/q15_cached.rs checks the cached state's.)
        return;
    }
    let lay = Q15Layout::new(&atome::config::DIMS, ATOME_MAX_SEQ);
    assert_eq!(lay.i16s, ATOME_Q15_I16);
    assert_eq!(lay.i32s, ATOME_Q15_I32);
}

#[test]
fn default_state_fits_the_issue_budgets() {
    let default = Dims { vocab: 256, d_model: 64, n_layers: 4, d_head: 16, kernel_size: 5, top_k: 4 };
    let big = Dims { vocab: 256, d_model: 256, n_layers: 8, d_head: 64, kernel_size: 5, top_k: 4 };
    assert!(Q15Layout::new(&default, 32).bytes(&default) <= 12_000);
    assert!(Q15Layout::new(&big, 64).bytes(&big) <= 90_000);
}

#[test]
fn every_packing_of_the_same_weights_gives_the_same_bits() {
    let dims = SMALL.dims();
    for seed in 0..4 {
        let desc = random_model(SMALL, Packing::Trit2, None, seed);
        let toks = tokens(11 + seed as usize, SMALL.v, seed);
        let r0 = q15(&desc.blob(Packing::Trit2), &dims, 16, &toks);
        for p in [Packing::Base3, Packing::P3] {
            let r = q15(&desc.blob(p), &dims, 16, &toks);
            assert_eq!(r.0, r0.0);
            assert!(same_bits(&r.1, &r0.1), "seed {seed} {p:?}");
        }
    }
}

#[test]
fn random_blobs_and_nonfinite_parameters_never_panic_nor_give_nan() {
    let fields = [Field::Embed, Field::NormGamma, Field::SsmA, Field::SsmB, Field::SsmC, Field::Wq, Field::Unembed, Field::FinalBeta];
    for seed in 0..24u64 {
        let cfg = Cfg { v: 5 + seed as usize * 3, d: 1 + seed as usize % 9 * 3, l: 1 + seed as usize % 3, dh: 1 + seed as usize % 5, k: 1 + seed as usize % 6, topk: 1 + seed as usize % 4 };
        let dims = cfg.dims();
        let p = Packing::ALL[seed as usize % 3];
        let mut blob = encode(&random_model(cfg, p, None, seed), atome::format::Format::new(false, p).unwrap());
        let bad = [f32::NAN, f32::INFINITY, f32::NEG_INFINITY, f32::MAX, 1e-42][seed as usize % 5];
        blob.set_field(fields[seed as usize % fields.len()], bad);
        let s = 1 + seed as usize % 13;
        let (id, lg) = q15(&blob.bytes, &dims, s, &tokens(s + 2, cfg.v, seed));
        assert!(id < cfg.v);
        assert!(lg.iter().all(|x| !x.is_nan()), "seed {seed}");
    }
}

#[test]
fn a_nan_embed_scale_reads_as_zero() {
    let dims = SMALL.dims();
    let desc = random_model(SMALL, Packing::Trit2, None, 3);
    let fmt = atome::format::Format::Atome01;
    let (mut a, mut b) = (encode(&desc, fmt), encode(&desc, fmt));
    a.set_field(Field::Embed, f32::NAN);
    b.set_field(Field::Embed, 0.0);
    let t = tokens(7, SMALL.v, 1);
    assert!(same_bits(&q15(&a.bytes, &dims, 16, &t).1, &q15(&b.bytes, &dims, 16, &t).1));
}

#[test]
fn the_window_is_the_last_s_tokens() {
    let dims = SMALL.dims();
    let blob = random_model(SMALL, Packing::P3, None, 5).blob(Packing::P3);
    let t = tokens(30, SMALL.v, 2);
    assert!(same_bits(&q15(&blob, &dims, 12, &t).1, &q15(&blob, &dims, 12, &t[18..]).1));
}

#[test]
fn generate_is_the_loop_of_predict() {
    let dims = SMALL.dims();
    let blob = random_model(SMALL, Packing::Trit2, None, 6).blob(Packing::Trit2);
    let m = parse_model(&blob, &dims).unwrap();
    let s = 16;
    let lay = Q15Layout::new(&dims, s);
    let (mut a, mut b, mut lg) = (vec![0i16; lay.i16s], vec![0i32; lay.i32s], vec![0f32; dims.vocab]);
    let mut r = Q15Runner::new(&mut a, &mut b, &mut lg, &dims, s).unwrap();
    let prompt = [3, 1, 4];
    let mut out = [0i32; 20];
    let n = r.generate_greedy(&m, &prompt, &mut out);
    assert_eq!(n, s - prompt.len());
    // The logits after the call are the last step's (the steps before
    // it find their id without writing them).
    let after = r.logits().to_vec();
    let mut seq = prompt.to_vec();
    for &t in &out[..n] {
        assert_eq!(q15(&blob, &dims, s, &seq).0 as i32, t);
        seq.push(t);
    }
    assert!(same_bits(&after, &q15(&blob, &dims, s, &seq[..seq.len() - 1]).1));
    // A call that stops at max_tokens keeps its last step's logits too.
    let n = r.generate_greedy(&m, &prompt, &mut out[..5]);
    assert_eq!(n, 5);
    assert!(same_bits(r.logits(), &q15(&blob, &dims, s, &seq[..prompt.len() + 4]).1));
}

#[test]
fn classifier_runs_and_agrees_with_its_float_argmax() {
    let dims = SMALL.dims();
    let desc = random_model(SMALL, Packing::Trit2, Some(5), 7);
    let blob = desc.blob(Packing::Base3);
    let c = parse_classifier(&blob, &dims, 16).unwrap();
    let lay = Q15Layout::new(&dims, 16);
    let (mut a, mut b, mut lg) = (vec![0i16; lay.i16s], vec![0i32; lay.i32s], vec![0f32; dims.vocab]);
    let mut r = Q15Runner::new(&mut a, &mut b, &mut lg, &dims, 16).unwrap();
    let mut out = vec![f32::NAN; 5];
    let t = tokens(9, SMALL.v, 4);
    let id = r.classify(&c, &t, Some(&mut out)).unwrap();
    assert_eq!(id, argmax(&out));
    let (want, _) = reference_classify(&desc, &t, 16);
    assert_eq!(id, want);
}

#[test]
fn close_to_the_float_engine() {
    let dims = SMALL.dims();
    let mut agree = 0;
    for seed in 0..10 {
        let blob = random_model(SMALL, Packing::P3, None, 20 + seed).blob(Packing::P3);
        let t = tokens(14, SMALL.v, seed);
        let (id, q) = q15(&blob, &dims, 16, &t);
        let f = f32_logits(&blob, &dims, 16, &t);
        let dot: f64 = q.iter().zip(&f).map(|(a, b)| *a as f64 * *b as f64).sum();
        let nq: f64 = q.iter().map(|a| (*a as f64).powi(2)).sum::<f64>().sqrt();
        let nf: f64 = f.iter().map(|a| (*a as f64).powi(2)).sum::<f64>().sqrt();
        assert!(dot / (nq * nf) > 0.9999, "seed {seed}: cosine {}", dot / (nq * nf));
        agree += (id == argmax(&f)) as usize;
    }
    assert!(agree >= 9, "argmax agreement {agree}/10");
}

#[test]
fn default_model_agrees_with_float() {
    let Some(sh) = shared() else { return };
    let blob = std::fs::read(sh.join("models/default.atome")).unwrap();
    let dims = Dims { vocab: 256, d_model: 64, n_layers: 4, d_head: 16, kernel_size: 5, top_k: 4 };
    for seed in 0..4 {
        let t = tokens(20, 250, seed);
        let (id, _) = q15(&blob, &dims, 32, &t);
        assert_eq!(id, argmax(&f32_logits(&blob, &dims, 32, &t)));
    }
}

#[test]
fn primitives() {
    assert_eq!(rshr(3, 1), 2);
    assert_eq!(rshr(-3, 1), -1);
    assert_eq!(rshr(-5, 1), -2);
    assert_eq!(rshr(3, -4), 48);
    assert_eq!(rshr(1 << 61, 63), 0);
    assert_eq!(exp2q(0), 1 << 30);
    assert_eq!(exp2q(1 << 40), 0);
    let mut prev = i64::MAX;
    for i in 0..5000i64 {
        let v = i * 7919 * 37;
        let got = exp2q(v);
        let want = (-(v as f64) / 16777216.0).exp2() * 1073741824.0;
        assert!((got as f64 - want).abs() <= want * 2.5e-7 + 1.0, "{v}");
        assert!(got <= prev);
        prev = got;
    }
    for i in -3500..3500 {
        let a = i as f32 * 12.0 / 3500.0;
        let t = tanh_q30(a) as f64 / 1073741824.0;
        assert!((t - (a as f64).tanh()).abs() < 2e-6, "{a}");
    }
    assert_eq!(tanh_q30(f32::NAN), 0);
    assert_eq!(tanh_q30(f32::INFINITY), 1 << 30);
    assert_eq!(tanh_q30(f32::NEG_INFINITY), -(1 << 30));
    for f in [1.0f32, -0.1, 3.5e-42, 1e38, f32::MIN_POSITIVE, -7.25] {
        let (m, e) = f32_parts(f);
        assert_eq!(m as f64 * (e as f64).exp2(), f as f64);
        assert!((1 << 23..1 << 24).contains(&m.unsigned_abs()));
        assert_eq!(to_f32(m, e), f);
    }
    assert_eq!(f32_parts(f32::NAN).0, 0);
    assert_eq!(to_f32(1, 200), f32::INFINITY);
    assert_eq!(to_f32(-1, -200).to_bits(), (-0.0f32).to_bits());
    // fquant: a significand rounding up to 2^15 saturates.
    assert_eq!(fquant_scalar(0.99999994), (32767, -15));
    assert_eq!(fquant_scalar(0.5), (16384, -15));
    assert_eq!(quant_scalar(0, 5, QA).1, E_ZERO);
}
