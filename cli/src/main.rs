//! `atome`: inspect, convert, run and benchmark Atome blobs on a host.
//!
//! The library's C API is sized at build time; its Rust core is generic over
//! dimensions, which is what this tool uses, so one binary handles every
//! configuration.
mod blob;
mod engine;
mod sha256;

use atome::format::{self, Dims, Packing};
use atome::forward::sample::{pick, Sampling, SplitMix64};
use blob::{Format, Kind};
use engine::{Engine, Plan};
use std::io::Write;
use std::process::ExitCode;
use std::time::{Duration, Instant};

const USAGE: &str = "\
usage:
  atome inspect <blob> [--config V,D,L,DH,K[,TOPK]] [--all]
  atome convert <in> <out> [--to atome02|atome01|atomep3] [--config V,D,L,DH,K]
  atome run <blob> (--prompt TEXT | --ids N,N,...) [--max N] [--config ...] [--seq S]
            [--temperature T --top-k K --top-p P --seed N] [--state cached|lean]
            [--attn-top-k K] [--no-slide] [--print-ids] [--quiet]
  atome bench <blob> [--config ...] [--tokens N] [--seq S] [--reps R] [--lean-prefixes]
  atome help

The configuration (V,D,L,DH,K) is inferred from the blob's size when exactly one
plausible configuration fits; otherwise pass --config. The attention top-k does
not change the size: it is 4 unless given as a sixth --config value (or
--attn-top-k). run's --top-k is the sampling top-k (atome_generate_sampled).
run: generates byte tokens; when the sequence outgrows the window S (default 64,
32 for classifiers) the last S tokens are the context, as predict_next does.
--no-slide stops there instead, exactly as atome_generate does. On a classifier
blob, run classifies the prompt.";

/// Parsed command line: positionals, --key value options and bare flags.
struct Args {
    pos: Vec<String>,
    opts: Vec<(String, String)>,
    flags: Vec<String>,
}

const FLAGS: [&str; 6] = ["--all", "--no-slide", "--print-ids", "--help", "--quiet", "--lean-prefixes"];

impl Args {
    fn parse(v: &[String]) -> Result<Args, String> {
        let mut a = Args { pos: vec![], opts: vec![], flags: vec![] };
        let mut i = 0;
        while i < v.len() {
            let s = &v[i];
            if FLAGS.contains(&s.as_str()) || s == "-h" {
                a.flags.push(s.clone());
            } else if let Some(stripped) = s.strip_prefix("--") {
                if let Some((k, val)) = stripped.split_once('=') {
                    a.opts.push((format!("--{k}"), val.to_string()));
                } else {
                    let val = v.get(i + 1).ok_or_else(|| format!("{s} needs a value"))?;
                    a.opts.push((s.clone(), val.clone()));
                    i += 1;
                }
            } else {
                a.pos.push(s.clone());
            }
            i += 1;
        }
        Ok(a)
    }
    fn get(&self, k: &str) -> Option<&str> {
        self.opts.iter().rev().find(|(key, _)| key == k).map(|(_, v)| v.as_str())
    }
    fn flag(&self, k: &str) -> bool {
        self.flags.iter().any(|f| f == k)
    }
    fn num<T: std::str::FromStr>(&self, k: &str, default: T) -> Result<T, String> {
        match self.get(k) {
            None => Ok(default),
            Some(s) => s.trim().parse::<T>().map_err(|_| format!("{k} {s:?}: not a valid number")),
        }
    }
    fn allow(&self, known: &[&str]) -> Result<(), String> {
        for (k, _) in &self.opts {
            if !known.contains(&k.as_str()) {
                return Err(format!("unknown option {k}"));
            }
        }
        Ok(())
    }
    fn dims(&self) -> Result<Option<Dims>, String> {
        self.get("--config").map(blob::parse_dims).transpose()
    }
}

/// Dies quietly on a closed pipe (`atome inspect x | head`) like other tools.
#[cfg(unix)]
fn default_sigpipe() {
    extern "C" {
        fn signal(sig: i32, handler: usize) -> usize;
    }
    const SIGPIPE: i32 = 13;
    const SIG_DFL: usize = 0;
    // SAFETY: restoring the default disposition of SIGPIPE before any thread starts.
    unsafe {
        signal(SIGPIPE, SIG_DFL);
    }
}

#[cfg(not(unix))]
fn default_sigpipe() {}

fn main() -> ExitCode {
    default_sigpipe();
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let Some(cmd) = argv.first() else {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    };
    let args = match Args::parse(&argv[1..]) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("atome: {e}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    if args.flag("--help") || args.flag("-h") || cmd == "help" || cmd == "--help" || cmd == "-h" {
        println!("{USAGE}");
        return ExitCode::SUCCESS;
    }
    let r = match cmd.as_str() {
        "inspect" => cmd_inspect(&args),
        "convert" => cmd_convert(&args),
        "run" => cmd_run(&args),
        "bench" => cmd_bench(&args),
        other => Err(format!("unknown command {other:?}\n{USAGE}")),
    };
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("atome: {e}");
            ExitCode::FAILURE
        }
    }
}

fn read_blob(a: &Args, idx: usize) -> Result<(String, Vec<u8>), String> {
    let path = a.pos.get(idx).ok_or_else(|| format!("missing blob path\n{USAGE}"))?;
    let b = std::fs::read(path).map_err(|e| format!("{path}: {e}"))?;
    Ok((path.clone(), b))
}

fn packing_desc(p: Packing) -> &'static str {
    match p {
        Packing::Trit2 => "2-bit trits, 4 a byte",
        Packing::Base3 => "base-3, 5 trits a byte",
        Packing::P3 => "3-bit codes {0,+-1,+-3,+-9}, 8 in 3 bytes",
    }
}

fn kind_desc(k: Kind) -> String {
    match k {
        Kind::Lm => "language model".into(),
        Kind::Classifier(n) => format!("classifier, n_classes {n}"),
    }
}

/// Thousands separators.
fn sep(n: usize) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn secs(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s < 1e-3 {
        format!("{:.1} us", s * 1e6)
    } else if s < 1.0 {
        format!("{:.2} ms", s * 1e3)
    } else {
        format!("{s:.2} s")
    }
}

/// CPU time of this thread (Linux; None elsewhere), so timings mean something
/// on a loaded machine.
#[cfg(all(target_os = "linux", target_pointer_width = "64"))]
fn cpu_time() -> Option<Duration> {
    #[repr(C)]
    struct Timespec {
        sec: i64,
        nsec: i64,
    }
    extern "C" {
        fn clock_gettime(clock: i32, tp: *mut Timespec) -> i32;
    }
    const CLOCK_THREAD_CPUTIME_ID: i32 = 3;
    let mut t = Timespec { sec: 0, nsec: 0 };
    // SAFETY: a valid out-pointer to a struct with the C layout of timespec on 64-bit Linux.
    let rc = unsafe { clock_gettime(CLOCK_THREAD_CPUTIME_ID, &mut t) };
    (rc == 0).then(|| Duration::new(t.sec as u64, t.nsec as u32))
}

#[cfg(not(all(target_os = "linux", target_pointer_width = "64")))]
fn cpu_time() -> Option<Duration> {
    None
}

/// Wall and CPU clocks started together.
struct Clock {
    wall: Instant,
    cpu: Option<Duration>,
}

impl Clock {
    fn start() -> Clock {
        Clock { wall: Instant::now(), cpu: cpu_time() }
    }
    fn wall(&self) -> Duration {
        self.wall.elapsed()
    }
    fn cpu(&self) -> Option<Duration> {
        Some(cpu_time()?.saturating_sub(self.cpu?))
    }
    /// "1.20 s (CPU 0.95 s)".
    fn show(&self) -> String {
        match self.cpu() {
            Some(c) => format!("{} wall, {} CPU", secs(self.wall()), secs(c)),
            None => secs(self.wall()),
        }
    }
    /// Rate per second, on CPU time when known (wall otherwise).
    fn rate(&self, n: usize) -> String {
        let w = n as f64 / self.wall().as_secs_f64().max(1e-9);
        match self.cpu() {
            Some(c) => format!("{w:.1}/s wall, {:.1}/s CPU", n as f64 / c.as_secs_f64().max(1e-9)),
            None => format!("{w:.1}/s"),
        }
    }
}

// ---------------------------------------------------------------- inspect

fn cmd_inspect(a: &Args) -> Result<(), String> {
    a.allow(&["--config"])?;
    let (path, b) = read_blob(a, 0)?;
    let f = Format::detect(&b)?;
    println!("file:     {path}");
    println!("format:   {} ({}; {})", f.magic(), kind_desc(f.kind), packing_desc(f.packing));
    println!("size:     {} bytes", sep(b.len()));
    println!("sha256:   {}", sha256::sha256_hex(&b));
    let given = a.dims()?;
    let t0 = Instant::now();
    let cands = blob::candidates(&b, &f);
    let took = t0.elapsed();
    let nexact = cands.iter().filter(|c| c.trailing == 0).count();
    println!(
        "configurations of this size (up to 15 trailing bytes; V in {:?}, D <= {}, L <= {}, DH <= D, K <= {}): {} ({nexact} exact)  [searched in {}]",
        blob::VOCABS,
        blob::MAX_D,
        blob::MAX_L,
        blob::MAX_K,
        cands.len(),
        secs(took)
    );
    let show = if a.flag("--all") { cands.len() } else { cands.len().min(12) };
    for c in &cands[..show] {
        let d = c.dims;
        let note = match c.anomalies {
            0 => "plausible".to_string(),
            usize::MAX => "does not parse".to_string(),
            n => format!("{n} implausible values (scales, floats, unused codes or padding)"),
        };
        let tr = if c.trailing > 0 { format!(", {} trailing bytes", c.trailing) } else { String::new() };
        println!("  V={:<3} D={:<4} L={:<2} DH={:<4} K={}{tr}  {note}", d.vocab, d.d_model, d.n_layers, d.d_head, d.kernel_size);
    }
    if show < cands.len() {
        println!("  ... {} more (--all lists them)", cands.len() - show);
    }
    println!("top-k:    the attention top-k does not change the blob size: every TOPK fits (4 is assumed; a sixth --config value sets it)");
    let best = match given {
        Some(d) => Some((d, "given with --config".to_string())),
        None => match blob::resolve(&b, &f, None) {
            Ok((d, how)) => Some((d, how)),
            Err(e) => {
                println!("best:     none chosen: {e}");
                cands.first().map(|c| (c.dims, "most plausible candidate (not unique)".to_string()))
            }
        },
    };
    let Some((dims, how)) = best else { return Ok(()) };
    println!("config:   {} ({how})", blob::dims_long(&dims));
    let an = blob::analyze(&b, &f, &dims).ok_or("the blob is shorter than that configuration needs")?;
    let parse = match f.kind {
        Kind::Lm => format::parse_model(&b, &dims).map(|_| ()),
        Kind::Classifier(_) => format::parse_classifier(&b, &dims, 65535).map(|_| ()),
    };
    match parse {
        Ok(()) => println!("library:  parses with this configuration ({} trailing bytes)", an.trailing),
        Err(e) => println!("library:  refuses it with this configuration: {e:?}"),
    }
    for p in [Packing::Trit2, Packing::Base3, Packing::P3] {
        if let Some(m) = blob::magic(f.kind, p) {
            println!("  as {m:<9}: {:>11} bytes", sep(blob::blob_bytes(f.kind, &dims, p)));
        }
    }
    if let Kind::Classifier(n) = f.kind {
        if n > 16 {
            println!("note:     n_classes {n} exceeds the C API's default ATOME_MAX_CLASSES (16)");
        }
    }
    let p3 = f.packing == Packing::P3;
    println!("tensors:");
    if p3 {
        println!(
            "  {:<14} {:>9} {:>13} {:>7} {:>7} {:>8} {:>8} {:>8} {:>7} {:>7} {:>8}",
            "name", "shape", "scale", "-9", "-3", "-1", "0", "+1", "+3", "+9", "density"
        );
    } else {
        println!("  {:<14} {:>9} {:>13} {:>8} {:>8} {:>8} {:>8}", "name", "shape", "scale", "-1", "0", "+1", "density");
    }
    let mut tot = [0usize; 7];
    let (mut unused, mut dirty, mut blocks_nz) = (0, 0, 0);
    for t in &an.tensors {
        let shape = format!("{}x{}", t.rows, t.cols);
        let dens = t.nonzero() as f64 / t.n().max(1) as f64;
        let c = &t.counts;
        if p3 {
            println!(
                "  {:<14} {:>9} {:>13.6e} {:>7} {:>7} {:>8} {:>8} {:>8} {:>7} {:>7} {:>8.4}",
                t.name, shape, t.scale, c[0], c[1], c[2], c[3], c[4], c[5], c[6], dens
            );
        } else {
            println!("  {:<14} {:>9} {:>13.6e} {:>8} {:>8} {:>8} {:>8.4}", t.name, shape, t.scale, c[2], c[3], c[4], dens);
        }
        for (x, y) in tot.iter_mut().zip(c) {
            *x += y;
        }
        unused += t.unused_codes;
        dirty += t.dirty_padding;
        if t.name.starts_with("block") {
            blocks_nz += t.nonzero();
        }
    }
    let n: usize = tot.iter().sum();
    let nz = n - tot[3];
    println!(
        "  total: {} weights: -1 {}, 0 {}, +1 {}{}; density {:.4}",
        sep(n),
        sep(tot[2]),
        sep(tot[3]),
        sep(tot[4]),
        if p3 { format!(", +-3 {}, +-9 {}", sep(tot[1] + tot[5]), sep(tot[0] + tot[6])) } else { String::new() },
        nz as f64 / n.max(1) as f64
    );
    println!("  non-zero weights in the blocks (used at every position): {}", sep(blocks_nz));
    if unused > 0 {
        let what = match f.packing {
            Packing::Trit2 => "trits with code 10 (read as 0)",
            Packing::Base3 => "ATOME02 bytes above 242 (the library refuses the blob)",
            Packing::P3 => "P3 codes 111 (read as 0)",
        };
        println!("  {unused} {what}");
    }
    if dirty > 0 {
        println!("  {dirty} padding trits/codes after a tensor's last weight are not the zero code (ignored by readers)");
    }
    let odd: usize = an.floats.iter().map(|x| x.odd).sum();
    let (lo, hi) = an.floats.iter().fold((f32::INFINITY, f32::NEG_INFINITY), |(l, h), x| (l.min(x.min), h.max(x.max)));
    println!(
        "floats:   {} norm/SSM values in [{lo:.4}, {hi:.4}]{}",
        sep(an.floats.iter().map(|x| x.n).sum()),
        if odd > 0 { format!(", {odd} non-finite, huge or denormal") } else { String::new() }
    );
    for x in an.floats.iter().filter(|x| x.odd > 0).take(8) {
        println!("  {}: {} of {} values non-finite, huge or denormal", x.name, x.odd, x.n);
    }
    Ok(())
}

// ---------------------------------------------------------------- convert

fn parse_packing(s: &str) -> Result<Packing, String> {
    match s.to_ascii_lowercase().as_str() {
        "atome01" | "atomecl01" | "01" | "trit2" => Ok(Packing::Trit2),
        "atome02" | "atomecl02" | "02" | "base3" => Ok(Packing::Base3),
        "atomep3" | "p3" => Ok(Packing::P3),
        _ => Err(format!("--to {s:?}: expected atome01, atome02 or atomep3")),
    }
}

fn cmd_convert(a: &Args) -> Result<(), String> {
    a.allow(&["--to", "--config"])?;
    let (inp, b) = read_blob(a, 0)?;
    let out_path = a.pos.get(1).ok_or("missing output path")?;
    let f = Format::detect(&b)?;
    let to = match a.get("--to") {
        Some(s) => parse_packing(s)?,
        None => match f.packing {
            Packing::Trit2 => Packing::Base3,
            Packing::Base3 | Packing::P3 => Packing::Trit2,
        },
    };
    let out_magic = blob::magic(f.kind, to).ok_or("ATOMEP3 has no classifier format")?;
    let (mut dims, how) = blob::resolve(&b, &f, a.dims()?)?;
    dims.top_k = dims.top_k.max(1);
    let t0 = Instant::now();
    let (out, rep) = blob::convert(&b, &f, &dims, to)?;
    // Check: the library reads the same weights, scales and floats from both.
    let n = blob::same_weights(&b, &out, f.kind, &dims).map_err(|e| format!("verification failed: {e}"))?;
    let (back, _) = blob::convert(&out, &Format { kind: f.kind, packing: to }, &dims, f.packing)?;
    let took = t0.elapsed();
    std::fs::write(out_path, &out).map_err(|e| format!("{out_path}: {e}"))?;
    println!("{inp}: {} {} bytes, config {} ({how})", f.magic(), sep(b.len()), blob::dims_str(&dims));
    println!(
        "{out_path}: {out_magic} {} bytes ({:+.1}%), {} tensors, {} weights",
        sep(out.len()),
        100.0 * (out.len() as f64 - b.len() as f64) / b.len() as f64,
        rep.tensors,
        sep(rep.weights)
    );
    if rep.code10 > 0 {
        println!("note: {} trits had code 10, which ATOME01 reads as 0: written as 0 (not reversible to the same bytes)", rep.code10);
    }
    if rep.code111 > 0 {
        println!("note: {} codes 111, which ATOMEP3 reads as 0: written as 0", rep.code111);
    }
    if rep.dirty_padding > 0 {
        println!(
            "note: {} padding positions after tensors' last weights were not the zero code: dropped (readers ignore them)",
            rep.dirty_padding
        );
    }
    if rep.trailing > 0 {
        println!("note: {} trailing bytes after the blob copied as they are", rep.trailing);
    }
    println!(
        "verified: the library reads identical weights, scales and floats from both ({} weights); converting back gives {} [{}]",
        sep(n),
        if back == b { "the input's exact bytes" } else { "different bytes (see notes above)" },
        secs(took)
    );
    Ok(())
}

// ---------------------------------------------------------------- run

enum Loaded<'a> {
    Lm(format::Model<'a>),
    Clf(format::Classifier<'a>),
}

fn load<'a>(b: &'a [u8], a: &Args) -> Result<(Format, Dims, String, Loaded<'a>), String> {
    let f = Format::detect(b)?;
    let (mut dims, how) = blob::resolve(b, &f, a.dims()?)?;
    if let Some(k) = a.get("--attn-top-k") {
        dims.top_k = k.parse().map_err(|_| "--attn-top-k: not a number")?;
    }
    let l = match f.kind {
        Kind::Lm => Loaded::Lm(format::parse_model(b, &dims).map_err(|e| format!("load: {e:?}"))?),
        Kind::Classifier(_) => Loaded::Clf(format::parse_classifier(b, &dims, 65535).map_err(|e| format!("load: {e:?}"))?),
    };
    Ok((f, dims, how, l))
}

fn parse_plan(a: &Args) -> Result<Plan, String> {
    match a.get("--state").unwrap_or("cached") {
        "cached" => Ok(Plan::Cached),
        "lean" => Ok(Plan::Lean),
        s => Err(format!("--state {s:?}: expected cached or lean")),
    }
}

fn parse_ids(s: &str) -> Result<Vec<i32>, String> {
    s.split(|c: char| c == ',' || c.is_whitespace())
        .filter(|x| !x.is_empty())
        .map(|x| x.parse::<i32>().map_err(|_| format!("--ids: {x:?} is not an integer")))
        .collect()
}

fn cmd_run(a: &Args) -> Result<(), String> {
    a.allow(&[
        "--prompt",
        "--ids",
        "--max",
        "--config",
        "--attn-top-k",
        "--seq",
        "--temperature",
        "--top-k",
        "--top-p",
        "--seed",
        "--state",
    ])?;
    let (path, b) = read_blob(a, 0)?;
    let (f, dims, how, loaded) = load(&b, a)?;
    let prompt: Vec<i32> = match (a.get("--prompt"), a.get("--ids")) {
        (Some(p), None) => p.bytes().map(|x| x as i32).collect(),
        (None, Some(s)) => parse_ids(s)?,
        _ => return Err("give exactly one of --prompt TEXT or --ids N,N,...".into()),
    };
    if prompt.is_empty() {
        return Err("empty prompt".into());
    }
    let default_s = if matches!(f.kind, Kind::Lm) { 64 } else { 32 };
    let s: usize = a.num("--seq", default_s)?;
    if s == 0 {
        return Err("--seq must be >= 1".into());
    }
    let plan = parse_plan(a)?;
    let quiet = a.flag("--quiet");
    if !quiet {
        eprintln!("{path}: {} {} ({how}), S={s}, {} state", f.magic(), blob::dims_long(&dims), plan.name());
    }
    if dims.vocab < 256 && a.get("--prompt").is_some() && prompt.iter().any(|&t| t as usize >= dims.vocab) {
        eprintln!("note: V={}: prompt bytes >= {} read as token 0", dims.vocab, dims.vocab);
    }
    let mut eng = Engine::new(dims, s, plan);
    let model = match loaded {
        Loaded::Clf(clf) => {
            let t0 = Instant::now();
            let k = eng.classify(&clf, &prompt).ok_or("classify failed")?;
            let dt = t0.elapsed();
            println!("class {k}");
            let lg: Vec<String> = eng.logits.iter().map(|x| format!("{x:.6}")).collect();
            println!("logits {}", lg.join(" "));
            if !quiet {
                eprintln!("classified {} tokens in {}", prompt.len().min(s), secs(dt));
            }
            return Ok(());
        }
        Loaded::Lm(m) => m,
    };
    let max: usize = a.num("--max", 64)?;
    let samp = Sampling {
        temperature: a.num("--temperature", 0.0f32)?,
        top_k: a.num("--top-k", 0i32)?,
        top_p: a.num("--top-p", 1.0f32)?,
    };
    let mut rng = SplitMix64(a.num("--seed", 0u64)?);
    let no_slide = a.flag("--no-slide");
    let as_ids = a.flag("--print-ids") || dims.vocab != 256;
    let mut seq = prompt.clone();
    let mut out = std::io::stdout().lock();
    let clock = Clock::start();
    let t0 = clock.wall;
    let mut first = None;
    let mut made = 0;
    while made < max {
        if no_slide && seq.len() >= s {
            break;
        }
        let greedy = eng.predict(&model, &seq).ok_or("predict_next failed")?;
        // As atome_generate_sampled: one uniform draw per token unless greedy.
        let next = if samp.temperature > 0.0 { pick(&eng.logits, &samp, rng.uniform()) } else { greedy };
        seq.push(next as i32);
        made += 1;
        if first.is_none() {
            first = Some(t0.elapsed());
        }
        let w = if as_ids {
            out.write_all(format!("{}{next}", if made > 1 { " " } else { "" }).as_bytes())
        } else {
            out.write_all(&[next as u8])
        };
        w.and_then(|_| out.flush()).map_err(|e| format!("stdout: {e}"))?;
    }
    out.write_all(b"\n").and_then(|_| out.flush()).ok();
    drop(out);
    if !quiet {
        eprintln!(
            "{made} tokens in {}: tokens {}; first token after {}{}",
            clock.show(),
            clock.rate(made),
            secs(first.unwrap_or_default()),
            if no_slide && made < max { format!("; stopped: the sequence filled S={s}") } else { String::new() }
        );
    }
    Ok(())
}

// ---------------------------------------------------------------- bench

/// The text of SPEC section 7.
const TEXT: &str = "Once upon a time, there was a little girl named Lily. She loved to play outside in the sunshine. One day, she saw a big red ball in the park. She ran to get it, but a dog took it first.";

struct Progress {
    last: Instant,
    label: &'static str,
}

impl Progress {
    fn tick(&mut self, done: usize, total: usize, start: Instant) {
        if self.last.elapsed() >= Duration::from_millis(500) {
            eprintln!("  {}: {done}/{total} ({})", self.label, secs(start.elapsed()));
            self.last = Instant::now();
        }
    }
}

fn cmd_bench(a: &Args) -> Result<(), String> {
    a.allow(&["--config", "--attn-top-k", "--tokens", "--seq", "--reps"])?;
    let (path, b) = read_blob(a, 0)?;
    let (f, dims, how, loaded) = load(&b, a)?;
    let n: usize = a.num("--tokens", if matches!(f.kind, Kind::Lm) { 64 } else { 32 })?;
    if n == 0 {
        return Err("--tokens must be >= 1".into());
    }
    let s: usize = a.num("--seq", n)?;
    if s == 0 {
        return Err("--seq must be >= 1".into());
    }
    let max_reps: usize = a.num("--reps", 1000)?;
    let lean_prefixes = a.flag("--lean-prefixes");
    let toks: Vec<i32> = TEXT.bytes().cycle().take(n).map(|x| (x as usize % dims.vocab) as i32).collect();
    println!("{path}: {} {} ({how})", f.magic(), blob::dims_long(&dims));
    println!("{n} positions (the SPEC's text T, repeated), window S={s}");
    let nw = n.min(s);
    let run = |eng: &mut Engine, t: &[i32]| -> Option<usize> {
        match &loaded {
            Loaded::Lm(m) => eng.predict(m, t),
            Loaded::Clf(c) => eng.classify(c, t),
        }
    };
    let what = if matches!(f.kind, Kind::Lm) { "predict_next" } else { "classify" };
    let per_cpu = |c: &Clock, k: usize| -> String {
        match c.cpu() {
            Some(cpu) => format!("{} CPU ({} wall)", secs(cpu / k as u32), secs(c.wall() / k as u32)),
            None => format!("{} wall", secs(c.wall() / k as u32)),
        }
    };

    // 1. One call over the whole window, fresh each time (lean state).
    let mut lean = Engine::new(dims, s, Plan::Lean);
    let clock = Clock::start();
    let mut reps = 0;
    let mut prog = Progress { last: Instant::now(), label: "full-window calls" };
    let id_full = loop {
        let id = run(&mut lean, &toks).ok_or("forward failed")?;
        reps += 1;
        prog.tick(reps, max_reps, clock.wall);
        if reps >= max_reps || clock.wall() >= Duration::from_secs(1) {
            break id;
        }
    };
    let full_cpu = clock.cpu().unwrap_or(clock.wall()) / reps as u32;
    println!(
        "{what} on {nw} positions, lean state ({} KiB): {} per call over {reps} calls; positions {}; result {id_full}",
        lean.state_bytes() / 1024,
        per_cpu(&clock, reps),
        clock.rate(nw * reps)
    );
    let full_logits = lean.logits.clone();

    // 2. Position by position, as generation calls it (prefixes 1..=n).
    for plan in [Plan::Cached, Plan::Lean] {
        if plan == Plan::Lean && !lean_prefixes {
            // About n/2 full-window calls' work.
            let est = full_cpu.as_secs_f64() * (n as f64 + 1.0) / 2.0;
            if est > 5.0 {
                println!("{what} on prefixes 1..={n}, lean state: skipped (about {est:.0} s of CPU; --lean-prefixes runs it)");
                continue;
            }
        }
        let mut eng = Engine::new(dims, s, plan);
        let clock = Clock::start();
        let mut prog = Progress {
            last: Instant::now(),
            label: if plan == Plan::Cached { "cached prefixes" } else { "lean prefixes" },
        };
        let mut id = 0;
        for t in 1..=n {
            id = run(&mut eng, &toks[..t]).ok_or("forward failed")?;
            prog.tick(t, n, clock.wall);
        }
        let same = eng.logits.iter().zip(&full_logits).all(|(x, y)| x.to_bits() == y.to_bits()) && id == id_full;
        println!(
            "{what} on prefixes 1..={n}, {} state ({} KiB): {} total, {} per token; tokens {}; last logits {} the full-window call's",
            plan.name(),
            eng.state_bytes() / 1024,
            clock.show(),
            per_cpu(&clock, n),
            clock.rate(n),
            if same { "bit-identical to" } else { "DIFFER from" }
        );
        if !same {
            return Err("results differ between memory plans".into());
        }
    }
    Ok(())
}
