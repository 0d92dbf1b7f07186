//! Differential test of the soft-float matvec (src/kernels/device/soft.rs,
//! the matvec of cores without an FPU) against a plain f32 matvec written
//! here (docs/ARITHMETIC.md: row j: acc = +0.0; nonzero weight w at column i:
//! acc = acc + x[i] (w = 1), acc - x[i] (w = -1), acc + (float)w * x[i]
//! (P3's +-3, +-9); y[j] = acc * scale), bit for bit (NaN == NaN), and
//! against the library's own matvec_batch. Random tensors of odd shapes,
//! every packing, inputs from every float class: ordinary, short mantissas
//! (many exact ties), wide exponent spreads (cancellation, subnormals),
//! values near the overflow threshold, and infinities and NaN.
// The naive sums are written as the contract states them: `acc = acc + x`.
#![allow(clippy::assign_op_pattern)]
use atome::forward::sample::SplitMix64;
use atome::format::{Packing, Tensor};
use atome::kernels::device::soft::matvec_soft;
use atome::kernels::matvec::{decode, matvec_batch};
use proptest::prelude::*;

fn same(a: f32, b: f32) -> bool {
    (a.is_nan() && b.is_nan()) || a.to_bits() == b.to_bits()
}

fn naive(w: &Tensor, xs: &[f32], n: usize, out: &mut [f32], ostride: usize) {
    let mut codes = vec![0i8; w.rows * w.cols];
    decode(w, 0, &mut codes);
    for b in 0..n {
        for j in 0..w.rows {
            let mut acc = 0.0f32;
            for i in 0..w.cols {
                let x = xs[b * w.cols + i];
                match codes[j * w.cols + i] {
                    0 => {}
                    1 => acc = acc + x,
                    -1 => acc = acc - x,
                    c => acc = acc + (c as f32) * x,
                }
            }
            out[b * ostride + j] = acc * w.scale;
        }
    }
}

/// One input float of the given class.
fn input(r: &mut SplitMix64, class: u64) -> f32 {
    let x = r.next_u64();
    let sign = ((x >> 63) as u32) << 31;
    match class {
        // Ordinary activations.
        0 => (r.uniform() - 0.5) * 8.0,
        // Short mantissas: many sums are exact ties.
        1 => ((x % 64) as f32 - 32.0) * 0.25,
        // Wide exponents, subnormals included.
        2 => f32::from_bits(sign | ((x as u32 >> 8) % 0x7f80_0000)),
        // Near overflow: sums overflow to infinity, then meet other terms.
        3 => f32::from_bits(sign | (0x7f00_0000 + (x as u32 >> 9))),
        // Now and then an infinity, a NaN or a zero.
        _ => match x % 40 {
            0 => f32::INFINITY,
            1 => f32::NEG_INFINITY,
            2 => f32::NAN,
            3 => -0.0,
            4 => 0.0,
            5 => 1.0e-45,
            _ => (r.uniform() - 0.5) * 100.0,
        },
    }
}

fn run_case(seed: u64, rows: usize, cols: usize, n: usize, packing: Packing, class: u64, pad: usize) {
    let mut r = SplitMix64(seed);
    let nbytes = packing.payload_len(rows * cols);
    let data: Vec<u8> = (0..nbytes)
        .map(|_| match packing {
            Packing::Base3 => (r.next_u64() % 243) as u8,
            _ => r.next_u64() as u8,
        })
        .collect();
    let scale = match seed % 4 {
        0 => 1.0,
        1 => 0.037,
        2 => -3.5,
        _ => 1.5e-3,
    };
    let w = Tensor { data: &data, scale, rows, cols, packing };
    let xs: Vec<f32> = (0..n * cols).map(|_| input(&mut r, class)).collect();
    let ostride = rows + pad;
    let mut want = vec![7.0f32; n * ostride];
    let mut got = want.clone();
    let mut lib = want.clone();
    naive(&w, &xs, n, &mut want, ostride);
    matvec_soft(&w, &xs, cols, n, &mut got, ostride);
    matvec_batch(&w, &xs, cols, n, &mut lib, ostride);
    for (k, ((a, b), c)) in want.iter().zip(&got).zip(&lib).enumerate() {
        assert!(
            same(*a, *b) && same(*a, *c),
            "{packing:?} {rows}x{cols} n={n} class {class} seed {seed}: out[{k}] naive {a:e} ({:#010x}) soft {b:e} ({:#010x}) matvec_batch {c:e}",
            a.to_bits(),
            b.to_bits()
        );
    }
}

#[test]
fn odd_shapes_every_packing_every_class() {
    let mut r = SplitMix64(0x0dd5_1a9e);
    let mut cases = 0;
    for packing in [Packing::Trit2, Packing::Base3, Packing::P3] {
        for class in 0..5 {
            for _ in 0..60 {
                let rows = 1 + (r.next_u64() % 37) as usize;
                let cols = 1 + (r.next_u64() % 90) as usize;
                let n = 1 + (r.next_u64() % 11) as usize;
                let pad = (r.next_u64() % 3) as usize;
                run_case(r.next_u64(), rows, cols, n, packing, class, pad);
                cases += 1;
            }
        }
    }
    assert_eq!(cases, 900);
}

/// The model's shapes (D = 64 columns), many vectors.
#[test]
fn model_shapes() {
    for (rows, cols) in [(64, 64), (16, 64), (3, 64), (256, 64)] {
        for class in 0..5 {
            run_case(rows as u64 * 31 + class, rows, cols, 32, Packing::Trit2, class, 0);
            run_case(rows as u64 * 37 + class, rows, cols, 9, Packing::Base3, class, 0);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]
    #[test]
    fn random_tensors(seed in any::<u64>(), rows in 1usize..40, cols in 1usize..100, n in 1usize..10, p in 0usize..3, class in 0u64..5) {
        let packing = [Packing::Trit2, Packing::Base3, Packing::P3][p];
        run_case(seed, rows, cols, n, packing, class, 0);
    }
}
