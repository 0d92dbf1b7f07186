//! What the C API tests compare with in this build's arithmetic: the float
//! reference engine (tests/common/mod.rs) in an f32 build; in a q15 build
//! (ATOME_DTYPE=q15, docs/Q15.md) the integer engine run directly on its
//! own buffers (so a fault in the C layer around it shows: window, state
//! areas, dims), plus closeness to the float reference, which is
//! independent of the library.
use super::*;
use atome::engine::Engine;
use atome::format::parse_model;
use atome::q15::{Q15Layout, Q15Runner};

/// True in a library built with ATOME_DTYPE=q15.
pub const Q15: bool = atome::config::ATOME_DTYPE_Q15 == 1;

/// (id, logits) of the q15 engine on `blob` for `tokens`, window `s`, on
/// buffers of its own (not through the C API).
pub fn q15_predict(blob: &[u8], dims: &Dims, s: usize, tokens: &[i32]) -> (usize, Vec<f32>) {
    let m = parse_model(blob, dims).expect("blob loads");
    let lay = Q15Layout::new(dims, s);
    let (mut a, mut b, mut lg) = (vec![0i16; lay.i16s], vec![0i32; lay.i32s], vec![0f32; dims.vocab]);
    let mut r = Q15Runner::new(&mut a, &mut b, &mut lg, dims, s).expect("buffers fit");
    let id = r.predict(&m, tokens).expect("runs");
    (id, r.logits().to_vec())
}

/// Cosine of two logit vectors (1 for two zero vectors).
pub fn cosine(a: &[f32], b: &[f32]) -> f64 {
    let dot: f64 = a.iter().zip(b).map(|(x, y)| *x as f64 * *y as f64).sum();
    let na: f64 = a.iter().map(|x| (*x as f64).powi(2)).sum::<f64>().sqrt();
    let nb: f64 = b.iter().map(|x| (*x as f64).powi(2)).sum::<f64>().sqrt();
    if na == 0.0 && nb == 0.0 {
        1.0
    } else {
        dot / (na * nb)
    }
}

/// Checks the C API's predict_next result (`id`, `logits`) for `tokens`
/// against this build's arithmetic: bit for bit with the float reference
/// (f32 build); bit for bit with the q15 engine and within a cosine of
/// 0.999 of the float reference (q15 build: docs/Q15.md measures 0.999999
/// on the 944K model).
pub fn check_predict(desc: &Desc, blob: &[u8], tokens: &[i32], s: usize, id: i32, logits: &[f32]) {
    let (rid, rl) = reference_predict(desc, tokens, s);
    if Q15 {
        let (qid, ql) = q15_predict(blob, &desc.dims, s, tokens);
        assert_eq!(id as usize, qid, "q15: the C API's id is the engine's");
        assert!(same_bits(logits, &ql), "q15: the C API's logits are the engine's");
        assert!(logits.iter().all(|x| x.is_finite()), "q15: finite logits");
        let c = cosine(logits, &rl);
        assert!(c > 0.999, "q15 logits vs the float reference: cosine {c}");
    } else {
        assert_eq!(id as usize, rid);
        assert!(same_bits(logits, &rl));
    }
}
