#!/usr/bin/env bash
# Criterion benchmarks: kernels (benches/kernels.rs) and the BENCHMARKS.md#reference-scenarios
# scenarios through the Rust API (benches/scenarios.rs), then a markdown
# summary of the median times.
#
#   scripts/criterion.sh [criterion args, e.g. a filter: matvec | scenario/S1 | --quick]
#
# Needs in Cargo.toml (the lines below, also in BENCHMARKS.md):
#   [dev-dependencies] criterion = { version = "0.7", default-features = false, features = ["cargo_bench_support"] }
#   [[bench]] name = "kernels" harness = false   and   [[bench]] name = "scenarios" harness = false
# When Cargo.toml does not have them yet, the benches run in a scratch copy of
# the crate (target/criterion-ws: src, build.rs, include, benches and
# Cargo.toml with the lines added); results are the same.
# Output: target/bench/criterion/ (criterion's reports) and target/bench/run.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
export ATOME_MODELS=${ATOME_MODELS:-$ROOT/../shared/models}
# The Rust API takes dimensions at run time; build the library at its defaults.
unset ATOME_D_MODEL ATOME_MAX_SEQ ATOME_N_LAYERS ATOME_N_PATHWAYS ATOME_VOCAB_SIZE ATOME_D_HEAD \
      ATOME_KERNEL_SIZE ATOME_TOP_K ATOME_MAX_CLASSES ATOME_STATE

DEV_LINE='criterion = { version = "0.7", default-features = false, features = ["cargo_bench_support"] }'
BENCH_LINES='
[[bench]]
name = "kernels"
harness = false

[[bench]]
name = "scenarios"
harness = false'

if grep -q '^criterion *=' Cargo.toml && grep -q '^name *= *"kernels"' Cargo.toml && grep -q '^name *= *"scenarios"' Cargo.toml; then
    WS=$ROOT
else
    echo "note: Cargo.toml lacks the criterion lines; running in a scratch copy (target/criterion-ws)" >&2
    WS=$ROOT/target/criterion-ws
    mkdir -p "$WS"
    rm -rf "$WS/src" "$WS/benches" "$WS/include"
    cp -r src benches include build.rs "$WS/"
    [ -f Cargo.lock ] && [ ! -f "$WS/Cargo.lock" ] && cp Cargo.lock "$WS/"
    awk -v dev="$DEV_LINE" '{print} /^\[dev-dependencies\]/ {print dev}' Cargo.toml > "$WS/Cargo.toml"
    grep -q '^\[dev-dependencies\]' Cargo.toml || printf '\n[dev-dependencies]\n%s\n' "$DEV_LINE" >> "$WS/Cargo.toml"
    printf '%s\n' "$BENCH_LINES" >> "$WS/Cargo.toml"
fi

# A target directory of its own, so the bench build never replaces target/release's library.
TD=$ROOT/target/bench
mkdir -p "$TD"
LOG=$TD/run.txt
{
    echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(nproc) cores; $(rustc --version)"
    echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg) (wall-clock times are only as steady as the machine is idle)"
    echo "git: $(git rev-parse --short HEAD 2>/dev/null || echo '?')$(git diff --quiet HEAD -- src build.rs 2>/dev/null || echo ' + uncommitted changes in src/build.rs')"
} | tee "$LOG"
(cd "$WS" && CARGO_TARGET_DIR=$TD cargo bench --bench kernels --bench scenarios -- "$@") 2>&1 | tee -a "$LOG"

# Summary: benchmark name and the middle (point) estimate of its time.
echo
echo "| benchmark | time (median estimate) | 95% interval |"
echo "|---|---:|---|"
awk '
    /^[A-Za-z0-9_]+\/[^ ]*|^[A-Za-z0-9_]+ *$|^[A-Za-z0-9_]+ +time:/ { if ($1 != "time:") name = $1 }
    /time: +\[/ {
        s = $0; sub(/.*time: +\[/, "", s); sub(/\].*/, "", s); n = split(s, f, " ")
        if (n >= 6) printf "| %s | %s %s | %s %s .. %s %s |\n", name, f[3], f[4], f[1], f[2], f[5], f[6]
    }
    /^ratios/ { r = 1 }
    r && /^  / { ratios = ratios "\n" $0 }
    END { if (ratios != "") print "\nRatios (same run):" ratios }
' "$LOG"
echo
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
