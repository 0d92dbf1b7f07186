//! The q15 kernels' fast paths against their general (int64) paths on the
//! same inputs: the models of the numpy parity tests rarely reach the
//! general ones.
use super::conv::conv_sums_impl;
use super::mix::{mix_impl, State};
use super::norm::{layer_norm_impl, row_stats};
use super::ssm::ssm_step_impl;
use crate::format::{Floats, Packing, Tensor};
use crate::kernels::isa::Accel;
use crate::q15::arith::*;
use crate::q15::params::{PSrc, PVec, Scale, Vals};


struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        crate::test_rng::xorshift64(&mut self.0)
    }
    /// Uniform in [-2^bits + 1, 2^bits - 1].
    fn int(&mut self, bits: u32) -> i32 {
        let m = (1i64 << bits) - 1;
        ((self.next() % (2 * m as u64 + 1)) as i64 - m) as i32
    }
    fn f32s(&mut self, n: usize, spread: i32) -> [u8; 4 * 64] {
        let mut b = [0u8; 4 * 64];
        for i in 0..n {
            let v = self.int(20) as f32 * (2f32).powi(self.int(spread.max(0) as u32) - 20);
            b[4 * i..4 * i + 4].copy_from_slice(&v.to_le_bytes());
        }
        b
    }
}

#[test]
fn layer_norm_fast_equals_general() {
    let mut r = Rng(0x9E37_79B9_7F4A_7C15);
    for case in 0..20000 {
        let d = [1, 2, 3, 16, 22, 64][case % 6];
        // Magnitudes from a few units to the full 15 bits, constant
        // rows, zero rows.
        let bits = (r.next() % 16) as u32;
        let mut xm = [0i16; 64];
        let base = r.int(14);
        for x in xm.iter_mut().take(d) {
            *x = match case % 7 {
                0 => base as i16,
                1 => 0,
                _ => r.int(bits.max(1)).clamp(-32767, 32767) as i16,
            };
        }
        let ex = if case % 11 == 0 { E_ZERO } else { r.int(6) };
        let (gb, bb) = (r.f32s(d, (case % 5) as i32), r.f32s(d, (case % 3) as i32));
        let g = PSrc::new(PVec::new(Floats::new(&gb[..4 * d]), d, QA), None);
        let b = PSrc::new(PVec::new(Floats::new(&bb[..4 * d]), d, QA), None);
        let (mut w1, mut w2, mut o1, mut o2) = ([0i32; 64], [0i32; 64], [0i16; 64], [0i16; 64]);
        let e1 = layer_norm_impl::<false>(&xm[..d], ex, &g, &b, &mut w1[..d], &mut o1[..d]);
        let e2 = layer_norm_impl::<true>(&xm[..d], ex, &g, &b, &mut w2[..d], &mut o2[..d]);
        // The unquantized sums too (a one-unit error there rarely
        // reaches the output).
        assert_eq!((e1, &o1[..d], &w1[..d]), (e2, &o2[..d], &w2[..d]), "case {case}");
    }
}

#[test]
fn ssm_step_fast_equals_general() {
    let mut r = Rng(0x2545_F491_4F6C_DD1D);
    for case in 0..20000 {
        let d = [1, 5, 16, 64][case % 4];
        let mut hs = [0i32; 64];
        let mut h = [0i16; 64];
        let mut t = [0i32; 64];
        let hb = (r.next() % 31) as u32;
        for c in 0..d {
            hs[c] = r.int(hb.max(1)).clamp(-(1 << 30) + 1, (1 << 30) - 1);
            h[c] = r.int(15) as i16;
            t[c] = r.int(30);
        }
        let ehs = if case % 9 == 0 { E_ZERO } else { r.int(7) };
        let eh = if case % 13 == 0 { E_ZERO } else { r.int(7) };
        let bb = r.f32s(d, (case % 8) as i32 * 4);
        let sb = PSrc::new(PVec::new(Floats::new(&bb[..4 * d]), d, QP), None);
        let (mut h1, mut h2) = (hs, hs);
        let e1 = ssm_step_impl::<false>(&sb, Vals(&t[..d]), &mut h1[..d], ehs, &h[..d], eh);
        let e2 = ssm_step_impl::<true>(&sb, Vals(&t[..d]), &mut h2[..d], ehs, &h[..d], eh);
        assert_eq!((e1, &h1[..d]), (e2, &h2[..d]), "case {case}");
    }
}

#[test]
fn mix_fast_equals_general() {
    let mut r = Rng(0xD1B5_4A32_D192_ED03);
    let sc = |m: i32, e: i32| Scale { m, e: if m == 0 { E_ZERO } else { e } };
    for case in 0..20000 {
        let d = [1, 7, 16, 64][case % 4];
        let (conv, wv) = (sc(r.int(15), r.int(8)), sc(r.int(15), r.int(8)));
        let (lb, hb, vb) = ((r.next() % 19) as u32, (r.next() % 31) as u32, (r.next() % 16) as u32);
        let (mut lm, mut hs, mut sp, mut xr) = ([0i32; 64], [0i32; 64], [0i16; 64], [0i16; 64]);
        for c in 0..d {
            lm[c] = r.int(lb.max(1));
            hs[c] = r.int(hb.max(1));
            sp[c] = r.int(vb.max(1)) as i16;
            xr[c] = r.int(15) as i16;
        }
        let mxl = lm[..d].iter().fold(0u32, |a, v| a | v.unsigned_abs());
        let (et, esp, ex, ehs) = (r.int(6), r.int(6), if case % 17 == 0 { E_ZERO } else { r.int(6) }, r.int(6));
        let r0 = (r.next() % (1 << 30)) as i32;
        let r1 = (r.next() % ((1u64 << 30) - r0 as u64 + 1)) as i32;
        let rr = [r0, r1, (1 << 30) - r0 - r1];
        let (mut l1, mut l2, mut s1, mut s2, mut x1, mut x2) = (lm, lm, sp, sp, xr, xr);
        let st = State { hs: &hs[..d], ehs };
        let e1 = mix_impl::<false>(&conv, &wv, st, &mut l1[..d], (mxl, et), (&mut s1[..d], esp), rr, &mut x1[..d], ex);
        let st = State { hs: &hs[..d], ehs };
        let e2 = mix_impl::<true>(&conv, &wv, st, &mut l2[..d], (mxl, et), (&mut s2[..d], esp), rr, &mut x2[..d], ex);
        assert_eq!((e1, &x1[..d], &l1[..d]), (e2, &x2[..d], &l2[..d]), "case {case}");
    }
}

/// The AVX2 conv (conv_avx2.rs) against the portable loop:
/// widths with and without a partial last step, zero and missing rows,
/// taps on different grids, payloads with code 10, and a payload one
/// byte short (its missing codes read as 0).
#[test]
fn conv_avx2_equals_loop() {
    if !Accel::detect().avx2() {
        return;
    }
    let mut r = Rng(0x6A09_E667_F3BC_C908);
    for case in 0..4000 {
        let d = [1, 3, 7, 8, 9, 16, 21, 64][case % 8];
        let t = (r.next() % 9) as usize;
        let mut ring = [0i16; 5 * 64];
        for x in ring.iter_mut().take(5 * d) {
            let bits = (r.next() % 16) as u32 + 1;
            *x = r.int(bits).clamp(-32768, 32767) as i16;
        }
        let mut ering = [0i16; 5];
        for e in ering.iter_mut() {
            *e = if r.next().is_multiple_of(6) { E_ZERO as i16 } else { (r.int(5) % 20) as i16 };
        }
        let mut data = [0u8; 5 * 64 * 2 / 8 + 1];
        for b in data.iter_mut() {
            *b = r.next() as u8;
        }
        let len = (10 * d).div_ceil(8) - usize::from(case % 5 == 0);
        let conv = Tensor { data: &data[..len], scale: 1.0, rows: d, cols: 5, packing: Packing::Trit2 };
        let (mut o1, mut o2) = ([0i32; 64], [0i32; 64]);
        let a = conv_sums_impl(false, false, &conv, &ring[..5 * d], &ering, t, d, &mut o1[..d]);
        let b = conv_sums_impl(true, false, &conv, &ring[..5 * d], &ering, t, d, &mut o2[..d]);
        assert_eq!((a, &o1[..d]), (b, &o2[..d]), "case {case}");
    }
}

/// The row statistics (sum, sum of squares, extremes) of every length up
/// to 70 against their plain definitions.
#[test]
fn row_stats_of_rows() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for len in 0..70 {
        for _ in 0..50 {
            let row: [i16; 70] = core::array::from_fn(|_| rng.next() as i16);
            let r = &row[..len];
            let want = (
                r.iter().map(|&v| i32::from(v)).sum::<i32>(),
                r.iter().map(|&v| i64::from(v) * i64::from(v)).sum::<i64>(),
                r.iter().map(|&v| i32::from(v)).min().unwrap_or(i32::MAX),
                r.iter().map(|&v| i32::from(v)).max().unwrap_or(i32::MIN),
            );
            assert_eq!(row_stats(r), want);
        }
    }
}
