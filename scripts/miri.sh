#!/usr/bin/env bash
# Runs the tests that exercise the library's unsafe code (the C ABI layer in
# src/ffi and the x86-64 AVX2 kernels) under Miri; exits non-zero on any
# report (undefined behaviour, out-of-bounds or misaligned access, leaks).
#
#   scripts/miri.sh                          # about 1 minute (tiny configuration)
#   MIRI_CONFIGS="tiny odd" scripts/miri.sh  # + the odd configuration (about 4 more minutes)
#
# The default MIRI_CONFIGS is "tiny q15": q15 is the tiny configuration
# built with ATOME_DTYPE=q15, so the C API runs the integer engine
# (src/q15, its AVX2 kernels included) on ffi_miri's small blobs in every
# format at misaligned addresses, with garbage states (ffi_miri only: the
# q15 kernels' own test, q15_matvec_miri, runs in the tiny one).
#
# tests/ffi_miri.rs drives every C entry point on small synthetic blobs. To
# keep Miri fast the library is built in a tiny configuration (D=8, L=1,
# V=16, DH=4, K=3, TOP_K=2, S=6); the odd one (D=22, L=3, V=40, DH=6, K=3,
# TOP_K=2, S=16) is optional.
#
# Miri cannot execute the `cpuid` instruction the run-time AVX2 check uses
# (inline assembly), so the library is compiled with AVX2 enabled at build
# time (-C target-feature=+avx2): the check is then constant-true and Miri
# interprets the AVX2 kernels themselves (gathers, permutes), which is where
# the unsafe code is. Extra test names (e.g. MIRI_TESTS="ffi_miri api_errors")
# can be given; the default is ffi_miri and q15_matvec_miri (the q15 AVX2 kernels).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

if ! rustup toolchain list | grep -q '^nightly'; then
    rustup toolchain install nightly --profile minimal
fi
if ! rustup +nightly component list --installed 2>/dev/null | grep -q '^miri'; then
    rustup +nightly component add miri rust-src
fi
# cargo-miri must be the only rustc wrapper: the bitcode-stripping workspace
# wrapper (.cargo/config.toml) has no archive to strip under Miri anyway.
export CARGO_BUILD_RUSTC_WORKSPACE_WRAPPER=
cargo +nightly miri setup >/dev/null 2>&1 || cargo +nightly miri setup

tests=${MIRI_TESTS:-ffi_miri q15_matvec_miri}
export RUSTFLAGS="${RUSTFLAGS:-} -C target-feature=+avx2"
export MIRIFLAGS="${MIRIFLAGS:-}"

status=0
run() {
    local name=$1 tests=$2
    shift 2
    local args=()
    for t in $tests; do args+=(--test "$t"); done
    echo "== miri: $name configuration ($tests)"
    local t0=$(date +%s)
    if ! env "$@" CARGO_TARGET_DIR="$root/target/miri-$name" cargo +nightly miri test "${args[@]}" 2>&1 | tee "/tmp/atome-miri-$name.log" | grep -E '^test |test result|^error|Undefined Behavior|unsupported'; then
        :
    fi
    if ! grep -q 'test result: ok' "/tmp/atome-miri-$name.log" || grep -qE '^error|Undefined Behavior' "/tmp/atome-miri-$name.log"; then
        echo "!! miri reported a problem ($name): see /tmp/atome-miri-$name.log"
        status=1
    fi
    echo "   ($(( $(date +%s) - t0 )) s)"
}

TINY="ATOME_D_MODEL=8 ATOME_N_LAYERS=1 ATOME_VOCAB_SIZE=16 ATOME_D_HEAD=4 ATOME_KERNEL_SIZE=3 ATOME_TOP_K=2 ATOME_MAX_SEQ=6"
for cfg in ${MIRI_CONFIGS:-tiny q15}; do
    case $cfg in
    # shellcheck disable=SC2086
    tiny) run tiny "$tests" $TINY ;;
    # shellcheck disable=SC2086
    q15) run q15 "${MIRI_TESTS:-ffi_miri}" $TINY ATOME_DTYPE=q15 ;;
    odd) run odd "$tests" ATOME_D_MODEL=22 ATOME_N_LAYERS=3 ATOME_VOCAB_SIZE=40 ATOME_D_HEAD=6 ATOME_KERNEL_SIZE=3 ATOME_TOP_K=2 ATOME_MAX_SEQ=16 ;;
    default) run default "$tests" ;;
    *) echo "unknown configuration $cfg" >&2; exit 2 ;;
    esac
done

if [ $status -eq 0 ]; then
    echo "miri: 0 reports"
fi
exit $status
