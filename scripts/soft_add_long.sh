#!/usr/bin/env bash
# The long differential run of the software f32 add (src/kernels/device/soft.rs)
# against the host's hardware f32 add: tests/soft_add.rs with 10^9 pairs (each
# checked as add_f32(a, b), the matvec step a + b and the step a - b).
#
#   scripts/soft_add_long.sh [PAIRS] [THREADS]     (defaults 1000000000, 2)
#
# Prints the test's summary line (pairs, seed, threads, seconds, mismatches);
# exits non-zero on any mismatch.
set -euo pipefail
cd "$(dirname "$0")/.."
PAIRS="${1:-1000000000}"
THREADS="${2:-2}"
T0=$(date +%s)
SOFT_ADD_PAIRS="$PAIRS" SOFT_ADD_THREADS="$THREADS" \
    cargo test --release --test soft_add differential_against_hardware -- --nocapture 2>&1 \
    | grep -E "soft_add:|test result|panicked|mismatch"
echo "soft_add_long: $PAIRS pairs in $(( $(date +%s) - T0 ))s (wall, build included)"
