//! The ATOME02 / ATOMECL02 / ATOMEP3 loaders (atome_load dispatches on the
//! magic), in two modes chosen by the first byte:
//!  * 0 mod 4 .. 2 mod 4: a blob. Selector 0 keeps the input's own magic; 1
//!    and 2 overwrite it with one of the five magics, so every mutation lands
//!    in a body parser. The return code must be exactly the contract (docs/) one (bytes
//!    above 242 in a base-3 payload: -4), and a blob that loads must run.
//!  * 3 mod 4: differential. One generated model is serialized as ATOME01,
//!    ATOME02 and ATOMEP3 (weights in {0, +-1}, where P3's arithmetic is
//!    ATOME01's) and as ATOMECL01 / ATOMECL02; predict_next and classify on
//!    fuzzed tokens must give the same bits in every packing (docs/FORMATS.md).
#![no_main]
use atome::config::*;
use atome_fuzz::api::*;
use atome_fuzz::blobgen::{describe, encode, expected_load_code, Alphabet, Blob, Format};
use atome_fuzz::{assert_same, special_f32, zeroed, Shifted, Src, V};
use libfuzzer_sys::fuzz_target;

thread_local! {
    static BLOBS: std::cell::RefCell<std::collections::HashMap<(u8, i32), Vec<Blob>>> = Default::default();
}

/// One generated model in the five formats (cached: generating costs more than running).
fn blobs(seed: u8, nc: i32) -> Vec<Blob> {
    BLOBS.with(|m| {
        m.borrow_mut()
            .entry((seed, nc))
            .or_insert_with(|| {
                let d = describe(&DIMS, Some(nc), seed as u64, Alphabet::Ternary);
                Format::ALL.iter().map(|&f| encode(&d, f)).collect()
            })
            .clone()
    })
}

fn blob_mode(sel: u8, s: &mut Src) {
    let shift = s.u8() as usize;
    let mut bytes = s.rest().to_vec();
    if sel != 0 {
        let f = Format::ALL[shift / 8 % 5];
        let m = f.magic();
        if bytes.len() >= m.len() {
            bytes[..m.len()].copy_from_slice(m);
        }
    }
    let blob = Shifted::new(&bytes, shift);
    let b = blob.as_slice();
    let mut model = zeroed::<atome_model_t>();
    let mut clf = zeroed::<atome_classifier_t>();
    let mut st = zeroed::<atome_state_t>();
    // SAFETY: valid pointers and lengths; the blob outlives the models.
    unsafe {
        let rl = atome_load(&mut *model, b.as_ptr(), b.len());
        assert_eq!(rl, expected_load_code(&DIMS, ATOME_MAX_CLASSES, b, false), "atome_load code");
        let rc = atome_classifier_load(&mut *clf, b.as_ptr(), b.len());
        assert_eq!(rc, expected_load_code(&DIMS, ATOME_MAX_CLASSES, b, true), "atome_classifier_load code");
        let toks = [3i32, -5, 1 << 30, (V as i32) - 1];
        let id = atome_predict_next(&*model, &mut *st, toks.as_ptr(), 4);
        assert!(if rl == 0 { id >= 0 && (id as usize) < V } else { id == -1 }, "predict_next {id} after load {rl}");
        let k = atome_classify(&*clf, &mut *st, toks.as_ptr(), 4, std::ptr::null_mut());
        assert!(if rc == 0 { k >= 0 && k < clf.n_classes } else { k == -1 }, "classify {k} after load {rc}");
    }
}

fn diff_mode(s: &mut Src) {
    let seed = s.u8() % 32;
    let nc = 1 + (s.u8() as usize % ATOME_MAX_CLASSES) as i32;
    let mut bl = blobs(seed, nc);
    // Optional hostile floats (scales, norms, SSM), the same in every format:
    // the float lists are in file order, the language-model one a prefix of
    // the classifier one.
    for _ in 0..s.u8() % 3 {
        let i = s.u32() as usize % bl[0].floats.len();
        let sel = s.u8();
        let v = special_f32(sel, s);
        for b in bl.iter_mut() {
            let off = b.floats[i].0;
            b.set_f32(off, v);
        }
    }
    let n = if s.u8().is_multiple_of(4) { 1 + s.u8() as usize % (2 * atome_fuzz::S) } else { 1 + s.u8() as usize % 8 };
    let toks: Vec<i32> = (0..n).map(|_| if s.u8().is_multiple_of(8) { s.i32() } else { (s.u8() as usize % V) as i32 }).collect();
    let mut st = zeroed::<atome_state_t>();
    let mut logits: Vec<(Format, i32, Vec<f32>)> = Vec::new();
    for (k, f) in [Format::Atome01, Format::Atome02, Format::AtomeP3].into_iter().enumerate() {
        let blob = Shifted::new(&bl[k].bytes, seed as usize);
        let mut m = zeroed::<atome_model_t>();
        // SAFETY: valid pointers; the blob outlives the model.
        unsafe {
            assert_eq!(atome_load(&mut *m, blob.as_slice().as_ptr(), blob.as_slice().len()), 0, "{f:?} did not load");
            let id = atome_predict_next(&*m, &mut *st, toks.as_ptr(), n as i32);
            let lg = std::slice::from_raw_parts(atome_get_logits(&mut *st), V).to_vec();
            logits.push((f, id, lg));
        }
    }
    for (f, id, lg) in &logits[1..] {
        assert_eq!(*id, logits[0].1, "{f:?} predicts another id than ATOME01");
        assert_same(&format!("{f:?} logits vs ATOME01"), lg, &logits[0].2);
    }
    let mut cls: Vec<(i32, Vec<f32>)> = Vec::new();
    for (k, f) in [(3, Format::AtomeCl01), (4, Format::AtomeCl02)] {
        let b = &bl[k];
        let mut c = zeroed::<atome_classifier_t>();
        let mut out = vec![0.0f32; nc as usize];
        // SAFETY: as above; out holds n_classes floats.
        unsafe {
            assert_eq!(atome_classifier_load(&mut *c, b.bytes.as_ptr(), b.bytes.len()), 0, "{f:?} did not load");
            assert_eq!(c.n_classes, nc);
            let k = atome_classify(&*c, &mut *st, toks.as_ptr(), n as i32, out.as_mut_ptr());
            cls.push((k, out));
        }
    }
    assert_eq!(cls[0].0, cls[1].0, "ATOMECL02 class != ATOMECL01 class");
    assert_same("ATOMECL02 class logits vs ATOMECL01", &cls[1].1, &cls[0].1);
}

fuzz_target!(|data: &[u8]| {
    let mut s = Src::new(data);
    let sel = s.u8() % 4;
    if sel == 3 {
        diff_mode(&mut s);
    } else {
        blob_mode(sel, &mut s);
    }
});
