#!/usr/bin/env bash
# Instructions per weight term of the q15 integer matvec on Cortex-M0, M3
# and M4F: firmware/src/q15mv_main.c linked with firmware/q15mv (matvec_q
# behind a C symbol), timed with the board timer under QEMU -icount shift=0.
# Usage: scripts/q15_kernel_bench.sh [release|release-o3]
set -euo pipefail
cd "$(dirname "$0")/.."
. firmware/fw.sh
fw_ensure_tools apt rust
PROFILE="${1:-release}"
OUT="$FW_ROOT/target/q15mv"
mkdir -p "$OUT"
ROWS="M0|thumbv6m-none-eabi|mps2-an385
M3|thumbv7m-none-eabi|mps2-an385
M4F|thumbv7em-none-eabihf|mps2-an386"
# shellcheck disable=SC2046
fw_crate_build firmware/q15mv "$OUT" "$PROFILE" $(echo "$ROWS" | cut -d'|' -f2) || exit 1
fail=0
echo "$ROWS" | while IFS='|' read -r label target board; do
    lib="$OUT/cargo/$target/$PROFILE/libq15mv.a"
    elf="$OUT/$label.elf"
    fw_link_firmware "$elf" "$board" "$target" "$lib" "" "" firmware/src/q15mv_main.c > "$OUT/$label.link.log" 2>&1 \
        || { cat "$OUT/$label.link.log"; exit 1; }
    fw_qemu "$board" "$elf" 300 -icount shift=0 > "$OUT/$label.out" 2>&1 || { cat "$OUT/$label.out"; exit 1; }
    awk -v l="$label" '/^Q15MV/ {
        terms = $5 * $7 * $9; insns = $11 * $13 / 10;
        printf "%-4s packing %s %4dx%-4d n=%-3d %9d insns  %5.2f per weight term\n", l, $3, $5, $7, $9, insns, insns / terms }' "$OUT/$label.out"
    text=$(arm-none-eabi-size -A "$elf" | awk '/^\.text/ {print $2}')
    echo "$label .text of the firmware (matvec + start-up): $text bytes"
    # Static frames of the kernel's functions (pushed registers + sub sp,
    # from the prologue): they add to the engine's peak stack.
    arm-none-eabi-objdump -d --no-show-raw-insn -C "$elf" | awk -v l="$label" '
        /^[0-9a-f]+ <.*>:$/ { if (fn != "" && fr > 0) printf "%-4s frame %5d B  %s\n", l, fr, fn; fn = ""; fr = 0; k = 0
                              if ($0 ~ /q15::matvec/) { fn = $2; sub(/^<atome::kernels::q15::matvec::/, "", fn); sub(/>:$/, "", fn) } next }
        fn == "" { next }
        { k++ } k > 12 { next }
        /\tpush(\.w)?\t/ { n = split($0, a, ","); fr += 4 * n }
        /\tsub(\.w)?\tsp, (sp, )?#/ { match($0, /#[0-9]+/); fr += substr($0, RSTART + 1, RLENGTH - 1) }
        END { if (fn != "" && fr > 0) printf "%-4s frame %5d B  %s\n", l, fr, fn }'

done
# The results must be the same bits on every core (different kernels: pair
# tables on M0/M3, SMLAD on M4F).
sums=$(for l in M0 M3 M4F; do grep -o 'check [0-9a-f]*' "$OUT/$l.out" | tr '\n' ' '; echo; done | sort -u | wc -l)
if [ "$sums" = 1 ]; then echo "q15_kernel_bench: same checksums on M0, M3, M4F"; else echo "q15_kernel_bench: checksums differ"; exit 1; fi
