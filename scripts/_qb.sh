#!/usr/bin/env bash
# Cortex-M figures for libatome.a at the default configuration.
#
#   scripts/cortex_bench.sh [--report-only]
#
# SPEC section 7 scenario S3: atome_predict_next on bytes [10,42) of the text
# T with default.atome. Each firmware (firmware/src/bench_main.c) runs under
# `qemu-system-arm -icount shift=0` (one instruction per virtual nanosecond)
# and reads the CMSDK APB timer at 0x40000000 (25 MHz: 1 tick = 40
# instructions) on the MPS2 boards (AN505/M33: 20 MHz, 50 instructions), or
# the nRF51 TIMER0 (16 MHz: 62.5 instructions) on the micro:bit, around the
# call: the same method as the
# reference figures in SPEC section 7.
# Also per target: flash taken by libatome's objects in the linked firmware
# (engine = the Rust object, builtins = compiler_builtins; from the linker
# map, firmware/tools/mapsize.py), and peak stack of predict_next and
# generate (painted stack). RISC-V rows (riscv32imc, riscv32imac: the
# ESP32-C3/C6 ISAs) run on QEMU's virt machine, counted exactly with the
# instret CSR under -icount shift=0. Prints a markdown table; exits non-zero
# when a run fails, engine .text > 8 KiB on thumbv7em-none-eabihf or a peak
# stack > 2 KiB.
#   --report-only: exit 0 even when a target (8 KiB, 2 KiB) is missed; runs
#                  that fail or give different bits still fail.
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
NM="$(fw_llvm_bin llvm-nm)"
LLD="$(dirname "$NM")/rust-lld"

ARM_TARGETS="thumbv6m-none-eabi thumbv7m-none-eabi"
RV_TARGETS="riscv32imc-unknown-none-elf"
# shellcheck disable=SC2086
fw_cargo_build default "$KNOBS" firmware $ARM_TARGETS $RV_TARGETS || fw_die "cargo build failed"

printf '    .section .rodata.bench_blob,"a"\n    .balign 4\n    .global bench_blob\nbench_blob:\n    .incbin "%s"\n    .global bench_blob_end\nbench_blob_end:\n' \
    "$FW_MODELS/default.atome" > "$OUT/blob.S"

# label target board reference-ticks(0 = none) note
ROWS="M0|thumbv6m-none-eabi|mps2-an385|3380528
M3|thumbv7m-none-eabi|mps2-an385|2062292
RV32IMC|riscv32imc-unknown-none-elf|riscv-virt|0"

echo "$ROWS" | while IFS='|' read -r label target board ref; do
    name="$(echo "$label-$target-$board" | tr ' ()' '___')"
    lboard="$board"; [ "$board" = none ] && lboard=mps2-an385
    elf="$OUT/$name.elf"
    if ! fw_link_firmware "$elf" "$lboard" "$target" "$(fw_lib_path default firmware "$target")" "$KNOBS" "" \
            firmware/src/bench_main.c "$OUT/blob.S" > "$OUT/$name.link.log" 2>&1; then
        if grep -qE "ATOME_FW_RAM_OVERFLOW|overflowed by" "$OUT/$name.link.log"; then
            echo "$label|$target|$board|skip|does not fit: $(grep -oE "region .RAM. overflowed by [0-9]+ bytes|ATOME_FW_RAM_OVERFLOW" "$OUT/$name.link.log" | head -1)" >> "$OUT/rows.txt"
            continue
        fi
        cat "$OUT/$name.link.log" >&2; echo "$label|$target|$board|fail|link failed" >> "$OUT/rows.txt"; continue
    fi
    if [ "$board" = none ]; then
        echo "$label|$target|$board|linkonly|$ref" >> "$OUT/rows.txt"
    elif fw_qemu "$board" "$elf" 300 -icount shift=0 > "$OUT/$name.out" 2>&1; then
        echo "$label|$target|$board|ok|$ref" >> "$OUT/rows.txt"
    else
        cat "$OUT/$name.out" >&2; echo "$label|$target|$board|fail|qemu run failed" >> "$OUT/rows.txt"
    fi
    case "$target" in thumb*) python3 firmware/tools/frames.py arm-none-eabi-objdump "$elf" 6 > "$OUT/$name.frames" || true ;; esac
done

python3 - "$OUT" <<'EOF'
import json, os, re, subprocess, sys
sys.path.insert(0, "firmware/tools")
import mapsize
out = sys.argv[1]
rows = [l.rstrip("\n").split("|") for l in open(os.path.join(out, "rows.txt"))]
print("| core | Rust target | QEMU board | predict_next ticks | instructions | reference C engine (same method); ratio | engine .text (of which core) | engine .rodata | builtins .text | peak stack predict / generate |")
print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|")
bad = []
logits = {}
for label, target, board, status, extra in rows:
    name = re.sub(r"[ ()]", "_", "%s-%s-%s" % (label, target, board))
    if status in ("skip", "fail"):
        print("| %s | %s | %s | %s | | | | | | |" % (label, target, board, ("not run: " if status == "skip" else "FAILED: ") + extra))
        if status == "fail":
            bad.append("%s on %s: %s" % (target, board, extra))
        continue
    mp = os.path.join(out, name + ".map")
    sums, members = mapsize.parse(open(mp).read())
    e, b = sums["engine"], sums["builtins"]
    core_text = sum(v["text"] for k, v in members.items() if k.startswith("core-"))
    ticks = insns = refs = peak = ""
    if status == "ok":
        txt = open(os.path.join(out, name + ".out")).read()
        m = re.search(r"BENCH load (-?\d+) id (-?\d+) ticks (\d+) insns_x10_per_tick (\d+) stack (\d+)", txt)
        g = re.search(r"BENCH generate ticks (\d+) count (-?\d+) stack (\d+)", txt)
        lg = re.search(r"LOGITS(.*)", txt)
        if not m or not g or m.group(1) != "0":
            bad.append("%s on %s: no result" % (target, board)); continue
        logits[(target, board)] = lg.group(1).strip()
        t, k = int(m.group(3)), int(m.group(4))
        ticks = "{:,}".format(t)
        insns = "{:,}".format(t * k // 10)
        r = int(extra)
        refs = "{:,} ({:,} ticks); {:.2f}x".format(r * 40, r, t * k / 10 / (r * 40)) if r else ""
        sp, sg = int(m.group(5)), int(g.group(3))
        peak = "%d / %d" % (sp, sg)
        if max(sp, sg) > 2048:
            bad.append("TARGET: " + "peak stack %d bytes on %s (> 2 KiB)" % (max(sp, sg), target))
    print("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
        label, target, board if board != "none" else "-", ticks, insns, refs,
        "{:,} ({:,})".format(e["text"], core_text), "{:,}".format(e["rodata"]), "{:,}".format(b["text"]), peak))
    if target == "thumbv7em-none-eabihf" and board == "mps2-an386" and e["text"] > 8192:
        bad.append("TARGET: engine .text %d bytes on thumbv7em-none-eabihf (> 8 KiB)" % e["text"])
same = len(set(logits.values())) == 1
print()
print("Logit bits of the S3 call identical on every core run: %s (%d runs)." % ("yes" if same else "NO", len(logits)))
if not same:
    bad.append("logit bits differ between cores")
json.dump(bad, open(os.path.join(out, "bad.json"), "w"))
EOF

echo
echo "Largest static stack frames (thumbv6m / thumbv7em-none-eabihf firmware):"
for f in "$OUT"/M0-thumbv6m-none-eabi-*.frames "$OUT"/M4F-thumbv7em-none-eabihf-*.frames; do
    [ -f "$f" ] && { echo "  $(basename "$f" .frames):"; sed 's/^/    /' "$f"; }
done
# Issue 11 acceptance 1, cores without an FPU (the soft-float matvec,
# src/kernels/device/soft.rs): S3 instructions per predict_next at most
# 45.1M on M0 code, 27.5M on M3, 24.1M on RV32IMC (3x fewer than the
# reference; a third of 72.3M on RV32IMC). A miss is a TARGET problem.
python3 - "$OUT" <<'EOF'
import json, os, re, sys
out = sys.argv[1]
bad = json.load(open(os.path.join(out, "bad.json")))
for name, lim in (("M0-thumbv6m-none-eabi-mps2-an385", 45100000), ("M3-thumbv7m-none-eabi-mps2-an385", 27500000),
                  ("RV32IMC-riscv32imc-unknown-none-elf-riscv-virt", 24100000)):
    p = os.path.join(out, name + ".out")
    m = re.search(r"BENCH load 0 id -?\d+ ticks (\d+) insns_x10_per_tick (\d+)", open(p).read()) if os.path.exists(p) else None
    if not m:
        bad.append("TARGET: no S3 figure for %s" % name)
        continue
    n = int(m.group(1)) * int(m.group(2)) // 10
    print("S3 soft-float target %s: %s instructions (at most %s)" % (name, "{:,}".format(n), "{:,}".format(lim)))
    if n > lim:
        bad.append("TARGET: S3 %s instructions on %s (> %s)" % ("{:,}".format(n), name, "{:,}".format(lim)))
json.dump(bad, open(os.path.join(out, "bad.json"), "w"))
EOF
python3 -c "import json,sys; [print('problem:', x) for x in json.load(open(sys.argv[1]))]" "$OUT/bad.json"
TOTAL=$(( $(fw_now) - T0 ))
nbad="$(python3 -c "import json,sys; print(len(json.load(open(sys.argv[1]))))" "$OUT/bad.json")"
nhard="$(python3 -c "import json,sys; print(len([b for b in json.load(open(sys.argv[1])) if not b.startswith('TARGET: ')]))" "$OUT/bad.json")"
if [ "$nbad" = 0 ]; then
    echo "cortex_bench summary: OK (all runs passed, engine .text and peak stack within targets) in ${TOTAL}s"
else
    echo "cortex_bench summary: $nbad problem(s), listed above ($nhard run failures), in ${TOTAL}s"
fi
[ $REPORT_ONLY = 1 ] && nbad=$nhard
echo "cortex_bench: $(( $(grep -c . "$OUT/rows.txt") - nbad )) passed, $nbad failed"
[ "$nbad" = 0 ]
