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
