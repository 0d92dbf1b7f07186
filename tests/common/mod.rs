//! Test support: the shared blob generator (fuzz/src/blobgen.rs, on the
//! library's encoder) and an independent, slow reference engine written
//! straight from docs/ARITHMETIC.md (position by position, full arrays, on
//! the generator's unpacked weights). Only the scalar math functions are
//! shared with the library.
// The reference engine is written as the contract states each value
// (`acc = acc + x`, index loops), so it reads against docs/ARITHMETIC.md.
#![allow(clippy::assign_op_pattern, clippy::needless_range_loop)]
#![allow(dead_code)]

#[path = "../../fuzz/src/blobgen.rs"]
mod blobgen;
pub use blobgen::*;
pub mod dtype;

use atome::format::Dims;
use atome::math::{expf, sqrtf, tanhf};

/// A test configuration, in short.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Cfg {
    pub v: usize,
    pub d: usize,
    pub l: usize,
    pub dh: usize,
    pub k: usize,
    pub topk: usize,
}

impl Cfg {
    /// As the library's dims.
    pub fn dims(&self) -> Dims {
        Dims { vocab: self.v, d_model: self.d, n_layers: self.l, d_head: self.dh, kernel_size: self.k, top_k: self.topk }
    }
}

/// A random model for `cfg` whose weights packing `p` holds (P3: the wide alphabet).
pub fn random_model(cfg: Cfg, p: Packing, n_classes: Option<usize>, seed: u64) -> Desc {
    Desc::random(&cfg.dims(), n_classes.map(|n| n as i32), seed, Alphabet::of(p))
}

// ---------------------------------------------------------------------------
// The reference engine, from the contract (docs/) text.

/// (scale, weights) of a tensor.
type W<'a> = (f32, &'a [i8]);

fn matvec(w: W, rows: usize, cols: usize, x: &[f32]) -> Vec<f32> {
    (0..rows)
        .map(|j| {
            let mut acc = 0.0f32;
            for i in 0..cols {
                match w.1[j * cols + i] {
                    0 => {}
                    1 => acc = acc + x[i],
                    -1 => acc = acc - x[i],
                    t => acc = acc + (t as f32) * x[i],
                }
            }
            acc * w.0
        })
        .collect()
}

fn layer_norm(x: &[f32], g: &[f32], b: &[f32]) -> Vec<f32> {
    let d = x.len();
    let mut mean = 0.0f32;
    for &v in x {
        mean = mean + v;
    }
    mean = mean / d as f32;
    let mut var = 0.0f32;
    for &v in x {
        var = var + (v - mean) * (v - mean);
    }
    var = var / d as f32;
    let inv = 1.0f32 / sqrtf(var + 1e-5);
    (0..d).map(|i| g[i] * (x[i] - mean) * inv + b[i]).collect()
}

fn softmax(v: &[f32]) -> Vec<f32> {
    let mut max = v[0];
    for &x in &v[1..] {
        if x > max {
            max = x;
        }
    }
    let e: Vec<f32> = v.iter().map(|&x| expf(x - max)).collect();
    let mut sum = 0.0f32;
    for &x in &e {
        sum = sum + x;
    }
    let inv = 1.0f32 / (sum + 1e-10);
    e.iter().map(|&x| x * inv).collect()
}

/// Final hidden row (after the final norm) and per-layer router
/// probabilities per position, for ids already clamped to the window.
pub fn reference_hidden(wt: &Desc, tokens: &[i32], s: usize) -> (Vec<f32>, Vec<Vec<[f32; 3]>>) {
    let dm = wt.dims;
    let c = Cfg { v: dm.vocab, d: dm.d_model, l: dm.n_layers, dh: dm.d_head, k: dm.kernel_size, topk: dm.top_k };
    let d = c.d;
    let embed = wt.tensor(Field::Embed, 0);
    let toks: Vec<usize> = {
        let t = if tokens.len() > s { &tokens[tokens.len() - s..] } else { tokens };
        t.iter().map(|&t| if t < 0 || t as usize >= c.v { 0 } else { t as usize }).collect()
    };
    let n = toks.len();
    let mut x: Vec<Vec<f32>> = toks
        .iter()
        .map(|&t| (0..d).map(|i| embed.1[t * d + i] as f32 * embed.0).collect())
        .collect();
    let mut routers = vec![vec![[0.0f32; 3]; n]; c.l];
    for li in 0..c.l {
        let f = |field| wt.floats(field, li);
        let t = |field| wt.tensor(field, li);
        let (gamma, beta, a, b, cc) = (f(Field::NormGamma), f(Field::NormBeta), f(Field::SsmA), f(Field::SsmB), f(Field::SsmC));
        let (conv, wq, wk, wv, router) = (t(Field::Conv), t(Field::Wq), t(Field::Wk), t(Field::Wv), t(Field::Router));
        let h: Vec<Vec<f32>> = x.iter().map(|r| layer_norm(r, gamma, beta)).collect();
        let mut hs = vec![0.0f32; d];
        let keys: Vec<Vec<f32>> = h.iter().map(|r| matvec(wk, c.dh, d, r)).collect();
        let vals: Vec<Vec<f32>> = h.iter().map(|r| matvec(wv, d, d, r)).collect();
        let inv_sqrt = 1.0f32 / sqrtf(c.dh as f32);
        for t in 0..n {
            let r = softmax(&matvec(router, 3, d, &h[t]));
            routers[li][t] = [r[0], r[1], r[2]];
            let mut local = vec![0.0f32; d];
            for ch in 0..d {
                let mut acc = 0.0f32;
                for k in 0..c.k {
                    if t >= k {
                        match conv.1[ch * c.k + k] {
                            0 => {}
                            1 => acc = acc + h[t - k][ch],
                            -1 => acc = acc - h[t - k][ch],
                            w => acc = acc + (w as f32) * h[t - k][ch],
                        }
                    }
                }
                local[ch] = acc * conv.0;
            }
            let mut state = vec![0.0f32; d];
            for ch in 0..d {
                hs[ch] = tanhf(a[ch]) * hs[ch] + b[ch] * h[t][ch];
                state[ch] = cc[ch] * hs[ch];
            }
            let q = matvec(wq, c.dh, d, &h[t]);
            let keff = c.topk.min(t + 1);
            let mut slots: Vec<(f32, Option<usize>)> = vec![(-1e30, None); keff];
            for j in 0..=t {
                let mut sdot = 0.0f32;
                for dd in 0..c.dh {
                    sdot = sdot + q[dd] * keys[j][dd];
                }
                let score = sdot * inv_sqrt;
                if score > slots[keff - 1].0 {
                    slots[keff - 1] = (score, Some(j));
                    let mut i = keff - 1;
                    while i > 0 && slots[i].0 > slots[i - 1].0 {
                        slots.swap(i, i - 1);
                        i -= 1;
                    }
                }
            }
            let p = softmax(&slots.iter().map(|s| s.0).collect::<Vec<_>>());
            let mut sparse = vec![0.0f32; d];
            for (i, s) in slots.iter().enumerate() {
                if let Some(j) = s.1 {
                    for dd in 0..d {
                        sparse[dd] = sparse[dd] + p[i] * vals[j][dd];
                    }
                }
            }
            for i in 0..d {
                x[t][i] = x[t][i] + ((r[0] * local[i] + r[1] * state[i]) + r[2] * sparse[i]);
            }
        }
    }
    (layer_norm(&x[n - 1], wt.floats(Field::FinalGamma, 0), wt.floats(Field::FinalBeta, 0)), routers)
}

/// (next id, logits) of predict_next.
pub fn reference_predict(wt: &Desc, tokens: &[i32], s: usize) -> (usize, Vec<f32>) {
    let (h, _) = reference_hidden(wt, tokens, s);
    let logits = matvec(wt.tensor(Field::Unembed, 0), wt.dims.vocab, wt.dims.d_model, &h);
    (argmax(&logits), logits)
}

/// (class, logits) of classify.
pub fn reference_classify(wt: &Desc, tokens: &[i32], s: usize) -> (usize, Vec<f32>) {
    let (h, _) = reference_hidden(wt, tokens, s);
    let head = wt.tensor(Field::Head, 0);
    let logits = matvec(head, head.1.len() / wt.dims.d_model, wt.dims.d_model, &h);
    (argmax(&logits), logits)
}

pub fn argmax(v: &[f32]) -> usize {
    let mut b = 0;
    for i in 1..v.len() {
        if v[i] > v[b] {
            b = i;
        }
    }
    b
}

/// Bitwise equality with all NaNs equal.
pub fn same_bits(a: &[f32], b: &[f32]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan()))
}

/// Path of ../shared. Where it is absent: None outside CI (tests that need
/// it say so and skip), a panic with CI=true (CI always has it).
pub fn shared() -> Option<std::path::PathBuf> {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared");
    if p.join("models").is_dir() {
        Some(p)
    } else if std::env::var("CI").is_ok_and(|v| v == "true") {
        // CI always has ../shared: a test that would skip there must fail.
        panic!("CI=true but {} has no models/ (../shared is beside every CI checkout)", p.display());
    } else {
        eprintln!("SKIP: needs ../shared (beside every CI checkout, absent here)");
        None
    }
}

/// The golden configurations' language models: (name, blob in
/// ../shared/models, [V, D, L, DH, K, TOPK, S]).
pub const GOLDEN_MODELS: &[(&str, &str, [usize; 7])] = &[
    ("tiny", "tiny.atome", [32, 16, 2, 8, 5, 4, 8]),
    ("default", "default.atome", [256, 64, 4, 16, 5, 4, 32]),
    ("odd", "odd.atome", [40, 22, 3, 6, 3, 2, 16]),
    ("wide", "wide.atome", [64, 32, 2, 8, 7, 6, 24]),
    ("toy", "model_toy.atome", [256, 64, 4, 16, 5, 4, 64]),
    ("m944k", "atome_944k.bin", [256, 256, 8, 64, 5, 4, 64]),
    ("m944k_s24", "atome_944k.bin", [256, 256, 8, 64, 5, 4, 24]),
];

/// Classifier blobs of the golden configurations with their dimensions.
pub const GOLDEN_CLASSIFIERS: &[(&str, [usize; 7])] = &[
    ("agri.atomecl", [256, 32, 2, 8, 5, 4, 32]),
    ("voice.atomecl", [256, 32, 2, 8, 5, 4, 32]),
    ("cls_odd.atomecl", [40, 22, 3, 6, 3, 2, 16]),
];

/// A table row's dimensions and window.
pub fn golden_dims(c: [usize; 7]) -> (Dims, usize) {
    (Dims { vocab: c[0], d_model: c[1], n_layers: c[2], d_head: c[3], kernel_size: c[4], top_k: c[5] }, c[6])
}

/// n token ids for vocabulary v, with ids outside [0, V) now and then
/// (they read as 0).
pub fn oob_tokens(n: usize, v: usize, seed: u64) -> Vec<i32> {
    (0..n).map(|i| ((i as u64 * 2654435761 + seed * 40503) % (v as u64 + 2)) as i32 - 1).collect()
}
