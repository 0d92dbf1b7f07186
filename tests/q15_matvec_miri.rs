//! Small deterministic q15 matvec cases for Miri (the unchecked row loop
//! of the pair tables, the AVX2 loads and stores when built with
//! `-C target-feature=+avx2`): every kernel against `matvec_q_naive`,
//! with whole, short and overlapping buffers.
//!
//! `MIRI_TESTS=q15_matvec_miri scripts/miri.sh`
use atome::format::{Packing, Tensor};
use atome::kernels::isa::Accel;
use atome::kernels::q15::matvec::{matvec_q, matvec_q_multi, matvec_q_naive, matvec_q_portable, MvJobQ};

fn rnd(s: &mut u32) -> u32 {
    *s = s.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
    *s >> 8
}

type Kernel = fn(&Tensor, &[i16], usize, usize, &mut [i32], usize);

#[test]
fn small_cases_every_kernel() {
    let mut s = 7u32;
    // Clean: Trit2 without the unused code 10, as encoders write it (the
    // AVX2 shift-decode kernels run only then).
    for (p, clean) in Packing::ALL.iter().flat_map(|&p| [(p, false), (p, true)]) {
        // (rows, cols, n, xextra, ostride delta, xs cut, out cut)
        for &(rows, cols, n, xe, od, xcut, ocut) in &[
            (9usize, 36usize, 3usize, 0usize, 0isize, 0usize, 0usize),
            (8, 16, 2, 2, 1, 0, 0),
            (10, 20, 2, 0, 0, 5, 0),
            (9, 40, 2, 1, 0, 0, 7),
            (3, 7, 2, 0, 0, 0, 0),
            (12, 32, 3, 0, -6, 0, 0),
            (9, 256 + 20, 1, 0, 0, 0, 0),
            (13, 32, 3, 1, 0, 0, 0),
            (14, 16, 2, 0, 1, 0, 0),
            (5, 48, 1, 0, 0, 0, 0),
            // The AVX2 wide kernel (whole blocks of 128 columns, n <= 2).
            (9, 256, 1, 0, 0, 0, 0),
            (3, 128, 2, 3, 0, 0, 0),
        ] {
            let full = p.payload_len(rows * cols);
            let data: Vec<u8> = (0..full)
                .map(|_| rnd(&mut s) as u8)
                .map(|b| if clean && p == Packing::Trit2 { b | ((b >> 1) & 0x55) } else { b })
                .collect();
            let w = Tensor { data: &data, scale: 1.0, rows, cols, packing: p };
            let xstride = cols + xe;
            let ostride = (rows as isize + od) as usize;
            let xs: Vec<i16> =
                (0..((n - 1) * xstride + cols).saturating_sub(xcut)).map(|_| ((rnd(&mut s) % 65535) as i32 - 32767) as i16).collect();
            let olen = ((n - 1) * ostride + rows).saturating_sub(ocut);
            let mut want = vec![-1i32; olen];
            matvec_q_naive(&w, &xs, xstride, n, &mut want, ostride);
            for k in [matvec_q as Kernel, matvec_q_portable] {
                let mut got = vec![-1i32; olen];
                k(&w, &xs, xstride, n, &mut got, ostride);
                assert_eq!(got, want, "{p:?} {rows}x{cols} n={n} clean={clean}");
            }
            if ostride >= rows {
                let mut got = vec![-1i32; olen];
                let mut got2 = vec![-1i32; olen];
                let mut jobs = [MvJobQ { w: &w, out: &mut got, ostride }, MvJobQ { w: &w, out: &mut got2, ostride }];
                matvec_q_multi(Accel::detect(), &mut jobs, &xs, xstride, n);
                assert_eq!(got, want);
                assert_eq!(got2, want);
            }
        }
    }
}
