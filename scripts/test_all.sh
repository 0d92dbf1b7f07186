#!/usr/bin/env bash
# The whole test suite: the README's second command, and what .ci/run calls.
# Each stage prints its own results; the last line counts the stages.
# Every stage is mandatory: a missing script is a failed stage. Stages that
# need ../shared (golden files, real models) say so and skip where it is
# absent outside CI; CI always has it.
set -uo pipefail
cd "$(dirname "$0")/.."
export CARGO_TERM_COLOR=never
start=$(date +%s)
passed=0; failed=0; failures=()
# Each stage's output is also kept, so that the end of the run repeats the
# tail of every failed stage (CI shows only the end of a long log).
logs=$(mktemp -d /tmp/atome-suite.XXXXXX)
stage() {
  local name=$1; shift
  local t0=$(date +%s) log="$logs/$((passed + failed)).log"
  echo
  echo "=== $name: $*"
  "$@" 2>&1 | tee "$log"
  if [ "${PIPESTATUS[0]}" = 0 ]; then
    passed=$((passed+1)); echo "=== $name: ok ($(( $(date +%s) - t0 )) s)"
  else
    failed=$((failed+1)); failures+=("$name"); echo "=== $name: FAILED ($(( $(date +%s) - t0 )) s)"
    echo "$name" > "$log.name"
  fi
}
stage setup scripts/setup.sh
# Cached first: the lean run last leaves target/release with the default build.
stage "cargo test (cached state)" env ATOME_STATE=cached cargo test --release --test purity --test api_errors --test reference_parity --test ffi_miri --test nonfinite
stage "cargo test (lean state)" cargo test --release
# The microcontroller code path (one lane, no AVX2: what every non-x86
# target compiles) through the same tests, on this host, both states.
stage "cargo test (microcontroller code path, both states)" bash -c '
  export CARGO_TARGET_DIR=target/portable
  T="--test purity --test api_errors --test reference_parity --test ffi_miri --test nonfinite --test matvec_diff --test q15_matvec_diff --test q15_cached --test q15_head_argmax --test rt_q15 --test math_exhaustive"
  cargo test --release --features portable --lib $T && ATOME_STATE=cached cargo test --release --features portable $T'
# The q15 integer mode (ATOME_DTYPE=q15, docs/Q15.md) behind the C API:
# error codes and edge cases as in the float build, its own results checked
# against the engine and the float reference, non-finite blobs read as its
# contract says. (target/cfg/q15: the library tests/c_api.sh and sanitize.sh use.)
stage "cargo test (q15 build: C API errors, Miri test bodies, non-finite blobs)" env ATOME_DTYPE=q15 CARGO_TARGET_DIR=target/cfg/q15 \
  cargo test --release --test api_errors --test ffi_miri --test nonfinite
# The q15 size-first build (one portable routine per q15 operation): the
# kernel tests against their general forms and the naive matvec, the engine's
# properties and the C API's errors on that code; in the cached state, the
# cached plan against the lean one on the same code.
stage "cargo test (q15 size-first build on the microcontroller code path, both states)" bash -c '
  ATOME_DTYPE=q15 CARGO_TARGET_DIR=target/portable-q15-sf \
    cargo test --release --features portable,size-first --lib --test q15_engine --test q15_matvec_diff --test api_errors &&
  ATOME_DTYPE=q15 ATOME_STATE=cached CARGO_TARGET_DIR=target/portable-q15c-sf \
    cargo test --release --features portable,size-first --test q15_cached --test api_errors'

# The q15 cached state (ATOME_DTYPE=q15 ATOME_STATE=cached) behind the same
# C API tests, and its engine on the microcontroller code path; the runtime
# API's four modes in this build too (tests/rt_q15.rs).
stage "cargo test (q15 cached build: C API errors, Miri test bodies, non-finite blobs, runtime modes; portable)" bash -c '
  ATOME_DTYPE=q15 ATOME_STATE=cached CARGO_TARGET_DIR=target/cfg/q15_cached \
    cargo test --release --test api_errors --test ffi_miri --test nonfinite --test q15_cached --test rt_q15 --test container &&
  ATOME_DTYPE=q15 ATOME_STATE=cached CARGO_TARGET_DIR=target/cfg/q15_cached_portable \
    cargo test --release --features portable --test api_errors --test q15_cached'
# The q15 tiny state (ATOME_DTYPE=q15 ATOME_STATE=tiny: no value cache,
# docs/Q15.md#tiny-plan) behind the C API tests, its plan against the lean
# one, and the same on the size-first microcontroller code path.
stage "cargo test (q15 tiny build: tiny vs lean, C API errors, Miri test bodies, non-finite blobs; size-first portable)" bash -c '
  ATOME_DTYPE=q15 ATOME_STATE=tiny CARGO_TARGET_DIR=target/cfg/q15_tiny \
    cargo test --release --test q15_tiny --test api_errors --test ffi_miri --test nonfinite --test purity &&
  ATOME_DTYPE=q15 ATOME_STATE=tiny CARGO_TARGET_DIR=target/portable-q15t-sf \
    cargo test --release --features portable,size-first --test q15_tiny --test api_errors'
# Cargo.toml's rust-version is true: the library builds with that toolchain
# (scripts/setup.sh installs it), both code paths.
stage "rust-version: cargo +<rust-version> check (lib)" bash -c '
  v=$(sed -n "s/^rust-version = \"\(.*\)\"/\1/p" Cargo.toml); [ -n "$v" ] || exit 1
  export CARGO_TARGET_DIR=target/msrv
  cargo "+$v" check --lib && cargo "+$v" check --lib --features portable'
stage "clippy -D warnings: library (both code paths, all targets), CLI, fuzz crate" bash -c '
  cargo clippy --release --all-targets -- -D warnings &&
  CARGO_TARGET_DIR=target/portable cargo clippy --release --features portable --all-targets -- -D warnings &&
  ATOME_DTYPE=q15 ATOME_STATE=cached CARGO_TARGET_DIR=target/cfg/q15_cached cargo clippy --release --all-targets -- -D warnings &&
  ATOME_DTYPE=q15 ATOME_STATE=tiny CARGO_TARGET_DIR=target/cfg/q15_tiny cargo clippy --release --all-targets -- -D warnings &&
  (cd cli && cargo clippy --release --all-targets -- -D warnings) &&
  (cd fuzz && cargo clippy --all-targets -- -D warnings)'
stage "C API, examples, link-time config check, symbols, sizeof" tests/c_api.sh
stage "golden parity, every configuration, both states, both maths" python3 tests/golden.py
stage "pip install ./python in a fresh venv, then no cargo on PATH" scripts/python_install.sh
stage "python package" python3 -m pytest python/tests -q
stage "cross builds and symbol audit" scripts/cross.sh
stage "QEMU Cortex-M parity" scripts/qemu_parity.sh
# The soft-float assembly and integer routines against the platform's float
# operations on the cores that run them (M0, M3, M4 soft, M33, RV32).
stage "soft-float routines and q15 kernels on the cores (QEMU differential)" scripts/soft_device_check.sh
# Identical bits across cores and every device target of
# BENCHMARKS.md#targets (S3-<core>-f32, S4-M4F-f32-cached, S3-M0/M3/M4F-q15,
# S3-M4F-f32-text, S3-M4F-size-first-text, S3-all-all-stack) fail the
# stage when broken; a target not met yet would only be reported (TARGET
# lines; none today).
stage "Cortex-M figures: .text, peak stack, bits, instruction limits (every build)" scripts/cortex_bench.sh --report-only
# Engine .text per kernel for each build on M0, M3, M4F, RV32IMC, from the
# linker maps (docs/CODE_SIZE.md): a report.
stage "code size report: engine .text per kernel, build and core" scripts/kernel_text.sh
# Each board of firmware/boards/: the best build that links against the
# part's own memory map per model, its flash, RAM and tokens per second
# (README.md#boards); a run that fails or overflows its stack fails it.
stage "board table: fit on each part's memory map, tokens per second" scripts/board_table.sh
stage "CMake module" scripts/cmake_test.sh
stage "fuzz smoke" scripts/fuzz_smoke.sh
stage "ASan+UBSan and memcheck" scripts/sanitize.sh
stage "Miri" scripts/miri.sh
stage "state sizes" scripts/state_sizes.sh --check
stage "instruction-count targets (callgrind)" scripts/callgrind.sh --check
# A benchmark report (the retired S1-x86-q15's floor): fails only when a step cannot run.
stage "benchmark report: q15 x86-64 S1 matvec counts, batch RAM, valgrind's ISA" scripts/q15_x86_bound.sh
stage "CLI" bash -c "cd cli && cargo test --release"
stage "ATOME02 parity" scripts/atome02_parity.sh
stage "README examples" tests/readme.sh
for f in "$logs"/*.log.name; do
  [ -e "$f" ] || continue
  echo
  echo "=== the last 60 lines of failed stage: $(cat "$f")"
  tail -60 "${f%.name}"
done
echo
echo "total $(( $(date +%s) - start )) s"
[ ${#failures[@]} -gt 0 ] && echo "failed stages: ${failures[*]}"
echo "suite: $passed passed, $failed failed"
[ "$failed" = 0 ]
