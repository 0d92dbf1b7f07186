//! The ATOMEF container parser and the runtime-dimension API on arbitrary
//! bytes: the input is opened as it is, wrapped in a container with
//! dimensions taken from its first bytes (so the CRCs match and the
//! parser goes deeper), and with those dimensions as a bare blob. An open
//! that succeeds must run; one that fails must leave the handle refused.
//! A container that opens must have a header equal to its payload's
//! layout (checked here with the format's layout, not the container
//! reader's), and the buffer size of any dims must be the exact one or 0.
#![no_main]
use atome::container::{self, Info, Kind};
use atome::ffi::runtime::*;
use atome::format::{self, Dims, Format, Packing};
use libfuzzer_sys::fuzz_target;
use std::ptr;

/// Small dimensions from a few bytes (a buffer of a few KB suffices).
fn dims_from(b: &[u8]) -> atome_dims_t {
    let g = |i: usize, m: i32| b.get(i).map_or(1, |&v| 1 + v as i32 % m);
    atome_dims_t {
        vocab_size: g(0, 40),
        d_model: g(1, 24),
        n_layers: g(2, 3),
        d_head: g(3, 8),
        kernel_size: g(4, 6),
        top_k: g(5, 4),
        max_seq: g(6, 16),
        n_classes: 0,
    }
}

fn exercise(data: &[u8], dims: Option<&atome_dims_t>, flags: i32) {
    let mut rt: atome_rt_t = unsafe { std::mem::zeroed() };
    let mut work = vec![0u32; 1 << 14];
    let toks = [1i32, 2, 300, -4, 5];
    let mut out = [0i32; 8];
    let dp = dims.map_or(ptr::null(), |d| d as *const _);
    // SAFETY: every pointer is valid for the length given and outlives the calls.
    unsafe {
        let rc = atome_rt_open(&mut rt, data.as_ptr(), data.len(), dp, flags, work.as_mut_ptr().cast(), work.len() * 4);
        assert!((-9..=0).contains(&rc), "open returned {rc}");
        if rc == 0 && dims.is_none() {
            header_is_layout(data);
        }
        // The class logits buffer: n_classes floats as the contract asks (a
        // classifier may have more classes than any fixed buffer), plus
        // guards that must stay untouched.
        let mut nc = 0usize;
        if rc == 0 {
            let mut d0 = atome_dims_t::default();
            assert_eq!(atome_rt_dims(&rt, &mut d0), 0);
            nc = d0.n_classes.max(0) as usize;
        }
        const GUARD: usize = 4;
        let mut cls = vec![-7.0f32; nc + GUARD];
        let p = atome_rt_predict_next(&mut rt, toks.as_ptr(), toks.len() as i32);
        let g = atome_rt_generate(&mut rt, toks.as_ptr(), 2, out.as_mut_ptr(), out.len() as i32);
        let c = atome_rt_classify(&mut rt, toks.as_ptr(), toks.len() as i32, cls.as_mut_ptr());
        if rc != 0 {
            assert_eq!((p, g, c), (-1, 0, -1), "a handle whose open failed ran");
            return;
        }
        let mut d = atome_dims_t::default();
        assert_eq!(atome_rt_dims(&rt, &mut d), 0);
        assert!(cls[nc..].iter().all(|&x| x == -7.0), "classify wrote past n_classes");
        if d.n_classes > 0 {
            assert!(p == -1 && g == 0 && (0..d.n_classes).contains(&c));
        } else {
            assert!((0..d.vocab_size).contains(&p) && c == -1 && g >= 0);
            // Purity: the same call again gives the same id.
            assert_eq!(atome_rt_predict_next(&mut rt, toks.as_ptr(), toks.len() as i32), p);
        }
    }
}

/// What opened without dims is a container whose header describes its
/// payload exactly: its length is the layout of the header's dimensions and
/// class count, and a classifier's count is the payload's.
fn header_is_layout(data: &[u8]) {
    let c = container::parse(data).expect("opened without dims: a container");
    let fmt = Format::detect(c.payload).expect("a payload with a magic");
    let nc = if fmt.is_classifier() { fmt.n_classes(c.payload).expect("a class count") } else { 0 };
    assert_eq!(nc as usize, c.info.n_classes, "header n_classes against the payload's");
    assert_eq!(format::blob_bytes(&c.info.dims, fmt, nc as usize), c.payload.len(), "payload length against the header's layout");
}

/// The buffer size in 128-bit arithmetic from the header's formula.
fn exact_size(d: &atome_dims_t, cached: bool) -> u128 {
    let [v, dm, l, dh, k, tk, s] = [d.vocab_size, d.d_model, d.n_layers, d.d_head, d.kernel_size, d.top_k, d.max_seq].map(|x| x as u128);
    4 * if cached {
        4 + s + v + s * dm + l * s * dh + l * s * dm + l * (k - 1) * dm + 2 * l * dm + s * l + l + (k + 7) * dm + (8 * dh).max(8 * k) + 24 + 16 * tk
    } else {
        v + 2 * s * dm + s * dh + (k + 5) * dm + l + (4 * dh).max(8 * k) + 12 + 8 * tk
    }
}

/// Dimensions from the input's first 28 bytes, anywhere in i32: the size is
/// the exact one, or 0 for a dimension outside 1..=65535 or a size past usize.
fn check_size(data: &[u8]) {
    let g = |i: usize| data.get(4 * i..4 * i + 4).map_or(1, |b| i32::from_le_bytes([b[0], b[1], b[2], b[3]]));
    // Mostly in range: the low 16 bits plus one, unless the top bit is set.
    let f = |i: usize| if g(i) < 0 { g(i) & 0x7fff_ffff } else { 1 + (g(i) & 0xffff) };
    let d = atome_dims_t { vocab_size: f(0), d_model: f(1), n_layers: f(2), d_head: f(3), kernel_size: f(4), top_k: f(5), max_seq: f(6), n_classes: 0 };
    let ok = [d.vocab_size, d.d_model, d.n_layers, d.d_head, d.kernel_size, d.top_k, d.max_seq].iter().all(|v| (1..=65535).contains(v));
    for cached in [false, true] {
        // SAFETY: a live struct.
        let got = unsafe { atome_rt_work_size(&d, cached as i32) } as u128;
        let want = if ok { exact_size(&d, cached) } else { 0 };
        assert_eq!(got, if want <= usize::MAX as u128 { want } else { 0 }, "{d:?} cached {cached}");
    }
}

fuzz_target!(|data: &[u8]| {
    let _ = container::parse(data);
    check_size(data);
    exercise(data, None, 0);
    let d = dims_from(data);
    let body = data.get(7..).unwrap_or(&[]);
    // The four modes (flags 0..3: float or q15, lean or cached).
    exercise(data, Some(&d), (data.len() & 3) as i32);
    // A well-formed container around the input, if it starts like a model.
    let info = Info {
        kind: Kind::Model,
        packing: Packing::Trit2,
        dims: d.dims().map(|(dm, _)| dm).unwrap_or(Dims { vocab: 1, d_model: 1, n_layers: 1, d_head: 1, kernel_size: 1, top_k: 1 }),
        max_seq: d.max_seq as usize,
        n_classes: 0,
    };
    let mut payload = b"ATOME01".to_vec();
    payload.extend_from_slice(body);
    // The header must describe the payload exactly: cut or pad it to the
    // layout of those dimensions (the parser goes deeper), unless the input's
    // last byte is odd (a payload a few bytes off, which must be refused).
    if data.last().is_some_and(|&b| b & 1 == 0) {
        payload.resize(format::blob_bytes(&info.dims, Format::Atome01, 0), 0);
    }
    let mut buf = vec![0u8; container::container_len(0, payload.len())];
    if container::write(&mut buf, &info, b"", &payload).is_some() {
        exercise(&buf, None, 1);
    }
});
