#!/usr/bin/env bash
# All 2^32 binary32 inputs: the integer fast path of expf/tanhf
# (src/math/fixed.rs) against the binary64 routine (expf_b64,
# tanhf_b64), which it must equal bit for bit whenever it answers; and
# the q15 tanh_q30's 32-bit form against its contract steps
# (tanh_q30_steps, src/q15/arith.rs), equal on every input; and its
# division floor(2^61 / u) in two 32-bit divisions (div61_words, the
# Armv7-M and RISC-V form) against the 64-bit division for every u in
# [2^30, 2^31).
#
#   scripts/math_exhaustive.sh
#
# Release build of tests/math_exhaustive.rs, the ignored tests
# fast_path_all_inputs, q15_tanh_all_inputs and q15_div61_all_inputs, one std thread per hardware thread. Prints inputs
# checked, fast-path answers, fallbacks and mismatches per function, and
# the time; fails when any mismatch is found. (The suite runs the sampled
# versions, fast_path_sampled, q15_tanh_sampled and q15_div61_sampled, in the normal `cargo test`.)
set -euo pipefail
cd "$(dirname "$0")/.."
echo "machine: $(uname -m), $(nproc) hardware threads, $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2 | sed 's/^ //')"
echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
cargo test --release --test math_exhaustive -- --ignored --exact fast_path_all_inputs --nocapture
cargo test --release --test math_exhaustive -- --ignored --exact q15_tanh_all_inputs --nocapture
cargo test --release --test math_exhaustive -- --ignored --exact q15_div61_all_inputs --nocapture
