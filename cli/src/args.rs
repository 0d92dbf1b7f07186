//! The command line, declared with clap's derive API: every subcommand has
//! `--help`, and a malformed command line exits with code 2 before any work.
use crate::blob;
use atome::format::{Dims, Packing};
use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

const ABOUT: &str = "Inspect, convert, run and benchmark Atome blobs on a host.";

const LONG_ABOUT: &str = "\
Inspect, convert, run and benchmark Atome blobs on a host.

The configuration (V,D,L,DH,K) is inferred from the blob's size when exactly one
plausible configuration fits; otherwise pass --config. The attention top-k does
not change the size: it is 4 unless given as a sixth --config value (or
--attn-top-k).

Exit status: 0 on success, 1 when the command fails (unreadable or invalid blob,
configuration that does not fit, failed check), 2 on a malformed command line.";

/// The whole command line.
#[derive(Parser, Debug)]
#[command(name = "atome", version, about = ABOUT, long_about = LONG_ABOUT)]
// A repeated option keeps its last value, as the hand-written parser did.
#[command(args_override_self = true, arg_required_else_help = true)]
pub struct Cli {
    /// The subcommand.
    #[command(subcommand)]
    pub cmd: Cmd,
}

/// The subcommands.
#[derive(Subcommand, Debug)]
pub enum Cmd {
    /// Magic, size, SHA-256, candidate configurations and weight statistics.
    #[command(long_about = "\
Magic, size and SHA-256 of a blob; every configuration whose layout has the
blob's size (up to 15 trailing bytes), each scored for plausibility; then
per-tensor scales and weight counts for the chosen configuration.")]
    Inspect(InspectArgs),
    /// Re-encodes a blob in another packing, losslessly, and verifies it.
    #[command(long_about = "\
Re-encodes a blob: ATOME01 <-> ATOME02, ATOMECL01 <-> ATOMECL02 (default: the
other one), and to or from ATOMEP3 for language models whose weights are all
ternary. Checks that the library reads identical weights, scales and floats
from both blobs and that converting back gives the input's bytes.")]
    Convert(ConvertArgs),
    /// Generates tokens from a prompt (or classifies it, on a classifier blob).
    #[command(long_about = "\
Generates byte tokens greedily or sampled (--temperature, --top-k, --top-p,
--seed: the semantics of atome_generate_sampled) and prints the continuation
(ids with --print-ids or when V != 256); timing goes to stderr. --dtype q15
runs the q15 integer mode, --state the memory plan (default cached). When the
sequence outgrows the window S the last S tokens are the context, as
predict_next does; --no-slide stops there instead, as atome_generate does.
On a classifier blob, prints the class and the class logits.")]
    Run(RunArgs),
    /// Times predict_next (or classify) under both memory plans.
    #[command(long_about = "\
Times predict_next (or classify) on an N-position window (lean state, repeated
for about a second), then position by position on prefixes 1..N as generation
calls it (cached state; lean too when that takes under about 5 s of CPU, or
with --lean-prefixes; --state picks one plan), and checks that the last logits
are bit-identical across the plans. --dtype q15 times the q15 integer mode.
A progress bar shows on stderr when it is a terminal.")]
    Bench(BenchArgs),
    /// Quality of the q15 integer mode against the float path on a text.
    #[command(long_about = "\
Runs a language-model blob in both arithmetic modes of the library, the float
path (the reference's bits) and q15 (docs/Q15.md), on a text file: windows of
--window bytes every --stride bytes, every position scored (its target is the
next byte). Prints the next-byte cross-entropy of both modes and their
relative difference, how often the argmax agrees, the logit cosine; then greedy
generation from --prompts prompts of --prompt-len bytes (--gen tokens each):
how many generated tokens equal the float path's, and the common prefix.
Defaults are docs/Q15.md's quality measurement (64 windows of 64 bytes every
4096 bytes; 10 prompts of 16 bytes, 48 tokens).")]
    Compare(CompareArgs),
}

/// `--config`, shared by every subcommand.
#[derive(Args, Debug)]
pub struct ConfigArg {
    /// Model configuration; inferred from the blob's size when omitted.
    #[arg(long, value_name = "V,D,L,DH,K[,TOPK]", value_parser = blob::parse_dims)]
    pub config: Option<Dims>,
}

/// `--config` and `--attn-top-k`: the subcommands that run the model.
#[derive(Args, Debug)]
pub struct ModelArgs {
    /// The blob.
    pub blob: PathBuf,
    #[command(flatten)]
    pub config: ConfigArg,
    /// Attention top-k (default: the sixth --config value, else 4).
    #[arg(long, value_name = "K")]
    pub attn_top_k: Option<usize>,
}

/// `atome inspect`.
#[derive(Args, Debug)]
pub struct InspectArgs {
    /// The blob.
    pub blob: PathBuf,
    #[command(flatten)]
    pub config: ConfigArg,
    /// List every candidate configuration (default: the first 12).
    #[arg(long)]
    pub all: bool,
}

/// `atome convert`.
#[derive(Args, Debug)]
pub struct ConvertArgs {
    /// The blob to read.
    pub input: PathBuf,
    /// Where to write the converted blob.
    pub output: PathBuf,
    /// Target packing (default: ATOME01 <-> ATOME02, ATOMEP3 -> ATOME01;
    /// with --container or --bare alone: the input's packing).
    #[arg(long, value_enum, ignore_case = true)]
    pub to: Option<Target>,
    /// Write an ATOMEF container (dimensions, packing, CRC-32s; docs/CONTAINER.md).
    /// A container input gives a container output unless --bare.
    #[arg(long, conflicts_with = "bare")]
    pub container: bool,
    /// Write the bare blob (unwrap an ATOMEF container).
    #[arg(long)]
    pub bare: bool,
    /// The window S recorded in the container (default: the input container's, else 0: not given).
    #[arg(long, value_parser = clap::value_parser!(usize))]
    pub seq: Option<usize>,
    /// UTF-8 metadata recorded in the container (name, tokenizer, licence...).
    #[arg(long, value_name = "TEXT")]
    pub metadata: Option<String>,
    #[command(flatten)]
    pub config: ConfigArg,
}

/// Target packing of `convert --to`.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// 2-bit trits, 4 a byte (ATOME01 / ATOMECL01).
    #[value(alias = "atomecl01", alias = "01", alias = "trit2")]
    Atome01,
    /// Base-3, 5 trits a byte (ATOME02 / ATOMECL02).
    #[value(alias = "atomecl02", alias = "02", alias = "base3")]
    Atome02,
    /// 3-bit codes {0,+-1,+-3,+-9} (language models only).
    #[value(alias = "p3")]
    Atomep3,
}

impl Target {
    /// The library's packing.
    pub fn packing(self) -> Packing {
        match self {
            Target::Atome01 => Packing::Trit2,
            Target::Atome02 => Packing::Base3,
            Target::Atomep3 => Packing::P3,
        }
    }
}

/// Arithmetic of `run --dtype` and `bench --dtype`.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum DtypeArg {
    /// The float engine (the reference's bits).
    F32,
    /// The q15 integer mode (docs/Q15.md).
    Q15,
}

impl DtypeArg {
    /// The library's dtype.
    pub fn dtype(self) -> atome::modes::Dtype {
        match self {
            DtypeArg::F32 => atome::modes::Dtype::F32,
            DtypeArg::Q15 => atome::modes::Dtype::Q15,
        }
    }
}

/// Memory plan of `run --state` and `bench --state`.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    /// Every layer's caches kept: each step computes only the new position.
    Cached,
    /// Everything recomputed at each step.
    Lean,
}

impl State {
    /// The library's plan.
    pub fn plan(self) -> atome::runner::Plan {
        match self {
            State::Cached => atome::runner::Plan::Cached,
            State::Lean => atome::runner::Plan::Lean,
        }
    }
}

/// Token ids given as "1,2,3" (commas or spaces).
#[derive(Clone, Debug)]
pub struct Ids(pub Vec<i32>);

/// Ids separated by one comma (spaces around it allowed) or by spaces; an
/// empty field (",1", "1,,2", "1,") is an error, not a skipped id.
fn parse_ids(s: &str) -> Result<Ids, String> {
    let mut ids = Vec::new();
    for (i, field) in s.split(',').enumerate() {
        let field = field.trim();
        if field.is_empty() {
            return Err(format!("{s:?}: empty id at field {} (ids are N,N,... or N N ...)", i + 1));
        }
        for x in field.split_whitespace() {
            ids.push(x.parse::<i32>().map_err(|_| format!("{x:?} is not an integer (-2147483648..2147483647)"))?);
        }
    }
    Ok(Ids(ids))
}

/// A count that must be at least 1.
fn positive(s: &str) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(0) => Err("must be >= 1".into()),
        Ok(n) => Ok(n),
        Err(_) => Err(format!("{s:?} is not a positive integer")),
    }
}

/// `atome run`.
#[derive(Args, Debug)]
#[command(group = clap::ArgGroup::new("input").required(true).args(["prompt", "ids"]))]
pub struct RunArgs {
    #[command(flatten)]
    pub model: ModelArgs,
    /// Prompt text (its bytes are the tokens).
    #[arg(long, allow_hyphen_values = true)]
    pub prompt: Option<String>,
    /// Prompt token ids, e.g. 1,2,3.
    #[arg(long, value_name = "N,N,...", value_parser = parse_ids, allow_hyphen_values = true)]
    pub ids: Option<Ids>,
    /// Tokens to generate.
    #[arg(long, value_name = "N", default_value_t = 64)]
    pub max: usize,
    /// Context window S [default: 64, 32 for classifiers].
    #[arg(long, value_name = "S", value_parser = positive)]
    pub seq: Option<usize>,
    /// Sampling temperature (0: greedy).
    #[arg(long, value_name = "T", default_value_t = 0.0, allow_negative_numbers = true)]
    pub temperature: f32,
    /// Sampling top-k (0: off); not the attention top-k.
    #[arg(long, value_name = "K", default_value_t = 0, allow_negative_numbers = true)]
    pub top_k: i32,
    /// Sampling top-p (nucleus).
    #[arg(long, value_name = "P", default_value_t = 1.0, allow_negative_numbers = true)]
    pub top_p: f32,
    /// Sampling seed (SplitMix64).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub seed: u64,
    /// Memory plan.
    #[arg(long, value_enum, default_value_t = State::Cached)]
    pub state: State,
    /// Arithmetic: the float engine or the q15 integer mode.
    #[arg(long, value_enum, default_value_t = DtypeArg::F32, ignore_case = true)]
    pub dtype: DtypeArg,
    /// Stop when the sequence fills S instead of sliding the window.
    #[arg(long)]
    pub no_slide: bool,
    /// Print token ids even when V = 256.
    #[arg(long)]
    pub print_ids: bool,
    /// No configuration line, timing or progress on stderr.
    #[arg(long)]
    pub quiet: bool,
}

/// `atome bench`.
#[derive(Args, Debug)]
pub struct BenchArgs {
    #[command(flatten)]
    pub model: ModelArgs,
    /// Positions N [default: 64, 32 for classifiers].
    #[arg(long, value_name = "N", value_parser = positive)]
    pub tokens: Option<usize>,
    /// Context window S [default: N].
    #[arg(long, value_name = "S", value_parser = positive)]
    pub seq: Option<usize>,
    /// Most full-window calls timed.
    #[arg(long, value_name = "R", default_value_t = 1000, value_parser = positive)]
    pub reps: usize,
    /// Also time the lean state on prefixes when it would take long.
    #[arg(long)]
    pub lean_prefixes: bool,
    /// Arithmetic: the float engine or the q15 integer mode.
    #[arg(long, value_enum, default_value_t = DtypeArg::F32, ignore_case = true)]
    pub dtype: DtypeArg,
    /// The one memory plan timed on prefixes [default: cached, then lean
    /// when it takes under about 5 s of CPU].
    #[arg(long, value_enum)]
    pub state: Option<State>,
}

/// `atome compare`.
#[derive(Args, Debug)]
pub struct CompareArgs {
    #[command(flatten)]
    pub model: ModelArgs,
    /// The text (its bytes are the tokens).
    pub text: PathBuf,
    /// Bytes per window (also the context window S).
    #[arg(long, value_name = "N", default_value_t = 64, value_parser = positive)]
    pub window: usize,
    /// Distance between window starts.
    #[arg(long, value_name = "N", default_value_t = 4096, value_parser = positive)]
    pub stride: usize,
    /// Most windows.
    #[arg(long, value_name = "N", default_value_t = 64, value_parser = positive)]
    pub windows: usize,
    /// Greedy-generation prompts.
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub prompts: usize,
    /// Bytes per prompt.
    #[arg(long, value_name = "N", default_value_t = 16, value_parser = positive)]
    pub prompt_len: usize,
    /// Tokens generated per prompt.
    #[arg(long, value_name = "N", default_value_t = 48)]
    pub gen: usize,
}

#[cfg(test)]
mod tests {
    use super::Cli;
    use clap::CommandFactory;

    #[test]
    fn command_definition_is_consistent() {
        // clap's own checks: conflicting names, bad defaults, groups naming unknown args.
        Cli::command().debug_assert();
    }
}
