#!/usr/bin/env bash
# Engine flash per kernel, per build and core: the firmware library of each
# build (default, size-first, q15: the builds of scripts/cortex_bench.sh; and q15-size-first) is
# linked into the bench firmware (firmware/src/bench_main.c, default.atome)
# for M0, M3, M4F and RV32IMC, and firmware/tools/kernel_text.py reads each
# linker map: the .text of every kernel (module) of the engine object, its
# total (the figure cortex_bench checks) and its .rodata. A report, never a
# failure: a change that grows code shows here where it grew.
#   scripts/kernel_text.sh [OUT.md]   (default target/fw-build/kernel_text/kernel_text.md)
set -euo pipefail
cd "$(dirname "$0")/.."
source firmware/fw.sh
fw_ensure_tools apt rust llvm
OUT="$FW_BUILD/kernel_text"
mkdir -p "$OUT"
DEST="${1:-$OUT/kernel_text.md}"
KNOBS="$(fw_knobs default-config)"
# core|target|board
CORES="M0|thumbv6m-none-eabi|mps2-an385
M3|thumbv7m-none-eabi|mps2-an385
M4F|thumbv7em-none-eabihf|mps2-an386
RV32IMC|riscv32imc-unknown-none-elf|riscv-virt"
TARGETS="$(echo "$CORES" | cut -d'|' -f2 | tr '\n' ' ')"
# build|cargo configuration name|features|knobs|C flags (as cortex_bench.sh)
BUILDS="default|default||
size-first|size_first|--features size-first||
q15|q15||ATOME_DTYPE=q15|-DATOME_DTYPE_Q15=1
q15-size-first|q15_size_first|--features size-first|ATOME_DTYPE=q15|-DATOME_DTYPE_Q15=1"
printf '    .section .rodata.bench_blob,"a"\n    .balign 4\n    .global bench_blob\nbench_blob:\n    .incbin "%s"\n    .global bench_blob_end\nbench_blob_end:\n' \
    "$FW_MODELS/default.atome" > "$OUT/blob.S"
specs=()
while IFS='|' read -r bname cfg feats xknobs xcflags; do
    # shellcheck disable=SC2086
    FW_CARGO_FEATURES="$feats" fw_cargo_build "$cfg" "$KNOBS $xknobs" firmware $TARGETS >/dev/null \
        || fw_die "cargo build ($bname) failed"
    while IFS='|' read -r core target board; do
        elf="$OUT/$bname-$core.elf"
        fw_link_firmware "$elf" "$board" "$target" "$(fw_lib_path "$cfg" firmware "$target")" "$KNOBS" "$xcflags" \
            firmware/src/bench_main.c "$OUT/blob.S" > "$OUT/$bname-$core.link.log" 2>&1 \
            || { cat "$OUT/$bname-$core.link.log"; fw_die "link $bname $core failed"; }
        specs+=("$bname=$core=${elf%.elf}.map")
    done <<< "$CORES"
done <<< "$BUILDS"
echo "measured at $(git rev-parse --short HEAD 2>/dev/null || echo '?')$(git diff --quiet HEAD -- src build.rs 2>/dev/null || echo ' + uncommitted changes')"
echo
python3 firmware/tools/kernel_text.py "$DEST" "${specs[@]}"
