//! `atome`: inspect, convert, run and benchmark Atome blobs on a host.
//!
//! The library's C API is sized at build time; its Rust core is generic over
//! dimensions, which is what this tool uses, so one binary handles every
//! configuration.

/// outln! that fails the command (exit 1, one line on stderr) instead of
/// panicking when stdout is full or closed.
macro_rules! outln {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        writeln!(std::io::stdout(), $($t)*).map_err(|e| format!("stdout: {e}"))?
    }};
}

mod args;
mod container_io;
mod convert;
mod blob;
mod clock;
mod compare;
mod engine;

use args::{BenchArgs, Cli, Cmd, InspectArgs, ModelArgs, RunArgs};
use container_io::{config_or, read_model};
use atome::container;
use atome::format::{self, Dims, Packing};
use atome::forward::sample::{pick, Sampling, SplitMix64};
use blob::{Format, Kind};
use clap::Parser;
use clock::{secs, Clock};
use engine::{Engine, Mode, Plan};
use sha2::{Digest, Sha256};
use std::io::{IsTerminal, Write};
use std::path::Path;
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// Dies quietly on a closed pipe (`atome inspect x | head`) like other tools,
/// instead of Rust's default of ignoring SIGPIPE and failing on EPIPE.
#[cfg(unix)]
fn default_sigpipe() {
    // SAFETY: sets the disposition of SIGPIPE to the default before any thread
    // starts; no Rust code runs as a handler.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

#[cfg(not(unix))]
fn default_sigpipe() {}

/// Exit codes: 0 success, 1 runtime failure, 2 usage error (clap exits with
/// 2 itself on a malformed command line, 0 for --help and --version).
fn main() -> ExitCode {
    default_sigpipe();
    let cli = Cli::parse();
    let r = match cli.cmd {
        Cmd::Inspect(a) => cmd_inspect(&a),
        Cmd::Convert(a) => convert::cmd_convert(&a),
        Cmd::Run(a) => cmd_run(&a),
        Cmd::Bench(a) => cmd_bench(&a),
        Cmd::Compare(a) => compare::cmd_compare(&a),
    };
    // What is still buffered must reach stdout too.
    let r = r.and_then(|()| std::io::stdout().flush().map_err(|e| format!("stdout: {e}")));
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("atome: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The largest input read (a model or a text): 256 MiB, far above any model
/// the engine runs on a microcontroller or a host; a larger input, or an
/// endless one such as /dev/zero, is refused once that much has been read.
pub(crate) const MAX_INPUT: u64 = 256 << 20;

pub(crate) fn read_blob(path: &Path) -> Result<(String, Vec<u8>), String> {
    use std::io::Read;
    let name = path.display().to_string();
    let f = std::fs::File::open(path).map_err(|e| format!("{name}: {e}"))?;
    let mut b = Vec::new();
    f.take(MAX_INPUT + 1).read_to_end(&mut b).map_err(|e| format!("{name}: {e}"))?;
    if b.len() as u64 > MAX_INPUT {
        return Err(format!("{name}: more than {} bytes (the largest input read)", sep(MAX_INPUT as usize)));
    }
    Ok((name, b))
}

fn sha256_hex(data: &[u8]) -> String {
    Sha256::digest(data).iter().map(|b| format!("{b:02x}")).collect()
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
pub(crate) fn sep(n: usize) -> String {
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

// ---------------------------------------------------------------- inspect

fn cmd_inspect(a: &InspectArgs) -> Result<(), String> {
    let (path, b, boxed) = read_model(&a.blob)?;
    let f = Format::detect(&b)?;
    outln!("file:     {path}");
    if let Some(x) = &boxed {
        let i = &x.info;
        outln!(
            "ATOMEF:   version {}, {} bytes, CRCs ok; V={} D={} L={} DH={} K={} TOPK={} S={} classes={}; metadata {:?}",
            container::VERSION,
            sep(x.file_len),
            i.dims.vocab,
            i.dims.d_model,
            i.dims.n_layers,
            i.dims.d_head,
            i.dims.kernel_size,
            i.dims.top_k,
            i.max_seq,
            i.n_classes,
            x.metadata
        );
    }
    outln!("format:   {} ({}; {})", f.magic(), kind_desc(f.kind), packing_desc(f.packing));
    outln!("size:     {} bytes", sep(b.len()));
    outln!("sha256:   {}", sha256_hex(&b));
    let given = config_or(a.config.config, &boxed);
    let t0 = Instant::now();
    let cands = blob::candidates(&b, &f);
    let took = t0.elapsed();
    let nexact = cands.iter().filter(|c| c.trailing == 0).count();
    outln!(
        "configurations of this size (up to 15 trailing bytes; V in {:?}, D <= {}, L <= {}, DH <= D, K <= {}): {} ({nexact} exact)  [searched in {}]",
        blob::VOCABS,
        blob::MAX_D,
        blob::MAX_L,
        blob::MAX_K,
        cands.len(),
        secs(took)
    );
    let show = if a.all { cands.len() } else { cands.len().min(12) };
    for c in &cands[..show] {
        let d = c.dims;
        let note = match c.anomalies {
            0 => "plausible".to_string(),
            usize::MAX => "does not parse".to_string(),
            n => format!("{n} implausible values (scales, floats, unused codes or padding)"),
        };
        let tr = if c.trailing > 0 { format!(", {} trailing bytes", c.trailing) } else { String::new() };
        outln!("  V={:<3} D={:<4} L={:<2} DH={:<4} K={}{tr}  {note}", d.vocab, d.d_model, d.n_layers, d.d_head, d.kernel_size);
    }
    if show < cands.len() {
        outln!("  ... {} more (--all lists them)", cands.len() - show);
    }
    outln!("top-k:    the attention top-k does not change the blob size: every TOPK fits (4 is assumed; a sixth --config value sets it)");
    let best = match given {
        Some(d) => Some((d, "given with --config".to_string())),
        None => match blob::resolve(&b, &f, None) {
            Ok((d, how)) => Some((d, how)),
            Err(e) => {
                outln!("best:     none chosen: {e}");
                cands.first().map(|c| (c.dims, "most plausible candidate (not unique)".to_string()))
            }
        },
    };
    let Some((dims, how)) = best else { return Ok(()) };
    outln!("config:   {} ({how})", blob::dims_long(&dims));
    let an = blob::analyze(&b, &f, &dims).ok_or("the blob is shorter than that configuration needs")?;
    let parse = match f.kind {
        Kind::Lm => format::parse_model(&b, &dims).map(|_| ()),
        Kind::Classifier(_) => format::parse_classifier(&b, &dims, 65535).map(|_| ()),
    };
    match parse {
        Ok(()) => outln!("library:  parses with this configuration ({} trailing bytes)", an.trailing),
        Err(e) => outln!("library:  refuses it with this configuration: {e:?}"),
    }
    for p in [Packing::Trit2, Packing::Base3, Packing::P3] {
        if let Some(m) = blob::magic(f.kind, p) {
            outln!("  as {m:<9}: {:>11} bytes", sep(blob::blob_bytes(f.kind, &dims, p)));
        }
    }
    if let Kind::Classifier(n) = f.kind {
        if n > 16 {
            outln!("note:     n_classes {n} exceeds the C API's default ATOME_MAX_CLASSES (16)");
        }
    }
    let p3 = f.packing == Packing::P3;
    outln!("tensors:");
    if p3 {
        outln!(
            "  {:<14} {:>9} {:>13} {:>7} {:>7} {:>8} {:>8} {:>8} {:>7} {:>7} {:>8}",
            "name", "shape", "scale", "-9", "-3", "-1", "0", "+1", "+3", "+9", "density"
        );
    } else {
        outln!("  {:<14} {:>9} {:>13} {:>8} {:>8} {:>8} {:>8}", "name", "shape", "scale", "-1", "0", "+1", "density");
    }
    let mut tot = [0usize; 7];
    let (mut unused, mut dirty, mut blocks_nz) = (0, 0, 0);
    for t in &an.tensors {
        let shape = format!("{}x{}", t.rows, t.cols);
        let dens = t.nonzero() as f64 / t.n().max(1) as f64;
        let c = &t.counts;
        if p3 {
            outln!(
                "  {:<14} {:>9} {:>13.6e} {:>7} {:>7} {:>8} {:>8} {:>8} {:>7} {:>7} {:>8.4}",
                t.name, shape, t.scale, c[0], c[1], c[2], c[3], c[4], c[5], c[6], dens
            );
        } else {
            outln!("  {:<14} {:>9} {:>13.6e} {:>8} {:>8} {:>8} {:>8.4}", t.name, shape, t.scale, c[2], c[3], c[4], dens);
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
    outln!(
        "  total: {} weights: -1 {}, 0 {}, +1 {}{}; density {:.4}",
        sep(n),
        sep(tot[2]),
        sep(tot[3]),
        sep(tot[4]),
        if p3 { format!(", +-3 {}, +-9 {}", sep(tot[1] + tot[5]), sep(tot[0] + tot[6])) } else { String::new() },
        nz as f64 / n.max(1) as f64
    );
    outln!("  non-zero weights in the blocks (used at every position): {}", sep(blocks_nz));
    if unused > 0 {
        let what = match f.packing {
            Packing::Trit2 => "trits with code 10 (read as 0)",
            Packing::Base3 => "ATOME02 bytes above 242 (the library refuses the blob)",
            Packing::P3 => "P3 codes 111 (read as 0)",
        };
        outln!("  {unused} {what}");
    }
    if dirty > 0 {
        outln!("  {dirty} padding trits/codes after a tensor's last weight are not the zero code (ignored by readers)");
    }
    let odd: usize = an.floats.iter().map(|x| x.odd).sum();
    let (lo, hi) = an.floats.iter().fold((f32::INFINITY, f32::NEG_INFINITY), |(l, h), x| (l.min(x.min), h.max(x.max)));
    outln!(
        "floats:   {} norm/SSM values in [{lo:.4}, {hi:.4}]{}",
        sep(an.floats.iter().map(|x| x.n).sum()),
        if odd > 0 { format!(", {odd} non-finite, huge or denormal") } else { String::new() }
    );
    for x in an.floats.iter().filter(|x| x.odd > 0).take(8) {
        outln!("  {}: {} of {} values non-finite, huge or denormal", x.name, x.odd, x.n);
    }
    Ok(())
}

// ---------------------------------------------------------------- convert

// ---------------------------------------------------------------- run

pub(crate) enum Loaded<'a> {
    Lm(format::Model<'a>),
    Clf(format::Classifier<'a>),
}

pub(crate) fn load<'a>(b: &'a [u8], a: &ModelArgs, given: Option<Dims>) -> Result<(Format, Dims, String, Loaded<'a>), String> {
    let f = Format::detect(b)?;
    let (mut dims, how) = blob::resolve(b, &f, given)?;
    if let Some(k) = a.attn_top_k {
        dims.top_k = k;
    }
    let l = match f.kind {
        Kind::Lm => Loaded::Lm(format::parse_model(b, &dims).map_err(|e| format!("load: {e:?}"))?),
        Kind::Classifier(_) => Loaded::Clf(format::parse_classifier(b, &dims, 65535).map_err(|e| format!("load: {e:?}"))?),
    };
    Ok((f, dims, how, l))
}

fn cmd_run(a: &RunArgs) -> Result<(), String> {
    let (path, b, boxed) = read_model(&a.model.blob)?;
    let (f, dims, how, loaded) = load(&b, &a.model, config_or(a.model.config.config, &boxed))?;
    // clap requires exactly one of the two.
    let prompt: Vec<i32> = match (&a.prompt, &a.ids) {
        (Some(p), _) => p.bytes().map(|x| x as i32).collect(),
        (None, Some(ids)) => ids.0.clone(),
        (None, None) => return Err("give --prompt TEXT or --ids N,N,...".into()),
    };
    if prompt.is_empty() {
        return Err("empty prompt".into());
    }
    let default_s = match &boxed {
        Some(x) if x.info.max_seq > 0 => x.info.max_seq,
        _ if matches!(f.kind, Kind::Lm) => 64,
        _ => 32,
    };
    let s = a.seq.unwrap_or(default_s);
    let mode = Mode { dtype: a.dtype.dtype(), plan: a.state.plan() };
    let quiet = a.quiet;
    if !quiet {
        eprintln!("{path}: {} {} ({how}), S={s}, {} {} state", f.magic(), blob::dims_long(&dims), mode.dtype.name(), mode.plan.name());
    }
    if dims.vocab < 256 && a.prompt.is_some() && prompt.iter().any(|&t| t as usize >= dims.vocab) {
        eprintln!("note: V={}: prompt bytes >= {} read as token 0", dims.vocab, dims.vocab);
    }
    if a.ids.is_some() {
        let out: Vec<String> = prompt.iter().filter(|&&t| t < 0 || t as usize >= dims.vocab).map(|t| t.to_string()).collect();
        if !out.is_empty() {
            eprintln!("note: V={}: ids outside 0..{} read as token 0: {}", dims.vocab, dims.vocab - 1, out.join(","));
        }
    }
    let mut eng = Engine::new(dims, s, mode);
    let model = match loaded {
        Loaded::Clf(clf) => {
            let t0 = Instant::now();
            let k = eng.classify(&clf, &prompt).ok_or("classify failed")?;
            let dt = t0.elapsed();
            outln!("class {k}");
            let lg: Vec<String> = eng.logits.iter().map(|x| format!("{x:.6}")).collect();
            outln!("logits {}", lg.join(" "));
            if !quiet {
                eprintln!("classified {} tokens in {}", prompt.len().min(s), secs(dt));
            }
            return Ok(());
        }
        Loaded::Lm(m) => m,
    };
    let max = a.max;
    let samp = Sampling { temperature: a.temperature, top_k: a.top_k, top_p: a.top_p };
    let mut rng = SplitMix64(a.seed);
    let no_slide = a.no_slide;
    let as_ids = a.print_ids || dims.vocab != 256;
    let mut seq = prompt.clone();
    // Streamed tokens on a terminal are their own progress; a bar shows when
    // stdout goes elsewhere and stderr is a terminal.
    let prog = clock::bar(max, "tokens", !quiet && !std::io::stdout().is_terminal());
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
        prog.inc(1);
    }
    prog.finish_and_clear();
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

/// The benchmark text T (the one benches/scenarios.rs times).
const TEXT: &str = "Once upon a time, there was a little girl named Lily. She loved to play outside in the sunshine. One day, she saw a big red ball in the park. She ran to get it, but a dog took it first.";

fn cmd_bench(a: &BenchArgs) -> Result<(), String> {
    let (path, b, boxed) = read_model(&a.model.blob)?;
    let (f, dims, how, loaded) = load(&b, &a.model, config_or(a.model.config.config, &boxed))?;
    let n = a.tokens.unwrap_or(if matches!(f.kind, Kind::Lm) { 64 } else { 32 });
    let s = a.seq.unwrap_or(n);
    let max_reps = a.reps;
    let lean_prefixes = a.lean_prefixes;
    let dtype = a.dtype.dtype();
    let dn = dtype.name();
    let toks: Vec<i32> = TEXT.bytes().cycle().take(n).map(|x| (x as usize % dims.vocab) as i32).collect();
    outln!("{path}: {} {} ({how}), {dn}", f.magic(), blob::dims_long(&dims));
    outln!("{n} positions (the benchmark text T, repeated), window S={s}");
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
    let mut lean = Engine::new(dims, s, Mode { dtype, plan: Plan::Lean });
    let clock = Clock::start();
    let mut reps = 0;
    // Bounded by time more than by count: a spinner, not a bar.
    let prog = clock::spinner("full-window calls", true);
    let id_full = loop {
        let id = run(&mut lean, &toks).ok_or("forward failed")?;
        reps += 1;
        prog.inc(1);
        if reps >= max_reps || clock.wall() >= Duration::from_secs(1) {
            break id;
        }
    };
    prog.finish_and_clear();
    let full_cpu = clock.cpu().unwrap_or(clock.wall()) / reps as u32;
    outln!(
        "{what} on {nw} positions, {dn} lean state ({} KiB): {} per call over {reps} calls; positions {}; result {id_full}",
        lean.state_bytes() / 1024,
        per_cpu(&clock, reps),
        clock.rate(nw * reps)
    );
    let full_logits = lean.logits.clone();

    // 2. Position by position, as generation calls it (prefixes 1..=n).
    let plans = match a.state {
        Some(st) => vec![st.plan()],
        None => vec![Plan::Cached, Plan::Lean],
    };
    for plan in plans {
        if plan == Plan::Lean && !lean_prefixes && a.state.is_none() {
            // About n/2 full-window calls' work.
            let est = full_cpu.as_secs_f64() * (n as f64 + 1.0) / 2.0;
            if est > 5.0 {
                outln!("{what} on prefixes 1..={n}, {dn} lean state: skipped (about {est:.0} s of CPU; --lean-prefixes runs it)");
                continue;
            }
        }
        let mut eng = Engine::new(dims, s, Mode { dtype, plan });
        let clock = Clock::start();
        let prog = clock::bar(n, &format!("{} prefixes", plan.name()), true);
        let mut id = 0;
        for t in 1..=n {
            id = run(&mut eng, &toks[..t]).ok_or("forward failed")?;
            prog.inc(1);
        }
        prog.finish_and_clear();
        let same = eng.logits.iter().zip(&full_logits).all(|(x, y)| x.to_bits() == y.to_bits()) && id == id_full;
        outln!(
            "{what} on prefixes 1..={n}, {dn} {} state ({} KiB): {} total, {} per token; tokens {}; last logits {} the full-window call's",
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
