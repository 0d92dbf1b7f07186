#!/usr/bin/env bash
# Sizes of libatome.a with and without the embedded LLVM bitcode that
# .cargo/rustc-strip-bitcode.sh removes: the host archive (cargo build
# --release) and the seven microcontroller targets (--profile firmware), at
# the default configuration. "with bitcode" is the same build with the
# wrapper switched off (RUSTC_WORKSPACE_WRAPPER set empty). Prints a
# markdown table (BENCHMARKS.md); exits non-zero if a stripped archive
# still holds a .llvmbc section or one with bitcode has none.
#
#   scripts/archive_sizes.sh
set -euo pipefail
cd "$(dirname "$0")/.."
host=$(rustc -vV | sed -n 's/^host: //p')
targets="thumbv6m-none-eabi thumbv7m-none-eabi thumbv7em-none-eabi thumbv7em-none-eabihf thumbv8m.main-none-eabihf riscv32imc-unknown-none-elf riscv32imac-unknown-none-elf"
out=target/archive-sizes
bc_sections() { readelf -SW "$1" 2>/dev/null | grep -c ' \.llvmbc ' || true; }
build() { # DIR then cargo arguments; the default configuration
    local dir=$1; shift
    mkdir -p "$out"
    if ! env $(env | sed -n 's/^\(ATOME_[A-Z_]*\)=.*/-u \1/p') CARGO_TARGET_DIR="$out/$dir" \
            cargo build --lib "$@" > "$out/$dir.log" 2>&1; then
        tail -20 "$out/$dir.log" >&2; exit 1
    fi
}
for v in bitcode stripped; do
    if [ $v = bitcode ]; then export RUSTC_WORKSPACE_WRAPPER=; else unset RUSTC_WORKSPACE_WRAPPER; fi
    build $v --release
    # shellcheck disable=SC2046
    build $v --profile firmware $(printf -- '--target %s ' $targets)
done
echo "| target | profile | with bitcode (bytes) | .llvmbc sections | stripped (bytes) | .llvmbc sections |"
echo "|---|---|---:|---:|---:|---:|"
bad=0
for t in host $targets; do
    if [ $t = host ]; then rel=release; p=release; name=$host; else rel=$t/firmware; p=firmware; name=$t; fi
    a="$out/bitcode/$rel/libatome.a"; b="$out/stripped/$rel/libatome.a"
    na=$(bc_sections "$a"); nb=$(bc_sections "$b")
    echo "| $name | $p | $(stat -c %s "$a") | $na | $(stat -c %s "$b") | $nb |"
    [ "$nb" = 0 ] && [ "$na" != 0 ] || bad=1
done
[ $bad = 0 ]
