//! The ATOMEF container parser and the runtime-dimension API on arbitrary
//! bytes: the input is opened as it is, wrapped in a container with
//! dimensions taken from its first bytes (so the CRCs match and the
//! parser goes deeper), and with those dimensions as a bare blob. An open
//! that succeeds must run; one that fails must leave the handle refused.
#![no_main]
use atome::container::{self, Info, Kind};
use atome::ffi::runtime::*;
use atome::format::{Dims, Packing};
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

fn exercise(data: &[u8], dims: Option<&atome_dims_t>, cached: i32) {
    let mut rt: atome_rt_t = unsafe { std::mem::zeroed() };
    let mut work = vec![0u32; 1 << 14];
    let toks = [1i32, 2, 300, -4, 5];
    let mut out = [0i32; 8];
    let dp = dims.map_or(ptr::null(), |d| d as *const _);
    // SAFETY: every pointer is valid for the length given and outlives the calls.
    unsafe {
        let rc = atome_rt_open(&mut rt, data.as_ptr(), data.len(), dp, cached, work.as_mut_ptr().cast(), work.len() * 4);
        assert!((-7..=0).contains(&rc), "open returned {rc}");
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

fuzz_target!(|data: &[u8]| {
    let _ = container::parse(data);
    exercise(data, None, 0);
    let d = dims_from(data);
    let body = data.get(7..).unwrap_or(&[]);
    exercise(data, Some(&d), (data.len() & 1) as i32);
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
    let mut buf = vec![0u8; container::container_len(0, payload.len())];
    if container::write(&mut buf, &info, b"", &payload).is_some() {
        exercise(&buf, None, 1);
    }
});
