//! End-to-end tests of the `atome` binary: every command on blobs the tests
//! write themselves (always run) and on the shared models (../shared beside
//! the repository; skipped with a message when absent, except in CI, where
//! an absent ../shared fails them).
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_atome")
}

fn atome(args: &[&str]) -> Output {
    Command::new(bin()).args(args).output().expect("run atome")
}

/// Runs and requires success; returns stdout.
fn ok(args: &[&str]) -> String {
    let o = atome(args);
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(o.status.success(), "atome {args:?} failed\nstdout:\n{out}\nstderr:\n{err}");
    out
}

/// Runs and requires exit code `code` (1: runtime failure, 2: usage error); returns stderr.
fn fails_with(code: i32, args: &[&str]) -> String {
    let o = atome(args);
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(code), "atome {args:?}: want exit code {code}\nstderr:\n{err}");
    err
}

fn tmpdir(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Whether this is a CI run (CI set, as CI services do, and not "false" or "0").
fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0")
}

/// ../shared/models relative to the repository root (or $ATOME_SHARED/models), if present.
/// Absent: a skip on a developer's machine, a failure in CI (../shared sits beside every
/// CI checkout, so a test that skipped there would hide a broken set-up).
fn shared_models() -> Option<PathBuf> {
    let shared = match std::env::var_os("ATOME_SHARED") {
        Some(d) => PathBuf::from(d),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared"),
    };
    let p = shared.join("models");
    if p.join("atome_944k.bin").exists() {
        Some(p)
    } else if in_ci() {
        panic!("{}: absent, and CI is set: the shared-model tests must run in CI", p.display());
    } else {
        eprintln!("SKIP: ../shared/models is absent (it sits beside every CI checkout)");
        None
    }
}

/// SHA-256 of a file computed by a tool independent of the code under test:
/// coreutils' sha256sum, else Python's hashlib. Neither: the test fails.
fn reference_sha256(p: &Path) -> String {
    let via = |cmd: &str, args: &[&str]| -> Option<String> {
        let o = Command::new(cmd).args(args).arg(p).output().ok()?;
        let out = String::from_utf8(o.stdout).ok()?;
        let h = out.split_whitespace().next()?.to_ascii_lowercase();
        (o.status.success() && h.len() == 64 && h.bytes().all(|c| c.is_ascii_hexdigit())).then_some(h)
    };
    via("sha256sum", &["-b"])
        .or_else(|| {
            let py = "import hashlib,sys;print(hashlib.sha256(open(sys.argv[1],'rb').read()).hexdigest())";
            via("python3", &["-c", py])
        })
        .expect("neither sha256sum nor python3 could hash the file")
}

// ------------------------------------------------------------ blobs

/// The shared test blob generator (on the library's writer).
#[path = "../../fuzz/src/blobgen.rs"]
mod blobgen;
use blobgen::{Alphabet, Desc, Item, Packing};

#[derive(Default)]
struct Counts {
    minus: usize,
    zero: usize,
    plus: usize,
}

/// The self-written configuration: odd sizes (rows that do not start on a byte).
const V: usize = 40;
const D: usize = 10;
const L: usize = 2;
const DH: usize = 6;
const K: usize = 3;
const CONFIG: &str = "40,10,2,6,3";

fn small(seed: u64, n_classes: Option<i32>) -> Desc {
    let dims = atome::format::Dims { vocab: V, d_model: D, n_layers: L, d_head: DH, kernel_size: K, top_k: 4 };
    Desc::random(&dims, n_classes, seed, Alphabet::Ternary)
}

/// An ATOME01 language model as a trainer would write it (random trits,
/// plausible scales and norm/SSM values), and its trit counts.
fn small_lm(seed: u64) -> (Vec<u8>, Counts) {
    let desc = small(seed, None);
    let mut c = Counts::default();
    for (_, _, item) in &desc.items {
        if let Item::Tensor(_, w) = item {
            for &t in w {
                match t {
                    -1 => c.minus += 1,
                    0 => c.zero += 1,
                    _ => c.plus += 1,
                }
            }
        }
    }
    (desc.blob(Packing::Trit2), c)
}

fn small_classifier(seed: u64, n_classes: usize) -> Vec<u8> {
    small(seed, Some(n_classes as i32)).blob(Packing::Trit2)
}

/// Expected size of the small LM in a packing with `per` trits a byte.
fn small_size(per: usize) -> usize {
    let t = |n: usize| 4 + n.div_ceil(per);
    7 + 2 * t(V * D) + L * (8 * D + t(D * K) + 12 * D + 2 * t(DH * D) + t(D * D) + t(3 * D)) + 8 * D
}

// ------------------------------------------------------------ self-written blobs

#[test]
fn inspect_small_blob() {
    let dir = tmpdir("inspect_small");
    let (blob, counts) = small_lm(1);
    assert_eq!(blob.len(), small_size(4));
    let p = dir.join("small.atome");
    std::fs::write(&p, &blob).unwrap();
    let out = ok(&["inspect", s(&p)]);
    assert!(out.contains("format:   ATOME01"), "{out}");
    assert!(out.contains(&format!("size:     {} bytes", blob.len())), "{out}");
    let want_sha = format!("\nsha256:   {}\n", reference_sha256(&p));
    assert!(out.contains(&want_sha), "want {want_sha:?} in\n{out}");
    assert!(out.contains("config:   V=40 D=10 L=2 DH=6 K=3 TOPK=4 (inferred"), "{out}");
    assert!(out.contains("top-k does not change the blob size"), "{out}");
    let total = counts.minus + counts.zero + counts.plus;
    let sep = |n: usize| {
        let d = n.to_string();
        let mut o = String::new();
        for (i, c) in d.chars().enumerate() {
            if i > 0 && (d.len() - i) % 3 == 0 {
                o.push(',');
            }
            o.push(c);
        }
        o
    };
    let want = format!("total: {} weights: -1 {}, 0 {}, +1 {};", sep(total), sep(counts.minus), sep(counts.zero), sep(counts.plus));
    assert!(out.contains(&want), "want {want:?} in\n{out}");
    assert!(out.contains("block1.Wv") && out.contains("unembed"), "{out}");
    // With --config, the same statistics.
    let out2 = ok(&["inspect", s(&p), "--config", CONFIG]);
    assert!(out2.contains(&want) && out2.contains("given with --config"), "{out2}");
    // Trailing padding (<= 15 bytes) is still recognised.
    let mut padded = blob.clone();
    padded.extend_from_slice(&[0xFF; 7]);
    let pp = dir.join("padded.atome");
    std::fs::write(&pp, &padded).unwrap();
    let out3 = ok(&["inspect", s(&pp)]);
    assert!(out3.contains("config:   V=40 D=10 L=2 DH=6 K=3"), "{out3}");
    assert!(out3.contains("7 trailing bytes"), "{out3}");
}

#[test]
fn convert_small_blob_round_trip() {
    let dir = tmpdir("convert_small");
    let (blob, _) = small_lm(2);
    let a = dir.join("a.atome");
    let b = dir.join("b.atome02");
    let c = dir.join("c.atome");
    let p3 = dir.join("d.atomep3");
    let e = dir.join("e.atome");
    std::fs::write(&a, &blob).unwrap();
    let out = ok(&["convert", s(&a), s(&b)]);
    assert!(out.contains("ATOME02") && out.contains("the input's exact bytes"), "{out}");
    let b_bytes = std::fs::read(&b).unwrap();
    assert_eq!(&b_bytes[..7], b"ATOME02");
    assert_eq!(b_bytes.len(), small_size(5));
    assert!(b_bytes[7..].len() < blob[7..].len());
    ok(&["convert", s(&b), s(&c), "--to", "atome01"]);
    assert_eq!(std::fs::read(&c).unwrap(), blob, "ATOME01 -> ATOME02 -> ATOME01 must give the same bytes");
    // ATOMEP3 holds ternary weights losslessly too.
    ok(&["convert", s(&a), s(&p3), "--to", "atomep3", "--config", CONFIG]);
    ok(&["convert", s(&p3), s(&e), "--to", "atome01"]);
    assert_eq!(std::fs::read(&e).unwrap(), blob);
    // inspect agrees on the statistics of both.
    let ia = ok(&["inspect", s(&a)]);
    let ib = ok(&["inspect", s(&b)]);
    let tot = |x: &str| x.lines().find(|l| l.contains("total:")).unwrap().to_string();
    assert_eq!(tot(&ia), tot(&ib));
}

#[test]
fn convert_reports_code_10_and_padding() {
    let dir = tmpdir("convert_code10");
    let (mut blob, _) = small_lm(3);
    // embed starts at 7 + 4: trit 0 of the payload gets code 10.
    blob[11] = (blob[11] & !3) | 2;
    // block0.conv (10 x 3 = 30 trits, 8 bytes): trit 31 is padding; make it 01.
    let conv = 7 + 4 + (V * D).div_ceil(4) + 8 * D;
    let last = conv + 4 + 7;
    blob[last] |= 1 << 6;
    let a = dir.join("a.atome");
    let b = dir.join("b.atome02");
    let c = dir.join("c.atome");
    std::fs::write(&a, &blob).unwrap();
    let insp = ok(&["inspect", s(&a), "--config", CONFIG]);
    assert!(insp.contains("1 trits with code 10"), "{insp}");
    assert!(insp.contains("1 padding"), "{insp}");
    let out = ok(&["convert", s(&a), s(&b), "--config", CONFIG]);
    assert!(out.contains("1 trits had code 10, which ATOME01 reads as 0: written as 0"), "{out}");
    assert!(out.contains("1 padding positions"), "{out}");
    assert!(out.contains("different bytes"), "{out}");
    ok(&["convert", s(&b), s(&c), "--config", CONFIG]);
    let mut want = blob.clone();
    want[11] &= !3;
    want[last] &= !(3 << 6);
    assert_eq!(std::fs::read(&c).unwrap(), want);
    // Both read the same: code 10 is 0.
    let r1 = ok(&["run", s(&a), "--ids", "1,2,3", "--max", "6", "--config", CONFIG]);
    let r2 = ok(&["run", s(&b), "--ids", "1,2,3", "--max", "6", "--config", CONFIG]);
    assert_eq!(r1, r2);
}

#[test]
fn run_small_blob_same_in_every_format_and_plan() {
    let dir = tmpdir("run_small");
    let (blob, _) = small_lm(4);
    let a = dir.join("a.atome");
    let b = dir.join("b.atome02");
    std::fs::write(&a, &blob).unwrap();
    ok(&["convert", s(&a), s(&b)]);
    let ids = "5,17,33,2,39,0,8";
    let greedy_a = ok(&["run", s(&a), "--ids", ids, "--max", "20", "--seq", "12"]);
    let ids_out: Vec<i64> = greedy_a.split_whitespace().map(|x| x.parse().unwrap()).collect();
    assert_eq!(ids_out.len(), 20, "{greedy_a}");
    assert!(ids_out.iter().all(|&t| (0..V as i64).contains(&t)));
    for (f, state) in [(&a, "lean"), (&b, "cached"), (&b, "lean")] {
        let o = ok(&["run", s(f), "--ids", ids, "--max", "20", "--seq", "12", "--state", state]);
        assert_eq!(o, greedy_a, "{f:?} {state}");
    }
    // --no-slide stops when the sequence fills S, as atome_generate does.
    let ns = ok(&["run", s(&a), "--ids", ids, "--max", "20", "--seq", "12", "--no-slide"]);
    assert_eq!(ns.split_whitespace().count(), 12 - 7);
    assert!(greedy_a.starts_with(ns.trim()));
    // Sampling: reproducible from the seed, the same for both formats.
    let samp = ["--temperature", "0.9", "--top-k", "12", "--top-p", "0.95", "--seed", "42"];
    let mut args = vec!["run", s(&a), "--ids", ids, "--max", "30"];
    args.extend(samp);
    let s1 = ok(&args);
    let s2 = ok(&args);
    assert_eq!(s1, s2);
    args[1] = s(&b);
    assert_eq!(ok(&args), s1);
    // Temperature 0 is greedy.
    let g = ok(&["run", s(&a), "--ids", ids, "--max", "20", "--seq", "12", "--temperature", "0", "--seed", "9"]);
    assert_eq!(g, greedy_a);
    // A byte prompt works too (bytes >= V read as 0, with a note).
    let o = atome(&["run", s(&a), "--prompt", "hello", "--max", "3"]);
    assert!(o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("tokens/s") || String::from_utf8_lossy(&o.stderr).contains("/s"));
}

/// `--dtype q15`: the q15 integer mode, both plans. The cached plan's tokens
/// are the lean plan's, and both are the library's q15 engine's
/// (`Q15State` through `Engine::generate_greedy`), greedy and sampled.
#[test]
fn run_q15_modes_small_blob() {
    use atome::engine::Engine as _;
    use atome::q15::{Q15Layout, Q15State};
    let dir = tmpdir("run_q15");
    let (blob, _) = small_lm(8);
    let a = dir.join("a.atome");
    std::fs::write(&a, &blob).unwrap();
    let ids = "5,17,33,2,39,0,8";
    let base = ["run", s(&a), "--ids", ids, "--max", "5", "--seq", "12", "--no-slide", "--dtype", "q15"];
    let lean = ok(&[&base[..], &["--state", "lean"]].concat());
    let cached = ok(&[&base[..], &["--state", "cached"]].concat());
    assert_eq!(cached, lean);
    // The engine's own tokens.
    let dims = atome::format::Dims { vocab: V, d_model: D, n_layers: L, d_head: DH, kernel_size: K, top_k: 4 };
    let m = atome::format::parse_model(&blob, &dims).unwrap();
    let lay = Q15Layout::new(&dims, 12);
    let mut st = Q15State::new(dims, 12, vec![0i16; lay.i16s], vec![0i32; lay.i32s], vec![0f32; V]);
    let prompt: Vec<i32> = ids.split(',').map(|x| x.parse().unwrap()).collect();
    let mut out = [0i32; 5];
    let n = st.runner().unwrap().generate_greedy(&m, &prompt, &mut out);
    let want: Vec<String> = out[..n].iter().map(|t| t.to_string()).collect();
    assert_eq!(lean.trim(), want.join(" "));
    // Sampled (the window slides past S): the same in both plans.
    let samp = ["--temperature", "0.9", "--top-k", "12", "--top-p", "0.95", "--seed", "42", "--max", "30", "--dtype", "q15"];
    let s1 = ok(&[&["run", s(&a), "--ids", ids, "--state", "lean"][..], &samp[..]].concat());
    let s2 = ok(&[&["run", s(&a), "--ids", ids, "--state", "cached"][..], &samp[..]].concat());
    assert_eq!(s1, s2);
    assert_eq!(s1.split_whitespace().count(), 30);
    // The configuration line names the mode; f32 stays the default.
    let o = atome(&["run", s(&a), "--ids", ids, "--max", "2", "--dtype", "q15", "--state", "lean"]);
    assert!(String::from_utf8_lossy(&o.stderr).contains("q15 lean state"), "{o:?}");
    let o = atome(&["run", s(&a), "--ids", ids, "--max", "2"]);
    assert!(String::from_utf8_lossy(&o.stderr).contains("f32 cached state"), "{o:?}");
    // A q15 classifier run: the same class and logits in both plans.
    let c = dir.join("c.atomecl");
    std::fs::write(&c, small_classifier(9, 4)).unwrap();
    let r1 = ok(&["run", s(&c), "--ids", "1,2,3,4,5", "--dtype", "q15", "--state", "lean"]);
    let r2 = ok(&["run", s(&c), "--ids", "1,2,3,4,5", "--dtype", "q15", "--state", "cached"]);
    assert!(r1.starts_with("class "), "{r1}");
    assert_eq!(r1, r2);
}

/// `bench --dtype q15`: both plans bit-identical to the full-window call;
/// `--state` times one plan.
#[test]
fn bench_q15_small_blob() {
    let dir = tmpdir("bench_q15");
    let (blob, _) = small_lm(10);
    let a = dir.join("a.atome");
    std::fs::write(&a, &blob).unwrap();
    let out = ok(&["bench", s(&a), "--tokens", "24", "--seq", "16", "--reps", "5", "--dtype", "q15"]);
    assert!(out.contains("predict_next on 16 positions, q15 lean state"), "{out}");
    assert!(out.contains("q15 cached state") && out.contains("prefixes 1..=24, q15 lean state"), "{out}");
    assert_eq!(out.matches("bit-identical").count(), 2, "{out}");
    let out = ok(&["bench", s(&a), "--tokens", "24", "--seq", "16", "--reps", "5", "--dtype", "q15", "--state", "cached"]);
    assert_eq!(out.matches("bit-identical").count(), 1, "{out}");
    assert!(!out.contains("prefixes 1..=24, q15 lean"), "{out}");
    let out = ok(&["bench", s(&a), "--tokens", "24", "--seq", "16", "--reps", "5", "--state", "lean"]);
    assert!(out.contains("prefixes 1..=24, f32 lean state"), "{out}");
    assert_eq!(out.matches("bit-identical").count(), 1, "{out}");
}

#[test]
fn classifier_small_blob() {
    let dir = tmpdir("classifier_small");
    let blob = small_classifier(5, 3);
    let a = dir.join("a.atomecl");
    let b = dir.join("b.atomecl02");
    let c = dir.join("c.atomecl");
    std::fs::write(&a, &blob).unwrap();
    let insp = ok(&["inspect", s(&a)]);
    assert!(insp.contains("ATOMECL01 (classifier, n_classes 3"), "{insp}");
    assert!(insp.contains("config:   V=40 D=10 L=2 DH=6 K=3"), "{insp}");
    assert!(insp.contains("head"), "{insp}");
    ok(&["convert", s(&a), s(&b)]);
    assert_eq!(&std::fs::read(&b).unwrap()[..9], b"ATOMECL02");
    ok(&["convert", s(&b), s(&c)]);
    assert_eq!(std::fs::read(&c).unwrap(), blob);
    let r1 = ok(&["run", s(&a), "--ids", "1,2,3,4,5"]);
    let r2 = ok(&["run", s(&b), "--ids", "1,2,3,4,5"]);
    assert!(r1.starts_with("class "), "{r1}");
    assert_eq!(r1.lines().nth(1).unwrap().split_whitespace().count(), 4, "{r1}");
    assert_eq!(r1, r2);
    let e = fails_with(1, &["convert", s(&a), s(&c), "--to", "atomep3"]);
    assert!(e.contains("no classifier format"), "{e}");
    let bench = ok(&["bench", s(&a), "--tokens", "9"]);
    assert!(bench.contains("bit-identical"), "{bench}");
}

#[test]
fn bench_small_blob() {
    let dir = tmpdir("bench_small");
    let (blob, _) = small_lm(6);
    let a = dir.join("a.atome");
    std::fs::write(&a, &blob).unwrap();
    let out = ok(&["bench", s(&a), "--tokens", "24", "--seq", "16", "--reps", "5"]);
    assert!(out.contains("predict_next on 16 positions"), "{out}");
    assert_eq!(out.matches("bit-identical").count(), 2, "{out}");
}

#[test]
fn errors() {
    let dir = tmpdir("errors");
    let (blob, _) = small_lm(7);
    let a = dir.join("a.atome");
    std::fs::write(&a, &blob).unwrap();
    // Runtime failures: exit code 1.
    let e = fails_with(1, &["run", s(&a), "--ids", "1", "--config", "40,10,3,6,3"]);
    assert!(e.contains("needs"), "{e}");
    let junk = dir.join("junk.bin");
    std::fs::write(&junk, b"NOTATOME and more").unwrap();
    assert!(fails_with(1, &["inspect", s(&junk)]).contains("unknown magic"));
    let missing = dir.join("missing.atome");
    assert!(fails_with(1, &["inspect", s(&missing)]).contains("missing.atome"));
    // Usage errors: exit code 2, before any work.
    assert!(fails_with(2, &["run", s(&a)]).contains("--prompt"));
    assert!(fails_with(2, &["run", s(&a), "--ids", "1", "--prompt", "x"]).contains("cannot be used with"));
    assert!(fails_with(2, &["frobnicate"]).contains("unrecognized subcommand"));
    assert!(fails_with(2, &["run", s(&a), "--ids", "1", "--bogus", "2"]).contains("unexpected argument '--bogus'"));
    assert!(fails_with(2, &["run", s(&a), "--ids", "1,x"]).contains("\"x\" is not an integer"));
    assert!(fails_with(2, &["run", s(&a), "--ids", "1", "--seq", "0"]).contains("must be >= 1"));
    assert!(fails_with(2, &["run", s(&a), "--ids", "1", "--state", "warm"]).contains("--state"));
    assert!(fails_with(2, &["run", s(&a), "--ids", "1", "--dtype", "f16"]).contains("--dtype"));
    assert!(fails_with(2, &["bench", s(&a), "--dtype", "int8"]).contains("--dtype"));
    assert!(fails_with(2, &["inspect", s(&a), "--config", "40,10"]).contains("--config"));
    assert!(fails_with(2, &["convert", s(&a), s(&junk), "--to", "atome03"]).contains("atome03"));
    assert!(fails_with(2, &["bench", s(&a), "--tokens", "0"]).contains("must be >= 1"));
    assert!(fails_with(2, &["inspect"]).contains("<BLOB>"));
    // Options belong to their subcommand: inspect takes no --attn-top-k.
    fails_with(2, &["inspect", s(&a), "--attn-top-k", "2"]);
    // No subcommand at all: the usage on stderr, code 2.
    assert!(fails_with(2, &[]).contains("Usage: atome"));
    // A truncated blob has no exact configuration match near the real one.
    let t = dir.join("trunc.atome");
    std::fs::write(&t, &blob[..blob.len() - 40]).unwrap();
    let o = atome(&["inspect", s(&t)]);
    assert!(o.status.success());
    assert!(!String::from_utf8_lossy(&o.stdout).contains("config:   V=40 D=10 L=2 DH=6 K=3"));
}

#[test]
fn help_on_every_subcommand() {
    let top = ok(&["--help"]);
    for sub in ["inspect", "convert", "run", "bench", "compare"] {
        assert!(top.contains(sub), "{top}");
        for how in [vec![sub, "--help"], vec![sub, "-h"], vec!["help", sub]] {
            let out = ok(&how);
            assert!(out.contains(&format!("Usage: atome {sub}")), "{how:?}:\n{out}");
            assert!(out.contains("--config"), "{how:?}:\n{out}");
        }
    }
    assert!(ok(&["help"]).contains("Exit status: 0 on success, 1 when the command fails"));
    assert!(ok(&["run", "--help"]).contains("--no-slide"));
    assert!(ok(&["bench", "--help"]).contains("--lean-prefixes"));
}

/// A figure after `key` on the line that starts with `line`.
fn figure(out: &str, line: &str, key: &str) -> f64 {
    let l = out.lines().find(|l| l.starts_with(line)).unwrap_or_else(|| panic!("no line {line:?}:\n{out}"));
    let rest = &l[l.find(key).unwrap_or_else(|| panic!("no {key:?} in {l:?}")) + key.len()..];
    rest.trim_start().split(|c: char| c.is_whitespace() || c == '%' || c == '/').next().unwrap().parse().unwrap()
}

#[test]
fn compare_small_blob() {
    let dir = tmpdir("compare_small");
    let (blob, _) = small_lm(8);
    let a = dir.join("a.atome");
    std::fs::write(&a, &blob).unwrap();
    let text = dir.join("t.txt");
    let mut rng = 0x1234_5678_u64;
    let bytes: Vec<u8> = (0..3000)
        .map(|_| {
            rng = rng.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (rng >> 33) as u8
        })
        .collect();
    std::fs::write(&text, &bytes).unwrap();
    let out = ok(&["compare", s(&a), s(&text), "--window", "12", "--stride", "500", "--prompts", "2", "--gen", "5"]);
    assert!(out.contains("windows 6 x 12 bytes every 500 bytes: 72 positions scored"), "{out}");
    let (cf, cq) = (figure(&out, "cross-entropy", "float"), figure(&out, "cross-entropy", "q15"));
    assert!(cf > 0.0 && cq > 0.0 && cf.is_finite() && cq.is_finite(), "{out}");
    let agree = figure(&out, "argmax agreement", "agreement");
    assert!((0.0..=72.0).contains(&agree), "{out}");
    assert_eq!(out.matches("tokens equal, common prefix").count(), 2, "{out}");
    // A classifier has no next-byte distribution.
    let c = dir.join("c.atomecl");
    std::fs::write(&c, small_classifier(9, 3)).unwrap();
    let e = fails_with(1, &["compare", s(&c), s(&text)]);
    assert!(e.contains("language-model blob"), "{e}");
}

/// docs/Q15.md's quality bounds on the 944K model, on a sample of the windows
/// (the README's figures come from the full default run).
#[test]
fn compare_944k_quality() {
    let Some(m) = shared_models() else { return };
    let text = m.join("../data/sample.txt");
    let out = ok(&["compare", s(&m.join("atome_944k.bin")), s(&text), "--windows", "8", "--stride", "32768", "--prompts", "2"]);
    let rel = figure(&out, "cross-entropy", "relative");
    assert!(rel.abs() < 1.0, "cross-entropy differs by {rel}% (> 1%):\n{out}");
    let agree = figure(&out, "argmax agreement", "agreement");
    assert!(agree >= 0.98 * 512.0, "argmax agreement {agree}/512 (< 98%):\n{out}");
    let cf = figure(&out, "cross-entropy", "float");
    assert!(cf > 0.5 && cf < 2.0, "a trained model's cross-entropy: {cf}\n{out}");
}

/// The digest for lengths around SHA-256's padding edges (55/56 and 63/64
/// bytes of the last block), against the system's tool.
#[test]
fn inspect_sha256_matches_reference_tool() {
    let dir = tmpdir("sha256");
    let mut rng = blobgen::SplitMix64(11);
    for len in [0usize, 48, 49, 56, 57, 113, 120, 121, 1000, 4096] {
        let mut b = b"ATOME01".to_vec();
        b.extend((0..len).map(|_| rng.next_u64() as u8));
        let p = dir.join(format!("blob{len}"));
        std::fs::write(&p, &b).unwrap();
        let out = ok(&["inspect", s(&p)]);
        let want = format!("\nsha256:   {}\n", reference_sha256(&p));
        assert!(out.contains(&want), "{} bytes: want {want:?} in\n{out}", b.len());
    }
}

/// What the hand-written parser accepted still works: --key=value, a
/// repeated option (the last wins), upper-case and short --to names,
/// a prompt that starts with a dash.
#[test]
fn argument_forms_kept() {
    let dir = tmpdir("argument_forms");
    let (blob, _) = small_lm(8);
    let a = dir.join("a.atome");
    let b = dir.join("b.atome02");
    let c = dir.join("c.atome");
    std::fs::write(&a, &blob).unwrap();
    let want = ok(&["run", s(&a), "--ids", "3,4,5", "--max", "7", "--seq", "9"]);
    assert_eq!(ok(&["run", s(&a), "--ids=3,4,5", "--max=7", "--seq=9"]), want);
    assert_eq!(ok(&["run", s(&a), "--ids", "3 4 5", "--max", "2", "--max", "7", "--seq", "9"]), want);
    assert_eq!(ok(&["run", "--max", "7", "--ids", "3,4,5", "--seq", "9", s(&a)]), want);
    assert_eq!(ok(&["run", s(&a), "--ids", "3,4,5", "--max", "7", "--config", "40,10,2,6,3,4", "--seq", "9"]), want);
    ok(&["convert", s(&a), s(&b), "--to", "ATOME02"]);
    assert_eq!(&std::fs::read(&b).unwrap()[..7], b"ATOME02");
    ok(&["convert", s(&b), s(&c), "--to=01"]);
    assert_eq!(std::fs::read(&c).unwrap(), blob);
    let o = atome(&["run", s(&a), "--prompt", "-x-", "--max", "2", "--quiet"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // --quiet drops the configuration line and the timing (the note on bytes >= V stays).
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!err.contains("tokens in") && !err.contains("state"), "--quiet: {err}");
}

/// Progress bars are for a person at a terminal: piped stderr (as here and
/// in CI logs) carries no bar, no carriage return and no escape sequence.
#[test]
fn no_progress_in_piped_output() {
    let dir = tmpdir("no_progress");
    let (blob, _) = small_lm(9);
    let a = dir.join("a.atome");
    std::fs::write(&a, &blob).unwrap();
    let o = atome(&["bench", s(&a), "--tokens", "12", "--reps", "3", "--lean-prefixes"]);
    assert!(o.status.success());
    assert!(o.stderr.is_empty(), "bench wrote to a piped stderr: {:?}", String::from_utf8_lossy(&o.stderr));
    let o = atome(&["run", s(&a), "--ids", "1,2", "--max", "40"]);
    assert!(o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("40 tokens in"), "{err}");
    assert!(!err.contains('\r') && !err.contains('\x1b'), "{err:?}");
}

/// In CI an absent ../shared fails the shared-model tests; elsewhere they skip.
/// Runs one of them in a child test process pointed at a missing folder.
#[test]
fn shared_tests_fail_in_ci_when_shared_is_absent() {
    let me = std::env::current_exe().unwrap();
    let child = |ci: Option<&str>| {
        let mut c = Command::new(&me);
        c.args(["--exact", "shared_bench", "--test-threads=1"]);
        c.env("ATOME_SHARED", Path::new(env!("CARGO_TARGET_TMPDIR")).join("no-such-shared"));
        match ci {
            Some(v) => c.env("CI", v),
            None => c.env_remove("CI"),
        };
        c.output().unwrap()
    };
    let o = child(Some("true"));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(!o.status.success() && out.contains("1 failed"), "CI=true:\n{out}");
    let o = child(None);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success() && out.contains("1 passed"), "CI unset:\n{out}");
}

// ------------------------------------------------------------ shared models

/// (blob, V,D,L,DH,K[,TOPK] of the golden configuration).
const SHARED: &[(&str, &str)] = &[
    ("atome_944k.bin", "256,256,8,64,5"),
    ("model_toy.atome", "256,64,4,16,5"),
    ("default.atome", "256,64,4,16,5"),
    ("tiny.atome", "32,16,2,8,5"),
    ("odd.atome", "40,22,3,6,3"),
    ("wide.atome", "64,32,2,8,7"),
    ("agri.atomecl", "256,32,2,8,5"),
    ("cls_odd.atomecl", "40,22,3,6,3"),
];

#[test]
fn shared_inspect_infers_every_configuration() {
    let Some(m) = shared_models() else { return };
    for (name, cfg) in SHARED {
        let out = ok(&["inspect", s(&m.join(name))]);
        let v: Vec<&str> = cfg.split(',').collect();
        let want = format!("config:   V={} D={} L={} DH={} K={} TOPK=4 (inferred", v[0], v[1], v[2], v[3], v[4]);
        assert!(out.contains(&want), "{name}: want {want:?}\n{out}");
    }
    let out = ok(&["inspect", s(&m.join("atome_944k.bin"))]);
    let want_sha = format!("\nsha256:   {}\n", reference_sha256(&m.join("atome_944k.bin")));
    assert!(out.contains(&want_sha), "want {want_sha:?} in\n{out}");
    assert!(out.contains("size:     276,655 bytes"));
    assert!(out.contains("as ATOME02  :     229,975 bytes"), "{out}");
    // 505,124 non-zero block weights: the reference specification's own count for
    // this model, not a figure this tool produced.
    assert!(out.contains("(used at every position): 505,124"), "{out}");
}

#[test]
fn shared_convert_round_trips() {
    let Some(m) = shared_models() else { return };
    let dir = tmpdir("shared_convert");
    for (name, _) in SHARED {
        let src = m.join(name);
        let mid = dir.join(format!("{name}.02"));
        let back = dir.join(format!("{name}.back"));
        ok(&["convert", s(&src), s(&mid), "--to", "atome02"]);
        ok(&["convert", s(&mid), s(&back), "--to", "atome01"]);
        assert_eq!(std::fs::read(&back).unwrap(), std::fs::read(&src).unwrap(), "{name}");
    }
    assert_eq!(std::fs::metadata(dir.join("atome_944k.bin.02")).unwrap().len(), 229_975);
}

/// Golden atome_generate cases (../shared/golden/golden_visible.json).
#[test]
fn shared_run_matches_golden_generate() {
    let Some(m) = shared_models() else { return };
    let dir = tmpdir("shared_run");
    let cases: &[(&str, &str, usize, &str, &str)] = &[
        ("tiny.atome", "32,16,2,8,5,4", 8, "23,7,20,19", "26 26 26 17"),
        ("tiny.atome", "32,16,2,8,5,4", 8, "21", "3 8 28 23 28 23 28"),
        ("odd.atome", "40,22,3,6,3,2", 16, "8,33,12,6,0,38", "5 25 26 37 22 4 28 29 31 28"),
        ("wide.atome", "64,32,2,8,7,6", 24, "34", "33 40 19 56 25 8 27 3 16 63 25 8 6 59 35 59 59 22 22 61 62 22 48"),
        (
            "default.atome",
            "256,64,4,16,5,4",
            32,
            "105,115,104,32,116,111,32,116,104,101,105,114,32,116,104",
            "216 162 49 246 249 20 105 160 139 74 136 23 3 31 91 246 131",
        ),
        (
            "atome_944k.bin",
            "256,256,8,64,5,4",
            64,
            "110,32,104,101,108,112,32,117,115,32,119,104,101,110,32,119,101,32,97,114,101,32,115,99",
            "97 114 101 100 46 32 72 101 32 119 97 115 32 115 111 32 101 120 99 105 116 101 100 32 116 111 32 115 101 101 32 116 104 101 32 98 105 114 100 32",
        ),
    ];
    for (name, cfg, seq, prompt, want) in cases {
        let src = m.join(name);
        let conv = dir.join(format!("{name}.02"));
        ok(&["convert", s(&src), s(&conv)]);
        for blob in [&src, &conv] {
            let seq = seq.to_string();
            let got = ok(&[
                "run", s(blob), "--ids", prompt, "--max", "64", "--seq", &seq, "--config", cfg, "--no-slide", "--print-ids",
            ]);
            assert_eq!(got.trim(), *want, "{blob:?}");
        }
    }
    // Text in, text out on the 944K model.
    let out = ok(&["run", s(&m.join("atome_944k.bin")), "--prompt", "Once upon a time", "--max", "12"]);
    assert!(out.trim().len() >= 6, "{out:?}");
}

/// The q15 mode on the shared default model: the cached plan's greedy
/// tokens are the lean plan's.
#[test]
fn shared_run_q15_cached_equals_lean() {
    let Some(m) = shared_models() else { return };
    let blob = m.join("default.atome");
    let base = ["run", s(&blob), "--prompt", "Once upon a time", "--max", "16", "--seq", "32", "--config", "256,64,4,16,5,4", "--dtype", "q15", "--print-ids"];
    let lean = ok(&[&base[..], &["--state", "lean"]].concat());
    let cached = ok(&[&base[..], &["--state", "cached"]].concat());
    assert_eq!(lean.split_whitespace().count(), 16, "{lean}");
    assert_eq!(cached, lean);
}

/// Golden classify cases.
#[test]
fn shared_classify_matches_golden() {
    let Some(m) = shared_models() else { return };
    let cases: &[(&str, &str, &str, usize)] = &[
        ("agri.atomecl", "256,32,2,8,5,4", "116,32,97", 1),
        ("agri.atomecl", "256,32,2,8,5,4", "110,46,32,84,104,101,32,109,111,114", 1),
        ("cls_odd.atomecl", "40,22,3,6,3,2", "38,37,21,37", 6),
        ("cls_odd.atomecl", "40,22,3,6,3,2", "37,19,16,20,33,5,24,2,28,38,30,7", 0),
        ("cls_odd.atomecl", "40,22,3,6,3,2", "3,35,25,7,18,10,22,19,27,28,1,18,36,4", 3),
    ];
    for (name, cfg, ids, class) in cases {
        let seq = if name.starts_with("cls_odd") { "16" } else { "32" };
        let out = ok(&["run", s(&m.join(name)), "--ids", ids, "--config", cfg, "--seq", seq]);
        assert!(out.starts_with(&format!("class {class}\n")), "{name} {ids}: {out}");
    }
}

#[test]
fn shared_bench() {
    let Some(m) = shared_models() else { return };
    let out = ok(&["bench", s(&m.join("atome_944k.bin")), "--tokens", "16", "--reps", "2"]);
    assert!(out.contains("predict_next on 16 positions"), "{out}");
    assert!(out.contains("bit-identical"), "{out}");
    let out = ok(&["bench", s(&m.join("agri.atomecl")), "--tokens", "32", "--reps", "20"]);
    assert!(out.contains("classify on 32 positions"), "{out}");
}

#[test]
fn convert_writes_and_reads_atomef_containers() {
    let dir = tmpdir("container");
    let (blob, _) = small_lm(3);
    let a = dir.join("a.atome");
    let boxed = dir.join("a.atomef");
    let boxed02 = dir.join("a02.atomef");
    let bare = dir.join("a02.atome");
    std::fs::write(&a, &blob).unwrap();
    let out = ok(&["convert", s(&a), s(&boxed), "--container", "--seq", "12", "--metadata", "name=small"]);
    assert!(out.contains("ATOMEF container"), "{out}");
    let file = std::fs::read(&boxed).unwrap();
    // The header as docs/CONTAINER.md lays it out, read here by hand, and the
    // payload: the input's exact bytes after the metadata.
    assert_eq!(&file[..6], b"ATOMEF");
    let u32_at = |o: usize| u32::from_le_bytes(file[o..o + 4].try_into().unwrap());
    assert_eq!((u32_at(12), u32_at(16), u32_at(20), u32_at(24), u32_at(28)), (40, 10, 2, 6, 3));
    assert_eq!((u32_at(36), u32_at(44) as usize, u32_at(48) as usize), (12, 10, blob.len()));
    assert_eq!(&file[60..70], b"name=small");
    assert_eq!(&file[70..], &blob[..]);
    // inspect shows the header; run takes its dimensions (no --config).
    let out = ok(&["inspect", s(&boxed)]);
    assert!(out.contains("ATOMEF:   version 1") && out.contains("S=12") && out.contains("\"name=small\""), "{out}");
    ok(&["run", s(&boxed), "--ids", "1,2,3", "--max", "4"]);
    // A container in gives a container out (repacked), --bare unwraps.
    ok(&["convert", s(&boxed), s(&boxed02), "--to", "atome02"]);
    assert_eq!(&std::fs::read(&boxed02).unwrap()[..6], b"ATOMEF");
    ok(&["convert", s(&boxed02), s(&bare), "--bare"]);
    assert_eq!(&std::fs::read(&bare).unwrap()[..7], b"ATOME02");
    // One flipped payload bit: refused, with the reason.
    let mut bad = file.clone();
    let last = bad.len() - 1;
    bad[last] ^= 0x10;
    let p = dir.join("bad.atomef");
    std::fs::write(&p, &bad).unwrap();
    let err = fails_with(1, &["inspect", s(&p)]);
    assert!(err.contains("Corrupted"), "{err}");
}

// ------------------------------------------------------------ hostile input

/// A fresh directory `name` holding `a.atome`, the small LM of `seed`.
fn lm_file(name: &str, seed: u64) -> (PathBuf, PathBuf, Vec<u8>) {
    let dir = tmpdir(name);
    let (blob, _) = small_lm(seed);
    let a = dir.join("a.atome");
    std::fs::write(&a, &blob).unwrap();
    (dir, a, blob)
}


/// Runs with stdout on /dev/full (every write fails with ENOSPC); returns
/// the exit code and stderr.
#[cfg(target_os = "linux")]
fn to_full_stdout(args: &[&str]) -> (Option<i32>, String) {
    let full = std::fs::OpenOptions::new().write(true).open("/dev/full").expect("/dev/full");
    let o = Command::new(bin()).args(args).stdout(full).output().expect("run atome");
    (o.status.code(), String::from_utf8_lossy(&o.stderr).into_owned())
}

/// A full or closed stdout is a runtime failure (exit 1, one line), never a
/// panic, in every command that prints to it.
#[cfg(target_os = "linux")]
#[test]
fn stdout_full_is_one_line_and_exit_1() {
    let (dir, a, _) = lm_file("stdout_full", 11);
    let c = dir.join("c.atomecl");
    std::fs::write(&c, small_classifier(12, 3)).unwrap();
    let text = dir.join("t.txt");
    std::fs::write(&text, b"the quick brown fox jumps over the lazy dog. ".repeat(40)).unwrap();
    let b = dir.join("b.atome02");
    let cases: Vec<Vec<&str>> = vec![
        vec!["inspect", s(&a)],
        vec!["inspect", s(&c)],
        vec!["bench", s(&a), "--tokens", "8", "--reps", "2"],
        vec!["compare", s(&a), s(&text), "--window", "8", "--stride", "400", "--prompts", "1", "--gen", "2"],
        vec!["run", s(&c), "--ids", "1,2,3"],
        vec!["run", s(&a), "--ids", "1,2,3", "--max", "3"],
        vec!["convert", s(&a), s(&b), "--to", "atome02"],
    ];
    for args in &cases {
        let (code, err) = to_full_stdout(args);
        assert_eq!(code, Some(1), "atome {args:?} with stdout on /dev/full: want exit 1\nstderr:\n{err}");
        assert!(!err.contains("panicked"), "atome {args:?}: a panic\n{err}");
        let last = err.lines().last().unwrap_or("");
        assert!(last.starts_with("atome: ") && last.contains("stdout"), "atome {args:?}: last stderr line {last:?}\n{err}");
        assert_eq!(err.lines().filter(|l| l.starts_with("atome: ")).count(), 1, "atome {args:?}: one error line\n{err}");
    }
}

/// convert writes nothing the library cannot open: windows and dimensions
/// above 65535 (or a zero window) are refused before any file is written.
#[test]
fn convert_refuses_what_the_library_cannot_open() {
    let (dir, a, _) = lm_file("convert_refuses", 13);
    let out = dir.join("o.atomef");
    let top_k = format!("{CONFIG},99999");
    for extra in [&["--seq", "70000"][..], &["--seq", "4294967295"], &["--seq", "0"], &["--config", &top_k, "--seq", "8"]] {
        let mut args = vec!["convert", s(&a), s(&out), "--container"];
        if !extra.contains(&"--config") {
            args.extend(["--config", CONFIG]);
        }
        args.extend(extra);
        let e = fails_with(1, &args);
        assert!(e.contains("65535"), "{args:?}: {e}");
        assert!(!out.exists(), "{args:?}: wrote {}", out.display());
    }
    // At the bounds it writes, and the library opens what it wrote.
    ok(&["convert", s(&a), s(&out), "--container", "--config", CONFIG, "--seq", "65535"]);
    ok(&["inspect", s(&out)]);
}

/// convert never overwrites its own input, by the same path or another
/// name for the same file.
#[test]
fn convert_refuses_its_own_input() {
    let (dir, a, blob) = lm_file("convert_self", 14);
    let e = fails_with(1, &["convert", s(&a), s(&a), "--to", "atome02", "--config", CONFIG]);
    assert!(e.contains("is the input file"), "{e}");
    let dotted = dir.join(".").join("a.atome");
    fails_with(1, &["convert", s(&a), s(&dotted), "--to", "atome02", "--config", CONFIG]);
    #[cfg(unix)]
    {
        let h = dir.join("hard.atome");
        std::fs::hard_link(&a, &h).unwrap();
        fails_with(1, &["convert", s(&a), s(&h), "--to", "atomep3", "--config", CONFIG]);
    }
    assert_eq!(std::fs::read(&a).unwrap(), blob, "the input changed");
}

/// Smaller refusals: empty id fields, --windows 0, an endless input; ids
/// outside V are read as 0 with a note; no "see notes above" without notes.
#[test]
fn smaller_refusals_and_notes() {
    let (dir, a, blob) = lm_file("smaller_refusals", 15);
    for ids in ["1,,2", ",1,2", "1,2,", ",", ""] {
        let e = fails_with(2, &["run", s(&a), "--ids", ids, "--config", CONFIG]);
        assert!(e.contains("empty id"), "--ids {ids:?}: {e}");
    }
    assert_eq!(ok(&["run", s(&a), "--ids", "1, 2 ,3", "--max", "2", "--config", CONFIG]), ok(&["run", s(&a), "--ids", "1 2 3", "--max", "2", "--config", CONFIG]));
    let o = atome(&["run", s(&a), "--ids", "1,300,-1", "--max", "2", "--config", CONFIG]);
    assert!(o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("note: V=40: ids outside 0..39 read as token 0: 300,-1"), "{err}");
    // Same output as with those ids written as 0.
    assert_eq!(o.stdout, atome(&["run", s(&a), "--ids", "1,0,0", "--max", "2", "--config", CONFIG]).stdout);
    let text = dir.join("t.txt");
    std::fs::write(&text, [7u8; 500]).unwrap();
    let e = fails_with(2, &["compare", s(&a), s(&text), "--windows", "0"]);
    assert!(e.contains("--windows") && e.contains("must be >= 1"), "{e}");
    #[cfg(unix)]
    {
        let e = fails_with(1, &["inspect", "/dev/zero"]);
        assert!(e.contains("more than 268,435,456 bytes"), "{e}");
        let e = fails_with(1, &["compare", s(&a), "/dev/zero"]);
        assert!(e.contains("/dev/zero: more than"), "{e}");
    }
    // A blob with a code-10 trit, wrapped without repacking: the payload is
    // unchanged, and no note is promised that is not printed.
    let mut odd = blob.clone();
    odd[11] = (odd[11] & !3) | 2;
    let b = dir.join("odd.atome");
    std::fs::write(&b, &odd).unwrap();
    let out = ok(&["convert", s(&b), s(&dir.join("odd.atomef")), "--container", "--config", CONFIG]);
    assert!(out.contains("payload unchanged") && out.contains("the input's exact bytes"), "{out}");
    for o in [ok(&["convert", s(&b), s(&dir.join("odd.atome02")), "--config", CONFIG]), out] {
        assert!(!o.contains("see notes above") || o.contains("\nnote: "), "{o}");
    }
}

/// A container whose header does not describe its payload exactly (other
/// dimensions within the 15-byte slack of bare blobs, or another class
/// count) is refused by every command, as by the library.
#[test]
fn container_header_must_match_payload() {
    use atome::container;
    let dir = tmpdir("container_mismatch");
    let dims = atome::format::Dims { vocab: V, d_model: D, n_layers: L, d_head: DH, kernel_size: K, top_k: 4 };
    let write = |name: &str, payload: &[u8], kind: container::Kind, dims: atome::format::Dims, n_classes: usize| {
        let info = container::Info { kind, packing: atome::format::Packing::Trit2, dims, max_seq: 8, n_classes };
        let mut buf = vec![0u8; container::container_len(0, payload.len())];
        container::write(&mut buf, &info, &[], payload).unwrap();
        let p = dir.join(name);
        std::fs::write(&p, &buf).unwrap();
        p
    };
    let (lm, _) = small_lm(16);
    let good = write("good.atomef", &lm, container::Kind::Model, dims, 0);
    ok(&["run", s(&good), "--ids", "1,2", "--max", "2"]);
    // K=2 around a K=3 payload: a few bytes shorter, within the 15 bytes a
    // bare blob may trail by, so only the exact-match rule refuses it.
    let k2 = atome::format::Dims { kernel_size: K - 1, ..dims };
    let fmt = atome::format::Format::new(false, atome::format::Packing::Trit2).unwrap();
    let (n3, n2) = (atome::format::blob_bytes(&dims, fmt, 0), atome::format::blob_bytes(&k2, fmt, 0));
    assert!(n3 == lm.len() && n3 > n2 && n3 - n2 <= 15, "{n3} {n2}: the test needs a configuration within the slack");
    let bad_k = write("k2.atomef", &lm, container::Kind::Model, k2, 0);
    let bad_v = write("v39.atomef", &lm, container::Kind::Model, atome::format::Dims { vocab: V - 1, ..dims }, 0);
    let cl = small_classifier(17, 3);
    let good_cl = write("good.atomef", &cl, container::Kind::Classifier, dims, 3);
    ok(&["run", s(&good_cl), "--ids", "1,2"]);
    let mut bad = vec![bad_k, bad_v];
    for n in [2, 4, 0, u32::MAX as usize] {
        bad.push(write(&format!("cl{n}.atomef"), &cl, container::Kind::Classifier, dims, n));
    }
    for p in &bad {
        for args in [vec!["inspect", s(p)], vec!["run", s(p), "--ids", "1,2"], vec!["convert", s(p), s(&dir.join("out.atome")), "--bare"]] {
            let e = fails_with(1, &args);
            assert!(e.contains("Mismatch") || e.contains("BadHeader") || e.contains("does not describe"), "{args:?}: {e}");
        }
    }
}
