//! The q15 depthwise conv's exact sums of one position
//! (docs/Q15.md#mix): K = 5 Trit2 (the models' shape) one pass over the
//! channels, with AVX2 (conv_avx2.rs), Thumb-2 (conv_t2.rs) and Armv6-M
//! (conv_t1.rs) fast paths; every other Trit2 shape by tap, other packings
//! weight by weight.
#[cfg(atome_x86)]
use super::conv_avx2::{conv5_avx2, Taps};
#[cfg(all(atome_thumb2, not(atome_small)))]
use super::conv_t2::conv5_t2;
#[cfg(all(atome_armv6m, not(atome_small)))]
use super::{conv_t1::conv5_t1, has_code10};
#[cfg(any(all(atome_thumb2, not(atome_small)), all(atome_armv6m, not(atome_small))))]
use super::quant::or_abs;
use crate::format::{Packing, Tensor};
use crate::q15::arith::*;

#[cfg(any(all(atome_thumb2, not(atome_small)), all(atome_armv6m, not(atome_small))))]
/// The five taps' inputs of the Arm conv kernels: rows (k = 0 the newest)
/// and which shift by one.
pub struct Taps5<'a> {
    /// Tap rows, at least `out.len()` long.
    pub rows: [&'a [i16]; 5],
    /// Bit k set: tap k is rounded by one bit (rshr(x, 1)), else taken as is.
    pub shifted: u32,
    /// Bit k set: tap k counts (else its weight is 0 and its row, which
    /// must still be readable, is not used).
    pub valid: u32,
}

kernel!(
    /// The conv sums of position t ([`conv_sums_impl`]) through the build's dispatch.
    conv_sums = conv_sums_impl(avx2: bool, clean: bool, conv: &Tensor, ring: &[i16], ering: &[i16], t: usize, d: usize, out: &mut [i32]) -> (u32, i32));

/// The exact conv sums of position t into `out` (D values; |L| <= 9 K 32767
/// fits an int32 for K <= 7281, which `run` checks): (max |L|, E_t).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(super) fn conv_sums_impl(avx2: bool, clean: bool, conv: &Tensor, ring: &[i16], ering: &[i16], t: usize, d: usize, out: &mut [i32]) -> (u32, i32) {
    let kk = ering.len();
    if kk == 0 {
        // (run checks K >= 1.)
        return (0, E_ZERO);
    }
    let nt = kk.min(t + 1);
    // Ring row of tap k: (t - k) mod K; on Armv6-M, whose divisions are
    // library calls, stepped down from t mod K instead (S3 M0 -60K; the
    // cores that divide in hardware gain nothing from the branch).
    let slot0 = t % kk;
    let ring_row = |k: usize| {
        if cfg!(all(atome_armv6m, not(atome_small))) {
            if k <= slot0 {
                slot0 - k
            } else {
                slot0 + kk - k
            }
        } else {
            (t - k) % kk
        }
    };
    // Taps aligned to the largest exponent among them.
    let mut et = E_ZERO;
    for k in 0..nt {
        let ek = i32::from(ering.get(ring_row(k)).copied().unwrap_or(E_ZERO as i16));
        if ek != E_ZERO {
            et = if et == E_ZERO { ek } else { et.max(ek) };
        }
    }
    let mut mx = 0u32;
    if conv.packing == Packing::Trit2 && kk == 5 && !cfg!(atome_small) {
        // Each tap's row and shift once per position (-1: a zero row).
        let (mut rows, mut shs) = ([0usize; 5], [-1i32; 5]);
        for (k, (rk, sk)) in rows.iter_mut().zip(shs.iter_mut()).enumerate().take(nt) {
            let row = ring_row(k);
            let ek = i32::from(ering.get(row).copied().unwrap_or(E_ZERO as i16));
            *rk = row * d;
            if ek != E_ZERO {
                *sk = et - ek;
            }
        }
        // K = 5 (the models' width; a zero or missing row's weights
        // masked to 0): one pass over the channels, each channel's ten
        // code bits read at once, its five taps summed in a register
        // (with AVX2: conv_avx2.rs, eight channels a step).
        let mut mask = 0u32;
        // A tap's rounding shift as (x + a) >> s (rshr; s = 0 keeps x;
        // s >= 16 rounds every int16 to 0, so 16 stands for more).
        let (mut a, mut sv) = ([0i32; 5], [0u32; 5]);
        // (Taps past nt have shift -1.)
        for (k, ((&sh, svk), ak)) in shs.iter().zip(sv.iter_mut()).zip(a.iter_mut()).enumerate() {
            if sh >= 0 {
                mask |= 3 << (2 * k);
                let s = sh.min(16) as u32;
                *svk = s;
                *ak = (1 << s) >> 1;
            }
        }
        #[cfg(atome_x86)]
        if avx2 {
            let row = |k: usize| ring.get(rows[k]..rows[k] + d).unwrap_or(&[]);
            let taps = Taps { rows: [row(0), row(1), row(2), row(3), row(4)], a, s: sv, mask };
            // SAFETY: `avx2` comes from `Accel::avx2` (cpuid and xgetbv
            // showed AVX2).
            if let Some(mx) = unsafe { conv5_avx2(conv.data, &taps, out) } {
                return (mx, et);
            }
        }
        let _ = avx2;
        #[cfg(any(all(atome_thumb2, not(atome_small)), all(atome_armv6m, not(atome_small))))]
        if sv.iter().all(|&s| s <= 1) {
            // (A missing tap's row: Thumb-2 reads row 0 and masks it
            // out, Armv6-M does not read it.)
            let row = |k: usize| ring.get(rows[k]..rows[k] + d).unwrap_or(&[]);
            let shifted = sv.iter().enumerate().fold(0, |m, (k, &s)| m | s << k);
            let valid = (0..5).fold(0, |v, k| v | ((mask >> (2 * k)) & 1) << k);
            let taps = Taps5 { rows: [row(0), row(1), row(2), row(3), row(4)], shifted, valid };
            #[cfg(all(atome_thumb2, not(atome_small)))]
            let done = conv5_t2(conv.data, &taps, out);
            #[cfg(all(atome_armv6m, not(atome_small)))]
            let done = conv5_t1(conv.data, &taps, clean, out);
            if done.is_some() {
                return (or_abs(out), et);
            }
        }
        let _ = clean;
        let shifted = sv.iter().any(|&s| s > 0);
        let row = |k: usize| ring.get(rows[k]..rows[k] + d).unwrap_or(&[]);
        let xs = out.iter_mut().zip(row(0)).zip(row(1)).zip(row(2)).zip(row(3)).zip(row(4));
        let (data, mut bit) = (conv.data, 0usize);
        // (A missing row is empty: the zip then stops early, and the
        // general path below does the channels.)
        if xs.len() == d {
            const W: [i32; 4] = [0, 1, 0, -1];
            let w = |b: u32, k: u32| W[((b >> (2 * k)) & 3) as usize];
            for (((((o, &x0), &x1), &x2), &x3), &x4) in xs {
                let at = bit >> 3;
                let bits = match data.get(at..at + 4) {
                    Some(&[b0, b1, b2, b3]) => u32::from_le_bytes([b0, b1, b2, b3]),
                    _ => {
                        let mut v = 0u32;
                        for i in 0..4 {
                            v |= u32::from(data.get(at + i).copied().unwrap_or(0)) << (8 * i);
                        }
                        v
                    }
                };
                let b = (bits >> (bit & 7)) & mask;
                let (x0, x1, x2, x3, x4) = if shifted {
                    let r = |x: i16, k: usize| (i32::from(x) + a[k]) >> sv[k];
                    (r(x0, 0), r(x1, 1), r(x2, 2), r(x3, 3), r(x4, 4))
                } else {
                    (i32::from(x0), i32::from(x1), i32::from(x2), i32::from(x3), i32::from(x4))
                };
                let acc = w(b, 0) * x0 + w(b, 1) * x1 + w(b, 2) * x2 + w(b, 3) * x3 + w(b, 4) * x4;
                *o = acc;
                mx |= acc.unsigned_abs();
                bit += 10;
            }
            return (mx, et);
        }
    }
    if conv.packing == Packing::Trit2 {
        // By tap (every Trit2 row the fast paths leave; the size-first
        // build's only path), the 2-bit codes read in place (c * K + k; 1:
        // +1, 3: -1, 0 and 2: 0; past the end of the data: 0, as decode);
        // a tap's shift is the same for every channel.
        out.fill(0);
        for k in 0..nt {
            let row = ring_row(k);
            let ek = i32::from(ering.get(row).copied().unwrap_or(E_ZERO as i16));
            if ek == E_ZERO {
                continue;
            }
            let xk = ring.get(row * d..row * d + d).unwrap_or(&[]);
            match et - ek {
                0 => conv_tap_trit2(conv.data, k, kk, xk, out, |x| x),
                sh if sh > 0 => conv_tap_trit2(conv.data, k, kk, xk, out, |x| rshr32(x, sh)),
                _ => {}
            }
        }
        for &o in out.iter() {
            mx |= o.unsigned_abs();
        }
        return (mx, et);
    }
    // Any other packing: weight by weight.
    for (c, o) in out.iter_mut().enumerate() {
        let mut acc = 0i32;
        for k in 0..nt {
            let row = ring_row(k);
            let ek = i32::from(ering.get(row).copied().unwrap_or(E_ZERO as i16));
            if ek == E_ZERO {
                continue;
            }
            let x = i32::from(ring.get(row * d + c).copied().unwrap_or(0));
            acc += i32::from(conv.weight(c * kk + k)) * rshr32(x, et - ek);
        }
        *o = acc;
        mx |= acc.unsigned_abs();
    }
    (mx, et)
}

/// Whether the Cortex-M0 conv kernel may read the layer's K = 5 conv
/// payload of `d` channels (no code `10` in the bytes it reads): checked
/// once per layer and call rather than at every position.
#[inline(never)]
pub(crate) fn conv_clean(conv: &Tensor, d: usize) -> bool {
    #[cfg(all(atome_armv6m, not(atome_small)))]
    if conv.packing == Packing::Trit2 {
        return conv.data.get(..d / 4 * 5).is_some_and(|p| !has_code10(p));
    }
    let _ = (conv, d);
    false
}

/// out[c] += w(c, k) * f(x[c]) over the channels, w read from Trit2 codes
/// at c * kk + k.
#[inline(always)]
fn conv_tap_trit2(data: &[u8], k: usize, kk: usize, x: &[i16], out: &mut [i32], f: impl Fn(i32) -> i32) {
    let mut n = k;
    for (o, &xv) in out.iter_mut().zip(x) {
        let code = i32::from(data.get(n >> 2).copied().unwrap_or(0) >> ((n & 3) * 2)) & 3;
        *o += (code & 1) * (1 - (code & 2)) * f(i32::from(xv));
        n += kk;
    }
}
