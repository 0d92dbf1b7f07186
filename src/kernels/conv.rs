//! Depthwise conv weights as lane floats, for the forward pass's local
//! pathway (mixed N channels at a time).
use super::choice::SIZE_FIRST;
use super::matvec::decode;
use crate::format::Tensor;

/// Lanes of conv weights the forward pass's query area has room for (the
/// widest lane type).
pub const CONV_LANES: usize = 8;

/// Conv weights decoded per block (a stack buffer).
// (Microcontrollers in the default build: one block of CONV_LANES channels
// of a short kernel at once, a smaller buffer than elsewhere.)
const CONV_CODES: usize = if cfg!(feature = "size-first") {
    16
} else if SIZE_FIRST {
    64
} else {
    128
};

/// Conv weights of channels ch0..ch0+nb (kk taps each) as lane floats per
/// tap: out[k * N + j] = weight (ch0 + j, k); lanes past nb are 0.
// Not inlined on microcontrollers: keeps its buffer out of run_layers' frame.
#[cfg_attr(not(atome_portable), inline(always))]
#[cfg_attr(atome_portable, inline(never))]
pub fn conv_lanes<const N: usize>(conv: &Tensor, ch0: usize, nb: usize, kk: usize, out: &mut [f32]) {
    if !cfg!(feature = "size-first") && matches!(conv.packing, crate::format::Packing::Trit2) && kk <= 12 {
        // Each channel's kk 2-bit codes from one 32-bit little-endian word
        // (shifted to its first code), then tap by tap across the lanes.
        let mut words = [0u32; N];
        for (j, wj) in words.iter_mut().enumerate().take(nb) {
            let n = (ch0 + j) * kk;
            let at = n / 4;
            let raw = match conv.data.get(at..at + 4) {
                Some(s) => u32::from_le_bytes([s[0], s[1], s[2], s[3]]),
                None => {
                    let by = |i: usize| conv.data.get(at + i).copied().unwrap_or(0) as u32;
                    by(0) | by(1) << 8 | by(2) << 16 | by(3) << 24
                }
            };
            *wj = raw >> (2 * (n % 4));
        }
        if SIZE_FIRST {
            // Microcontrollers: channel by channel, each code to its float
            // through a table (no int-to-float conversion per weight).
            const W: [f32; 4] = [0.0, 1.0, 0.0, -1.0];
            for (j, &wj) in words.iter().enumerate() {
                let mut w = wj;
                for k in 0..kk {
                    if let Some(v) = out.get_mut(k * N + j) {
                        *v = W[(w & 3) as usize];
                    }
                    w >>= 2;
                }
            }
            return;
        }
        for (k, fk) in out.chunks_exact_mut(N).take(kk).enumerate() {
            for (v, &wj) in fk.iter_mut().zip(words.iter()) {
                // code 01 -> +1, 11 -> -1, 00 and 10 -> 0.
                let c = (wj >> (2 * k)) & 3;
                *v = ((c & 1) as i32 * (1 - (c & 2) as i32)) as f32;
            }
        }
        return;
    }
    // Any packing and kernel size; lanes past nb read as 0.
    let mut codes = [0i8; CONV_CODES];
    let total = nb * kk;
    if !cfg!(feature = "size-first") && total <= CONV_CODES {
        // The nb channels' weights are contiguous: one decode call (base-3
        // decoding has a per-call cost), channel rows to their lanes.
        let codes = &mut codes[..total];
        decode(conv, ch0 * kk, codes);
        for (j, row) in codes.chunks_exact(kk.max(1)).enumerate() {
            for (o, &c) in out.chunks_exact_mut(N).zip(row) {
                if let Some(v) = o.get_mut(j) {
                    *v = c as f32;
                }
            }
        }
        for o in out.chunks_exact_mut(N).take(kk) {
            for v in o.iter_mut().skip(nb) {
                *v = 0.0;
            }
        }
        return;
    }
    // Channel by channel (microcontrollers: one lane; elsewhere kernels
    // longer than the buffer allows at once).
    for j in 0..N {
        let mut k0 = 0;
        while k0 < kk {
            let len = (kk - k0).min(CONV_CODES);
            let codes = &mut codes[..len];
            if j < nb {
                decode(conv, (ch0 + j) * kk + k0, codes);
            } else {
                codes.fill(0);
            }
            for (k, &c) in codes.iter().enumerate() {
                if let Some(o) = out.get_mut((k0 + k) * N + j) {
                    *o = c as f32;
                }
            }
            k0 += len;
        }
    }
}
