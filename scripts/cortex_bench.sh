#!/usr/bin/env bash
# Cortex-M figures for libatome.a at the default configuration.
#
#   scripts/cortex_bench.sh [--report-only]
#
# BENCHMARKS.md#reference-scenarios scenario S3: atome_predict_next on bytes [10,42) of the text
# T with default.atome. Each firmware (firmware/src/bench_main.c) runs under
# `qemu-system-arm -icount shift=0` (one instruction per virtual nanosecond)
# and reads the CMSDK APB timer at 0x40000000 (25 MHz: 1 tick = 40
# instructions) on the MPS2 boards (AN505/M33: 20 MHz, 50 instructions), or
# the nRF51 TIMER0 (16 MHz: 62.5 instructions) on the micro:bit, around the
# call: the same method as the reference figures in BENCHMARKS.md#reference-scenarios.
# Also per target: flash taken by libatome's objects in the linked firmware
# (engine = the Rust object, builtins = compiler_builtins; from the linker
# map, firmware/tools/mapsize.py), and peak stack of predict_next and
# generate (painted stack). RISC-V rows (riscv32imc, riscv32imac: the
# ESP32-C3/C6 ISAs) run on QEMU's virt machine, counted exactly with the
# instret CSR under -icount shift=0.
# Four builds of the library: the default device build (device kernels,
# src/kernels/device/), the size-first build (cargo feature size-first),
# the q15 build (ATOME_DTYPE=q15; S3-M0-q15, S3-M3-q15, S3-M4F-q15: S3 at
# most 6.76M, 4.12M, 2.99M instructions) and the q15 size-first build
# (both; S3-M0-q15-size-first, S3-M3-q15-size-first: at most 16.9M and
# 10.3M; .text and stack targets in firmware/tools/bench_report.py). The
# q15 builds' logits are compared across cores and between the two q15
# builds, the float builds' among themselves.
# Then S4 on M4F (firmware/src/gen_main.c:
# toy configuration, S=64, generate from T[90:98), max_tokens 64, the whole
# call), lean and cached state, in both builds.
# Prints markdown tables; exits non-zero when a run fails, results differ
# between cores or builds, or a target is missed: engine .text on
# thumbv7em-none-eabihf > 24 KiB (default build) or > 8 KiB (size-first),
# a peak stack > 2 KiB, S3 on M4F/M7/M33 above 6.0M instructions (default
# build), the q15 S3 above its target (M0, M3, M4F), or the cached S4
# generation on M4F above 15M (default build): the targets of
# BENCHMARKS.md#targets, by the names there.
# ATOME_BENCH_BUILDS (see below) limits the builds.
#   --report-only: exit 0 even when a target not met yet (a TARGET
#                  problem; none today) is missed; runs that fail, give
#                  different bits, or break an engine .text, peak-stack or
#                  instruction limit (every device target of
#                  BENCHMARKS.md#targets, all met) still fail.
set -euo pipefail
cd "$(dirname "$0")/.."
source firmware/fw.sh
REPORT_ONLY=0
[ "${1:-}" = "--report-only" ] && REPORT_ONLY=1

T0=$(fw_now)
fw_ensure_tools apt rust llvm
OUT="$FW_BUILD/bench"
rm -rf "$OUT"; mkdir -p "$OUT"
KNOBS="$(fw_knobs default-config)"

ARM_TARGETS="thumbv6m-none-eabi thumbv7m-none-eabi thumbv7em-none-eabi thumbv7em-none-eabihf thumbv8m.main-none-eabihf"
RV_TARGETS="riscv32imc-unknown-none-elf riscv32imac-unknown-none-elf"
# build name|cargo configuration name (target dir)|cargo features|extra knobs|C flags
# (q15: the integer mode, ATOME_DTYPE=q15, docs/Q15.md)
BUILDS="default|default||
size-first|size_first|--features size-first||
q15|q15||ATOME_DTYPE=q15|-DATOME_DTYPE_Q15=1
q15-size-first|q15_size_first|--features size-first|ATOME_DTYPE=q15|-DATOME_DTYPE_Q15=1"
# ATOME_BENCH_BUILDS="q15" (names, space-separated) runs only those builds:
# a quicker loop while working on one of them; the suite runs all four.
if [ -n "${ATOME_BENCH_BUILDS:-}" ]; then
    BUILDS="$(echo "$BUILDS" | while IFS='|' read -r b rest; do
        case " $ATOME_BENCH_BUILDS " in *" $b "*) echo "$b|$rest" ;; esac; done)"
    [ -n "$BUILDS" ] || fw_die "ATOME_BENCH_BUILDS=$ATOME_BENCH_BUILDS names no build (default size-first q15 q15-size-first)"
fi
while IFS='|' read -r bname cfg feats xknobs xcflags; do
    # shellcheck disable=SC2086
    FW_CARGO_FEATURES="$feats" fw_cargo_build "$cfg" "$KNOBS $xknobs" firmware $ARM_TARGETS $RV_TARGETS \
        || fw_die "cargo build ($bname) failed"
done <<< "$BUILDS"

blob_asm() { # MODEL OUT.S
    printf '    .section .rodata.bench_blob,"a"\n    .balign 4\n    .global bench_blob\nbench_blob:\n    .incbin "%s"\n    .global bench_blob_end\nbench_blob_end:\n' \
        "$1" > "$2"
}
blob_asm "$FW_MODELS/default.atome" "$OUT/blob.S"

# label target board reference-ticks(0 = none) note
ROWS="M0|thumbv6m-none-eabi|microbit|3380528
M0|thumbv6m-none-eabi|mps2-an385|3380528
M3|thumbv7m-none-eabi|mps2-an385|2062292
M4 (soft float)|thumbv7em-none-eabi|mps2-an386|0
M4F|thumbv7em-none-eabihf|mps2-an386|598113
M7|thumbv7em-none-eabihf|mps2-an500|598098
M33|thumbv8m.main-none-eabihf|mps2-an505|0
RV32IMC|riscv32imc-unknown-none-elf|riscv-virt|0
RV32IMAC|riscv32imac-unknown-none-elf|riscv-virt|0"

: > "$OUT/rows.txt"
while IFS='|' read -r bname cfg feats xknobs xcflags; do
echo "$ROWS" | while IFS='|' read -r label target board ref; do
    name="$(echo "$bname-$label-$target-$board" | tr ' ()' '___')"
    elf="$OUT/$name.elf"
    if ! fw_link_firmware "$elf" "$board" "$target" "$(fw_lib_path "$cfg" firmware "$target")" "$KNOBS" "$xcflags" \
            firmware/src/bench_main.c "$OUT/blob.S" > "$OUT/$name.link.log" 2>&1; then
        if grep -qE "ATOME_FW_RAM_OVERFLOW|overflowed by" "$OUT/$name.link.log"; then
            echo "$bname|$label|$target|$board|skip|does not fit: $(grep -oE "region .RAM. overflowed by [0-9]+ bytes|ATOME_FW_RAM_OVERFLOW" "$OUT/$name.link.log" | head -1)" >> "$OUT/rows.txt"
            continue
        fi
        cat "$OUT/$name.link.log" >&2; echo "$bname|$label|$target|$board|fail|link failed" >> "$OUT/rows.txt"; continue
    fi
    if fw_qemu "$board" "$elf" 300 -icount shift=0 > "$OUT/$name.out" 2>&1; then
        echo "$bname|$label|$target|$board|ok|$ref" >> "$OUT/rows.txt"
    else
        cat "$OUT/$name.out" >&2; echo "$bname|$label|$target|$board|fail|qemu run failed" >> "$OUT/rows.txt"
    fi
    case "$target" in thumb*) python3 firmware/tools/frames.py arm-none-eabi-objdump "$elf" 6 > "$OUT/$name.frames" || true ;; esac
done
done <<< "$BUILDS"

# ---- the S4-like generation on M4F: toy configuration, lean and cached ----
GKNOBS="$(fw_knobs toy)"
blob_asm "$FW_MODELS/model_toy.atome" "$OUT/toy_blob.S"
: > "$OUT/gen.txt"
while IFS='|' read -r bname cfg feats xknobs xcflags; do
    case "$bname" in q15*) continue ;; esac   # the q15 engine has the lean plan only
    for state in lean cached; do
        gcfg="toy_${state}_$cfg"; name="gen-$bname-$state"
        extra=""; [ $state = cached ] && extra="-DATOME_STATE_CACHED=1"
        # shellcheck disable=SC2086
        FW_CARGO_FEATURES="$feats" fw_cargo_build "$gcfg" "$GKNOBS ATOME_STATE=$state" firmware thumbv7em-none-eabihf \
            || fw_die "cargo build ($gcfg) failed"
        if fw_link_firmware "$OUT/$name.elf" mps2-an386 thumbv7em-none-eabihf \
                "$(fw_lib_path "$gcfg" firmware thumbv7em-none-eabihf)" "$GKNOBS" "$extra" \
                firmware/src/gen_main.c "$OUT/toy_blob.S" > "$OUT/$name.link.log" 2>&1 \
           && fw_qemu mps2-an386 "$OUT/$name.elf" 600 -icount shift=0 > "$OUT/$name.out" 2>&1; then
            echo "$bname|$state|ok" >> "$OUT/gen.txt"
        else
            cat "$OUT/$name.link.log" "$OUT/$name.out" >&2 || true
            echo "$bname|$state|fail" >> "$OUT/gen.txt"
        fi
    done
done <<< "$BUILDS"

python3 firmware/tools/bench_report.py "$OUT"

# ---- q15 cached generation: S4-like (toy, S=64, T[90:98), max_tokens 64)
# on every core, with the q15 lean run on M4F for the bits; S2-like (944K,
# S=64, T[64:80), max_tokens 64: 48 tokens) on M0, M3, M4F and RV32IMC.
# Checked by firmware/tools/q15gen_report.py: the same greedy tokens on every
# core and state and as the float build's S4 runs above, peak stack <= 2 KiB,
# and the ceilings (S4-M0-q15-cached, S4-M4F-q15-cached, S2-M4F-q15-cached;
# S2-M0-q15-cached, S2-M3-q15-cached, S2-RV32IMC-q15-cached: the aims, met);
# the aims not met yet (S4 M0 16.5M, M3 10M, M4F 7.0M for the whole call;
# S2 M4F 1.6M per generated token) are printed, not checked.
: > "$OUT/q15gen.txt"
if echo "$BUILDS" | grep -q '^q15|'; then
    M944="$(fw_knobs m944k)"
    blob_asm "$FW_MODELS/atome_944k.bin" "$OUT/m944_blob.S"
    # scenario|state|label|target|board
    Q15GEN="S4|cached|M0|thumbv6m-none-eabi|mps2-an385
S4|cached|M3|thumbv7m-none-eabi|mps2-an385
S4|cached|M4F|thumbv7em-none-eabihf|mps2-an386
S4|cached|M7|thumbv7em-none-eabihf|mps2-an500
S4|cached|M33|thumbv8m.main-none-eabihf|mps2-an505
S4|cached|RV32IMC|riscv32imc-unknown-none-elf|riscv-virt
S4|lean|M4F|thumbv7em-none-eabihf|mps2-an386
S2|cached|M0|thumbv6m-none-eabi|mps2-an385
S2|cached|M3|thumbv7m-none-eabi|mps2-an385
S2|cached|M4F|thumbv7em-none-eabihf|mps2-an386
S2|cached|RV32IMC|riscv32imc-unknown-none-elf|riscv-virt"
    while IFS='|' read -r sc state label target board; do
        if [ "$sc" = S4 ]; then kn="$GKNOBS"; blob="$OUT/toy_blob.S"; gdefs=""
        else kn="$M944"; blob="$OUT/m944_blob.S"; gdefs="-DGEN_FROM=64 -DGEN_LEN=16 -DGEN_MAX=64"; fi
        gcfg="q15gen_${sc}_$state"; name="q15gen-$sc-$state-$label"
        extra="-DATOME_DTYPE_Q15=1 $gdefs"; [ "$state" = cached ] && extra="$extra -DATOME_STATE_CACHED=1"
        # shellcheck disable=SC2086
        fw_cargo_build "$gcfg" "$kn ATOME_STATE=$state ATOME_DTYPE=q15" firmware "$target" \
            || fw_die "cargo build ($gcfg, $target) failed"
        if fw_link_firmware "$OUT/$name.elf" "$board" "$target" "$(fw_lib_path "$gcfg" firmware "$target")" "$kn" "$extra" \
                firmware/src/gen_main.c "$blob" > "$OUT/$name.link.log" 2>&1 \
           && fw_qemu "$board" "$OUT/$name.elf" 900 -icount shift=0 > "$OUT/$name.out" 2>&1; then
            echo "$sc|$state|$label|$name|ok" >> "$OUT/q15gen.txt"
        else
            cat "$OUT/$name.link.log" "$OUT/$name.out" >&2 || true
            echo "$sc|$state|$label|$name|fail" >> "$OUT/q15gen.txt"
        fi
    done <<< "$Q15GEN"
fi
python3 firmware/tools/q15gen_report.py "$OUT"

echo
echo "Largest static stack frames (thumbv6m / thumbv7em-none-eabihf firmware):"
for f in "$OUT"/*-M0-thumbv6m-none-eabi-*.frames "$OUT"/*-M4F-thumbv7em-none-eabihf-*.frames; do
    [ -f "$f" ] && { echo "  $(basename "$f" .frames):"; sed 's/^/    /' "$f"; }
done
# S3-M0-f32, S3-M3-f32, S3-RV32IMC-f32: the cores without an FPU (the
# soft-float matvec of src/kernels/device/): S3 instructions per
# predict_next at most 45.1M on M0, 27.5M on M3, 24.1M on RV32IMC (3x fewer
# than the reference; RV32IMC, without a reference figure, about a third
# of its size-first count). Met, so a miss is a LIMIT problem: it fails the
# run even with --report-only (which reports only TARGET problems, targets
# not met yet).
python3 - "$OUT" <<'EOF'
import json, os, re, sys
out = sys.argv[1]
bad = json.load(open(os.path.join(out, "bad.json")))
for name, lim in (("M0-thumbv6m-none-eabi-mps2-an385", 45100000), ("M3-thumbv7m-none-eabi-mps2-an385", 27500000),
                  ("RV32IMC-riscv32imc-unknown-none-elf-riscv-virt", 24100000)):
    tname = "S3-%s-f32" % name.split("-")[0]  # the name in BENCHMARKS.md#targets
    p = os.path.join(out, "default-" + name + ".out")  # the default build runs the soft-float kernel
    m = re.search(r"BENCH load 0 id -?\d+ ticks (\d+) insns_x10_per_tick (\d+)", open(p).read()) if os.path.exists(p) else None
    if not m:
        bad.append("LIMIT: no S3 figure for %s" % name)
        continue
    n = int(m.group(1)) * int(m.group(2)) // 10
    print("%s (%s): %s instructions (at most %s)" % (tname, name, "{:,}".format(n), "{:,}".format(lim)))
    if n > lim:
        bad.append("LIMIT: %s: %s instructions on %s (> %s)" % (tname, "{:,}".format(n), name, "{:,}".format(lim)))
json.dump(bad, open(os.path.join(out, "bad.json"), "w"))
EOF
python3 -c "import json,sys; [print('problem:', x) for x in json.load(open(sys.argv[1]))]" "$OUT/bad.json"
TOTAL=$(( $(fw_now) - T0 ))
nbad="$(python3 -c "import json,sys; print(len(json.load(open(sys.argv[1]))))" "$OUT/bad.json")"
nhard="$(python3 -c "import json,sys; print(len([b for b in json.load(open(sys.argv[1])) if not b.startswith('TARGET: ')]))" "$OUT/bad.json")"
if [ "$nbad" = 0 ]; then
    echo "cortex_bench summary: OK (all runs passed; instruction, engine .text and peak stack targets met) in ${TOTAL}s"
else
    echo "cortex_bench summary: $nbad problem(s), listed above ($nhard run failures), in ${TOTAL}s"
fi
[ $REPORT_ONLY = 1 ] && nbad=$nhard
echo "cortex_bench: $(( $(grep -c . "$OUT/rows.txt") + $(grep -c . "$OUT/gen.txt") + $(grep -c . "$OUT/q15gen.txt") - nbad )) passed, $nbad failed"
[ "$nbad" = 0 ]
