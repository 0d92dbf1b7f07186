//! Test support: a blob writer and an independent, slow reference engine
//! written straight from SPEC.md section 4 (position by position, full arrays,
//! its own blob decoding). Only the scalar math functions are shared.
#![allow(dead_code)]

use atome::math::{expf, sqrtf, tanhf};

/// Packing of a blob written by `Blob`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Fmt {
    A01,
    A02,
    P3,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Cfg {
    pub v: usize,
    pub d: usize,
    pub l: usize,
    pub dh: usize,
    pub k: usize,
    pub topk: usize,
}

/// xorshift64*: deterministic test randomness.
pub struct Rng(pub u64);
impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    /// Uniform in [lo, hi).
    pub fn f(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * ((self.next() >> 40) as f32 / (1u64 << 24) as f32)
    }
}

/// A weight matrix in a format-independent form.
#[derive(Clone, Debug)]
pub struct W {
    pub scale: f32,
    pub w: Vec<i8>,
}

pub struct Layer {
    pub gamma: Vec<f32>,
    pub beta: Vec<f32>,
    pub conv: W,
    pub a: Vec<f32>,
    pub b: Vec<f32>,
    pub c: Vec<f32>,
    pub wq: W,
    pub wk: W,
    pub wv: W,
    pub router: W,
}

/// A whole model's weights.
pub struct Weights {
    pub cfg: Cfg,
    pub embed: W,
    pub layers: Vec<Layer>,
    pub fg: Vec<f32>,
    pub fb: Vec<f32>,
    pub unembed: W,
    pub head: Option<W>,
}

fn rand_w(r: &mut Rng, n: usize, fmt: Fmt, scale: f32) -> W {
    let w = (0..n)
        .map(|_| match fmt {
            Fmt::P3 => [0i8, 1, -1, 3, -3, 9, -9, 0][r.below(8) as usize],
            _ => [0i8, 1, -1, 0][r.below(4) as usize],
        })
        .collect();
    W { scale, w }
}

fn rand_v(r: &mut Rng, n: usize, lo: f32, hi: f32) -> Vec<f32> {
    (0..n).map(|_| r.f(lo, hi)).collect()
}

impl Weights {
    pub fn random(cfg: Cfg, fmt: Fmt, n_classes: Option<usize>, seed: u64) -> Weights {
        let mut r = Rng(seed | 1);
        let d = cfg.d;
        let sc = |r: &mut Rng| r.f(0.02, 0.3);
        let embed = {
            let s = sc(&mut r);
            rand_w(&mut r, cfg.v * d, fmt, s)
        };
        let layers = (0..cfg.l)
            .map(|_| {
                let s: Vec<f32> = (0..6).map(|_| sc(&mut r)).collect();
                Layer {
                    gamma: rand_v(&mut r, d, 0.5, 1.5),
                    beta: rand_v(&mut r, d, -0.2, 0.2),
                    conv: rand_w(&mut r, d * cfg.k, fmt, s[0]),
                    a: rand_v(&mut r, d, -2.0, 3.0),
                    b: rand_v(&mut r, d, -1.0, 1.0),
                    c: rand_v(&mut r, d, -1.0, 1.0),
                    wq: rand_w(&mut r, cfg.dh * d, fmt, s[1]),
                    wk: rand_w(&mut r, cfg.dh * d, fmt, s[2]),
                    wv: rand_w(&mut r, d * d, fmt, s[3]),
                    router: rand_w(&mut r, 3 * d, fmt, s[4] * 4.0),
                }
            })
            .collect();
        let fg = rand_v(&mut r, d, 0.5, 1.5);
        let fb = rand_v(&mut r, d, -0.2, 0.2);
        let unembed = {
            let s = sc(&mut r);
            rand_w(&mut r, cfg.v * d, fmt, s)
        };
        let head = n_classes.map(|n| {
            let s = sc(&mut r);
            rand_w(&mut r, n * d, fmt, s)
        });
        Weights { cfg, embed, layers, fg, fb, unembed, head }
    }

    /// Serializes in `fmt` (classifier form when `head` is set).
    pub fn to_blob(&self, fmt: Fmt) -> Vec<u8> {
        let mut o = Vec::new();
        match (&self.head, fmt) {
            (None, Fmt::A01) => o.extend_from_slice(b"ATOME01"),
            (None, Fmt::A02) => o.extend_from_slice(b"ATOME02"),
            (None, Fmt::P3) => o.extend_from_slice(b"ATOMEP3"),
            (Some(h), f) => {
                o.extend_from_slice(if f == Fmt::A02 { b"ATOMECL02" } else { b"ATOMECL01" });
                o.extend_from_slice(&((h.w.len() / self.cfg.d) as i32).to_le_bytes());
            }
        }
        let fl = |o: &mut Vec<u8>, v: &[f32]| v.iter().for_each(|x| o.extend_from_slice(&x.to_le_bytes()));
        put_w(&mut o, &self.embed, fmt);
        for l in &self.layers {
            fl(&mut o, &l.gamma);
            fl(&mut o, &l.beta);
            put_w(&mut o, &l.conv, fmt);
            fl(&mut o, &l.a);
            fl(&mut o, &l.b);
            fl(&mut o, &l.c);
            put_w(&mut o, &l.wq, fmt);
            put_w(&mut o, &l.wk, fmt);
            put_w(&mut o, &l.wv, fmt);
            put_w(&mut o, &l.router, fmt);
        }
        fl(&mut o, &self.fg);
        fl(&mut o, &self.fb);
        put_w(&mut o, &self.unembed, fmt);
        if let Some(h) = &self.head {
            put_w(&mut o, h, fmt);
        }
        o
    }
}

pub fn put_w(o: &mut Vec<u8>, w: &W, fmt: Fmt) {
    o.extend_from_slice(&w.scale.to_le_bytes());
    match fmt {
        Fmt::A01 => {
            for ch in w.w.chunks(4) {
                let mut b = 0u8;
                for (i, &t) in ch.iter().enumerate() {
                    let code = match t {
                        1 => 1,
                        -1 => 3,
                        _ => 0,
                    };
                    b |= code << (2 * i);
                }
                o.push(b);
            }
        }
        Fmt::A02 => {
            for ch in w.w.chunks(5) {
                let mut b = 0u32;
                let mut m = 1u32;
                for k in 0..5 {
                    let t = ch.get(k).copied().unwrap_or(0);
                    b += (t as i32 + 1) as u32 * m;
                    m *= 3;
                }
                o.push(b as u8);
            }
        }
        Fmt::P3 => {
            for ch in w.w.chunks(8) {
                let mut word = 0u32;
                for (i, &t) in ch.iter().enumerate() {
                    let code = match t {
                        0 => 0,
                        1 => 1,
                        -1 => 2,
                        3 => 3,
                        -3 => 4,
                        9 => 5,
                        -9 => 6,
                        _ => 0,
                    };
                    word |= code << (3 * i);
                }
                o.extend_from_slice(&word.to_le_bytes()[..3]);
            }
        }
    }
}

// ---------------------------------------------------------------------------
// The reference engine, from the SPEC text.

fn matvec(w: &W, rows: usize, cols: usize, x: &[f32]) -> Vec<f32> {
    (0..rows)
        .map(|j| {
            let mut acc = 0.0f32;
            for i in 0..cols {
                match w.w[j * cols + i] {
                    0 => {}
                    1 => acc = acc + x[i],
                    -1 => acc = acc - x[i],
                    t => acc = acc + (t as f32) * x[i],
                }
            }
            acc * w.scale
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
pub fn reference_hidden(wt: &Weights, tokens: &[i32], s: usize) -> (Vec<f32>, Vec<Vec<[f32; 3]>>) {
    let c = wt.cfg;
    let d = c.d;
    let toks: Vec<usize> = {
        let t = if tokens.len() > s { &tokens[tokens.len() - s..] } else { tokens };
        t.iter().map(|&t| if t < 0 || t as usize >= c.v { 0 } else { t as usize }).collect()
    };
    let n = toks.len();
    let mut x: Vec<Vec<f32>> = toks
        .iter()
        .map(|&t| (0..d).map(|i| wt.embed.w[t * d + i] as f32 * wt.embed.scale).collect())
        .collect();
    let mut routers = vec![vec![[0.0f32; 3]; n]; c.l];
    for (li, l) in wt.layers.iter().enumerate() {
        let h: Vec<Vec<f32>> = x.iter().map(|r| layer_norm(r, &l.gamma, &l.beta)).collect();
        let mut hs = vec![0.0f32; d];
        let keys: Vec<Vec<f32>> = h.iter().map(|r| matvec(&l.wk, c.dh, d, r)).collect();
        let vals: Vec<Vec<f32>> = h.iter().map(|r| matvec(&l.wv, d, d, r)).collect();
        let inv_sqrt = 1.0f32 / sqrtf(c.dh as f32);
        for t in 0..n {
            let r = softmax(&matvec(&l.router, 3, d, &h[t]));
            routers[li][t] = [r[0], r[1], r[2]];
            let mut local = vec![0.0f32; d];
            for ch in 0..d {
                let mut acc = 0.0f32;
                for k in 0..c.k {
                    if t >= k {
                        match l.conv.w[ch * c.k + k] {
                            0 => {}
                            1 => acc = acc + h[t - k][ch],
                            -1 => acc = acc - h[t - k][ch],
                            w => acc = acc + (w as f32) * h[t - k][ch],
                        }
                    }
                }
                local[ch] = acc * l.conv.scale;
            }
            let mut state = vec![0.0f32; d];
            for ch in 0..d {
                hs[ch] = tanhf(l.a[ch]) * hs[ch] + l.b[ch] * h[t][ch];
                state[ch] = l.c[ch] * hs[ch];
            }
            let q = matvec(&l.wq, c.dh, d, &h[t]);
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
    (layer_norm(&x[n - 1], &wt.fg, &wt.fb), routers)
}

/// (next id, logits) of predict_next.
pub fn reference_predict(wt: &Weights, tokens: &[i32], s: usize) -> (usize, Vec<f32>) {
    let (h, _) = reference_hidden(wt, tokens, s);
    let logits = matvec(&wt.unembed, wt.cfg.v, wt.cfg.d, &h);
    (argmax(&logits), logits)
}

/// (class, logits) of classify.
pub fn reference_classify(wt: &Weights, tokens: &[i32], s: usize) -> (usize, Vec<f32>) {
    let (h, _) = reference_hidden(wt, tokens, s);
    let head = wt.head.as_ref().unwrap();
    let logits = matvec(head, head.w.len() / wt.cfg.d, wt.cfg.d, &h);
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
