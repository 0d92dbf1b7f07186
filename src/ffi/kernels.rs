//! The reference's lower-level kernels, on caller-built structs.
use super::types::*;
use crate::config::*;
use crate::format::{Floats, Norm, Packing, Tensor};
use crate::kernels::attention::{attend_channel, score_topk, slot_probs};
use crate::kernels::matvec::{decode, matvec, term};
use crate::kernels::layer_norm_in_place;
use crate::math::{sqrtf, tanhf};
use core::ffi::c_int;

/// Safe view of a C tensor (rows x cols, its packing's payload length).
///
/// # Safety
/// `t.packed` is readable for the payload of rows*cols weights.
unsafe fn tensor<'a>(packed: *const u8, scale: f32, rows: usize, cols: usize, packing: u8) -> Option<Tensor<'a>> {
    let p = Packing::from_tag(packing)?;
    if packed.is_null() {
        return None;
    }
    // SAFETY: per the contract above.
    let data = unsafe { core::slice::from_raw_parts(packed, p.payload_len(rows * cols)) };
    Some(Tensor { data, scale, rows, cols, packing: p })
}

/// # Safety
/// `p` null or readable for n floats (any alignment).
unsafe fn floats<'a>(p: *const f32, n: usize) -> Option<Floats<'a>> {
    if p.is_null() {
        return None;
    }
    // SAFETY: readable for 4n bytes per the contract.
    Some(Floats::new(unsafe { core::slice::from_raw_parts(p as *const u8, 4 * n) }))
}

/// out = scale * (W x): W rows x cols, x cols floats, out rows floats.
///
/// # Safety
/// Pointers null or valid for the sizes in *W.
#[no_mangle]
pub unsafe extern "C" fn atome_ternary_matvec(W: *const atome_ternary_t, x: *const f32, out: *mut f32) {
    if W.is_null() || x.is_null() || out.is_null() {
        return;
    }
    // SAFETY: non-null, readable.
    let w = unsafe { &*W };
    let (rows, cols) = (w.rows as usize, w.cols as usize);
    // SAFETY: sizes from *W per the contract.
    let Some(t) = (unsafe { tensor(w.packed, w.scale, rows, cols, w.packing) }) else { return };
    // SAFETY: per the contract.
    let (xs, ys) = unsafe { (core::slice::from_raw_parts(x, cols), core::slice::from_raw_parts_mut(out, rows)) };
    matvec(&t, xs, ys);
}

/// In-place LayerNorm of `dim` floats.
///
/// # Safety
/// `x` null or valid for dim floats; params' arrays readable for dim floats.
#[no_mangle]
pub unsafe extern "C" fn atome_layer_norm(x: *mut f32, dim: c_int, params: *const atome_norm_t) {
    if x.is_null() || params.is_null() || dim < 1 {
        return;
    }
    let n = dim as usize;
    // SAFETY: per the contract.
    let p = unsafe { &*params };
    // SAFETY: per the contract.
    let (Some(gamma), Some(beta)) = (unsafe { floats(p.gamma, n) }, unsafe { floats(p.beta, n) }) else { return };
    // SAFETY: per the contract.
    let xs = unsafe { core::slice::from_raw_parts_mut(x, n) };
    layer_norm_in_place(xs, &Norm { gamma, beta });
}

/// Rows of ATOME_D_MODEL floats.
///
/// # Safety
/// `p` null or valid for n rows.
unsafe fn rows<'a>(p: *const [f32; ATOME_D_MODEL], n: usize) -> &'a [f32] {
    // SAFETY: per the contract.
    unsafe { core::slice::from_raw_parts(p as *const f32, n * ATOME_D_MODEL) }
}

/// # Safety
/// `p` valid for n rows, writable.
unsafe fn rows_mut<'a>(p: *mut [f32; ATOME_D_MODEL], n: usize) -> &'a mut [f32] {
    // SAFETY: per the contract.
    unsafe { core::slice::from_raw_parts_mut(p as *mut f32, n * ATOME_D_MODEL) }
}

/// Depthwise causal conv over seq_len rows: out[t][c] for c < channels.
///
/// # Safety
/// x and out valid for seq_len rows; the kernel's payload readable.
#[no_mangle]
pub unsafe extern "C" fn atome_causal_conv(
    x: *const [f32; ATOME_D_MODEL],
    seq_len: c_int,
    kernel: *const atome_conv_t,
    out: *mut [f32; ATOME_D_MODEL],
) {
    if x.is_null() || kernel.is_null() || out.is_null() || seq_len < 1 {
        return;
    }
    // SAFETY: per the contract.
    let k = unsafe { &*kernel };
    let (ch, kk, n) = ((k.channels as usize).min(ATOME_D_MODEL), k.kernel_size as usize, seq_len as usize);
    // SAFETY: per the contract.
    let Some(w) = (unsafe { tensor(k.packed, k.scale, k.channels as usize, kk, k.packing) }) else { return };
    // SAFETY: per the contract.
    let (xs, os) = unsafe { (rows(x, n), rows_mut(out, n)) };
    let d = ATOME_D_MODEL;
    let mut codes = [0i8; 16];
    for c in 0..ch {
        for t in 0..n {
            let mut acc = 0.0f32;
            let taps = kk.min(t + 1);
            let mut k0 = 0;
            while k0 < taps {
                let len = (taps - k0).min(codes.len());
                decode(&w, c * kk + k0, &mut codes[..len]);
                for (j, &wt) in codes[..len].iter().enumerate() {
                    let hv = xs.get((t - (k0 + j)) * d + c).copied().unwrap_or(0.0);
                    acc = term(acc, wt, hv);
                }
                k0 += len;
            }
            if let Some(o) = os.get_mut(t * d + c) {
                *o = acc * w.scale;
            }
        }
    }
}

/// Diagonal SSM over seq_len rows, continuing from and updating `h`.
///
/// # Safety
/// x and out valid for seq_len rows; h for channels floats; params readable.
#[no_mangle]
pub unsafe extern "C" fn atome_ssm_forward(
    x: *const [f32; ATOME_D_MODEL],
    seq_len: c_int,
    params: *const atome_ssm_t,
    h: *mut f32,
    out: *mut [f32; ATOME_D_MODEL],
) {
    if x.is_null() || params.is_null() || h.is_null() || out.is_null() || seq_len < 1 {
        return;
    }
    // SAFETY: per the contract.
    let p = unsafe { &*params };
    let (ch, n) = ((p.channels as usize).min(ATOME_D_MODEL), seq_len as usize);
    // SAFETY: per the contract.
    let (Some(a), Some(b), Some(c)) = (unsafe { floats(p.a, ch) }, unsafe { floats(p.b, ch) }, unsafe { floats(p.c_out, ch) }) else {
        return;
    };
    // SAFETY: per the contract.
    let (xs, os, hs) = unsafe { (rows(x, n), rows_mut(out, n), core::slice::from_raw_parts_mut(h, ch)) };
    let d = ATOME_D_MODEL;
    for (i, hv) in hs.iter_mut().enumerate() {
        let th = tanhf(a.get(i));
        for t in 0..n {
            let xv = xs.get(t * d + i).copied().unwrap_or(0.0);
            *hv = th * *hv + b.get(i) * xv;
            if let Some(o) = os.get_mut(t * d + i) {
                *o = c.get(i) * *hv;
            }
        }
    }
}

/// Sparse causal attention over seq_len (<= ATOME_MAX_SEQ) rows, using the
/// state's memory for keys and values: out[t] for every t.
///
/// # Safety
/// x and out valid for seq_len rows; params' tensors readable; state valid.
#[no_mangle]
pub unsafe extern "C" fn atome_sparse_attn(
    x: *const [f32; ATOME_D_MODEL],
    seq_len: c_int,
    params: *const atome_attn_t,
    state: *mut atome_state_t,
    out: *mut [f32; ATOME_D_MODEL],
) {
    if x.is_null() || params.is_null() || state.is_null() || out.is_null() || seq_len < 1 {
        return;
    }
    let n = (seq_len as usize).min(ATOME_MAX_SEQ);
    // SAFETY: per the contract.
    let p = unsafe { &*params };
    let (d, dh, topk) = (ATOME_D_MODEL, (p.d_head as usize).min(ATOME_D_HEAD), (p.top_k as usize).min(ATOME_TOP_K));
    // SAFETY: per the contract.
    let ts = unsafe {
        (
            tensor(p.Wq.packed, p.Wq.scale, dh, d, p.Wq.packing),
            tensor(p.Wk.packed, p.Wk.scale, dh, d, p.Wk.packing),
            tensor(p.Wv.packed, p.Wv.scale, d, d, p.Wv.packing),
        )
    };
    let (Some(wq), Some(wk), Some(wv)) = ts else { return };
    // SAFETY: per the contract.
    let (xs, os, st) = unsafe { (rows(x, n), rows_mut(out, n), &mut *state) };
    // Scratch from the state's work area: keys, values, one query, slots.
    let work = super::engine::float_work(st);
    let Some((k, rest)) = crate::forward::take(work, n * dh) else { return };
    let Some((v, rest)) = crate::forward::take(rest, n * d) else { return };
    let Some((q, rest)) = crate::forward::take(rest, dh) else { return };
    let Some((sp, rest)) = crate::forward::take(rest, topk) else { return };
    let Some((si, _)) = crate::forward::take(rest, topk) else { return };
    for t in 0..n {
        let xr = xs.get(t * d..t * d + d).unwrap_or(&[]);
        if let Some(kr) = k.get_mut(t * dh..t * dh + dh) {
            matvec(&wk, xr, kr);
        }
        if let Some(vr) = v.get_mut(t * d..t * d + d) {
            matvec(&wv, xr, vr);
        }
    }
    let inv = 1.0 / sqrtf(dh as f32);
    for t in 0..n {
        let xr = xs.get(t * d..t * d + d).unwrap_or(&[]);
        matvec(&wq, xr, q);
        let keff = topk.min(t + 1);
        score_topk(q, k, dh, t, inv, &mut sp[..keff], &mut si[..keff]);
        slot_probs(&mut sp[..keff]);
        for c in 0..d {
            if let Some(o) = os.get_mut(t * d + c) {
                *o = attend_channel(&sp[..keff], &si[..keff], v, d, c);
            }
        }
    }
}
