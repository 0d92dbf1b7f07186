#!/usr/bin/env bash
# The soft-float routines checked on the cores that run them: the matvec
# accumulate (Thumb-1 assembly on M0/M3/M4 without FPU, RV32 assembly on
# riscv32), the integer add/sub/multiply of src/kernels/device/sf.rs, and
# whole matvec rows, each against the platform's own float operations
# (compiler-builtins, an independent IEEE binary32 implementation) on the
# same core, under QEMU. firmware/softcheck draws the operands
# (every case of the routines: cancellation, carries, halves and ties, far
# exponents, window edges, zeros, subnormals, infinities, NaN). Also the
# q15 engine's device kernels (src/kernels/q15: the Thumb-2, Armv7E-M and
# M0 conv with any payload bits and missing or shifted taps, the
# quantization passes, LayerNorm's statistics, its M0 passes, its Thumb-2
# first pass and Armv7E-M affine pass, q.k, the SSM sums (split products on
# M0, SMULL and SMMULR on Thumb-2), the Armv7E-M mix and sparse weighted
# sum, the 64 / 32-bit division, exp2q, the table and SMLAD matvecs over
# several jobs and positions, the one-position byte-table matvec with its
# two- and four-table passes and clean builds) against plain integer loops
# on the same core.
#
#   scripts/soft_device_check.sh [PAIRS]      (default 200000 per check)
#
# Exits non-zero when any core reports a mismatch (the first one is printed).
set -euo pipefail
cd "$(dirname "$0")/.."
. firmware/fw.sh
fw_ensure_tools apt rust
N="${1:-200000}"
OUT="$FW_ROOT/target/softcheck"
mkdir -p "$OUT"
ROWS="M0|thumbv6m-none-eabi|mps2-an385
M3|thumbv7m-none-eabi|mps2-an385
M4 (soft float)|thumbv7em-none-eabi|mps2-an386
M33|thumbv8m.main-none-eabihf|mps2-an505
RV32IMC|riscv32imc-unknown-none-elf|riscv-virt
RV32IMAC|riscv32imac-unknown-none-elf|riscv-virt"
# shellcheck disable=SC2046
fw_crate_build firmware/softcheck "$OUT" release $(echo "$ROWS" | cut -d'|' -f2) || exit 1
T0=$(date +%s)
fail=0
while IFS='|' read -r label target board; do
    name="$(echo "$label" | tr ' ()' '___')"
    elf="$OUT/$name.elf"
    fw_link_firmware "$elf" "$board" "$target" "$OUT/cargo/$target/release/libsoftcheck.a" "" "-DSOFTCHECK_N=${N}u" \
        firmware/src/softcheck_main.c > "$OUT/$name.link.log" 2>&1 || { cat "$OUT/$name.link.log"; fail=1; continue; }
    if ! fw_qemu "$board" "$elf" 600 > "$OUT/$name.out" 2>&1; then fail=1; fi
    grep -q '^SOFTCHECK' "$OUT/$name.out" || { echo "$label: no output"; cat "$OUT/$name.out"; fail=1; }
    sed "s/^/$label: /" "$OUT/$name.out"
    if grep '^SOFTCHECK' "$OUT/$name.out" | grep -qv 'mismatches 0$'; then fail=1; fi
done <<< "$ROWS"
echo "soft_device_check: $N pairs per check and core, $(( $(date +%s) - T0 )) s of QEMU"
[ "$fail" = 0 ] && echo "soft_device_check: 0 mismatches on every core" || { echo "soft_device_check: FAILED"; exit 1; }
