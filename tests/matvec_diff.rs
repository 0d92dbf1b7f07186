//! Differential test of the batched matvec (the x86-64 fast path when the
//! CPU has AVX2, else the portable path) against the naive implementation
//! in tests/naive_matvec, written from the contract (docs/) / CONTRACT text, bit for bit (NaN == NaN).
//!
//! docs/ARITHMETIC.md: row j: acc = +0.0; for i = 0..cols-1: +1: acc = acc + x[i];
//! -1: acc = acc - x[i]; 0: nothing; y[j] = acc * scale.
//! ATOMEP3 (docs/CONTRACT.md): w != 0: acc = acc + ((float)w * x[i]).
use atome::forward::sample::SplitMix64;
use atome::format::{Packing, Tensor};
use atome::kernels::matvec::matvec_batch;
use proptest::prelude::*;

mod naive_matvec;
use naive_matvec::*;
#[cfg(not(atome_portable))]
use std::sync::atomic::{AtomicUsize, Ordering};

#[derive(Debug, Clone)]
struct Case {
    packing: Packing,
    rows: usize,
    cols: usize,
    n: usize,
    xstride: usize,
    ostride: usize,
    data: Vec<u8>,
    xs: Vec<f32>,
    scale: f32,
}

fn case() -> impl Strategy<Value = Case> {
    let shape = (0u8..3, 1usize..40, 1usize..300, 1usize..17, 0usize..6, 0usize..6, 0u8..16, 0usize..4);
    shape.prop_flat_map(|(pk, rows, cols, n, xextra, oextra, lenmode, extra)| {
        let packing = Packing::from_tag(pk).unwrap();
        let full = packing.payload_len(rows * cols);
        // Mostly the exact payload or a few bytes more; sometimes a short one.
        let len = match lenmode {
            0 => full / 2,
            1 => full.saturating_sub(1),
            _ => full + extra,
        };
        let byte = match packing {
            Packing::Base3 => (0u8..=242).boxed(),
            _ => any::<u8>().boxed(),
        };
        let xstride = cols + xextra;
        let ostride = rows + oextra;
        (
            prop::collection::vec(byte, len),
            prop::collection::vec(value(), (n - 1) * xstride + cols),
            scale(),
        )
            .prop_map(move |(data, xs, scale)| Case {
                packing,
                rows,
                cols,
                n,
                xstride,
                ostride,
                data,
                xs,
                scale,
            })
    })
}

/// Runs `f` on a sentinel-filled output and checks it against the naive
/// result: rows < W.rows of every vector equal, everything else untouched.
fn check(c: &Case, out: &[f32]) -> Result<(), TestCaseError> {
    let w = (c.packing, &c.data[..], c.rows, c.cols, c.scale);
    for b in 0..c.n {
        let x = &c.xs[b * c.xstride..][..c.cols];
        for j in 0..c.rows {
            let want = naive_row(w.0, w.1, w.2, w.3, w.4, x, j);
            let got = out[b * c.ostride + j];
            prop_assert!(
                same(got, want),
                "vector {} row {}: got {:e} ({:#x}), want {:e} ({:#x})",
                b,
                j,
                got,
                got.to_bits(),
                want,
                want.to_bits()
            );
        }
    }
    for (i, v) in out.iter().enumerate() {
        if i % c.ostride >= c.rows || i / c.ostride >= c.n {
            prop_assert_eq!(v.to_bits(), SENTINEL, "out[{}] written", i);
        }
    }
    Ok(())
}

#[cfg(not(atome_portable))]
static FAST_TAKEN: AtomicUsize = AtomicUsize::new(0);

fn run_case(c: &Case) -> Result<(), TestCaseError> {
    let tensor = Tensor {
        data: &c.data,
        scale: c.scale,
        rows: c.rows,
        cols: c.cols,
        packing: c.packing,
    };
    // One spare stride at the end to see stray writes.
    let olen = c.n * c.ostride + 3;
    let mut out = vec![f32::from_bits(SENTINEL); olen];
    matvec_batch(&tensor, &c.xs, c.xstride, c.n, &mut out, c.ostride);
    check(c, &out)?;
    // The fast path on its own: either exact, or false with nothing written.
    #[cfg(not(atome_portable))]
    {
        let mut fast = vec![f32::from_bits(SENTINEL); olen];
        if atome::kernels::x86::matvec_batch(&tensor, &c.xs, c.xstride, c.n, &mut fast, c.ostride) {
            FAST_TAKEN.fetch_add(1, Ordering::Relaxed);
            check(c, &fast)?;
        } else {
            prop_assert!(fast.iter().all(|v| v.to_bits() == SENTINEL), "fast path returned false after writing");
        }
    }
    Ok(())
}

proptest! {
    // Fewer cases unoptimized (`cargo test`); `--release` runs the full set.
    #![proptest_config(ProptestConfig { cases: if cfg!(debug_assertions) { 300 } else { 2000 }, ..ProptestConfig::default() })]

    #[test]
    fn batched_matvec_matches_naive(c in case()) {
        run_case(&c)?;
    }
}

/// An input value for the larger fixed shapes (the library's splitmix64):
/// often special (any bits, -0, subnormal, huge, tiny), else plain.
fn draw_value(rng: &mut SplitMix64) -> f32 {
    match rng.next_u64() % 16 {
        0 => f32::from_bits(rng.next_u64() as u32),
        1 => -0.0,
        2 => f32::from_bits((rng.next_u64() as u32) & 0x807f_ffff), // subnormal or zero
        3 => 3.0e38,
        _ => ((rng.next_u64() % 20001) as f32 / 1000.0 - 10.0) * if rng.next_u64().is_multiple_of(3) { 1.0e-20 } else { 1.0 },
    }
}

/// Bigger matrices than the property test reaches: several column chunks
/// for every batch size, row blocks plus a partial group, 1..=20 vectors.
#[test]
fn larger_shapes_match_naive() {
    let mut rng = SplitMix64(0x9e37_79b9_7f4a_7c15);
    let shapes = [(256, 256), (64, 1100), (100, 257), (17, 1201), (8, 613), (33, 96), (3, 640), (255, 130)];
    for &(rows, cols) in &shapes {
        for packing in [Packing::Trit2, Packing::Base3, Packing::P3] {
            for &n in &[1usize, 2, 3, 4, 7, 8, 9, 16, 20] {
                let len = packing.payload_len(rows * cols);
                let data: Vec<u8> = (0..len)
                    .map(|_| match packing {
                        Packing::Base3 => (rng.next_u64() % 243) as u8,
                        _ => rng.next_u64() as u8,
                    })
                    .collect();
                let xstride = cols + (rng.next_u64() % 3) as usize;
                let ostride = rows + (rng.next_u64() % 3) as usize;
                let xs: Vec<f32> = (0..(n - 1) * xstride + cols).map(|_| draw_value(&mut rng)).collect();
                let c = Case {
                    packing,
                    rows,
                    cols,
                    n,
                    xstride,
                    ostride,
                    data,
                    xs,
                    scale: 0.75,
                };
                if let Err(e) = run_case(&c) {
                    panic!("{packing:?} {rows}x{cols} n={n}: {e}");
                }
            }
        }
    }
}

/// On a CPU with AVX2 the fast path must actually be taken for the usual
/// shapes (otherwise the tests above only cover the portable path).
#[cfg(not(atome_portable))]
#[test]
fn fast_path_taken_with_avx2() {
    if avx2_or_skip("fast_path_taken_with_avx2").is_none() {
        return;
    }
    let data = vec![0x5bu8; 64 * 64 / 4];
    let xs = vec![1.0f32; 64];
    let mut out = vec![0.0f32; 64];
    for packing in [Packing::Trit2, Packing::Base3, Packing::P3] {
        let data = &data[..];
        let full: Vec<u8>;
        let data = if data.len() < packing.payload_len(64 * 64) {
            full = vec![0x5b; packing.payload_len(64 * 64)];
            &full[..]
        } else {
            data
        };
        let t = Tensor {
            data,
            scale: 1.0,
            rows: 64,
            cols: 64,
            packing,
        };
        assert!(atome::kernels::x86::matvec_batch(&t, &xs, 64, 1, &mut out, 64), "{packing:?}");
    }
    let before = FAST_TAKEN.load(Ordering::Relaxed);
    let c = Case {
        packing: Packing::Trit2,
        rows: 9,
        cols: 33,
        n: 2,
        xstride: 33,
        ostride: 9,
        data: vec![0x9d; 75],
        xs: vec![0.5; 66],
        scale: 1.0,
    };
    run_case(&c).unwrap();
    assert!(FAST_TAKEN.load(Ordering::Relaxed) > before);
}

/// Base3 bytes above 242 (rejected by the loader, but a Tensor can hold
/// them): every path decodes them digit by digit like the naive code.
#[test]
fn base3_bytes_above_242_match_naive() {
    let mut rng = SplitMix64(0x0123_4567_89ab_cdef);
    for &(rows, cols, n) in &[(16usize, 37usize, 1usize), (9, 250, 4), (40, 61, 8), (3, 300, 2)] {
        let len = Packing::Base3.payload_len(rows * cols);
        let data: Vec<u8> = (0..len).map(|_| 243 + (rng.next_u64() % 13) as u8).collect();
        let xs: Vec<f32> = (0..n * cols).map(|_| draw_value(&mut rng)).collect();
        let c = Case {
            packing: Packing::Base3,
            rows,
            cols,
            n,
            xstride: cols,
            ostride: rows,
            data,
            xs,
            scale: -1.5,
        };
        if let Err(e) = run_case(&c) {
            panic!("{rows}x{cols} n={n}: {e}");
        }
    }
}
