//! ATOMEF containers through the C API (docs/CONTAINER.md, docs/API.md):
//! every single-bit flip of a small container's payload and every
//! truncation is refused (corrupted or truncated, never a result), through
//! the runtime API and through atome_load; a container made for another
//! configuration gets -5 from atome_load; and the runtime API gives the
//! compile-time build's bits for this build's configuration.
mod common;

use atome::config::*;
use atome::container::{self, Info, Kind};
use atome::ffi::model::*;
use atome::ffi::run::*;
use atome::ffi::runtime::*;
use atome::ffi::*;
use atome::format::Dims;
use common::*;

fn boxed(blob: &[u8], dims: Dims, kind: Kind, packing: Packing, n_classes: usize) -> Vec<u8> {
    let info = Info { kind, packing, dims, max_seq: 8, n_classes };
    let mut out = vec![0u8; container::container_len(3, blob.len())];
    container::write(&mut out, &info, b"x=1", blob).unwrap();
    out
}

fn rt_dims(d: &Dims, s: i32) -> atome_dims_t {
    atome_dims_t::new(d, s as usize)
}

/// atome_rt_open on `data` (a container: no dims given); the code, and the
/// predicted id when it opened.
fn rt_open_predict(data: &[u8], cached: i32) -> (i32, i32) {
    // SAFETY: every pointer is valid (or null on purpose) for the length passed.
    let mut rt: atome_rt_t = unsafe { std::mem::zeroed() };
    let mut work = vec![0u32; 1 << 13];
    let toks = [3i32, 1, 4, 1, 5];
    // SAFETY: valid pointers and lengths for the calls.
    unsafe {
        let rc = atome_rt_open(&mut rt, data.as_ptr(), data.len(), std::ptr::null(), cached, work.as_mut_ptr().cast(), work.len() * 4);
        (rc, atome_rt_predict_next(&mut rt, toks.as_ptr(), 5))
    }
}

#[test]
fn every_flip_and_cut_of_a_small_container_is_refused() {
    let dims = Dims { vocab: 12, d_model: 6, n_layers: 1, d_head: 3, kernel_size: 2, top_k: 2 };
    for (p, seed) in [(Packing::Trit2, 1), (Packing::Base3, 2), (Packing::P3, 3)] {
        let blob = random_model(Cfg { v: 12, d: 6, l: 1, dh: 3, k: 2, topk: 2 }, p, None, seed).blob(p);
        let good = boxed(&blob, dims, Kind::Model, p, 0);
        let (rc, id) = rt_open_predict(&good, 0);
        assert_eq!(rc, 0, "{p:?}");
        assert!((0..12).contains(&id));
        let payload_at = good.len() - blob.len();
        for bit in 0..good.len() * 8 {
            let mut b = good.clone();
            b[bit / 8] ^= 1 << (bit % 8);
            let (rc, id) = rt_open_predict(&b, (bit & 1) as i32);
            // Payload bits: the CRC. Header bits: its CRC, or a field that
            // no longer reads as a container of this version (-1), or a
            // length that runs past the end (-2).
            let allowed: &[i32] = if bit / 8 >= payload_at { &[-6] } else { &[-1, -2, -6] };
            assert!(allowed.contains(&rc), "{p:?} bit {bit}: code {rc}");
            assert_eq!(id, -1, "{p:?} bit {bit}: a refused handle ran");
        }
        for len in 0..good.len() {
            let (rc, id) = rt_open_predict(&good[..len], 0);
            // Shorter than any magic (7 bytes, as atome_load): -1; else
            // truncated.
            let want = if len < 7 { -1 } else { -2 };
            assert_eq!((rc, id), (want, -1), "{p:?} cut at {len}");
        }
    }
}

#[test]
fn atome_load_takes_containers_checks_them_and_their_configuration() {
    let cfg = Cfg { v: ATOME_VOCAB_SIZE, d: ATOME_D_MODEL, l: ATOME_N_LAYERS, dh: ATOME_D_HEAD, k: ATOME_KERNEL_SIZE, topk: ATOME_TOP_K };
    let blob = random_model(cfg, Packing::Trit2, None, 7).blob(Packing::Trit2);
    let good = boxed(&blob, cfg.dims(), Kind::Model, Packing::Trit2, 0);
    let toks = [1i32, 2, 3, 4];
    let load = |data: &[u8]| {
        // SAFETY: every pointer is valid (or null on purpose) for the length passed.
        let mut m: atome_model_t = unsafe { std::mem::zeroed() };
        // SAFETY: every pointer is valid (or null on purpose) for the length passed.
        let mut st: Box<atome_state_t> = unsafe { Box::new(std::mem::zeroed()) };
        // SAFETY: valid pointers and lengths.
        unsafe {
            let rc = atome_load(&mut m, data.as_ptr(), data.len());
            let id = atome_predict_next(&m, &mut *st, toks.as_ptr(), 4);
            (rc, id, st.logits)
        }
    };
    let (rc, id, logits) = load(&good);
    let (rc0, id0, logits0) = load(&blob);
    assert_eq!((rc, rc0), (0, 0));
    assert_eq!(id, id0);
    assert!(same_bits(&logits, &logits0), "a container runs its payload");
    // Payload bits (every 5th, each a full CRC over the blob): corrupted.
    let at = good.len() - blob.len();
    for bit in (at * 8..good.len() * 8).step_by(5) {
        let mut b = good.clone();
        b[bit / 8] ^= 1 << (bit % 8);
        assert_eq!(load(&b).0, -6, "bit {bit}");
    }
    // Another configuration, header and payload agreeing: -5, naming
    // nothing by size.
    let mut other = cfg.dims();
    other.d_head += 1;
    let other_cfg = Cfg { dh: cfg.dh + 1, ..cfg };
    let other_blob = random_model(other_cfg, Packing::Trit2, None, 8).blob(Packing::Trit2);
    assert_eq!(load(&boxed(&other_blob, other, Kind::Model, Packing::Trit2, 0)).0, -5);
    // A header that does not describe its payload: -8.
    assert_eq!(load(&boxed(&blob, other, Kind::Model, Packing::Trit2, 0)).0, -8);
    // A classifier container is not a language model.
    assert_eq!(load(&boxed(&blob, cfg.dims(), Kind::Classifier, Packing::Trit2, 2)).0, -1);
    // Truncated inside the payload.
    assert_eq!(load(&good[..good.len() - 1]).0, -2);
}

/// The runtime API in the mode of this build's arithmetic (flags 0 and 1 in a
/// float build, 2 and 3 in a q15 one) gives the compile-time build's bits.
#[test]
fn runtime_api_matches_the_compile_time_build() {
    let cfg = Cfg { v: ATOME_VOCAB_SIZE, d: ATOME_D_MODEL, l: ATOME_N_LAYERS, dh: ATOME_D_HEAD, k: ATOME_KERNEL_SIZE, topk: ATOME_TOP_K };
    for (p, seed) in [(Packing::Trit2, 11), (Packing::Base3, 12), (Packing::P3, 13)] {
        let blob = random_model(cfg, p, None, seed).blob(p);
        let d = rt_dims(&cfg.dims(), ATOME_MAX_SEQ as i32);
        // The runtime mode of this build's arithmetic, both plans.
        let dtype = if ATOME_DTYPE_Q15 == 1 { ATOME_RT_Q15 } else { 0 };
        for cached in [dtype, dtype | ATOME_RT_CACHED] {
            // SAFETY: every pointer is valid (or null on purpose) for the length passed.
            let mut m: atome_model_t = unsafe { std::mem::zeroed() };
            // SAFETY: every pointer is valid (or null on purpose) for the length passed.
            let mut st: Box<atome_state_t> = unsafe { Box::new(std::mem::zeroed()) };
            // SAFETY: every pointer is valid (or null on purpose) for the length passed.
            let mut rt: atome_rt_t = unsafe { std::mem::zeroed() };
            // SAFETY: valid pointers and lengths.
            let size = unsafe { atome_rt_work_size(&d, cached) };
            let mut work = vec![0u32; size / 4];
            // SAFETY: as above.
            unsafe {
                assert_eq!(atome_load(&mut m, blob.as_ptr(), blob.len()), 0);
                assert_eq!(atome_rt_open(&mut rt, blob.as_ptr(), blob.len(), &d, cached, work.as_mut_ptr().cast(), size), 0);
                // One word short: refused.
                let mut rt2: atome_rt_t = std::mem::zeroed();
                assert_eq!(atome_rt_open(&mut rt2, blob.as_ptr(), blob.len(), &d, cached, work.as_mut_ptr().cast(), size - 4), -7);
            }
            // Growing token lists (the cached plan extends its cache), and a
            // list longer than the window.
            let toks: Vec<i32> = (0..ATOME_MAX_SEQ as i32 + 3).map(|i| (i * 37 + 5) % 300 - 20).collect();
            for n in [1, 2, 3, 5, toks.len()] {
                // SAFETY: as above.
                unsafe {
                    let a = atome_predict_next(&m, &mut *st, toks.as_ptr(), n as i32);
                    let b = atome_rt_predict_next(&mut rt, toks.as_ptr(), n as i32);
                    assert_eq!(a, b, "{p:?} cached={cached} n={n}");
                    let lr = std::slice::from_raw_parts(atome_rt_logits(&rt), ATOME_VOCAB_SIZE);
                    assert!(same_bits(&st.logits, lr), "{p:?} cached={cached} n={n}");
                }
            }
            let (mut o1, mut o2) = (vec![0i32; 8], vec![0i32; 8]);
            // SAFETY: as above.
            unsafe {
                let g1 = atome_generate(&m, &mut *st, toks.as_ptr(), 3, o1.as_mut_ptr(), 8);
                let g2 = atome_rt_generate(&mut rt, toks.as_ptr(), 3, o2.as_mut_ptr(), 8);
                assert_eq!((g1, &o1), (g2, &o2));
            }
        }
    }
}

#[test]
fn runtime_api_null_and_bad_arguments() {
    let d = rt_dims(&Dims { vocab: 12, d_model: 6, n_layers: 1, d_head: 3, kernel_size: 2, top_k: 2 }, 8);
    let mut work = vec![0u32; 4096];
    // SAFETY: every pointer is valid (or null on purpose) for the length passed.
    let mut rt: atome_rt_t = unsafe { std::mem::zeroed() };
    let toks = [1i32];
    // SAFETY: every pointer is null or valid for the length given.
    unsafe {
        assert_eq!(atome_rt_work_size(std::ptr::null(), 0), 0);
        let mut zero = d;
        zero.d_model = 0;
        assert_eq!(atome_rt_work_size(&zero, 0), 0);
        assert_eq!(atome_rt_open(std::ptr::null_mut(), [0u8].as_ptr(), 1, &d, 0, work.as_mut_ptr().cast(), 16384), -1);
        assert_eq!(atome_rt_open(&mut rt, std::ptr::null(), 0, &d, 0, work.as_mut_ptr().cast(), 16384), -1);
        // A bare blob needs its dims: -9.
        assert_eq!(atome_rt_open(&mut rt, b"ATOME01xxxx".as_ptr(), 11, std::ptr::null(), 0, work.as_mut_ptr().cast(), 16384), -9);
        assert_eq!(atome_rt_predict_next(&mut rt, toks.as_ptr(), 1), -1);
        assert_eq!(atome_rt_predict_next(std::ptr::null_mut(), toks.as_ptr(), 1), -1);
        assert!(atome_rt_logits(std::ptr::null()).is_null());
        let mut out = [0i32; 2];
        assert_eq!(atome_rt_generate(std::ptr::null_mut(), toks.as_ptr(), 1, out.as_mut_ptr(), 2), 0);
        assert_eq!(atome_rt_classify(std::ptr::null_mut(), toks.as_ptr(), 1, std::ptr::null_mut()), -1);
        let mut e = [0f32; 4];
        assert_eq!(atome_rt_router_entropy(std::ptr::null_mut(), e.as_mut_ptr()), -1);
        let mut dd = atome_dims_t::default();
        assert_eq!(atome_rt_dims(std::ptr::null(), &mut dd), -1);
        // Misaligned buffer: -7.
        let blob = random_model(Cfg { v: 12, d: 6, l: 1, dh: 3, k: 2, topk: 2 }, Packing::Trit2, None, 1).blob(Packing::Trit2);
        let mis = (work.as_mut_ptr() as *mut u8).add(1);
        assert_eq!(atome_rt_open(&mut rt, blob.as_ptr(), blob.len(), &d, 0, mis.cast(), 8000), -7);
        assert_eq!(atome_rt_open(&mut rt, blob.as_ptr(), blob.len(), &d, 0, work.as_mut_ptr().cast(), 16384), 0);
        // A language model refuses classify; a dims mismatch against a container is -5.
        assert_eq!(atome_rt_classify(&mut rt, toks.as_ptr(), 1, std::ptr::null_mut()), -1);
        let dims = Dims { vocab: 12, d_model: 6, n_layers: 1, d_head: 3, kernel_size: 2, top_k: 2 };
        let c = boxed(&blob, dims, Kind::Model, Packing::Trit2, 0);
        let mut wrong = d;
        wrong.d_head = 4;
        assert_eq!(atome_rt_open(&mut rt, c.as_ptr(), c.len(), &wrong, 0, work.as_mut_ptr().cast(), 16384), -5);
        assert_eq!(atome_rt_open(&mut rt, c.as_ptr(), c.len(), &d, 0, work.as_mut_ptr().cast(), 16384), 0);
        assert_eq!(atome_rt_dims(&rt, &mut dd), 0);
        assert_eq!(dd, d);
    }
}
