#!/usr/bin/env bash
# Cross-build and audit libatome.a for the seven microcontroller targets.
#
#   scripts/cross.sh
#
# 1. cargo build --profile firmware for thumbv6m, thumbv7m, thumbv7em (soft
#    and hard float), thumbv8m.main (hard float), riscv32imc and riscv32imac,
#    at the default configuration, with default math and with
#    --features system-libm.
# 2. Symbol audit of every archive (firmware/tools/symaudit.py, llvm-nm from
#    rustup's llvm-tools, which reads ARM and RISC-V alike): all SPEC section
#    4 functions defined; undefined symbols only memcpy/memset/memmove/memcmp,
#    compiler builtins, and expf/tanhf with system-libm; no heap, stdio,
#    socket or OS symbol.
# 3. No-panic proof, on the final linked ELF (names containing "panic", or
#    rust_begin_unwind, or core::fmt must be absent):
#    a. every target: rust-lld --gc-sections with every exported atome_*
#       function as a root (-u), i.e. what any firmware calling the whole API
#       keeps;
#    b. every Arm target: a C firmware calling every exported function
#       (firmware/src/audit_main.c), arm-none-eabi-gcc -Wl,--gc-sections,
#       run under QEMU where a board exists: mps2-an385 runs both the
#       thumbv6m and thumbv7m builds (the default configuration's state does
#       not fit the micro:bit's 16 KiB), mps2-an386 the M4F build and
#       mps2-an500 (M7) the soft-float thumbv7em build; the thumbv8m.main
#       build is linked only.
# Exits non-zero on any failure; the last line is a one-line summary.
set -euo pipefail
cd "$(dirname "$0")/.."
source firmware/fw.sh

T0=$(fw_now)
fw_ensure_tools apt rust llvm
NM="$(fw_llvm_bin llvm-nm)"
LLD="$(dirname "$NM")/rust-lld"
OUT="$FW_BUILD/cross"
rm -rf "$OUT"; mkdir -p "$OUT"
fail=0
failmsg() { echo "FAIL: $*"; fail=$((fail + 1)); }

TARGETS="$FW_ALL_TARGETS"
KNOBS="$(fw_knobs default-config)"

# ---- 1. build ---------------------------------------------------------------
T1=$(fw_now)
# shellcheck disable=SC2086
fw_cargo_build cross "$KNOBS" firmware $TARGETS || fw_die "cargo build --profile firmware failed"
# shellcheck disable=SC2086
FW_CARGO_FEATURES="--features system-libm" fw_cargo_build cross-libm "$KNOBS" firmware $TARGETS \
    || fw_die "cargo build --profile firmware --features system-libm failed"
T_BUILD=$(( $(fw_now) - T1 ))
echo "built 2 x 7 archives in ${T_BUILD}s"

# ---- 2. symbol audit ---------------------------------------------------------
audits=0
for t in $TARGETS; do
    for v in cross cross-libm; do
        lib="$(fw_lib_path $v firmware "$t")"
        flag=""; [ $v = cross-libm ] && flag=--system-libm
        printf '%-28s %-11s %7s bytes  ' "$t" "$([ $v = cross ] && echo default || echo system-libm)" "$(stat -c %s "$lib")"
        if python3 firmware/tools/symaudit.py "$NM" "$lib" $flag > "$OUT/audit-$t-$v.txt"; then
            audits=$((audits + 1)); tail -1 "$OUT/audit-$t-$v.txt" | sed 's/^ *//'
        else
            echo; cat "$OUT/audit-$t-$v.txt"; failmsg "symbol audit $t ($v)"
        fi
    done
done

# ---- 3a. no-panic: rust-lld with every export as a root ---------------------
panic_re='panic|rust_begin_unwind|core..fmt|_ZN4core3fmt'
lldok=0
for t in $TARGETS; do
    lib="$(fw_lib_path cross firmware "$t")"
    roots="$("$NM" --defined-only -g "$lib" 2>/dev/null | awk '$2=="T" && $3 ~ /^atome_/ {print "-u " $3}' | sort -u | tr '\n' ' ')"
    elf="$OUT/roots-$t.elf"
    # shellcheck disable=SC2086
    if ! "$LLD" -flavor gnu --gc-sections -e atome_init $roots "$lib" -o "$elf" > "$OUT/lld-$t.log" 2>&1; then
        cat "$OUT/lld-$t.log"; failmsg "rust-lld link with all exports ($t)"; continue
    fi
    n="$(echo "$roots" | wc -w)"; n=$((n / 2))
    hits="$("$NM" -C "$elf" | grep -Ei "$panic_re" || true)"
    text="$("$(fw_llvm_bin llvm-size)" -A "$elf" | awk '$1==".text" {print $2}')"
    if [ -n "$hits" ]; then
        echo "$hits" | head -5; failmsg "panic machinery linked in ($t, all $n exports kept)"
    else
        lldok=$((lldok + 1)); printf 'no-panic %-28s rust-lld, %2d exports kept, .text %6s bytes: ok\n' "$t" "$n" "$text"
    fi
done

# ---- 3b. no-panic: C firmware calling every exported function --------------
cfwok=0; cfwn=0; ran=""
blobdir="$OUT/auditblob"; mkdir -p "$blobdir"
printf '    .section .rodata.audit_blob,"a"\n    .balign 4\n    .global audit_blob\naudit_blob:\n    .incbin "%s"\n    .global audit_blob_end\naudit_blob_end:\n    .section .note.GNU-stack,"",%%progbits\n' \
    "$FW_MODELS/default.atome" > "$blobdir/blob.S"
for tb in thumbv6m-none-eabi:mps2-an385 thumbv7m-none-eabi:mps2-an385 thumbv7em-none-eabihf:mps2-an386 \
          thumbv7em-none-eabi:mps2-an500 thumbv8m.main-none-eabihf:none; do
    t="${tb%%:*}"; board="${tb##*:}"; cfwn=$((cfwn + 1))
    lboard="$board"; [ "$board" = none ] && lboard=mps2-an385   # M33: link only (memory map of an MPS2)
    elf="$OUT/audit-$t.elf"
    if ! fw_link_firmware "$elf" "$lboard" "$t" "$(fw_lib_path cross firmware "$t")" "$KNOBS" "" \
            firmware/src/audit_main.c "$blobdir/blob.S" > "$OUT/audit-link-$t.log" 2>&1; then
        cat "$OUT/audit-link-$t.log"; failmsg "audit firmware link ($t)"; continue
    fi
    hits="$(arm-none-eabi-nm -C "$elf" | grep -Ei "$panic_re" || true)"
    missing=""
    for f in $("$NM" --defined-only -g "$(fw_lib_path cross firmware "$t")" | awk '$2=="T" && $3 ~ /^atome_/ {print $3}' | sort -u); do
        arm-none-eabi-nm "$elf" | grep -q " T $f\$" || missing="$missing $f"
    done
    [ -n "$missing" ] && failmsg "audit firmware ($t) does not call:$missing"
    if [ -n "$hits" ]; then
        echo "$hits" | head -5
        echo "  panic paths (caller -> callee) in the linked firmware:"
        arm-none-eabi-objdump -d -C --no-show-raw-insn "$elf" | awk '
            /^[0-9a-f]+ <.*>:$/ { fn = substr($0, index($0, "<")) }
            /\tb(l|\.w)?\t[0-9a-f]+ </ && /panic|_fail|unwind|unwrap|expect/ {
                callee = substr($0, index($0, "<")); print "    " fn " -> " callee }' | sort -u | head -20
        failmsg "panic machinery in the C firmware ($t)"; continue
    fi
    status="linked"
    if [ "$board" != none ]; then
        if fw_qemu "$board" "$elf" 60 > "$OUT/audit-run-$t.txt" 2>&1; then
            status="ran on $board: $(grep -c '^ok ' "$OUT/audit-run-$t.txt") calls ok"; ran="$ran $board"
        else
            cat "$OUT/audit-run-$t.txt"; failmsg "audit firmware run ($t on $board)"; continue
        fi
    fi
    cfwok=$((cfwok + 1))
    printf 'no-panic %-28s C firmware --gc-sections, %s: ok\n' "$t" "$status"
done

TOTAL=$(( $(fw_now) - T0 ))
echo
if [ "$fail" = 0 ]; then
    echo "cross: OK: 7 targets x (default, system-libm) built; $audits/14 symbol audits passed; no-panic: $lldok/7 rust-lld root links, $cfwok/$cfwn C firmwares (run on$ran); ${TOTAL}s"
else
    echo "cross: FAILED ($fail failures): $audits/14 symbol audits passed; no-panic: $lldok/7 rust-lld, $cfwok/$cfwn C firmwares; ${TOTAL}s"
    exit 1
fi
