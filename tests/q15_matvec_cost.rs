//! The matvec work of S1 (944K model: D=256, DH=64, L=8, V=256; 64
//! positions): per layer one `matvec_q_multi_checked` over Wq, Wk (64 x 256), Wv
//! (256 x 256) and the router (3 x 256) for 64 positions, then the head
//! (256 x 256) for one position: 50,790,400 weight terms; each layer's
//! matrices checked for code 10 once, as the engine does. Random Trit2
//! weights and activations. Run under callgrind to count the kernel's
//! instructions (ignored in the normal test run):
//!
//! ```text
//! cargo test --release --test q15_matvec_cost --no-run
//! valgrind --tool=callgrind --callgrind-out-file=cg.out \
//!     target/release/deps/q15_matvec_cost-<hash> --ignored --exact s1_matvec_work
//! callgrind_annotate --inclusive=yes cg.out | grep 'avx2::matvec \['
//! ```
//! (`matvec_q_multi_checked` and `matvec_q_accel` are inlined into the test, so
//! `--toggle-collect` on them collects nothing; on an AVX2 host the
//! inclusive count of `avx2::matvec` is the kernels' work.)
//! `s1_matvec_per_position` does the same work one position per call
//! (n = 1, as an engine that runs position by position calls it).
//! The test itself checks a sample of the results against the naive
//! definition (outside the collected functions).
use atome::format::{Packing, Tensor};
use atome::kernels::isa::Accel;
use atome::kernels::q15::matvec::{matvec_q_accel, matvec_q_multi_checked, matvec_q_naive, trit2_no_code10, MvJobQ};

fn rnd(s: &mut u64) -> u64 {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    *s
}

fn trit2(rows: usize, cols: usize, s: &mut u64) -> Vec<u8> {
    (0..rows * cols / 4)
        .map(|_| {
            let r = rnd(s);
            (0..4).fold(0u8, |b, k| b | ([0u8, 1, 3][((r >> (8 * k)) % 3) as usize] << (2 * k)))
        })
        .collect()
}

/// S1's matvec work with `per_call` positions per `matvec_q_multi_checked` call
/// (64: the whole window at once; 1: position by position), a sample of
/// each layer's results and the head checked against the naive kernel.
fn s1_work(per_call: usize) {
    let (d, dh, l, v, n) = (256usize, 64usize, 8usize, 256usize, 64usize);
    let mut s = 0x1234_5678_9ABC_DEF1u64;
    let acc = Accel::detect();
    let xs: Vec<i16> = (0..n * d).map(|_| ((rnd(&mut s) % 65535) as i32 - 32767) as i16).collect();
    let mut terms = 0usize;
    for _ in 0..l {
        let (dq, dk, dv, dr) = (trit2(dh, d, &mut s), trit2(dh, d, &mut s), trit2(d, d, &mut s), trit2(3, d, &mut s));
        let t = |data, rows| Tensor { data, scale: 1.0, rows, cols: d, packing: Packing::Trit2 };
        let (wq, wk, wv, wr) = (t(&dq[..], dh), t(&dk[..], dh), t(&dv[..], d), t(&dr[..], 3));
        let m = per_call;
        // As the engine: the layer's payloads checked for code 10 once.
        let clean = [&wq, &wk, &wv, &wr].into_iter().all(|w| trit2_no_code10(acc, w));
        let (mut q, mut k, mut vv, mut r) = (vec![0i32; m * dh], vec![0i32; m * dh], vec![0i32; m * d], vec![0i32; m * 3]);
        for p in (0..n).step_by(m) {
            let mut jobs = [
                MvJobQ { w: &wq, out: &mut q, ostride: dh },
                MvJobQ { w: &wk, out: &mut k, ostride: dh },
                MvJobQ { w: &wv, out: &mut vv, ostride: d },
                MvJobQ { w: &wr, out: &mut r, ostride: 3 },
            ];
            matvec_q_multi_checked(acc, &mut jobs, &xs[p * d..], d, m, clean);
            terms += (2 * dh + d + 3) * d * m;
        }
        // A sample checked: the last position of Wv (the last call's last row).
        let mut want = vec![0i32; d];
        matvec_q_naive(&wv, &xs[(n - 1) * d..], d, 1, &mut want, d);
        assert_eq!(&vv[(m - 1) * d..], &want[..]);
    }
    let dh_ = trit2(v, d, &mut s);
    let head = Tensor { data: &dh_, scale: 1.0, rows: v, cols: d, packing: Packing::Trit2 };
    let mut logits = vec![0i32; v];
    matvec_q_accel(acc, &head, &xs[..d], d, 1, &mut logits, v);
    terms += v * d;
    let mut want = vec![0i32; v];
    matvec_q_naive(&head, &xs[..d], d, 1, &mut want, v);
    assert_eq!(logits, want);
    assert_eq!(terms, 50_790_400);
}

#[test]
#[ignore]
fn s1_matvec_work() {
    s1_work(64);
}

#[test]
#[ignore]
fn s1_matvec_per_position() {
    s1_work(1);
}
