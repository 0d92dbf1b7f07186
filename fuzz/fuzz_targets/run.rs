//! The inference entry points on hostile input: a blob (usually a valid one
//! from the generator, with byte and float patches — NaN, inf, huge scales —
//! and length changes; sometimes the input's raw bytes), loaded at any
//! alignment, then a few calls with arbitrary token lists (any length, ids
//! negative or huge, n not matching, null pointers), arbitrary sampling
//! parameters and garbage states. Checks: no crash/hang/OOB (ASan), results
//! in range, outputs never written past their length, logits consistent
//! with the returned id, counts exactly as docs/ARITHMETIC.md says, and results
//! independent of the state's previous contents (purity).
//! In a q15 library (ATOME_DTYPE=q15; scripts/fuzz_smoke.sh builds one) the
//! same calls run the integer engine, with its own rules (docs/Q15.md): no
//! logit is ever NaN.
#![no_main]
use atome::config::*;
use atome_fuzz::api::*;
use atome_fuzz::blobgen::{generate, Blob, Field, Format};
use atome_fuzz::{argmax, same, scribble, special_f32, zeroed, Shifted, Src, L, S, V};
use libfuzzer_sys::fuzz_target;
use std::ptr;

const GUARD: usize = 4;
/// A q15 library (the integer engine behind the C API).
const Q15: bool = ATOME_DTYPE_Q15 == 1;

thread_local! {
    static BLOBS: std::cell::RefCell<std::collections::HashMap<(u8, i32, u8), Blob>> = Default::default();
}

/// A generated blob (64 seeds a format), cached: generation costs more than a run.
fn cached_blob(fmt: Format, nc: i32, seed: u8) -> Blob {
    let key = (fmt.packing() as u8 + if fmt.is_classifier() { 8 } else { 0 }, if fmt.is_classifier() { nc } else { 0 }, seed % 64);
    BLOBS.with(|m| m.borrow_mut().entry(key).or_insert_with(|| generate(&DIMS, fmt, nc, seed as u64 % 64)).clone())
}
const SENT: i32 = 0x5A5A_5A5A;

fn tokens(s: &mut Src) -> Vec<i32> {
    let len = match s.u8() % 8 {
        0 => 0,
        1 => S + 1 + s.u8() as usize % (2 * S + 1),
        2 => S,
        _ => 1 + s.u8() as usize % S,
    };
    let mode = s.u8();
    (0..len)
        .map(|i| match (mode as usize + i) % 9 {
            0 => s.i32(),
            1 => -1 - (s.u8() as i32),
            2 => V as i32 + s.u8() as i32,
            3 => [i32::MIN, i32::MAX, -1, V as i32, V as i32 - 1, 0][s.u8() as usize % 6],
            _ => (s.u8() as usize % V) as i32,
        })
        .collect()
}

/// n passed with a token buffer of `len` (never more than len: that would be the caller's UB).
fn n_for(len: usize, s: &mut Src) -> i32 {
    match s.u8() % 16 {
        0 => 0,
        1 => -(s.u8() as i32) - 1,
        2 => i32::MIN,
        3 => (len / 2) as i32,
        _ => len as i32,
    }
}

fn tok_ptr(t: &[i32], s: &mut Src) -> *const i32 {
    if s.u8().is_multiple_of(16) {
        ptr::null()
    } else if t.is_empty() {
        // A valid (dangling, never read) pointer for an empty list.
        ptr::NonNull::<i32>::dangling().as_ptr()
    } else {
        t.as_ptr()
    }
}

struct Ctx {
    model: Box<atome_model_t>,
    clf: Box<atome_classifier_t>,
    st: Box<atome_state_t>,
    st2: Box<atome_state_t>,
    lm_ok: bool,
    cl_ok: bool,
}

/// predict_next, with the checks; returns the id.
unsafe fn predict(c: &mut Ctx, m: *const atome_model_t, loaded: bool, t: &[i32], tp: *const i32, n: i32, s: &mut Src) -> i32 {
    let id = unsafe { atome_predict_next(m, &mut *c.st, tp, n) };
    if !loaded || tp.is_null() || n < 1 {
        assert_eq!(id, -1, "predict_next must refuse (loaded {loaded}, null {}, n {n})", tp.is_null());
        return id;
    }
    assert!(id >= 0 && (id as usize) < V, "predict_next id {id}");
    let lg = unsafe { core::slice::from_raw_parts(atome_get_logits(&mut *c.st), V) };
    assert_eq!(argmax(lg), id as usize, "id is not the first argmax of the logits");
    if Q15 {
        assert!(lg.iter().all(|x| !x.is_nan()), "a NaN logit in the q15 mode");
    }
    if s.u8().is_multiple_of(4) {
        // Purity: a garbage state gives the same bits.
        let keep: Vec<f32> = lg.to_vec();
        scribble(&mut *c.st2, s);
        let id2 = unsafe { atome_predict_next(m, &mut *c.st2, tp, n) };
        assert_eq!(id, id2, "predict_next depends on the state's contents");
        let lg2 = unsafe { core::slice::from_raw_parts(atome_get_logits(&mut *c.st2), V) };
        for (i, (a, b)) in keep.iter().zip(lg2).enumerate() {
            assert!(same(*a, *b), "logit {i} depends on the state: {a:e} vs {b:e}");
        }
        // Same window, written as the last S tokens only.
        let nn = n as usize;
        if nn > S {
            let w = &t[nn - S..nn];
            let id3 = unsafe { atome_predict_next(m, &mut *c.st2, w.as_ptr(), S as i32) };
            assert_eq!(id, id3, "n > S must use the last S tokens");
        }
    }
    id
}

unsafe fn generate_op(c: &mut Ctx, m: *const atome_model_t, loaded: bool, t: &[i32], s: &mut Src, sampled: bool) {
    let tp = tok_ptr(t, s);
    let n = n_for(t.len(), s);
    let max = match s.u8() % 8 {
        0 => -(s.u8() as i32),
        1 => i32::MIN,
        2 => s.u8() as i32 % (S as i32 + 4),
        _ => 1 + s.u8() as i32 % 3,
    };
    let cap = max.max(0) as usize;
    let mut out = vec![SENT; cap + GUARD];
    let op = if s.u8().is_multiple_of(16) { ptr::null_mut() } else { out.as_mut_ptr() };
    let params = atome_sampling_t {
        temperature: s.f32(),
        top_k: match s.u8() % 4 {
            0 => s.i32(),
            1 => 0,
            _ => s.u8() as i32 % (V as i32 + 2),
        },
        top_p: s.f32(),
        reserved: s.u32(),
        seed: s.u64(),
    };
    let pp: *const atome_sampling_t = if s.u8().is_multiple_of(16) { ptr::null() } else { &params };
    let cnt = unsafe {
        if sampled {
            atome_generate_sampled(m, &mut *c.st, tp, n, op, max, pp)
        } else {
            atome_generate(m, &mut *c.st, tp, n, op, max)
        }
    };
    for (i, &g) in out[cap..].iter().enumerate() {
        assert_eq!(g, SENT, "generate wrote past max_tokens (slot {})", cap + i);
    }
    let refused = !loaded || tp.is_null() || op.is_null() || (sampled && pp.is_null()) || n < 1 || max < 1;
    if refused {
        assert_eq!(cnt, 0, "generate must return 0");
        return;
    }
    let want = (max as usize).min(S.saturating_sub(n as usize));
    assert_eq!(cnt as usize, want, "generate count (prompt {n}, max {max})");
    for &g in &out[..cnt as usize] {
        assert!(g >= 0 && (g as usize) < V, "generated id {g}");
    }
    for &g in &out[cnt as usize..cap] {
        assert_eq!(g, SENT, "generate wrote past its count");
    }
    // The first token is predict_next of the prompt (greedy, or temperature <= 0 / NaN).
    // `!(t > 0)` is meant: NaN temperatures are greedy too.
    #[allow(clippy::neg_cmp_op_on_partial_ord)]
    let greedy = !sampled || !(params.temperature > 0.0);
    if cnt > 0 && greedy {
        let id = unsafe { atome_predict_next(m, &mut *c.st2, tp, n) };
        assert_eq!(id, out[0], "first generated token != predict_next(prompt)");
    }
}

unsafe fn classify_op(c: &mut Ctx, t: &[i32], s: &mut Src) {
    let tp = tok_ptr(t, s);
    let n = n_for(t.len(), s);
    let nc = if c.cl_ok { c.clf.n_classes.max(0) as usize } else { 0 };
    let mut out = vec![f32::from_bits(0x7fc0_dead); nc + GUARD];
    let op = if s.u8().is_multiple_of(4) { ptr::null_mut() } else { out.as_mut_ptr() };
    let k = unsafe { atome_classify(&*c.clf, &mut *c.st, tp, n, op) };
    for &g in &out[nc..] {
        assert_eq!(g.to_bits(), 0x7fc0_dead, "classify wrote past n_classes");
    }
    if !c.cl_ok || tp.is_null() || n < 1 {
        assert_eq!(k, -1, "classify must refuse");
        return;
    }
    assert!(k >= 0 && (k as usize) < nc, "class {k} of {nc}");
    if !op.is_null() {
        assert_eq!(argmax(&out[..nc]), k as usize, "class is not the first argmax of the class logits");
        if Q15 {
            assert!(out[..nc].iter().all(|x| !x.is_nan()), "a NaN class logit in the q15 mode");
        }
        // Same class without the logits buffer, and from a garbage state.
        scribble(&mut *c.st2, s);
        let k2 = unsafe { atome_classify(&*c.clf, &mut *c.st2, tp, n, ptr::null_mut()) };
        assert_eq!(k, k2, "classify depends on the state or on class_logits");
    }
}

unsafe fn entropy_op(c: &mut Ctx, m: *const atome_model_t, loaded: bool, t: &[i32], s: &mut Src) {
    if s.u8().is_multiple_of(2) {
        let mut out = vec![-7.0f32; L + GUARD];
        let sp: *const atome_state_t = if s.u8().is_multiple_of(8) { ptr::null() } else { &*c.st };
        let op = if s.u8().is_multiple_of(8) { ptr::null_mut() } else { out.as_mut_ptr() };
        let r = unsafe { atome_router_entropy(sp, op) };
        assert!(r == -1 || r == L as i32, "router_entropy {r}");
        if sp.is_null() || op.is_null() {
            assert_eq!(r, -1);
        }
        assert!(out[L..].iter().all(|&x| x == -7.0), "router_entropy wrote past L");
    } else {
        let tp = tok_ptr(t, s);
        let n = n_for(t.len(), s);
        let cap = match s.u8() % 4 {
            0 => s.u8() as usize,
            _ => S * L,
        };
        let out_len = if s.u8().is_multiple_of(8) { -(s.u8() as i32) - 1 } else { (cap as i32) - (s.u8() % 3) as i32 };
        let mut out = vec![-7.0f32; cap + GUARD];
        let op = if s.u8().is_multiple_of(16) { ptr::null_mut() } else { out.as_mut_ptr() };
        let r = unsafe { atome_router_entropy_all(m, &mut *c.st, tp, n, op, out_len) };
        assert!(out[cap..].iter().all(|&x| x == -7.0), "router_entropy_all wrote past its buffer");
        let win = (n.max(0) as usize).min(S);
        let ok = loaded && !tp.is_null() && !op.is_null() && n >= 1 && out_len >= 0 && (out_len as usize) >= win * L;
        if ok {
            assert_eq!(r, win as i32, "router_entropy_all count");
            let written = win * L;
            assert!(out[written..cap].iter().all(|&x| x == -7.0), "router_entropy_all wrote past n*L");
            for &e in &out[..written] {
                assert!(e.is_nan() || (-1e-6..=1.0987).contains(&e), "entropy {e} out of [0, ln 3]");
            }
            let mut last = vec![0.0f32; L];
            assert_eq!(unsafe { atome_router_entropy(&*c.st, last.as_mut_ptr()) }, L as i32);
            for l in 0..L {
                assert!(same(last[l], out[(win - 1) * L + l]), "router_entropy != last row of router_entropy_all");
            }
        } else {
            assert_eq!(r, -1, "router_entropy_all must refuse");
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let mut s = Src::new(data);
    let mode = s.u8();
    let shift = s.u8() as usize;
    // The blob.
    let (bytes, fmt) = if mode % 8 == 7 {
        let n = s.u16() as usize;
        (s.bytes(n).to_vec(), None)
    } else {
        let fmt = Format::ALL[mode as usize % 5];
        let nc = 1 + (s.u8() as usize % ATOME_MAX_CLASSES) as i32;
        let mut b = cached_blob(fmt, nc, s.u8());
        let np = s.u8() % 8;
        for _ in 0..np {
            match s.u8() % 8 {
                0 | 1 => {
                    let o = s.u32() as usize % b.bytes.len();
                    b.bytes[o] = s.u8();
                }
                2..=5 => {
                    let i = s.u16() as usize % b.floats.len();
                    let sel = s.u8();
                    let v = special_f32(sel, &mut s);
                    b.set_f32(b.floats[i].0, v);
                }
                6 => {
                    let fields = [Field::SsmA, Field::NormGamma, Field::NormBeta, Field::SsmB, Field::SsmC, Field::FinalGamma, Field::Wk, Field::Router];
                    let f = fields[s.u8() as usize % fields.len()];
                    let sel = s.u8();
                    let v = special_f32(sel, &mut s);
                    b.set_field(f, v);
                }
                _ => {
                    let d = (s.u8() % 40) as i32 - 20;
                    let nl = (b.bytes.len() as i64 + d as i64).max(0) as usize;
                    b.bytes.resize(nl, s.u8());
                }
            }
        }
        (b.bytes, Some(fmt))
    };
    let blob = Shifted::new(&bytes, shift);
    let bl = blob.as_slice();
    let mut c = Ctx {
        model: zeroed(),
        clf: zeroed(),
        st: zeroed(),
        st2: zeroed(),
        lm_ok: false,
        cl_ok: false,
    };
    if s.u8().is_multiple_of(4) {
        scribble(&mut *c.st, &mut s);
    }
    // SAFETY: all pointers below are valid for the lengths passed (or null);
    // the blob outlives the models.
    unsafe {
        let want_lm = fmt.is_none_or(|f| !f.is_classifier());
        let want_cl = fmt.is_none_or(|f| f.is_classifier());
        if want_lm {
            let r = atome_load(&mut *c.model, bl.as_ptr(), bl.len());
            assert!((-4..=0).contains(&r), "atome_load {r}");
            c.lm_ok = r == 0;
        }
        if want_cl {
            let r = atome_classifier_load(&mut *c.clf, bl.as_ptr(), bl.len());
            assert!((-4..=0).contains(&r), "atome_classifier_load {r}");
            c.cl_ok = r == 0;
            if c.cl_ok {
                assert!(c.clf.n_classes >= 1 && c.clf.n_classes as usize <= ATOME_MAX_CLASSES);
            }
        }
        let n_ops = 1 + s.u8() % 3;
        for _ in 0..n_ops {
            let op = s.u8();
            // Which model the LM calls get: the LM, the classifier's base, an unloaded one, or null.
            let unloaded = zeroed::<atome_model_t>();
            let (m, loaded): (*const atome_model_t, bool) = match (op >> 4) % 8 {
                0 => (ptr::null(), false),
                1 => (&*unloaded, false),
                2 | 3 => (&c.clf.base, c.cl_ok),
                _ => (&*c.model, c.lm_ok),
            };
            let t = tokens(&mut s);
            match op % 8 {
                0 | 1 => {
                    let tp = tok_ptr(&t, &mut s);
                    let n = n_for(t.len(), &mut s);
                    let sp = if s.u8().is_multiple_of(32) { ptr::null_mut() } else { &mut *c.st as *mut atome_state_t };
                    if sp.is_null() {
                        assert_eq!(atome_predict_next(m, sp, tp, n), -1);
                    } else {
                        predict(&mut c, m, loaded, &t, tp, n, &mut s);
                    }
                }
                2 => generate_op(&mut c, m, loaded, &t, &mut s, false),
                3 => generate_op(&mut c, m, loaded, &t, &mut s, true),
                4 | 5 => classify_op(&mut c, &t, &mut s),
                6 => entropy_op(&mut c, m, loaded, &t, &mut s),
                _ => {
                    atome_init(ptr::null_mut());
                    atome_init(&mut *c.st);
                    assert!(atome_get_logits(ptr::null_mut()).is_null());
                    let mut cfg = atome_build_config_t::default();
                    assert_eq!(atome_get_build_config(ptr::null_mut()), -1);
                    assert_eq!(atome_get_build_config(&mut cfg), 0);
                    assert_eq!(cfg.state_size as usize, core::mem::size_of::<atome_state_t>());
                }
            }
        }
    }
});
