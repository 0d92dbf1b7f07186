//! The q15 heads' exact sums: a head's rows as a tensor of their own (the
//! matvec kernel's input) or, where they cannot be cut at a byte
//! boundary, one row's dot product.
use crate::format::{Packing, Tensor};

/// Exact dot product of row j of W with h (the head's fallback when its
/// rows cannot be cut at a byte boundary).
pub(crate) fn row_dot(w: &Tensor, j: usize, h: &[i16]) -> i64 {
    let mut codes = [0i8; 32];
    let mut acc = 0i64;
    let mut c0 = 0;
    while c0 < w.cols {
        let len = (w.cols - c0).min(codes.len());
        w.decode(j * w.cols + c0, &mut codes[..len]);
        for (i, &c) in codes[..len].iter().enumerate() {
            acc += i64::from(i32::from(c) * i32::from(h.get(c0 + i).copied().unwrap_or(0)));
        }
        c0 += len;
    }
    acc
}

/// Rows j0..j0+n of W as a tensor of their own, when row j0 starts on a
/// whole unit of the packing (4 Trit2 codes a byte, 5 Base3, 8 P3 in 3 bytes).
pub(crate) fn rows_of<'a>(w: &Tensor<'a>, j0: usize, n: usize) -> Option<Tensor<'a>> {
    let first = j0.checked_mul(w.cols)?;
    let unit = match w.packing {
        Packing::Trit2 => 4,
        Packing::Base3 => 5,
        Packing::P3 => 8,
    };
    if first % unit != 0 {
        return None;
    }
    let data = w.data.get(w.packing.payload_len(first)..).unwrap_or(&[]);
    Some(Tensor { data, scale: w.scale, rows: n, cols: w.cols, packing: w.packing })
}
