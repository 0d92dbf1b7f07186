//! Criterion benchmarks of the kernels (scripts/criterion.sh runs them).
//!
//! - matvec_batch on a 256 x 256 matrix (the 944K model's Wv) with 1 and 4
//!   input vectors, in the three packings (ATOME01 2-bit trits, ATOME02 base 3,
//!   ATOMEP3 3-bit codes), weights drawn like a trained model's (~63% non-zero);
//! - layer_norm over D = 64 and 256;
//! - softmax over 3 (router), 4 (top-k slots) and 256 values;
//! - score_topk: a DH = 64 query against 64 keys, keeping 4.
// criterion's macros generate undocumented functions.
#![allow(missing_docs)]
use atome::forward::sample::SplitMix64;
use atome::format::{Floats, Norm, Packing, Tensor};
use atome::kernels::attention::score_topk;
use atome::kernels::matvec::matvec_batch;
use atome::kernels::{layer_norm, softmax};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use std::hint::black_box;

/// Uniform in [-1, 1) from the library's splitmix64.
fn unit(rng: &mut SplitMix64) -> f32 {
    2.0 * rng.uniform() - 1.0
}

/// 0 with probability 3/8, else +-1.
fn trit(rng: &mut SplitMix64) -> i8 {
    match rng.next_u64() % 8 {
        0..=2 => 0,
        3..=5 => 1,
        _ => -1,
    }
}

/// Packs weights with the library's encoder.
fn pack(w: &[i8], packing: Packing) -> Vec<u8> {
    let mut b = vec![0u8; packing.payload_len(w.len())];
    atome::format::pack(packing, w.len(), |i| w[i], &mut b).expect("ternary weights");
    b
}

fn bench_matvec(c: &mut Criterion) {
    const N: usize = 256;
    let mut rng = SplitMix64(0x9E37_79B9_7F4A_7C15);
    let w: Vec<i8> = (0..N * N).map(|_| trit(&mut rng)).collect();
    let xs: Vec<f32> = (0..4 * N).map(|_| unit(&mut rng)).collect();
    let mut g = c.benchmark_group("matvec_batch_256x256");
    for (label, packing) in [("trit2", Packing::Trit2), ("base3", Packing::Base3), ("p3", Packing::P3)] {
        let data = pack(&w, packing);
        let t = Tensor { data: &data, scale: 0.0123, rows: N, cols: N, packing };
        for n in [1usize, 4] {
            let mut out = vec![0.0f32; n * N];
            g.throughput(Throughput::Elements((n * N * N) as u64));
            g.bench_with_input(BenchmarkId::new(label, format!("{n}vec")), &n, |b, &n| {
                b.iter(|| matvec_batch(black_box(&t), black_box(&xs), N, n, &mut out, N))
            });
        }
    }
    g.finish();
}

fn bench_layer_norm(c: &mut Criterion) {
    let mut rng = SplitMix64(42);
    let mut g = c.benchmark_group("layer_norm");
    for d in [64usize, 256] {
        let gamma: Vec<u8> = (0..d).flat_map(|_| (1.0 + 0.1 * unit(&mut rng)).to_le_bytes()).collect();
        let beta: Vec<u8> = (0..d).flat_map(|_| (0.1 * unit(&mut rng)).to_le_bytes()).collect();
        let norm = Norm { gamma: Floats::new(&gamma), beta: Floats::new(&beta) };
        let x: Vec<f32> = (0..d).map(|_| 3.0 * unit(&mut rng)).collect();
        let mut out = vec![0.0f32; d];
        g.bench_with_input(BenchmarkId::from_parameter(d), &d, |b, _| {
            b.iter(|| layer_norm(black_box(&x), black_box(&norm), &mut out))
        });
    }
    g.finish();
}

fn bench_softmax(c: &mut Criterion) {
    let mut rng = SplitMix64(7);
    let mut g = c.benchmark_group("softmax");
    for m in [3usize, 4, 256] {
        let v: Vec<f32> = (0..m).map(|_| 4.0 * unit(&mut rng)).collect();
        let mut w = v.clone();
        g.bench_with_input(BenchmarkId::from_parameter(m), &m, |b, _| {
            b.iter(|| {
                w.copy_from_slice(&v);
                softmax(black_box(&mut w));
            })
        });
    }
    g.finish();
}

fn bench_score_topk(c: &mut Criterion) {
    const DH: usize = 64;
    const KEYS: usize = 64;
    const TOPK: usize = 4;
    let mut rng = SplitMix64(99);
    let q: Vec<f32> = (0..DH).map(|_| unit(&mut rng)).collect();
    let keys: Vec<f32> = (0..DH * KEYS).map(|_| unit(&mut rng)).collect();
    let (mut score, mut idx) = ([0.0f32; TOPK], [0.0f32; TOPK]);
    let inv = 1.0 / (DH as f32).sqrt();
    c.bench_function("score_topk_dh64_64keys_top4", |b| {
        b.iter(|| score_topk(black_box(&q), black_box(&keys), DH, KEYS - 1, inv, &mut score, &mut idx))
    });
}

criterion_group!(kernels, bench_matvec, bench_layer_norm, bench_softmax, bench_score_topk);
criterion_main!(kernels);
