#!/usr/bin/env bash
# The long differential runs of the software f32 arithmetic against the
# host's hardware f32:
#  - tests/soft_add.rs: the matvec's add (src/kernels/device/soft.rs), each
#    pair checked as add_f32(a, b), the matvec step a + b and the step a - b;
#  - tests/soft_ops.rs: the integer add and multiply used outside the matvec
#    (src/kernels/device/sf.rs), each pair checked as a + b, a - b and a * b.
#
#   scripts/soft_add_long.sh [PAIRS] [THREADS]     (defaults 1000000000, 2)
#
# PAIRS pairs for each test. Prints each test's summary line (pairs, seed,
# threads, seconds, mismatches); exits non-zero on any mismatch.
set -euo pipefail
cd "$(dirname "$0")/.."
PAIRS="${1:-1000000000}"
THREADS="${2:-2}"
T0=$(date +%s)
SOFT_ADD_PAIRS="$PAIRS" SOFT_ADD_THREADS="$THREADS" \
    cargo test --release --test soft_add differential_against_hardware -- --nocapture 2>&1 \
    | grep -E "soft_add:|test result|panicked|mismatch"
SOFT_OPS_PAIRS="$PAIRS" SOFT_OPS_THREADS="$THREADS" \
    cargo test --release --test soft_ops differential_against_hardware -- --nocapture 2>&1 \
    | grep -E "soft_ops:|test result|panicked|mismatch"
echo "soft_add_long: $PAIRS pairs per test in $(( $(date +%s) - T0 ))s (wall, build included)"
