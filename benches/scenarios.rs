//! Criterion benchmarks of the BENCHMARKS.md#reference-scenarios scenarios through the Rust API
//! (atome::format::parse_model / parse_classifier + atome::runner::Runner,
//! lean or cached, over Vecs), which take the model dimensions at run time,
//! so one build runs all five configurations.
//! (benches/scenarios.c is the C-API driver that scripts/callgrind.sh counts.)
//!
//!   S1 944K (S=64)  predict_next(T[0:64))           lean, cached (fresh), ATOME02
//!   S2 944K (S=64)  generate(T[64:80), 64)          lean, cached (fresh)
//!   S3 default.atome (S=32) predict_next(T[10:42))  lean, cached (fresh)
//!   S4 toy (S=64)   generate(T[90:98), 64)          lean, cached (fresh)
//!   S5 agri.atomecl (S=32) classify(T[20:52))       lean, cached (fresh)
//!
//! "cached (fresh)": the cache is invalidated before every call, as on a newly
//! atome_init'ed state, so only reuse inside the call counts.
//! The ATOME02 blob is converted in-process from the ATOME01 one (same
//! weights; every output is checked to be identical) unless
//! $ATOME_MODELS/atome_944k.atome02 exists.
//! After criterion, a summary measures ratios in the same run, with
//! interleaved timings: lean/cached for S2 and S4, ATOME02/ATOME01 for S1.
//! Models: $ATOME_MODELS, default ../shared/models (skipped when absent).
// criterion's macros generate undocumented functions.
#![allow(missing_docs)]
use atome::engine::Engine;
use atome::format::{parse_classifier, parse_model, Classifier, Dims, Model, Packing};
use atome::runner::{Plan, Runner, State};
use criterion::{BenchmarkId, Criterion, SamplingMode};
use std::hint::black_box;
use std::path::PathBuf;
use std::time::{Duration, Instant};

const T: &[u8] = b"Once upon a time, there was a little girl named Lily. She loved to play outside in the \
sunshine. One day, she saw a big red ball in the park. She ran to get it, but a dog took it first.";

fn tokens(a: usize, b: usize) -> Vec<i32> {
    T[a..b].iter().map(|&c| c as i32).collect()
}

fn dims(d: usize, l: usize, dh: usize) -> Dims {
    Dims { vocab: 256, d_model: d, n_layers: l, d_head: dh, kernel_size: 5, top_k: 4 }
}

fn models_dir() -> PathBuf {
    match std::env::var_os("ATOME_MODELS") {
        Some(p) => PathBuf::from(p),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/models"),
    }
}

/// One state (lean or cached, sized for (dims, s)) and the calls the
/// scenarios make, through the library's runner.
struct Mem(State<Vec<f32>, Vec<i32>>);

impl Mem {
    fn new(cached: bool, d: &Dims, s: usize) -> Mem {
        let plan = if cached { Plan::Cached } else { Plan::Lean };
        Mem(State::new(plan, *d, s, vec![0.0; Runner::work_floats(d, s, plan)], vec![0.0; d.vocab], vec![0; s]))
    }

    /// Forgets any cache (a freshly initialised state).
    fn reset(&mut self) {
        self.0.forget();
    }

    fn runner(&mut self) -> Runner<'_> {
        self.0.runner().expect("state memory")
    }

    /// predict_next; the logits are copied to `logits`.
    fn predict(&mut self, model: &Model, toks: &[i32], logits: &mut [f32]) -> usize {
        let mut r = self.runner();
        let id = r.predict(model, toks).expect("predict");
        logits.copy_from_slice(r.logits());
        id
    }

    /// atome_generate: greedy, while fewer than out.len() were made and the sequence is shorter than S.
    fn generate(&mut self, model: &Model, prompt: &[i32], out: &mut [i32]) -> usize {
        self.runner().generate_greedy(model, prompt, out)
    }

    fn classify(&mut self, clf: &Classifier, toks: &[i32], class_logits: &mut [f32]) -> usize {
        self.runner().classify(clf, toks, Some(class_logits)).expect("classify")
    }
}

/// The same model as ATOME02: the library re-packs it five trits a byte.
fn to_atome02(blob: &[u8], dims: &Dims) -> Vec<u8> {
    let mut out = vec![0u8; atome::format::blob_bytes(dims, atome::format::Format::Atome02, 0)];
    let len = atome::format::repack(blob, dims, Packing::Base3, &mut out).expect("ternary ATOME01 blob");
    out.truncate(len);
    out
}

/// Median of interleaved timings of `a` and `b` (at least 3 runs each, until ~budget).
fn interleaved(budget: Duration, mut a: impl FnMut(), mut b: impl FnMut()) -> (f64, f64) {
    let (mut ta, mut tb) = (Vec::new(), Vec::new());
    let start = Instant::now();
    while ta.len() < 3 || (start.elapsed() < budget && ta.len() < 101) {
        let t0 = Instant::now();
        a();
        ta.push(t0.elapsed().as_secs_f64());
        let t0 = Instant::now();
        b();
        tb.push(t0.elapsed().as_secs_f64());
    }
    let med = |v: &mut Vec<f64>| {
        v.sort_by(|x, y| x.partial_cmp(y).unwrap());
        v[v.len() / 2]
    };
    (med(&mut ta), med(&mut tb))
}

fn ms(s: f64) -> String {
    format!("{:.3} ms", s * 1e3)
}

fn main() {
    let dir = models_dir();
    let read = |name: &str| std::fs::read(dir.join(name));
    let (Ok(b944), Ok(bdef), Ok(btoy), Ok(bagri)) =
        (read("atome_944k.bin"), read("default.atome"), read("model_toy.atome"), read("agri.atomecl"))
    else {
        eprintln!("scenarios bench: models not found in {} (set ATOME_MODELS); skipped", dir.display());
        return;
    };
    let (d944, dsmall, dcls) = (dims(256, 8, 64), dims(64, 4, 16), dims(32, 2, 8));
    let m944 = parse_model(&b944, &d944).expect("944K blob");
    let mdef = parse_model(&bdef, &dsmall).expect("default blob");
    let mtoy = parse_model(&btoy, &dsmall).expect("toy blob");
    let cagri = parse_classifier(&bagri, &dcls, 16).expect("agri blob");
    let (b02, b02_src) = match read("atome_944k.atome02") {
        Ok(b) => (b, "file atome_944k.atome02"),
        Err(_) => (to_atome02(&b944, &d944), "converted in-process from atome_944k.bin"),
    };
    let m944_02 = parse_model(&b02, &d944).expect("ATOME02 blob");
    assert_eq!(m944_02.packing, Packing::Base3);

    let (t1, t2, t3, t4, t5) = (tokens(0, 64), tokens(64, 80), tokens(10, 42), tokens(90, 98), tokens(20, 52));
    let mut logits = vec![0.0f32; 256];
    let mut out = vec![0i32; 64];
    let mut cl = vec![0.0f32; 16];

    // Sanity: lean, cached and ATOME02 give the same results (as the C driver prints).
    {
        let mut r = Vec::new();
        for cached in [false, true] {
            let mut m = Mem::new(cached, &d944, 64);
            let id = m.predict(&m944, &t1, &mut logits);
            let l1 = logits.clone();
            m.reset();
            let id02 = m.predict(&m944_02, &t1, &mut logits);
            assert_eq!((id, &l1), (id02, &logits), "ATOME02 differs from ATOME01");
            m.reset();
            let n = m.generate(&m944, &t2, &mut out);
            let g2 = out[..n].to_vec();
            let mut m = Mem::new(cached, &dsmall, 32);
            let id3 = m.predict(&mdef, &t3, &mut logits);
            let mut m = Mem::new(cached, &dsmall, 64);
            let n = m.generate(&mtoy, &t4, &mut out);
            let g4 = out[..n].to_vec();
            let mut m = Mem::new(cached, &dcls, 32);
            let c5 = m.classify(&cagri, &t5, &mut cl);
            r.push((id, g2, id3, g4, c5));
        }
        assert_eq!(r[0], r[1], "lean and cached differ");
        let (id, g2, id3, g4, c5) = &r[0];
        let text = |g: &[i32]| g.iter().map(|&t| t as u8 as char).collect::<String>();
        println!(
            "scenario results: S1 -> {id}, S2 -> {:?}, S3 -> {id3}, S4 -> {:?}, S5 -> class {c5}; ATOME02 ({b02_src}, {} bytes) identical",
            text(g2),
            text(g4),
            b02.len()
        );
    }

    let mut c = Criterion::default().configure_from_args().sample_size(10).warm_up_time(Duration::from_millis(500));
    {
        let mut g = c.benchmark_group("scenario");
        g.sampling_mode(SamplingMode::Flat).measurement_time(Duration::from_secs(3));
        for cached in [false, true] {
            let st = if cached { "cached" } else { "lean" };
            let mut m = Mem::new(cached, &d944, 64);
            g.bench_function(BenchmarkId::new("S1_predict_944k", st), |b| {
                b.iter(|| {
                    m.reset();
                    m.predict(&m944, black_box(&t1), &mut logits)
                })
            });
            if !cached {
                g.bench_function(BenchmarkId::new("S1_predict_944k", "lean_atome02"), |b| {
                    b.iter(|| m.predict(&m944_02, black_box(&t1), &mut logits))
                });
            }
            g.bench_function(BenchmarkId::new("S2_generate_944k", st), |b| {
                b.iter(|| {
                    m.reset();
                    m.generate(&m944, black_box(&t2), &mut out)
                })
            });
            let mut m = Mem::new(cached, &dsmall, 32);
            g.bench_function(BenchmarkId::new("S3_predict_default", st), |b| {
                b.iter(|| {
                    m.reset();
                    m.predict(&mdef, black_box(&t3), &mut logits)
                })
            });
            let mut m = Mem::new(cached, &dsmall, 64);
            g.bench_function(BenchmarkId::new("S4_generate_toy", st), |b| {
                b.iter(|| {
                    m.reset();
                    m.generate(&mtoy, black_box(&t4), &mut out)
                })
            });
            let mut m = Mem::new(cached, &dcls, 32);
            g.bench_function(BenchmarkId::new("S5_classify_agri", st), |b| {
                b.iter(|| {
                    m.reset();
                    m.classify(&cagri, black_box(&t5), &mut cl)
                })
            });
        }
        g.finish();
    }
    c.final_summary();

    // Ratios measured in this run (interleaved, medians): skipped for --list /
    // --test, and when a filter is given that names neither "scenario" nor "ratio".
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "--list" || a == "--test") {
        return;
    }
    let filters: Vec<&String> = args.iter().filter(|a| !a.starts_with('-')).collect();
    if !filters.is_empty() && !filters.iter().any(|f| "scenario".contains(f.as_str()) || f.contains("scenario") || f.contains("ratio")) {
        return;
    }
    println!("\nratios (interleaved runs, medians):");
    let mut lean = Mem::new(false, &d944, 64);
    let mut cached = Mem::new(true, &d944, 64);
    let mut o2 = vec![0i32; 64];
    let mut lg2 = vec![0.0f32; 256];
    let (a, b) = interleaved(
        Duration::from_secs(8),
        || {
            lean.generate(&m944, black_box(&t2), &mut out);
        },
        || {
            cached.reset();
            cached.generate(&m944, black_box(&t2), &mut o2);
        },
    );
    println!("  S2 generate 944K: lean {} / cached {} = {:.1}x", ms(a), ms(b), a / b);
    let mut lean = Mem::new(false, &dsmall, 64);
    let mut cached = Mem::new(true, &dsmall, 64);
    let (a, b) = interleaved(
        Duration::from_secs(3),
        || {
            lean.generate(&mtoy, black_box(&t4), &mut out);
        },
        || {
            cached.reset();
            cached.generate(&mtoy, black_box(&t4), &mut o2);
        },
    );
    println!("  S4 generate toy:  lean {} / cached {} = {:.1}x", ms(a), ms(b), a / b);
    let mut m1 = Mem::new(false, &d944, 64);
    let mut m2 = Mem::new(false, &d944, 64);
    let (a, b) = interleaved(
        Duration::from_secs(4),
        || {
            m2.predict(&m944_02, black_box(&t1), &mut lg2);
        },
        || {
            m1.predict(&m944, black_box(&t1), &mut logits);
        },
    );
    println!("  S1 predict 944K lean: ATOME02 {} / ATOME01 {} = {:.2}x", ms(a), ms(b), a / b);
}
