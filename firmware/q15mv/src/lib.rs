//! The q15 matvec behind a C symbol, for firmware/src/q15mv_main.c.
#![no_std]
use atome::format::{Packing, Tensor};
use atome::kernels::q15::matvec::matvec_q;

/// Runs `matvec_q` on a Trit2 (packing 0), Base3 (1) or P3 (2) matrix.
///
/// # Safety
/// Every pointer must be valid for its length.
#[no_mangle]
pub unsafe extern "C" fn q15mv_run(
    packing: u32,
    data: *const u8,
    dlen: usize,
    rows: usize,
    cols: usize,
    xs: *const i16,
    xlen: usize,
    n: usize,
    out: *mut i32,
    olen: usize,
) {
    // SAFETY: the caller passes valid buffers of these lengths.
    let (data, xs, out) = unsafe {
        (core::slice::from_raw_parts(data, dlen), core::slice::from_raw_parts(xs, xlen), core::slice::from_raw_parts_mut(out, olen))
    };
    let packing = Packing::from_tag(packing as u8).unwrap_or(Packing::Trit2);
    let w = Tensor { data, scale: 1.0, rows, cols, packing };
    matvec_q(&w, xs, cols, n, out, rows);
}

/// `matvec_q_multi` over four Trit2 matrices of `cols` columns (rows
/// `r[k]`, payloads back to back in `data`, outputs back to back in `out`,
/// each `n * r[k]` long).
///
/// # Safety
/// Every pointer must be valid for its length; `r` for 4 values.
#[no_mangle]
pub unsafe extern "C" fn q15mv_multi4(data: *const u8, r: *const usize, cols: usize, xs: *const i16, n: usize, out: *mut i32) {
    use atome::kernels::isa::Accel;
    use atome::kernels::q15::matvec::{matvec_q_multi, MvJobQ};
    // SAFETY: the caller passes 4 row counts.
    let r = unsafe { core::slice::from_raw_parts(r, 4) };
    let tot: usize = r.iter().sum();
    // SAFETY: the caller passes valid buffers of these lengths.
    let (data, xs, out) = unsafe {
        (
            core::slice::from_raw_parts(data, tot * cols / 4),
            core::slice::from_raw_parts(xs, n * cols),
            core::slice::from_raw_parts_mut(out, n * tot),
        )
    };
    let t = |k: usize| {
        let off: usize = r[..k].iter().sum();
        Tensor { data: &data[off * cols / 4..(off + r[k]) * cols / 4], scale: 1.0, rows: r[k], cols, packing: Packing::Trit2 }
    };
    let (t0, t1, t2, t3) = (t(0), t(1), t(2), t(3));
    let (o0, rest) = out.split_at_mut(n * r[0]);
    let (o1, rest) = rest.split_at_mut(n * r[1]);
    let (o2, o3) = rest.split_at_mut(n * r[2]);
    let mut jobs = [
        MvJobQ { w: &t0, out: o0, ostride: r[0] },
        MvJobQ { w: &t1, out: o1, ostride: r[1] },
        MvJobQ { w: &t2, out: o2, ostride: r[2] },
        MvJobQ { w: &t3, out: o3, ostride: r[3] },
    ];
    matvec_q_multi(Accel::detect(), &mut jobs, xs, cols, n);
}
