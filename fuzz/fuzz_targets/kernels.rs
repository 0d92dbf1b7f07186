//! The lower-level C kernels on arbitrary shapes and values, with buffers
//! sized exactly from the shapes (so ASan sees any read or write past them)
//! and guard sentinels after every output. Each result is compared bit for
//! bit (NaN matching NaN) with a naive reference written from docs/ARITHMETIC.md.
#![no_main]
use atome_fuzz::api::*;
use atome::format::Packing;
use atome_fuzz::{assert_same, refk, Src, D, S};
use atome::config::{ATOME_D_HEAD, ATOME_TOP_K};
use libfuzzer_sys::fuzz_target;
use std::ptr;

const SENT: f32 = -123.25;

fn floats(s: &mut Src, n: usize) -> Vec<f32> {
    (0..n).map(|_| s.f32()).collect()
}

/// n floats as little-endian bytes at a byte offset `shift` into a buffer.
fn float_bytes(s: &mut Src, n: usize) -> (Vec<u8>, usize) {
    let shift = s.u8() as usize % 4;
    let mut b = vec![0u8; shift + 4 * n];
    for i in 0..n {
        let v = s.f32();
        b[shift + 4 * i..shift + 4 * i + 4].copy_from_slice(&v.to_le_bytes());
    }
    (b, shift)
}

/// A packed payload for n weights: fuzz bytes, then a fill pattern.
fn payload(s: &mut Src, packing: u8, n: usize) -> Vec<u8> {
    let len = Packing::from_tag(packing.min(2)).map_or(0, |p| p.payload_len(n));
    let fill = s.u8();
    let src = s.bytes(len.min(64));
    (0..len).map(|i| if i < src.len() { src[i] } else { fill.wrapping_mul(i as u8 | 1) }).collect()
}

fn packing(s: &mut Src) -> u8 {
    match s.u8() % 16 {
        0 => s.u8(),
        x => x % 3,
    }
}

fn rows_floats(s: &mut Src, n: usize) -> Vec<f32> {
    // Sparse special values in plain data: cheap to make, still hostile.
    let mut v = vec![0.0f32; n];
    let k = s.u8() as usize % 32;
    let base = s.f32();
    for (i, x) in v.iter_mut().enumerate() {
        *x = base * ((i % 7) as f32 - 3.0);
    }
    for _ in 0..k {
        let i = s.u16() as usize;
        if n > 0 {
            v[i % n] = s.f32();
        }
    }
    v
}

fn matvec_op(s: &mut Src) {
    let rows = s.u16() as usize % 80;
    let cols = s.u16() as usize % 300;
    let pk = packing(s);
    let p = payload(s, pk, rows * cols);
    let scale = s.f32();
    let x = rows_floats(s, cols);
    let mut out = vec![SENT; rows + 4];
    let w = atome_ternary_t { packed: if s.u8().is_multiple_of(32) { ptr::null() } else { p.as_ptr() }, scale, rows: rows as u16, cols: cols as u16, packing: pk };
    // SAFETY: buffers sized from the shape.
    unsafe {
        atome_ternary_matvec(ptr::null(), x.as_ptr(), out.as_mut_ptr());
        atome_ternary_matvec(&w, ptr::null(), out.as_mut_ptr());
        atome_ternary_matvec(&w, x.as_ptr(), ptr::null_mut());
        atome_ternary_matvec(&w, x.as_ptr(), out.as_mut_ptr());
    }
    assert!(out[rows..].iter().all(|&v| v == SENT), "matvec wrote past rows");
    if w.packed.is_null() || pk > 2 {
        assert!(out.iter().all(|&v| v == SENT), "matvec with a null payload / bad packing wrote");
        return;
    }
    let want = refk::matvec(&p, pk, scale, rows, cols, &x);
    assert_same(&format!("matvec {rows}x{cols} packing {pk}"), &out[..rows], &want);
}

fn norm_op(s: &mut Src) {
    let dim = match s.u8() % 16 {
        0 => -(s.u8() as i32),
        _ => (s.u16() % 300) as i32,
    };
    let n = dim.max(0) as usize;
    let (g, gs) = float_bytes(s, n);
    let (b, bs) = float_bytes(s, n);
    let x0 = rows_floats(s, n);
    let mut x = x0.clone();
    x.extend_from_slice(&[SENT; 4]);
    // SAFETY: in-bounds offsets; the library reads the floats byte-wise.
    let params = unsafe { atome_norm_t { gamma: g.as_ptr().add(gs) as *const f32, beta: b.as_ptr().add(bs) as *const f32 } };
    let nullp = atome_norm_t { gamma: ptr::null(), beta: params.beta };
    // SAFETY: buffers sized from dim.
    unsafe {
        atome_layer_norm(ptr::null_mut(), dim, &params);
        atome_layer_norm(x.as_mut_ptr(), dim, ptr::null());
        atome_layer_norm(x.as_mut_ptr(), dim, &nullp);
    }
    assert_same("layer_norm with a null argument", &x[..n], &x0);
    // SAFETY: as above.
    unsafe { atome_layer_norm(x.as_mut_ptr(), dim, &params) };
    assert!(x[n..].iter().all(|&v| v == SENT), "layer_norm wrote past dim");
    if n >= 1 {
        let want = refk::layer_norm(&x0, &g[gs..], &b[bs..]);
        assert_same(&format!("layer_norm {n}"), &x[..n], &want);
    }
}

fn seq_len(s: &mut Src, max: usize) -> i32 {
    match s.u8() % 16 {
        0 => -(s.u8() as i32),
        1 => 0,
        _ => (s.u8() as usize % max) as i32 + 1,
    }
}

fn conv_op(s: &mut Src) {
    let n = seq_len(s, S + 4);
    let rows = n.max(0) as usize;
    let ch = match s.u8() % 4 {
        0 => s.u8() as usize % (D + 8),
        _ => D,
    };
    let k = s.u8() as usize % 20;
    let pk = packing(s);
    let p = payload(s, pk, ch * k);
    let scale = s.f32();
    let x = rows_floats(s, rows * D);
    let mut out = vec![SENT; rows * D + 4];
    let kern = atome_conv_t { packed: p.as_ptr(), scale, channels: ch as u16, kernel_size: k as u16, packing: pk };
    // SAFETY: rows of D floats, payload for ch * k weights.
    unsafe {
        atome_causal_conv(x.as_ptr() as *const [f32; D], n, &kern, out.as_mut_ptr() as *mut [f32; D]);
    }
    assert!(out[rows * D..].iter().all(|&v| v == SENT), "conv wrote past seq_len rows");
    if pk > 2 || rows == 0 {
        assert!(out.iter().all(|&v| v == SENT), "conv with a bad packing / seq_len wrote");
        return;
    }
    let mut want = vec![SENT; rows * D];
    refk::conv(&x, D, rows, &p, pk, scale, ch.min(D), k, &mut want);
    assert_same(&format!("conv n={rows} ch={ch} k={k} packing {pk}"), &out[..rows * D], &want);
}

fn ssm_op(s: &mut Src) {
    let n = seq_len(s, S + 4);
    let rows = n.max(0) as usize;
    let ch = match s.u8() % 4 {
        0 => s.u8() as usize % (D + 8),
        _ => D,
    };
    let (a, as_) = float_bytes(s, ch);
    let (b, bs) = float_bytes(s, ch);
    let (c, cs) = float_bytes(s, ch);
    let h0 = floats(s, ch);
    let mut h = h0.clone();
    h.push(SENT);
    let x = rows_floats(s, rows * D);
    let mut out = vec![SENT; rows * D + 4];
    // SAFETY: in-bounds offsets.
    let prm = unsafe {
        atome_ssm_t {
            a: a.as_ptr().add(as_) as *const f32,
            b: b.as_ptr().add(bs) as *const f32,
            c_out: c.as_ptr().add(cs) as *const f32,
            channels: ch as u16,
        }
    };
    // SAFETY: rows of D floats, h and params for ch floats.
    unsafe {
        atome_ssm_forward(x.as_ptr() as *const [f32; D], n, &prm, h.as_mut_ptr(), out.as_mut_ptr() as *mut [f32; D]);
    }
    assert!(out[rows * D..].iter().all(|&v| v == SENT), "ssm wrote past seq_len rows");
    assert_eq!(h[ch], SENT, "ssm wrote past h");
    if rows == 0 {
        assert!(out.iter().all(|&v| v == SENT));
        assert_same("ssm h untouched", &h[..ch], &h0);
        return;
    }
    let mut want = vec![SENT; rows * D];
    let mut wh = h0.clone();
    let chn = ch.min(D);
    refk::ssm(&x, D, rows, &a[as_..], &b[bs..], &c[cs..], chn, &mut wh, &mut want);
    assert_same(&format!("ssm out n={rows} ch={ch}"), &out[..rows * D], &want);
    assert_same("ssm h", &h[..ch], &wh);
}

fn attn_op(s: &mut Src) {
    let n = seq_len(s, S + 6);
    let rows = n.max(0) as usize;
    let dh_field = match s.u8() % 4 {
        0 => s.u8() as usize % (ATOME_D_HEAD + 4),
        _ => ATOME_D_HEAD,
    };
    let tk_field = match s.u8() % 4 {
        0 => s.u8() as usize % (ATOME_TOP_K + 3),
        _ => ATOME_TOP_K,
    };
    let dh = dh_field.min(ATOME_D_HEAD);
    let pk = packing(s);
    let pq = payload(s, pk, dh * D);
    let pkk = payload(s, pk, dh * D);
    let pv = payload(s, pk, D * D);
    let (sq, sk, sv) = (s.f32(), s.f32(), s.f32());
    let t = |p: &Vec<u8>, sc: f32, r: usize| atome_ternary_t { packed: p.as_ptr(), scale: sc, rows: r as u16, cols: D as u16, packing: pk };
    let prm = atome_attn_t { Wq: t(&pq, sq, dh), Wk: t(&pkk, sk, dh), Wv: t(&pv, sv, D), d_head: dh_field as u16, top_k: tk_field as u16 };
    let x = rows_floats(s, rows * D);
    let mut out = vec![SENT; rows * D + 4];
    let mut st = atome_fuzz::zeroed::<atome_state_t>();
    atome_fuzz::scribble(&mut *st, s);
    // SAFETY: x and out hold seq_len rows; payloads sized for min(d_head, DH) x D and D x D.
    unsafe {
        atome_sparse_attn(x.as_ptr() as *const [f32; D], n, &prm, &mut *st, out.as_mut_ptr() as *mut [f32; D]);
    }
    let used = rows.min(S);
    assert!(out[used * D..].iter().all(|&v| v == SENT), "attn wrote past min(seq_len, S) rows");
    if pk > 2 || rows == 0 {
        assert!(out.iter().all(|&v| v == SENT));
        return;
    }
    let mut want = vec![SENT; used * D];
    refk::attn(&x, D, used, dh, tk_field.min(ATOME_TOP_K), (&pq, pk, sq), (&pkk, pk, sk), (&pv, pk, sv), &mut want);
    assert_same(&format!("attn n={rows} dh={dh_field} topk={tk_field} packing {pk}"), &out[..used * D], &want);
}

fuzz_target!(|data: &[u8]| {
    let mut s = Src::new(data);
    let n_ops = 1 + s.u8() % 4;
    for _ in 0..n_ops {
        match s.u8() % 5 {
            0 => matvec_op(&mut s),
            1 => norm_op(&mut s),
            2 => conv_op(&mut s),
            3 => ssm_op(&mut s),
            _ => attn_op(&mut s),
        }
    }
});
