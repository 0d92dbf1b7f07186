//! The runtime API's q15 modes (flags ATOME_RT_Q15 and ATOME_RT_Q15 |
//! ATOME_RT_CACHED) against the q15 engine's safe Rust types, `Q15State`
//! (`Q15Runner`, lean) and `Q15CachedState` (`Q15CachedRunner`, cached),
//! bit for bit: logits, ids, router entropies, greedy and sampled
//! generation, classifiers, and cached calls whose tokens extend, repeat or
//! leave the cached prefix; then the return codes of every call in the four
//! modes, the buffer checks (size, alignment, flags) and purity. Random
//! blobs from the shared generator (tests/common) in every packing, in any
//! build of the library; default.atome and model_toy.atome from
//! ../shared/models too (that test skips without ../shared).
mod common;
use atome::engine::Engine;
use atome::ffi::runtime::*;
use atome::ffi::types::atome_sampling_t;
use atome::format::{parse_classifier, parse_model, Dims, Packing};
use atome::forward::sample::Sampling;
use atome::q15::{Q15CachedLayout, Q15CachedState, Q15Layout, Q15State};
use common::*;

type Lean = Q15State<Vec<i16>, Vec<i32>, Vec<f32>>;
type Cached = Q15CachedState<Vec<i16>, Vec<i32>, Vec<f32>, Vec<i32>>;

fn lean(dims: Dims, s: usize) -> Lean {
    let lay = Q15Layout::new(&dims, s);
    Q15State::new(dims, s, vec![0; lay.i16s], vec![0; lay.i32s], vec![0.0; dims.vocab])
}

fn cached(dims: Dims, s: usize) -> Cached {
    let lay = Q15CachedLayout::new(&dims, s);
    Q15CachedState::new(dims, s, vec![0; lay.i16s], vec![0; lay.i32s], vec![0.0; dims.vocab], vec![0; s])
}

/// An open runtime handle over its own buffer (the blob is the caller's).
struct Rt {
    rt: Box<atome_rt_t>,
    _work: Vec<u32>,
    l: usize,
    n_classes: usize,
}

fn c_dims(dims: &Dims, s: usize) -> atome_dims_t {
    atome_dims_t::new(dims, s)
}

/// Opens `blob` (bare, with `dims` and window `s`) with `flags` in a buffer
/// of exactly atome_rt_work_size bytes, filled with `fill` first.
fn open(blob: &[u8], dims: &Dims, s: usize, flags: i32, fill: u32) -> Rt {
    let d = c_dims(dims, s);
    // SAFETY: live struct; the handle is plain data; the buffer and the
    // blob outlive the handle's use in each test.
    unsafe {
        let size = atome_rt_work_size(&d, flags);
        assert!(size > 0 && size.is_multiple_of(4), "size {size}");
        let mut work = vec![fill; size / 4];
        let mut rt: Box<atome_rt_t> = Box::new(std::mem::zeroed());
        let rc = atome_rt_open(&mut *rt, blob.as_ptr(), blob.len(), &d, flags, work.as_mut_ptr().cast(), size);
        assert_eq!(rc, 0, "open flags {flags}");
        let mut got = atome_dims_t::default();
        assert_eq!(atome_rt_dims(&*rt, &mut got), 0);
        Rt { rt, _work: work, l: dims.n_layers, n_classes: got.n_classes as usize }
    }
}

/// (id, logits, router entropies) of one call.
type Out = (i32, Vec<f32>, Vec<f32>);

impl Rt {
    fn predict(&mut self, t: &[i32]) -> Out {
        // SAFETY: an open handle; the slices are live.
        unsafe {
            let id = atome_rt_predict_next(&mut *self.rt, t.as_ptr(), t.len() as i32);
            let v = self.rt.dims.vocab_size as usize;
            let lg = std::slice::from_raw_parts(atome_rt_logits(&*self.rt), v).to_vec();
            let mut ent = vec![f32::NAN; self.l];
            assert_eq!(atome_rt_router_entropy(&mut *self.rt, ent.as_mut_ptr()), self.l as i32);
            (id, lg, ent)
        }
    }

    fn classify(&mut self, t: &[i32]) -> Out {
        let mut lg = vec![f32::NAN; self.n_classes];
        let mut ent = vec![f32::NAN; self.l];
        // SAFETY: an open handle; the slices are live and long enough.
        unsafe {
            let k = atome_rt_classify(&mut *self.rt, t.as_ptr(), t.len() as i32, lg.as_mut_ptr());
            assert_eq!(atome_rt_router_entropy(&mut *self.rt, ent.as_mut_ptr()), self.l as i32);
            (k, lg, ent)
        }
    }

    fn generate(&mut self, p: &[i32], max: usize, sp: Option<(&Sampling, u64)>) -> Vec<i32> {
        let mut out = vec![-9; max];
        // SAFETY: an open handle; the slices are live and long enough.
        let n = unsafe {
            match sp {
                None => atome_rt_generate(&mut *self.rt, p.as_ptr(), p.len() as i32, out.as_mut_ptr(), max as i32),
                Some((q, seed)) => {
                    let params = atome_sampling_t { temperature: q.temperature, top_k: q.top_k, top_p: q.top_p, reserved: 0, seed };
                    atome_rt_generate_sampled(&mut *self.rt, p.as_ptr(), p.len() as i32, out.as_mut_ptr(), max as i32, &params)
                }
            }
        };
        out.truncate(n as usize);
        out
    }
}

/// The same call on a q15 engine (a Rust type).
fn predict_on<E: Engine>(r: &mut E, m: &atome::format::Model, t: &[i32], l: usize) -> Out {
    let id = r.predict(m, t).expect("predict");
    let mut ent = vec![f32::NAN; l];
    r.last_entropy(&mut ent);
    (id as i32, r.logits().to_vec(), ent)
}

fn generate_on<E: Engine>(r: &mut E, m: &atome::format::Model, p: &[i32], max: usize, sp: Option<(&Sampling, u64)>) -> Vec<i32> {
    let mut out = vec![-9; max];
    let n = match sp {
        None => r.generate_greedy(m, p, &mut out),
        Some((q, seed)) => r.generate_sampled(m, p, &mut out, q, seed),
    };
    out.truncate(n);
    out
}

fn assert_same(a: &Out, b: &Out, what: &str) {
    assert_eq!(a.0, b.0, "{what}: id");
    assert!(same_bits(&a.1, &b.1), "{what}: logits");
    assert!(same_bits(&a.2, &b.2), "{what}: router entropies");
}

/// The sequences of calls a cached handle sees: growing prefixes (one new
/// position each), the same list again, a shorter one, an unrelated one,
/// one longer than S and the same slid by one.
fn call_sequence(s: usize, v: usize, seed: u64) -> Vec<Vec<i32>> {
    let long = oob_tokens(s + 5, v, seed);
    let mut cases: Vec<Vec<i32>> = (1..=s.min(12)).map(|n| long[..n].to_vec()).collect();
    cases.push(long[..s].to_vec());
    cases.push(long[..s].to_vec());
    cases.push(long[..3].to_vec());
    cases.push(oob_tokens(s / 2 + 1, v, seed + 1));
    cases.push(long.clone());
    cases.push(long[1..].to_vec());
    cases
}

/// Every language-model check on one blob: flags 2 against `Q15State`,
/// flags 3 against `Q15CachedState` fed the same calls (and the fresh lean
/// result, which a cached call must equal).
fn check_lm(name: &str, blob: &[u8], dims: &Dims, s: usize, seed: u64) {
    let m = parse_model(blob, dims).unwrap();
    let l = dims.n_layers;
    let mut le = lean(*dims, s);
    let mut ca = cached(*dims, s);
    let mut rl = open(blob, dims, s, ATOME_RT_Q15, 0);
    let mut rc = open(blob, dims, s, ATOME_RT_Q15 | ATOME_RT_CACHED, 0xA5A5_A5A5);
    for (i, t) in call_sequence(s, dims.vocab, seed).iter().enumerate() {
        let what = format!("{name} call {i} (n = {})", t.len());
        let want = predict_on(&mut le.runner().unwrap(), &m, t, l);
        assert_same(&rl.predict(t), &want, &format!("{what}, q15 lean"));
        let c = predict_on(&mut ca.runner().unwrap(), &m, t, l);
        assert_same(&rc.predict(t), &c, &format!("{what}, q15 cached"));
        assert_same(&c, &want, &format!("{what}, Q15CachedState against Q15State"));
    }
    let sp = Sampling { temperature: 0.8, top_k: 20, top_p: 0.9 };
    for (pl, mt) in [(1, s), (s / 2, 5), (s - 1, 4), (3, 2), (s, 3)] {
        let p = oob_tokens(pl.max(1), dims.vocab, pl as u64 + seed);
        for samp in [None, Some((&sp, 42 + pl as u64)), Some((&Sampling { temperature: 0.0, top_k: 0, top_p: 1.0 }, 7))] {
            let what = format!("{name} prompt {pl} max {mt} sampling {samp:?}");
            let want = generate_on(&mut le.runner().unwrap(), &m, &p, mt, samp);
            assert_eq!(rl.generate(&p, mt, samp), want, "{what}, q15 lean");
            let c = generate_on(&mut ca.runner().unwrap(), &m, &p, mt, samp);
            assert_eq!(c, want, "{what}: Q15CachedState against Q15State");
            assert_eq!(rc.generate(&p, mt, samp), c, "{what}, q15 cached");
            // The logits after the generation are the last step's.
            // SAFETY: open handles.
            let (a, b) = unsafe {
                (
                    std::slice::from_raw_parts(atome_rt_logits(&*rl.rt), dims.vocab).to_vec(),
                    std::slice::from_raw_parts(atome_rt_logits(&*rc.rt), dims.vocab).to_vec(),
                )
            };
            if !want.is_empty() {
                assert!(same_bits(&a, le.runner().unwrap().logits()), "{what}: lean logits after");
                assert!(same_bits(&b, ca.runner().unwrap().logits()), "{what}: cached logits after");
            }
        }
    }
}

/// Classifier checks: classes, class logits and entropies of flags 2 and 3
/// against the q15 types.
fn check_clf(name: &str, blob: &[u8], dims: &Dims, s: usize, seed: u64) {
    let clf = parse_classifier(blob, dims, 65535).unwrap();
    let l = dims.n_layers;
    let nc = clf.head.rows;
    let mut le = lean(*dims, s);
    let mut ca = cached(*dims, s);
    let mut rl = open(blob, dims, s, ATOME_RT_Q15, 0);
    let mut rc = open(blob, dims, s, ATOME_RT_Q15 | ATOME_RT_CACHED, 0x5A5A_5A5A);
    assert_eq!((rl.n_classes, rc.n_classes), (nc, nc));
    for (i, t) in call_sequence(s, dims.vocab, seed).iter().enumerate() {
        let what = format!("{name} call {i} (n = {})", t.len());
        let mut want = (0, vec![f32::NAN; nc], vec![f32::NAN; l]);
        {
            let mut r = le.runner().unwrap();
            want.0 = r.classify(&clf, t, Some(&mut want.1)).unwrap() as i32;
            r.last_entropy(&mut want.2);
        }
        assert_same(&rl.classify(t), &want, &format!("{what}, q15 lean"));
        let mut c = (0, vec![f32::NAN; nc], vec![f32::NAN; l]);
        {
            let mut r = ca.runner().unwrap();
            c.0 = r.classify(&clf, t, Some(&mut c.1)).unwrap() as i32;
            r.last_entropy(&mut c.2);
        }
        assert_same(&c, &want, &format!("{what}, Q15CachedState against Q15State"));
        assert_same(&rc.classify(t), &c, &format!("{what}, q15 cached"));
    }
}

/// Small configurations: odd sizes, V below 4 D (parameter vectors beyond
/// the logits area), K = 1, a top-k above S, one layer.
const CFGS: &[(Cfg, usize)] = &[
    (Cfg { v: 32, d: 16, l: 2, dh: 8, k: 5, topk: 4 }, 8),
    (Cfg { v: 40, d: 22, l: 3, dh: 6, k: 3, topk: 2 }, 16),
    (Cfg { v: 64, d: 32, l: 2, dh: 8, k: 7, topk: 6 }, 24),
    (Cfg { v: 20, d: 16, l: 1, dh: 4, k: 1, topk: 9 }, 6),
    (Cfg { v: 256, d: 8, l: 2, dh: 16, k: 2, topk: 1 }, 12),
];

#[test]
fn q15_modes_equal_the_q15_types_on_random_blobs() {
    for (i, &(cfg, s)) in CFGS.iter().enumerate() {
        for (j, p) in [Packing::Trit2, Packing::Base3, Packing::P3].into_iter().enumerate() {
            let seed = 100 + 10 * i as u64 + j as u64;
            let blob = random_model(cfg, p, None, seed).blob(p);
            check_lm(&format!("{cfg:?} {p:?}"), &blob, &cfg.dims(), s, seed);
        }
    }
}

#[test]
fn q15_modes_classify_as_the_q15_types_on_random_blobs() {
    for (i, &(cfg, s)) in CFGS.iter().enumerate() {
        for (j, p) in [Packing::Trit2, Packing::Base3].into_iter().enumerate() {
            let seed = 300 + 10 * i as u64 + j as u64;
            let n_classes = [2, 5, 16, 3, 7][i];
            let blob = random_model(cfg, p, Some(n_classes), seed).blob(p);
            check_clf(&format!("{cfg:?} {p:?} {n_classes} classes"), &blob, &cfg.dims(), s, seed);
        }
    }
}

#[test]
fn q15_modes_equal_the_q15_types_on_shared_models() {
    let Some(sh) = shared() else { return };
    let d = Dims { vocab: 256, d_model: 64, n_layers: 4, d_head: 16, kernel_size: 5, top_k: 4 };
    for (file, s) in [("default.atome", 32), ("model_toy.atome", 64)] {
        let blob = std::fs::read(sh.join("models").join(file)).unwrap();
        check_lm(file, &blob, &d, s, 11);
    }
    let d = Dims { vocab: 256, d_model: 32, n_layers: 2, d_head: 8, kernel_size: 5, top_k: 4 };
    let blob = std::fs::read(sh.join("models/agri.atomecl")).unwrap();
    check_clf("agri.atomecl", &blob, &d, 32, 12);
}

/// Every call's return code in the four modes on refusals (null pointers,
/// n < 1, the wrong kind of model, a prompt that fills the window, a handle
/// that did not open) and the kind of result on success: the q15 modes
/// answer as the float ones.
#[test]
fn every_call_returns_the_float_codes_in_the_q15_modes() {
    let cfg = Cfg { v: 40, d: 22, l: 3, dh: 6, k: 3, topk: 2 };
    let (dims, s) = (cfg.dims(), 16);
    let lm = random_model(cfg, Packing::Trit2, None, 5).blob(Packing::Trit2);
    let clf = random_model(cfg, Packing::Trit2, Some(5), 6).blob(Packing::Trit2);
    let codes = |flags: i32| -> Vec<i64> {
        let t = oob_tokens(6, dims.vocab, 3);
        let full = oob_tokens(s, dims.vocab, 4);
        // Room for the largest call below (min(100, S - 6) = 10 ids).
        let mut out = [0i32; 16];
        let mut e = [0f32; 3];
        let mut cl = [0f32; 5];
        let sp = atome_sampling_t { temperature: 0.8, top_k: 5, top_p: 0.9, reserved: 0, seed: 1 };
        let mut a = open(&lm, &dims, s, flags, 0);
        let mut b = open(&clf, &dims, s, flags, 0);
        let (ra, rb) = (&mut *a.rt as *mut atome_rt_t, &mut *b.rt as *mut atome_rt_t);
        // SAFETY: a plain-data handle; all zeros is one that never opened.
        let mut bad: atome_rt_t = unsafe { std::mem::zeroed() };
        let rbad = &mut bad as *mut atome_rt_t;
        let np = std::ptr::null_mut::<atome_rt_t>();
        // SAFETY: open handles, a zeroed one and null; live buffers.
        unsafe {
            let id = atome_rt_predict_next(ra, t.as_ptr(), 6);
            let g = atome_rt_generate(ra, t.as_ptr(), 6, out.as_mut_ptr(), 8);
            let gs = atome_rt_generate_sampled(ra, t.as_ptr(), 6, out.as_mut_ptr(), 8, &sp);
            let k = atome_rt_classify(rb, t.as_ptr(), 6, cl.as_mut_ptr());
            let k_null_out = atome_rt_classify(rb, t.as_ptr(), 6, std::ptr::null_mut());
            vec![
                (0..dims.vocab as i32).contains(&id) as i64,
                g as i64,
                gs as i64,
                (0..5).contains(&k) as i64,
                (k_null_out == k) as i64,
                atome_rt_router_entropy(ra, e.as_mut_ptr()) as i64,
                atome_rt_router_entropy(rb, e.as_mut_ptr()) as i64,
                atome_rt_router_entropy(ra, std::ptr::null_mut()) as i64,
                atome_rt_predict_next(ra, t.as_ptr(), 0) as i64,
                atome_rt_predict_next(ra, std::ptr::null(), 6) as i64,
                atome_rt_predict_next(rb, t.as_ptr(), 6) as i64,
                atome_rt_predict_next(np, t.as_ptr(), 6) as i64,
                atome_rt_predict_next(rbad, t.as_ptr(), 6) as i64,
                atome_rt_generate(ra, full.as_ptr(), s as i32, out.as_mut_ptr(), 8) as i64,
                atome_rt_generate(ra, t.as_ptr(), 6, out.as_mut_ptr(), 0) as i64,
                atome_rt_generate(ra, t.as_ptr(), 6, std::ptr::null_mut(), 8) as i64,
                atome_rt_generate(rb, t.as_ptr(), 6, out.as_mut_ptr(), 8) as i64,
                atome_rt_generate(ra, t.as_ptr(), 0, out.as_mut_ptr(), 8) as i64,
                atome_rt_generate_sampled(ra, t.as_ptr(), 6, out.as_mut_ptr(), 8, std::ptr::null()) as i64,
                atome_rt_generate_sampled(rbad, t.as_ptr(), 6, out.as_mut_ptr(), 8, &sp) as i64,
                atome_rt_generate(ra, t.as_ptr(), 6, out.as_mut_ptr(), 100) as i64,
                atome_rt_classify(ra, t.as_ptr(), 6, cl.as_mut_ptr()) as i64,
                atome_rt_classify(rb, t.as_ptr(), 0, cl.as_mut_ptr()) as i64,
                atome_rt_classify(rbad, t.as_ptr(), 6, cl.as_mut_ptr()) as i64,
                atome_rt_router_entropy(rbad, e.as_mut_ptr()) as i64,
                atome_rt_logits(ra).is_null() as i64,
                atome_rt_logits(rb).is_null() as i64,
                atome_rt_logits(rbad).is_null() as i64,
                atome_rt_logits(np).is_null() as i64,
                atome_rt_dims(rbad, &mut atome_dims_t::default()) as i64,
                atome_rt_dims(ra, std::ptr::null_mut()) as i64,
            ]
        }
    };
    let want = codes(0);
    assert_eq!(&want[..3], &[1, 8, 8], "float lean: successes");
    for flags in 1..4 {
        assert_eq!(codes(flags), want, "flags {flags} against float lean");
    }
}

/// The buffer checks of atome_rt_open in every mode: exactly the size opens,
/// 4 bytes less, a misaligned buffer, a flag bit outside the two, and a
/// null buffer are refused with the float codes.
#[test]
fn open_checks_the_buffer_and_the_flags_in_every_mode() {
    let cfg = Cfg { v: 32, d: 16, l: 2, dh: 8, k: 5, topk: 4 };
    let (dims, s) = (cfg.dims(), 8);
    let blob = random_model(cfg, Packing::Trit2, None, 9).blob(Packing::Trit2);
    let d = c_dims(&dims, s);
    for flags in 0..4 {
        // SAFETY: live structs and buffers.
        unsafe {
            let size = atome_rt_work_size(&d, flags);
            let mut work = vec![0u32; size / 4 + 1];
            let mut rt: atome_rt_t = std::mem::zeroed();
            let w = work.as_mut_ptr();
            assert_eq!(atome_rt_open(&mut rt, blob.as_ptr(), blob.len(), &d, flags, w.cast(), size), 0, "flags {flags}");
            assert_eq!(atome_rt_open(&mut rt, blob.as_ptr(), blob.len(), &d, flags, w.cast(), size - 4), -7, "flags {flags}");
            assert_eq!(atome_rt_predict_next(&mut rt, [1].as_ptr(), 1), -1, "refused after a failed open");
            let mis = (w as *mut u8).add(2);
            assert_eq!(atome_rt_open(&mut rt, blob.as_ptr(), blob.len(), &d, flags, mis.cast(), size), -7, "flags {flags}");
            assert_eq!(atome_rt_open(&mut rt, blob.as_ptr(), blob.len(), &d, flags | 4, w.cast(), size), -1, "flags {flags}");
            assert_eq!(atome_rt_open(&mut rt, blob.as_ptr(), blob.len(), &d, flags, std::ptr::null_mut(), size), -1);
            assert_eq!(atome_rt_work_size(&d, flags | 8), 0);
        }
    }
    // The q15 buffers are the q15 layouts' bytes in whole words (the
    // cached one with its 3-word header and S ids).
    // SAFETY: a live struct.
    let (ql, qc) = unsafe { (atome_rt_work_size(&d, ATOME_RT_Q15), atome_rt_work_size(&d, ATOME_RT_Q15 | ATOME_RT_CACHED)) };
    assert_eq!(ql, Q15Layout::new(&dims, s).bytes(&dims).div_ceil(4) * 4);
    assert_eq!(qc, Q15CachedLayout::new(&dims, s).bytes(&dims, s).div_ceil(4) * 4);
}

/// A result never depends on what the buffer held: two handles, one over
/// zeros and one over garbage, and a cached handle whose buffer is
/// scribbled over between calls (its cache header then fails its check).
#[test]
fn q15_results_do_not_depend_on_the_buffer_contents() {
    let cfg = Cfg { v: 40, d: 22, l: 3, dh: 6, k: 3, topk: 2 };
    let (dims, s) = (cfg.dims(), 16);
    let blob = random_model(cfg, Packing::Base3, None, 21).blob(Packing::Base3);
    for flags in [ATOME_RT_Q15, ATOME_RT_Q15 | ATOME_RT_CACHED] {
        let mut a = open(&blob, &dims, s, flags, 0);
        let mut b = open(&blob, &dims, s, flags, 0xFFFF_FFFF);
        let t = oob_tokens(12, dims.vocab, 2);
        for n in [3, 7, 12, 5] {
            let x = a.predict(&t[..n]);
            assert_same(&b.predict(&t[..n]), &x, &format!("flags {flags} n {n}"));
            for w in b._work.iter_mut() {
                *w = w.wrapping_mul(2654435761).wrapping_add(n as u32);
            }
            assert_same(&b.predict(&t[..n]), &x, &format!("flags {flags} n {n}, scribbled"));
        }
    }
}
