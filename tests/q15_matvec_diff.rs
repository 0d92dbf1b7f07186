//! Differential test of the q15 integer matvec: every kernel (the run-time
//! choice, which is AVX2 on an x86-64 host that has it, and the portable
//! kernels microcontrollers run) against `matvec_q_naive`, the plain
//! definition, over the whole output buffer (what must not be written
//! keeps its sentinel). Integer sums: the results must be equal, not close.
use atome::format::{Packing, Tensor};
use atome::kernels::isa::Accel;
use atome::kernels::q15::matvec::{matvec_q, matvec_q_accel, matvec_q_naive, matvec_q_portable, trit2_no_code10, TABLE_MIN_ROWS};
use proptest::prelude::*;

#[derive(Debug, Clone)]
struct Case {
    packing: Packing,
    rows: usize,
    cols: usize,
    n: usize,
    xstride: usize,
    ostride: usize,
    data: Vec<u8>,
    xs: Vec<i16>,
    out_len: usize,
}

/// Activations: mostly the extremes and small values, which find
/// sign and carry mistakes, else anything int16 holds.
fn value() -> impl Strategy<Value = i16> {
    prop_oneof![
        3 => Just(32767i16),
        3 => Just(-32767i16),
        1 => Just(-32768i16),
        2 => -3i16..=3,
        6 => any::<i16>(),
    ]
}

fn case() -> impl Strategy<Value = Case> {
    // cols: often a multiple of 4 (the table kernel), sometimes odd.
    let cols = prop_oneof![(1usize..80).prop_map(|c| 4 * c), 1usize..300];
    let rows = prop_oneof![1usize..TABLE_MIN_ROWS + 2, 1usize..70];
    // n: often one or two (the engine's per-position calls).
    let n = prop_oneof![1usize..3, 1usize..40];
    let shape = (0u8..3, rows, cols, n, 0usize..6, 0usize..6, 0u8..16, 0usize..4, 0u8..12, 0usize..9, any::<bool>());
    shape.prop_flat_map(|(pk, rows, cols, n, xextra, oextra, lenmode, extra, shortmode, cut, clean)| {
        let packing = Packing::from_tag(pk).unwrap();
        let full = packing.payload_len(rows * cols);
        // Mostly the exact payload or a few bytes more; sometimes short.
        let len = match lenmode {
            0 => full / 2,
            1 => full.saturating_sub(1),
            _ => full + extra,
        };
        let xstride = cols + xextra;
        // Sometimes overlapping output vectors (ostride < rows).
        let ostride = if shortmode == 0 { rows / 2 + oextra } else { rows + oextra };
        let xlen_full = (n - 1) * xstride + cols;
        let out_full = (n - 1) * ostride + rows;
        // Sometimes short inputs or outputs.
        let (xlen, out_len) = match shortmode {
            1 => (xlen_full.saturating_sub(cut * 7 + 1), out_full),
            2 => (xlen_full, out_full.saturating_sub(cut * 5 + 1)),
            3 => (xlen_full / 2, out_full / 3),
            _ => (xlen_full, out_full + extra),
        };
        let data = prop::collection::vec(any::<u8>(), len).prop_map(move |d| if clean { no_code10(d) } else { d });
        (data, prop::collection::vec(value(), xlen)).prop_map(move |(data, xs)| Case {
            packing,
            rows,
            cols,
            n,
            xstride,
            ostride,
            data,
            xs,
            out_len,
        })
    })
}

/// Trit2 payloads as encoders write them: the unused code `10` turned
/// into `11` (the AVX2 kernel takes another path when a `10` is present;
/// random bytes nearly always hold one). Other packings: any byte.
fn no_code10(d: Vec<u8>) -> Vec<u8> {
    d.into_iter().map(|b| b | ((b >> 1) & 0x55)).collect()
}

type Kernel = fn(&Tensor, &[i16], usize, usize, &mut [i32], usize);

fn run(c: &Case, k: Kernel) -> Vec<i32> {
    let w = Tensor { data: &c.data, scale: 1.0, rows: c.rows, cols: c.cols, packing: c.packing };
    let mut out = vec![0x5A5A_5A5Ai32; c.out_len];
    k(&w, &c.xs, c.xstride, c.n, &mut out, c.ostride);
    out
}

fn accel_none(w: &Tensor, xs: &[i16], xstride: usize, n: usize, out: &mut [i32], ostride: usize) {
    matvec_q_accel(Accel::default(), w, xs, xstride, n, out, ostride)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

    #[test]
    fn every_kernel_equals_the_definition(c in case()) {
        let want = run(&c, matvec_q_naive);
        prop_assert_eq!(&run(&c, matvec_q), &want, "matvec_q (run-time choice)");
        prop_assert_eq!(&run(&c, matvec_q_portable), &want, "portable kernels");
        prop_assert_eq!(&run(&c, accel_none), &want, "Accel without AVX2");
    }
}

/// The largest sums the contract allows, in every kernel: cols * 32767 for
/// ternary weights all +1 (or all -1), and 9 * 7281 * 32767 for P3.
#[test]
fn extreme_sums_are_exact() {
    for (p, code, cols, wv) in
        [(Packing::Trit2, 1u8, 4096usize, 1i64), (Packing::Trit2, 3, 4096, -1), (Packing::Trit2, 1, 512, 1), (Packing::Trit2, 3, 512, -1), (Packing::P3, 6, 7280, -9), (Packing::P3, 5, 7280, 9)]
    {
        let rows = 9;
        let mut data = vec![0u8; p.payload_len(rows * cols)];
        atome::format::pack(p, rows * cols, |_| match p {
            Packing::P3 => atome::format::P3_WEIGHTS[code as usize],
            _ => [0, 1, 0, -1][code as usize],
        }, &mut data)
        .unwrap();
        let w = Tensor { data: &data, scale: 1.0, rows, cols, packing: p };
        for x in [32767i16, -32767] {
            let xs = vec![x; 2 * cols];
            let want = (cols as i64 * wv * x as i64) as i32;
            assert_eq!(want as i64, cols as i64 * wv * x as i64, "the case stays inside int32");
            for k in [matvec_q as Kernel, matvec_q_portable, matvec_q_naive] {
                let mut out = vec![0i32; 2 * rows];
                k(&w, &xs, cols, 2, &mut out, rows);
                assert!(out.iter().all(|&o| o == want), "{p:?} x={x}: {:?} != {want}", &out[..3]);
            }
        }
    }
}

/// The real models' shapes (D = 32, 64, 256; 3, 16, 64, 256 rows), every
/// packing, a long batch: all kernels agree with the definition.
#[test]
fn model_shapes() {
    let mut s = 0x9E37_79B9_7F4A_7C15u64;
    let mut rnd = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    for p in Packing::ALL {
        // n = 1 and 2: the engine's calls (on AVX2 the fused kernels, for
        // cols a multiple of 128 the wide one, up to 512 columns).
        let shapes = [(3, 64), (16, 64), (64, 64), (256, 64), (64, 256), (256, 256), (8, 32), (13, 128), (9, 384), (7, 512), (5, 640)];
        for ((rows, cols), n) in shapes.into_iter().flat_map(|sh| [(sh, 1), (sh, 2), (sh, 70)]) {
            let data: Vec<u8> = (0..p.payload_len(rows * cols)).map(|_| match p {
                Packing::Base3 => (rnd() % 243) as u8,
                Packing::Trit2 => {
                    // As the encoders write it (no code 10).
                    let b = rnd() as u8;
                    b | ((b >> 1) & 0x55)
                }
                _ => rnd() as u8,
            }).collect();
            let xs: Vec<i16> = (0..n * cols).map(|_| ((rnd() % 65535) as i32 - 32767) as i16).collect();
            let c = Case { packing: p, rows, cols, n, xstride: cols, ostride: rows, data, xs, out_len: n * rows };
            let want = run(&c, matvec_q_naive);
            assert_eq!(run(&c, matvec_q), want, "{p:?} {rows}x{cols} n={n}");
            assert_eq!(run(&c, matvec_q_portable), want, "{p:?} {rows}x{cols} n={n} portable");
        }
    }
}

#[derive(Debug, Clone)]
struct Multi {
    cols: usize,
    n: usize,
    xs: Vec<i16>,
    /// (packing, rows, cols, ostride, payload, out length)
    jobs: Vec<(Packing, usize, usize, usize, Vec<u8>, usize)>,
}

fn multi() -> impl Strategy<Value = Multi> {
    let cols = prop_oneof![(1usize..40).prop_map(|c| 4 * c), 1usize..90];
    (cols, 1usize..20, 0usize..3).prop_flat_map(|(cols, n, xextra)| {
        // Mostly Trit2 of the shared width; sometimes another packing or width.
        let job = (0u8..8, 1usize..40, 0usize..4, 0u8..8, 0usize..3, any::<bool>()).prop_flat_map(move |(kind, rows, oextra, mode, cut, clean)| {
            let packing = if kind == 0 { Packing::Base3 } else if kind == 1 { Packing::P3 } else { Packing::Trit2 };
            let c = if kind == 2 { cols + 4 } else { cols };
            let ostride = if mode == 0 { rows / 2 + 1 } else { rows + oextra };
            let out_len = (n - 1) * ostride + rows;
            let out_len = if mode == 1 { out_len.saturating_sub(cut * 3 + 1) } else { out_len };
            let full = packing.payload_len(rows * c);
            let len = if mode == 2 { full / 2 } else { full };
            // Half the payloads as the encoders write them (no code 10),
            // so that the engine's checked path runs too.
            prop::collection::vec(any::<u8>(), len)
                .prop_map(move |d| (packing, rows, c, ostride, if clean { no_code10(d) } else { d }, out_len))
        });
        (prop::collection::vec(job, 1..5), prop::collection::vec(value(), (n - 1) * (cols + xextra) + cols))
            .prop_map(move |(jobs, xs)| Multi { cols: cols + xextra, n, xs, jobs })
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1500, ..ProptestConfig::default() })]

    /// matvec_q_multi equals one naive call per matrix.
    #[test]
    fn multi_equals_one_call_per_matrix(m in multi()) {
        use atome::kernels::q15::matvec::{matvec_q_multi, matvec_q_multi_checked, MvJobQ};
        let ts: Vec<Tensor> = m.jobs.iter().map(|(p, r, c, _, d, _)| Tensor { data: d, scale: 1.0, rows: *r, cols: *c, packing: *p }).collect();
        let mut want: Vec<Vec<i32>> = m.jobs.iter().map(|j| vec![0x5A5A_5A5A; j.5]).collect();
        for ((t, j), o) in ts.iter().zip(&m.jobs).zip(want.iter_mut()) {
            matvec_q_naive(t, &m.xs, m.cols, m.n, o, j.3);
        }
        for acc in [Accel::default(), Accel::detect()] {
            let mut got: Vec<Vec<i32>> = m.jobs.iter().map(|j| vec![0x5A5A_5A5A; j.5]).collect();
            let mut jobs: Vec<MvJobQ> =
                ts.iter().zip(&m.jobs).zip(got.iter_mut()).map(|((w, j), out)| MvJobQ { w, out, ostride: j.3 }).collect();
            matvec_q_multi(acc, &mut jobs, &m.xs, m.cols, m.n);
            drop(jobs);
            prop_assert_eq!(&got, &want);
            // As the engine runs it: the payloads checked once, the kernels
            // told so.
            let checked = ts.iter().all(|w| trit2_no_code10(acc, w));
            let mut got: Vec<Vec<i32>> = m.jobs.iter().map(|j| vec![0x5A5A_5A5A; j.5]).collect();
            let mut jobs: Vec<MvJobQ> =
                ts.iter().zip(&m.jobs).zip(got.iter_mut()).map(|((w, j), out)| MvJobQ { w, out, ostride: j.3 }).collect();
            matvec_q_multi_checked(acc, &mut jobs, &m.xs, m.cols, m.n, checked);
            drop(jobs);
            prop_assert_eq!(&got, &want, "checked = {}", checked);
        }
    }

    /// trit2_no_code10 is its definition, with and without AVX2.
    #[test]
    fn no_code10_check(d in prop::collection::vec(any::<u8>(), 0..300), clean in any::<bool>(), plant in prop::option::of((any::<prop::sample::Index>(), 0u32..4)), rows in 1usize..20, cols in 1usize..70) {
        let mut d = if clean { no_code10(d) } else { d };
        // (One code 10 anywhere in a clean payload: the word scan's every
        // lane and the tail bytes.)
        if let (true, Some((i, k)), false) = (clean, plant, d.is_empty()) {
            let at = i.index(d.len());
            let b = &mut d[at];
            *b = (*b & !(3 << (2 * k))) | (2 << (2 * k));
        }
        let w = Tensor { data: &d, scale: 1.0, rows, cols, packing: Packing::Trit2 };
        let len = (rows * cols).div_ceil(4).min(d.len());
        let want = !d[..len].iter().any(|&b| (0..4).any(|k| (b >> (2 * k)) & 3 == 2));
        for acc in [Accel::default(), Accel::detect()] {
            prop_assert_eq!(trit2_no_code10(acc, &w), want);
            let p3 = Tensor { packing: Packing::P3, ..w };
            prop_assert!(!trit2_no_code10(acc, &p3), "not Trit2");
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1500, ..ProptestConfig::default() })]

    /// The byte tables (one position) equal one naive call per matrix
    /// where they apply (two or four tables a pass, by the room lent),
    /// write nothing where they do not, and leave no trace of the tables'
    /// previous contents.
    #[test]
    fn byte_tables_equal_the_definition(m in multi(), junk in any::<i32>(), room in prop_oneof![Just(0usize), 1usize..300, Just(768), 768usize..900]) {
        use atome::kernels::q15::matvec::{matvec_q_bytes, MvJobQ};
        let ts: Vec<Tensor> = m.jobs.iter().map(|(p, r, c, _, d, _)| Tensor { data: d, scale: 1.0, rows: *r, cols: *c, packing: *p }).collect();
        let x = &m.xs[..m.xs.len().min(m.cols)];
        let mut want: Vec<Vec<i32>> = m.jobs.iter().map(|j| vec![0x5A5A_5A5A; j.5]).collect();
        for (t, o) in ts.iter().zip(want.iter_mut()) {
            matvec_q_naive(t, x, m.cols, 1, o, t.rows);
        }
        let mut t0 = [junk; 256];
        let mut more = vec![junk.rotate_left(7); room];
        let mut got: Vec<Vec<i32>> = m.jobs.iter().map(|j| vec![0x5A5A_5A5A; j.5]).collect();
        let mut jobs: Vec<MvJobQ> = ts.iter().zip(got.iter_mut()).map(|(w, out)| MvJobQ { w, out, ostride: w.rows }).collect();
        let ran = matvec_q_bytes(&mut jobs, x, &mut t0, &mut more, false);
        drop(jobs);
        // Where no payload holds the code 10, the clean tables (81 entries
        // built, the rest junk) give the same sums.
        if ts.iter().all(|w| trit2_no_code10(Accel::default(), w)) {
            let mut t0 = [junk.rotate_left(3); 256];
            let mut more = vec![junk.rotate_left(11); room];
            let mut got2: Vec<Vec<i32>> = m.jobs.iter().map(|j| vec![0x5A5A_5A5A; j.5]).collect();
            let mut jobs: Vec<MvJobQ> = ts.iter().zip(got2.iter_mut()).map(|(w, out)| MvJobQ { w, out, ostride: w.rows }).collect();
            prop_assert_eq!(matvec_q_bytes(&mut jobs, x, &mut t0, &mut more, true), ran);
            drop(jobs);
            prop_assert_eq!(&got2, &got);
        }
        let applies = room >= 256 && ts.iter().all(|w| {
            w.packing == Packing::Trit2 && w.cols == ts[0].cols && w.cols % 8 == 0 && w.cols > 0 && x.len() >= w.cols && w.data.len() >= w.rows * w.cols / 4
        }) && m.jobs.iter().all(|j| j.5 >= j.1);
        prop_assert_eq!(ran, applies);
        if ran {
            prop_assert_eq!(&got, &want);
        } else {
            prop_assert!(got.iter().all(|o| o.iter().all(|&v| v == 0x5A5A_5A5A)));
        }
    }
}
