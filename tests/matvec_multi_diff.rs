//! Differential test of `x86::matvec_multi_with`, the AVX2 kernel the
//! forward pass calls on x86-64 (several matrices of one packing and column
//! count over the same input vectors, sharing the per-column tables), against
//! the naive matvec of tests/naive_matvec, bit for bit (NaN == NaN).
//!
//! It must take the fast path (return true) exactly when every job's shape is
//! supported, write only the rows of each job's outputs, and write nothing
//! when it returns false. Without AVX2 it skips, or fails with CI=true.
#![cfg(not(atome_portable))]
use atome::forward::sample::SplitMix64;
use atome::format::{Packing, Tensor};
use atome::kernels::matvec::MvJob;
use atome::kernels::x86::{matvec_multi_with, Avx2};
use proptest::prelude::*;

mod naive_matvec;
use naive_matvec::*;

/// One matrix of a multi call.
#[derive(Debug, Clone)]
struct Mat {
    rows: usize,
    ostride: usize,
    data: Vec<u8>,
    scale: f32,
}

#[derive(Debug, Clone)]
struct Multi {
    packing: Packing,
    cols: usize,
    n: usize,
    xstride: usize,
    xs: Vec<f32>,
    mats: Vec<Mat>,
}

impl Multi {
    /// What the kernel promises to handle: every payload complete.
    fn supported(&self) -> bool {
        self.mats.iter().all(|m| m.data.len() >= self.packing.payload_len(m.rows * self.cols))
    }
}

fn mat(packing: Packing, cols: usize, n: usize) -> impl Strategy<Value = Mat> {
    (1usize..40, 0usize..4, 0u8..12, 0usize..3, scale()).prop_flat_map(move |(rows, oextra, lenmode, extra, scale)| {
        let full = packing.payload_len(rows * cols);
        // Mostly complete payloads (the fast path), sometimes one byte short.
        let len = if lenmode == 0 { full.saturating_sub(1) } else { full + extra };
        let byte = match packing {
            Packing::Base3 => (0u8..=242).boxed(),
            _ => any::<u8>().boxed(),
        };
        let ostride = if n > 1 { rows + oextra } else { rows };
        prop::collection::vec(byte, len).prop_map(move |data| Mat { rows, ostride, data, scale })
    })
}

fn multi() -> impl Strategy<Value = Multi> {
    // n up to 12: more vectors than one pass of the kernel holds (8).
    (0u8..3, 1usize..300, 1usize..13, 0usize..4, 1usize..=4).prop_flat_map(|(pk, cols, n, xextra, jobs)| {
        let packing = Packing::from_tag(pk).unwrap();
        let xstride = cols + xextra;
        (prop::collection::vec(value(), (n - 1) * xstride + cols), prop::collection::vec(mat(packing, cols, n), jobs))
            .prop_map(move |(xs, mats)| Multi { packing, cols, n, xstride, xs, mats })
    })
}

/// Runs the kernel on sentinel-filled outputs (one spare stride each) and
/// returns what it returned and the outputs.
fn run(cpu: Avx2, c: &Multi) -> (bool, Vec<Vec<f32>>) {
    let tensors: Vec<Tensor> = c
        .mats
        .iter()
        .map(|m| Tensor { data: &m.data, scale: m.scale, rows: m.rows, cols: c.cols, packing: c.packing })
        .collect();
    let mut outs: Vec<Vec<f32>> =
        c.mats.iter().map(|m| vec![f32::from_bits(SENTINEL); c.n * m.ostride + 3]).collect();
    let mut jobs: Vec<MvJob> = tensors
        .iter()
        .zip(outs.iter_mut())
        .zip(&c.mats)
        .map(|((w, out), m)| MvJob { w, out: &mut out[..], ostride: m.ostride })
        .collect();
    let took = matvec_multi_with(cpu, &mut jobs, &c.xs, c.xstride, c.n);
    drop(jobs);
    (took, outs)
}

fn check(cpu: Avx2, c: &Multi) -> Result<(), TestCaseError> {
    let (took, outs) = run(cpu, c);
    prop_assert_eq!(took, c.supported(), "fast path taken: {}, supported: {}", took, c.supported());
    for (k, (m, out)) in c.mats.iter().zip(&outs).enumerate() {
        for (i, v) in out.iter().enumerate() {
            let (b, j) = (i / m.ostride, i % m.ostride);
            if took && b < c.n && j < m.rows {
                let x = &c.xs[b * c.xstride..][..c.cols];
                let want = naive_row(c.packing, &m.data, m.rows, c.cols, m.scale, x, j);
                prop_assert!(
                    same(*v, want),
                    "job {} vector {} row {}: got {:e} ({:#x}), want {:e} ({:#x})",
                    k, b, j, v, v.to_bits(), want, want.to_bits()
                );
            } else {
                prop_assert_eq!(v.to_bits(), SENTINEL, "job {} out[{}] written", k, i);
            }
        }
    }
    Ok(())
}

proptest! {
    // Fewer cases unoptimized (`cargo test`); `--release` runs the full set.
    #![proptest_config(ProptestConfig { cases: if cfg!(debug_assertions) { 200 } else { 1500 }, ..ProptestConfig::default() })]

    #[test]
    fn multi_matches_naive(c in multi()) {
        if let Some(cpu) = avx2_or_skip("multi_matches_naive") {
            check(cpu, &c)?;
        }
    }
}

fn rng_case(rng: &mut SplitMix64, packing: Packing, cols: usize, n: usize, rows: &[usize]) -> Multi {
    let mut value = || match rng.next_u64() % 16 {
        0 => f32::from_bits(rng.next_u64() as u32),
        1 => -0.0,
        2 => f32::from_bits((rng.next_u64() as u32) & 0x807f_ffff),
        _ => (rng.next_u64() % 20001) as f32 / 1000.0 - 10.0,
    };
    let xs: Vec<f32> = (0..n * cols).map(|_| value()).collect();
    let mats = rows
        .iter()
        .map(|&r| Mat {
            rows: r,
            ostride: r,
            data: (0..packing.payload_len(r * cols))
                .map(|_| match packing {
                    Packing::Base3 => (rng.next_u64() % 243) as u8,
                    _ => rng.next_u64() as u8,
                })
                .collect(),
            scale: 0.5,
        })
        .collect();
    Multi { packing, cols, n, xstride: cols, xs, mats }
}

/// The shapes the forward pass uses (the default and 944K configurations:
/// q/k/v-style groups of 2-4 matrices over D = 64 or 256 columns, up to S
/// vectors), in every packing.
#[test]
fn model_shapes_match_naive() {
    let Some(cpu) = avx2_or_skip("model_shapes_match_naive") else { return };
    let mut rng = SplitMix64(0x005e_ed0f_a70e);
    for packing in [Packing::Trit2, Packing::Base3, Packing::P3] {
        for (cols, rows, n) in [
            (64usize, &[64usize, 64, 64][..], 32usize),
            (64, &[16, 16], 1),
            (64, &[64, 16, 16, 64], 9),
            (256, &[256, 64, 64], 64),
            (256, &[256], 3),
            (1100, &[17, 33], 5),
        ] {
            let c = rng_case(&mut rng, packing, cols, n, rows);
            if let Err(e) = check(cpu, &c) {
                panic!("{packing:?} cols={cols} rows={rows:?} n={n}: {e}");
            }
        }
    }
}

/// Calls the kernel must refuse, writing nothing: more than 4 jobs, jobs of
/// different packings or column counts.
#[test]
fn refuses_mixed_or_too_many_jobs() {
    let Some(cpu) = avx2_or_skip("refuses_mixed_or_too_many_jobs") else { return };
    let mut rng = SplitMix64(42);
    let five = rng_case(&mut rng, Packing::Trit2, 32, 2, &[8, 8, 8, 8, 8]);
    let (took, outs) = run(cpu, &five);
    assert!(!took && outs.iter().flatten().all(|v| v.to_bits() == SENTINEL), "5 jobs");
    let four = Multi { mats: five.mats[..4].to_vec(), ..five.clone() };
    assert!(run(cpu, &four).0, "4 jobs are supported");

    let a = rng_case(&mut rng, Packing::Trit2, 32, 2, &[8]);
    let b = rng_case(&mut rng, Packing::P3, 32, 2, &[8]);
    let xs = a.xs.clone();
    let ta = Tensor { data: &a.mats[0].data, scale: 1.0, rows: 8, cols: 32, packing: Packing::Trit2 };
    let tb = Tensor { data: &b.mats[0].data, scale: 1.0, rows: 8, cols: 32, packing: Packing::P3 };
    let tc = Tensor { data: &a.mats[0].data, scale: 1.0, rows: 4, cols: 64, packing: Packing::Trit2 };
    for (name, other) in [("packings", &tb), ("column counts", &tc)] {
        let (mut o1, mut o2) = (vec![f32::from_bits(SENTINEL); 16], vec![f32::from_bits(SENTINEL); 16]);
        let mut jobs = [MvJob { w: &ta, out: &mut o1[..], ostride: 8 }, MvJob { w: other, out: &mut o2[..], ostride: 8 }];
        assert!(!matvec_multi_with(cpu, &mut jobs, &xs, 32, 1), "mixed {name} accepted");
        assert!(o1.iter().chain(&o2).all(|v| v.to_bits() == SENTINEL), "mixed {name}: written");
    }
}
