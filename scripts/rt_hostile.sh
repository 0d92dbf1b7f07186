#!/usr/bin/env bash
# tests/c/rt_hostile.c (hostile sizes, container headers and missing
# dimensions through the runtime API and atome_load) on the host and on a
# 32-bit core under QEMU (Cortex-M3, thumbv7m, mps2-an385), where a size_t
# is 32 bits: both must print "rt_hostile: N checks, 0 failed".
#   scripts/rt_hostile.sh HOST_LIBATOME_A
set -euo pipefail
cd "$(dirname "$0")/.."
. firmware/fw.sh
HOSTLIB="$1"
OUT="$FW_ROOT/target/rt_hostile"
mkdir -p "$OUT"
cc -std=c99 -Wall -Wextra -Werror -O2 -Iinclude -Ifirmware/common tests/c/rt_hostile.c firmware/host/host_platform.c "$HOSTLIB" -lm -o "$OUT/host"
host=$("$OUT/host") || { echo "host: $host"; exit 1; }
echo "x86-64: $host"
fw_ensure_tools apt rust
T=thumbv7m-none-eabi
fw_cargo_build default-config "" firmware "$T"
fw_link_firmware "$OUT/m3.elf" mps2-an385 "$T" "$(fw_lib_path default-config firmware "$T")" "" "" tests/c/rt_hostile.c > "$OUT/link.log" 2>&1 \
    || { cat "$OUT/link.log"; exit 1; }
fw_qemu mps2-an385 "$OUT/m3.elf" 120 > "$OUT/m3.out" 2>&1 || { echo "Cortex-M3:"; cat "$OUT/m3.out"; exit 1; }
m3=$(grep '^rt_hostile:' "$OUT/m3.out" || true)
echo "Cortex-M3 (thumbv7m, QEMU): $m3"
[ "${host##*checks, }" = "0 failed" ] && [ "${m3##*checks, }" = "0 failed" ] && [ "${host%% checks*}" = "${m3%% checks*}" ]
