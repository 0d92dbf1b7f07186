//! The C side of the API, from the Rust test runner: the C examples
//! (c_examples/*.c) and the C test programs (tests/c/*.c) are compiled with
//! the `cc` crate's compiler (CC and CFLAGS are honoured) against libatome.a
//! built for each configuration, then run, and their output is checked.
//! tests/c_api.sh keeps the checks that need shell tools (the symbol audit).
//!
//! The libraries are built by a nested `cargo build --release --lib` in
//! target/cfg/<name> (the directories tests/c_api.sh uses, so either one
//! reuses the other's build). Runs that need ../shared (real models, golden
//! outputs) skip without it, except in CI (CI=true), where they fail.
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Mutex, OnceLock};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// A library configuration: its target directory name, the build's ATOME_*
/// environment, and the matching -D flags for the C side.
struct Config {
    name: &'static str,
    knobs: &'static [(&'static str, &'static str)],
}

const DEFAULT: Config = Config { name: "default", knobs: &[] };
const M944K: Config = Config {
    name: "m944k_s64",
    knobs: &[("ATOME_D_MODEL", "256"), ("ATOME_N_LAYERS", "8"), ("ATOME_D_HEAD", "64"), ("ATOME_MAX_SEQ", "64")],
};
const CLS: Config = Config { name: "cls", knobs: &[("ATOME_D_MODEL", "32"), ("ATOME_N_LAYERS", "2"), ("ATOME_D_HEAD", "8")] };

impl Config {
    fn defines(&self) -> Vec<String> {
        self.knobs.iter().map(|(k, v)| format!("-D{k}={v}")).collect()
    }
}

/// Every knob build.rs reads: the nested build must see only `knobs`.
const ALL_KNOBS: &[&str] = &[
    "ATOME_D_MODEL",
    "ATOME_MAX_SEQ",
    "ATOME_N_LAYERS",
    "ATOME_N_PATHWAYS",
    "ATOME_VOCAB_SIZE",
    "ATOME_D_HEAD",
    "ATOME_KERNEL_SIZE",
    "ATOME_TOP_K",
    "ATOME_MAX_CLASSES",
    "ATOME_STATE",
];

/// libatome.a for `cfg`, built once per test run (one build at a time: the
/// machine's cores go to the compiler, not to lock waits).
fn library(cfg: &Config) -> PathBuf {
    static BUILT: OnceLock<Mutex<Vec<&'static str>>> = OnceLock::new();
    let done = BUILT.get_or_init(|| Mutex::new(Vec::new()));
    let mut done = done.lock().unwrap_or_else(|e| e.into_inner());
    let dir = Path::new(ROOT).join("target/cfg").join(cfg.name);
    let lib = dir.join("release/libatome.a");
    if !done.contains(&cfg.name) {
        let mut cmd = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
        cmd.args(["build", "--release", "--quiet", "--lib"]).current_dir(ROOT).env("CARGO_TARGET_DIR", &dir);
        for k in ALL_KNOBS {
            cmd.env_remove(k);
        }
        for (k, v) in cfg.knobs {
            cmd.env(k, v);
        }
        let st = cmd.status().expect("run cargo");
        assert!(st.success(), "cargo build of the {} library failed", cfg.name);
        done.push(cfg.name);
    }
    assert!(lib.is_file(), "{} missing", lib.display());
    lib
}

fn host_triple() -> String {
    let out = Command::new("rustc").arg("-vV").output().expect("run rustc -vV");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.lines().find_map(|l| l.strip_prefix("host: ")).expect("host triple").trim().to_string()
}

/// The C compiler as the cc crate finds it (CC, CFLAGS, the target's flags).
fn c_compiler() -> cc::Tool {
    let host = host_triple();
    cc::Build::new().target(&host).host(&host).opt_level(2).cargo_metadata(false).try_get_compiler().expect("find a C compiler")
}

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(ROOT).join("target/c_programs");
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// Compiles and links `sources` (paths from the repository root, or absolute)
/// against `cfg`'s library with the strict flags of the examples
/// (-std=c99 -Wall -Wextra -Werror) and `defines`; returns the compiler's output.
fn compile(sources: &[&str], cfg_defines: &[String], lib: &Path, exe: &Path) -> Output {
    let mut cmd = c_compiler().to_command();
    cmd.args(["-std=c99", "-Wall", "-Wextra", "-Werror"])
        .arg(format!("-I{ROOT}/include"))
        .arg(format!("-I{ROOT}/c_examples"))
        .args(cfg_defines);
    for s in sources {
        cmd.arg(Path::new(ROOT).join(s));
    }
    cmd.arg(lib).arg("-lm").arg("-o").arg(exe);
    cmd.output().expect("run the C compiler")
}

/// As `compile`, and the build must succeed.
fn build(sources: &[&str], cfg: &Config, exe_name: &str) -> PathBuf {
    let exe = scratch(exe_name);
    let out = compile(sources, &cfg.defines(), &library(cfg), &exe);
    assert!(out.status.success(), "{sources:?} did not build:\n{}", String::from_utf8_lossy(&out.stderr));
    exe
}

/// Runs a program; (exit status success, stdout, stderr).
fn run(exe: &Path, args: &[&str], stdin: Option<&str>) -> (bool, String, String) {
    use std::io::Write;
    let mut child = Command::new(exe)
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run the C program");
    let mut input = child.stdin.take().unwrap();
    input.write_all(stdin.unwrap_or("").as_bytes()).unwrap();
    drop(input);
    let out = child.wait_with_output().unwrap();
    (out.status.success(), String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

/// ../shared, or None outside CI (a failure in CI).
fn shared() -> Option<PathBuf> {
    let p = Path::new(ROOT).join("../shared");
    if p.join("models").is_dir() && p.join("golden/golden_visible.json").is_file() {
        return Some(p.canonicalize().unwrap());
    }
    assert!(std::env::var("CI").as_deref() != Ok("true"), "../shared is missing, and CI must run these checks");
    eprintln!("SKIP: needs ../shared (beside every CI checkout, absent here)");
    None
}

// ---------------------------------------------------------------------------
// A minimal reader for golden_visible.json: arrays of numbers or strings
// after a key, searched from a position (the file is machine-written).

/// The text of the JSON array that follows `"key":` after `from`, and where it ends.
fn array_after<'a>(text: &'a str, from: usize, key: &str) -> (&'a str, usize) {
    let pat = format!("\"{key}\":");
    let k = from + text[from..].find(&pat).unwrap_or_else(|| panic!("no {key} in the golden file"));
    let open = k + text[k..].find('[').unwrap();
    let close = open + text[open..].find(']').unwrap();
    (&text[open + 1..close], close)
}

fn ints(a: &str) -> Vec<i64> {
    a.split(',').map(str::trim).filter(|s| !s.is_empty()).map(|s| s.parse().unwrap()).collect()
}

fn strings(a: &str) -> Vec<String> {
    a.split(',').map(|s| s.trim().trim_matches('"').to_string()).filter(|s| !s.is_empty()).collect()
}

/// Start of a configuration's entry in the golden file.
fn entry(text: &str, name: &str) -> usize {
    text.find(&format!("\n \"{name}\": {{")).unwrap_or_else(|| panic!("no {name} entry in the golden file"))
}

// ---------------------------------------------------------------------------

#[test]
fn examples_build_strictly_and_generate_runs_on_its_built_in_model() {
    for ex in ["generate", "classify", "logits"] {
        build(&[&format!("c_examples/{ex}.c")], &DEFAULT, ex);
    }
    let (ok, out, err) = run(&scratch("generate"), &["Hello there"], None);
    assert!(ok, "generate failed: {err}");
    assert!(out.contains("built-in deterministic random model"), "{out}");
    // 11 prompt tokens in a window of 32: atome_generate makes exactly 21.
    assert!(out.contains("]\nHello there|"), "{out}");
    assert!(out.contains("\n21 tokens in "), "expected 21 generated tokens:\n{out}");
    // Deterministic: a second run prints the same text.
    let (_, again, _) = run(&scratch("generate"), &["Hello there"], None);
    let text = |s: &str| s.lines().take(2).map(str::to_string).collect::<Vec<_>>();
    assert_eq!(text(&out), text(&again));
}

#[test]
fn generate_continues_tinystories_text_with_the_944k_model() {
    let Some(sh) = shared() else { return };
    let exe = build(&["c_examples/generate.c"], &M944K, "generate944");
    let model = sh.join("models/atome_944k.bin");
    let (ok, out, err) = run(&exe, &["--model", model.to_str().unwrap(), "Once upon a time, there was a little girl"], None);
    assert!(ok, "generate failed: {err}");
    assert!(out.contains("girl| named Lily"), "{out}");
}

#[test]
fn classify_example_on_a_sensor_head() {
    let Some(sh) = shared() else { return };
    let exe = build(&["c_examples/classify.c"], &CLS, "classify_cls");
    let (ok, out, err) = run(&exe, &[sh.join("models/agri.atomecl").to_str().unwrap(), "t a"], None);
    assert!(ok, "classify failed: {err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.first().copied(), Some("class 1 of 5"), "{out}");
    assert_eq!(lines.len(), 6, "one line per class logit:\n{out}");
    // The printed class is the first index of the largest printed logit.
    let logits: Vec<f64> = lines[1..].iter().map(|l| l.split_whitespace().nth(1).unwrap().parse().unwrap()).collect();
    let best = (0..logits.len()).fold(0, |b, i| if logits[i] > logits[b] { i } else { b });
    assert_eq!(best, 1, "{out}");
}

#[test]
fn logits_example_prints_a_golden_case() {
    let Some(sh) = shared() else { return };
    let exe = build(&["c_examples/logits.c"], &DEFAULT, "logits");
    let text = std::fs::read_to_string(sh.join("golden/golden_visible.json")).unwrap();
    let at = entry(&text, "default");
    let blob = {
        let k = at + text[at..].find("\"blob\": \"").unwrap() + 9;
        &text[k..k + text[k..].find('"').unwrap()]
    };
    let (toks, end) = array_after(&text, at, "tokens");
    let (bits, _) = array_after(&text, end, "logits_f32_bits");
    let expected: Vec<f32> = strings(bits).iter().map(|h| f32::from_bits(u32::from_str_radix(h, 16).unwrap())).collect();
    let ids: Vec<String> = ints(toks).iter().map(i64::to_string).collect();
    let mut args = vec!["--hex".to_string(), sh.join("models").join(blob).to_str().unwrap().to_string()];
    args.extend(ids);
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    let (ok, out, err) = run(&exe, &argv, None);
    assert!(ok, "logits failed: {err}");
    let got: Vec<f32> = out.lines().map(|h| f32::from_bits(u32::from_str_radix(h.trim(), 16).unwrap())).collect();
    assert_eq!(got.len(), expected.len(), "one logit per vocabulary entry");
    // Default (pure-Rust) math: within 5e-5 of the reference's logits
    // (docs/ARITHMETIC.md#math-functions); the same next id.
    let worst = got.iter().zip(&expected).map(|(a, b)| (a - b).abs()).fold(0.0f32, f32::max);
    assert!(worst <= 5e-5, "logits differ from the golden ones by {worst}");
    let next: i64 = err.trim().strip_prefix("next ").unwrap().parse().unwrap();
    let exp_next: i64 = {
        let k = at + text[at..].find("\"expected_next\":").unwrap() + 16;
        text[k..k + text[k..].find(',').unwrap()].trim().parse().unwrap()
    };
    assert_eq!(next, exp_next);
}

#[test]
fn golden_runner_generates_the_golden_tokens() {
    let Some(sh) = shared() else { return };
    let exe = build(&["tests/c/golden_runner.c"], &DEFAULT, "golden_runner_default");
    let text = std::fs::read_to_string(sh.join("golden/golden_visible.json")).unwrap();
    let at = entry(&text, "default");
    let gen = at + text[at..].find("\"generate\":").unwrap();
    let blob = sh.join("models/default.atome");
    let mut input = String::new();
    let mut expected = Vec::new();
    let num = |key: &str, from: usize| -> i64 {
        let k = from + text[from..].find(&format!("\"{key}\":")).unwrap() + key.len() + 3;
        text[k..].split([',', '\n', '}']).next().unwrap().trim().parse().unwrap()
    };
    let mut pos = gen;
    for _ in 0..3 {
        // Keys in file order: prompt, max_tokens, expected_count, expected_tokens.
        let (prompt, e1) = array_after(&text, pos, "prompt");
        let (max, count) = (num("max_tokens", e1), num("expected_count", e1));
        let (toks, e2) = array_after(&text, e1, "expected_tokens");
        let p: Vec<String> = ints(prompt).iter().map(i64::to_string).collect();
        input += &format!("G {} {max} {} {}\n", blob.display(), p.len(), p.join(" "));
        expected.push((count, ints(toks)));
        pos = e2;
    }
    let (ok, out, err) = run(&exe, &[], Some(&input));
    assert!(ok, "golden_runner failed: {err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), expected.len(), "{out}");
    for (line, (count, toks)) in lines.iter().zip(&expected) {
        let f: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(f[0], "G", "{line}");
        assert_eq!(f[1].parse::<i64>().unwrap(), *count, "{line}");
        let got: Vec<i64> = f[2..].iter().map(|t| t.parse().unwrap()).collect();
        assert_eq!(&got, toks, "generated tokens differ from the reference's");
    }
}

#[test]
fn stress_program_finds_no_contract_violation() {
    let exe = build(&["tests/c/stress.c"], &DEFAULT, "stress");
    let (ok, out, err) = run(&exe, &["300", "12345"], None);
    assert!(ok, "stress failed:\n{out}{err}");
    assert!(out.contains("stress: 300 iterations, 0 failures"), "{out}");
}

#[test]
fn a_mismatched_configuration_is_refused_at_link_time() {
    let lib944 = library(&M944K);
    // Matching flags link.
    let out = compile(&["c_examples/logits.c"], &M944K.defines(), &lib944, &scratch("match"));
    assert!(out.status.success(), "matching configuration: {}", String::from_utf8_lossy(&out.stderr));
    // A default-configuration C file against the 944K library: refused,
    // naming the knobs it expected.
    let out = compile(&["c_examples/logits.c"], &[], &lib944, &scratch("mismatch"));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "a default-configuration C file linked against the 944K library");
    assert!(err.contains("atome_cfg_D_MODEL_64") && err.contains("atome_cfg_MAX_SEQ_32"), "{err}");
    // A cached-state C file against a lean library.
    let out = compile(&["c_examples/logits.c"], &["-DATOME_STATE_CACHED=1".into()], &library(&DEFAULT), &scratch("mismatch2"));
    assert!(!out.status.success(), "a cached-state C file linked against a lean library");
    assert!(String::from_utf8_lossy(&out.stderr).contains("atome_cfg_STATE_cached"));
}

#[test]
fn the_state_size_is_the_same_on_both_sides_and_within_target() {
    let src = scratch("size.c");
    std::fs::write(
        &src,
        r#"#include "atome.h"
#include <stdio.h>
int main(void) {
    atome_build_config_t c;
    if (atome_get_build_config(&c) != 0) return 2;
    printf("%lu %lu %u\n", (unsigned long)sizeof(atome_state_t), (unsigned long)ATOME_STATE_SIZE, (unsigned)c.state_size);
    return 0;
}
"#,
    )
    .unwrap();
    let exe = build(&[src.to_str().unwrap()], &DEFAULT, "size");
    let (ok, out, err) = run(&exe, &[], None);
    assert!(ok, "{err}");
    let v: Vec<u64> = out.split_whitespace().map(|s| s.parse().unwrap()).collect();
    assert_eq!(v.len(), 3, "{out}");
    assert!(v[0] == v[1] && v[1] == v[2], "sizeof, ATOME_STATE_SIZE and the library's state_size differ: {out}");
    // The lean state of the default configuration: at most 24,000 bytes.
    assert!(v[0] <= 24_000, "sizeof(atome_state_t) = {}", v[0]);
}

#[test]
fn any_model_runs_every_kind_of_model_from_one_default_build() {
    let Some(sh) = shared() else { return };
    // Built once, against the library with no knobs.
    let exe = build(&["c_examples/any_model.c"], &DEFAULT, "any_model");
    let m = |f: &str| sh.join("models").join(f).to_str().unwrap().to_string();
    let (ok, out, err) = run(&exe, &["--dims", "256,256,8,64,5,4,64", &m("atome_944k.bin"), "Once upon a time, there was a little girl", "16"], None);
    assert!(ok, "944K: {err}");
    assert!(out.contains("girl| named Lily"), "{out}");
    // The same continuation as the compile-time example above.
    let (ok, out, err) = run(&exe, &["--dims", "256,64,4,16,5,4,32", &m("default.atome"), "Hello", "8"], None);
    assert!(ok && out.contains("8 tokens"), "default.atome: {out}{err}");
    let (ok, out, err) = run(&exe, &["--dims", "256,32,2,8,5,4,32", &m("agri.atomecl"), "t a"], None);
    assert!(ok, "classifier: {err}");
    let cls = build(&["c_examples/classify.c"], &CLS, "classify_cls_for_any_model");
    let (_, want, _) = run(&cls, &[&m("agri.atomecl"), "t a"], None);
    // The class line and every logit, exactly as the compile-time build prints them.
    assert_eq!(out.lines().skip(1).collect::<Vec<_>>(), want.lines().collect::<Vec<_>>(), "{out}");
    // A buffer too small for the model is refused, not overrun (-7).
    let (ok, out, err) = run(&exe, &["--dims", "256,256,8,64,5,4,512", &m("atome_944k.bin"), "x", "1"], None);
    assert!(!ok && out.is_empty(), "{out}");
    assert!(err.contains("atome_rt_open: -7: the buffer is too small") && err.contains("needs 1192144 bytes"), "{err}");
    // The q15 modes (--q15: ATOME_RT_Q15, --cached: ATOME_RT_CACHED) of the
    // same float build: the lean and cached plans print the same text.
    let m944 = m("atome_944k.bin");
    let q15 = |extra: &[&str]| {
        let args = [extra, &["--dims", "256,256,8,64,5,4,64", &m944, "Once upon a time, there was a little girl", "16"]].concat();
        let (ok, out, err) = run(&exe, &args, None);
        assert!(ok, "{extra:?}: {err}");
        out
    };
    let (lean, cached) = (q15(&["--q15"]), q15(&["--q15", "--cached"]));
    assert!(lean.contains("q15 lean, buffer 84088 of") && cached.contains("q15 cached, buffer 364496 of"), "{lean}{cached}");
    assert_eq!(lean.lines().skip(1).collect::<Vec<_>>(), cached.lines().skip(1).collect::<Vec<_>>());
    assert!(lean.contains("16 tokens"), "{lean}");
    // A bare blob without dimensions: -9, said as such (no buffer size).
    let (ok, out, err) = run(&exe, &[&m("default.atome"), "x", "1"], None);
    assert!(!ok && out.is_empty(), "{out}");
    assert!(err.contains("atome_rt_open: -9: dimensions missing") && !err.contains("bytes"), "{err}");
}

#[test]
fn the_runtime_buffer_macro_equals_the_library_function() {
    let exe = build(&["tests/c/rt_size.c"], &DEFAULT, "rt_size");
    let (ok, out, err) = run(&exe, &[], None);
    assert!(ok, "{out}{err}");
    assert_eq!(out.trim(), "rt_size: 116872 ok");
}
