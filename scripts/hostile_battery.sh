#!/usr/bin/env bash
# The hostile-input battery the suite runs, in one place, with its figures:
# the C runtime API and containers on x86-64 and on a 32-bit core (QEMU
# Cortex-M3), the size arithmetic against 128-bit sums on both widths, the
# container rules, the CLI and the Python package. Each part also runs in
# its own suite stage (scripts/test_all.sh); this script prints the counts
# docs/RELIABILITY.md quotes.
#   scripts/hostile_battery.sh
set -euo pipefail
cd "$(dirname "$0")/.."
count() { grep -Eo "$1" | tail -1; }
cargo build --release --lib -q 2>&1 | grep -v 'dropping unsupported' || true
echo "C runtime API and containers (tests/c/rt_hostile.c, scripts/rt_hostile.sh):"
scripts/rt_hostile.sh target/release/libatome.a | sed 's/^/  /'
echo "Size arithmetic and container rules (src/ffi/runtime, src/container.rs, proptest):"
out=$(cargo test --release --lib -- ffi::runtime container:: 2>&1)
echo "  $(count 'test result: [^;]*; [0-9]+ failed' <<< "$out")"
out=$(cargo test --release --test container --test api_errors 2>&1)
echo "  tests/container.rs, tests/api_errors.rs: $(grep -Eo '[0-9]+ passed; [0-9]+ failed' <<< "$out" | awk '{p+=$1; f+=$3} END {print p " passed; " f " failed"}')"
echo "CLI (cli/tests/cli.rs: stdout, convert, ids, inputs, container headers):"
out=$(cd cli && cargo test --release --test cli -- stdout_full convert_refuses smaller_refusals container_header errors 2>&1)
echo "  $(count '[0-9]+ passed; [0-9]+ failed' <<< "$out")"
echo "Python package (python/tests/test_hostile.py):"
out=$(python3 -m pytest python/tests/test_hostile.py -q 2>&1 | tail -1)
echo "  $out"
