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
#    rustup's llvm-tools, which reads ARM and RISC-V alike): all docs/API.md#kernels
#    functions defined; undefined symbols only memcpy/memset/memmove/memcmp,
#    compiler builtins, and expf/tanhf with system-libm; no heap, stdio,
#    socket or OS symbol.
#    2b. The same archives with arm-none-eabi-nm and GNU nm
#    (scripts/nm_audit.sh): no embedded LLVM bitcode, every function of
#    include/atome.h defined, no message from binutils' LLVM plugin.
# 3. No-panic proof, on the final linked ELF (names containing "panic", or
#    rust_begin_unwind, or core::fmt must be absent):
#    For the float build, the q15 build (ATOME_DTYPE=q15, archives
#    cross-q15; its C firmware compiled with -DATOME_DTYPE_Q15=1) and the
#    q15 tiny build (ATOME_STATE=tiny, archives cross-q15t; also
#    -DATOME_STATE_TINY=1). (The q15 cached plan is linked by every build's
#    runtime API.)
#    a. every target: rust-lld --gc-sections with every exported atome_*
#       function as a root (-u), i.e. what any firmware calling the whole API
#       keeps;
#    b. every target: a C firmware calling every exported function
#       (firmware/src/audit_main.c; arm-none-eabi-gcc -Wl,--gc-sections, or
#       clang + rust-lld --gc-sections for RISC-V), run under QEMU where a
#       board exists (RISC-V: the virt machine): mps2-an385 runs both the
#       thumbv6m and thumbv7m builds (the default configuration's state does
#       not fit the micro:bit's 16 KiB), mps2-an386 the M4F build and
#       mps2-an500 (M7) the soft-float thumbv7em build, mps2-an505 (M33)
#       the thumbv8m.main build.
# 4. --features system-libm on bare metal: checks that the engine calls
#    expf/tanhf and that, linked as firmware/README.md says, the firmware
#    gets newlib's (not the weak copies compiler_builtins puts in the archive).
# Exits non-zero on any failure; prints a one-line summary, then the count.
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
QKNOBS="$KNOBS ATOME_DTYPE=q15"
# The no-panic builds: archive set, knobs, extra C flags of the firmware.
np_knobs() { case "$1" in cross-q15) echo "$QKNOBS" ;; cross-q15t) echo "$QKNOBS ATOME_STATE=tiny" ;; *) echo "$KNOBS" ;; esac; }
np_cflags() { case "$1" in cross-q15) echo "-DATOME_DTYPE_Q15=1" ;; cross-q15t) echo "-DATOME_DTYPE_Q15=1 -DATOME_STATE_TINY=1" ;; esac; }
np_name() { case "$1" in cross-q15) echo q15 ;; cross-q15t) echo q15-tiny ;; *) echo float ;; esac; }
NP_BUILDS="cross cross-q15 cross-q15t"

# ---- 1. build ---------------------------------------------------------------
T1=$(fw_now)
# shellcheck disable=SC2086
fw_cargo_build cross "$KNOBS" firmware $TARGETS || fw_die "cargo build --profile firmware failed"
# shellcheck disable=SC2086
FW_CARGO_FEATURES="--features system-libm" fw_cargo_build cross-libm "$KNOBS" firmware $TARGETS \
    || fw_die "cargo build --profile firmware --features system-libm failed"
# shellcheck disable=SC2086
fw_cargo_build cross-q15 "$QKNOBS" firmware $TARGETS || fw_die "cargo build --profile firmware (ATOME_DTYPE=q15) failed"
# shellcheck disable=SC2086
fw_cargo_build cross-q15t "$QKNOBS ATOME_STATE=tiny" firmware $TARGETS || fw_die "cargo build --profile firmware (ATOME_DTYPE=q15 ATOME_STATE=tiny) failed"
T_BUILD=$(( $(fw_now) - T1 ))
echo "built 4 x 7 archives (default, system-libm, q15, q15 tiny) in ${T_BUILD}s"

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

# ---- 2b. the same archives through binutils, as a firmware team's CI reads them
# (scripts/nm_audit.sh): no embedded LLVM bitcode, arm-none-eabi-nm and GNU nm
# list every function of include/atome.h without a message (binutils' LLVM
# plugin, installed with Debian's clang, refuses objects carrying bitcode).
gnuaudits=0
for t in $TARGETS; do
    for v in cross cross-libm; do
        for gnm in arm-none-eabi-nm nm; do
            if r="$(scripts/nm_audit.sh "$gnm" "$(fw_lib_path $v firmware "$t")")"; then
                gnuaudits=$((gnuaudits + 1))
            else
                echo "$r"; failmsg "binutils symbol audit $t ($v, $gnm)"
            fi
        done
    done
done
echo "binutils audit: $gnuaudits/28 (7 targets x default, system-libm x arm-none-eabi-nm, nm) list every exported function"

# ---- 3a. no-panic: rust-lld with every export as a root ---------------------
panic_re='panic|rust_begin_unwind|core..fmt|_ZN4core3fmt'
lldok=0
for v in $NP_BUILDS; do
for t in $TARGETS; do
    lib="$(fw_lib_path $v firmware "$t")"
    roots="$("$NM" --defined-only -g "$lib" 2>/dev/null | awk '$2=="T" && $3 ~ /^atome_/ {print "-u " $3}' | sort -u | tr '\n' ' ')"
    elf="$OUT/roots-$v-$t.elf"
    # shellcheck disable=SC2086
    if ! "$LLD" -flavor gnu --gc-sections -e atome_init $roots "$lib" -o "$elf" > "$OUT/lld-$v-$t.log" 2>&1; then
        cat "$OUT/lld-$v-$t.log"; failmsg "rust-lld link with all exports ($t, $(np_name $v))"; continue
    fi
    n="$(echo "$roots" | wc -w)"; n=$((n / 2))
    hits="$("$NM" -C "$elf" | grep -Ei "$panic_re" || true)"
    text="$("$(fw_llvm_bin llvm-size)" -A "$elf" | awk '$1==".text" {print $2}')"
    if [ -n "$hits" ]; then
        { echo "$hits" | head -5 || true; }; failmsg "panic machinery linked in ($t, $(np_name $v), all $n exports kept)"
    else
        lldok=$((lldok + 1)); printf 'no-panic %-8s %-28s rust-lld, %2d exports kept, .text %6s bytes: ok\n' "$(np_name $v)" "$t" "$n" "$text"
    fi
done
done

# ---- 3b. no-panic: C firmware calling every exported function --------------
cfwok=0; cfwn=0; ran=""
blobdir="$OUT/auditblob"; mkdir -p "$blobdir"
printf '    .section .rodata.audit_blob,"a"\n    .balign 4\n    .global audit_blob\naudit_blob:\n    .incbin "%s"\n    .global audit_blob_end\naudit_blob_end:\n    .section .note.GNU-stack,"",%%progbits\n' \
    "$FW_MODELS/default.atome" > "$blobdir/blob.S"
for v in $NP_BUILDS; do
for tb in thumbv6m-none-eabi:mps2-an385 thumbv7m-none-eabi:mps2-an385 thumbv7em-none-eabihf:mps2-an386 \
          thumbv7em-none-eabi:mps2-an500 thumbv8m.main-none-eabihf:mps2-an505 \
          riscv32imc-unknown-none-elf:riscv-virt riscv32imac-unknown-none-elf:riscv-virt; do
    t="${tb%%:*}"; board="${tb##*:}"; cfwn=$((cfwn + 1))
    lboard="$board"; [ "$board" = none ] && lboard=mps2-an385   # M33: link only (memory map of an MPS2)
    elf="$OUT/audit-$v-$t.elf"; nm="$(np_name $v)"
    if ! fw_link_firmware "$elf" "$lboard" "$t" "$(fw_lib_path $v firmware "$t")" "$(np_knobs $v)" "$(np_cflags $v)" \
            firmware/src/audit_main.c "$blobdir/blob.S" > "$OUT/audit-link-$v-$t.log" 2>&1; then
        cat "$OUT/audit-link-$v-$t.log"; failmsg "audit firmware link ($t, $nm)"; continue
    fi
    hits="$("$NM" -C "$elf" | grep -Ei "$panic_re" || true)"
    missing=""
    elfsyms="$("$NM" "$elf")"
    for f in $("$NM" --defined-only -g "$(fw_lib_path $v firmware "$t")" | awk '$2=="T" && $3 ~ /^atome_/ {print $3}' | sort -u); do
        # (t: the library's hidden assembly helpers, local once linked by lld.)
        grep -q " [Tt] $f\$" <<< "$elfsyms" || missing="$missing $f"
    done
    [ -n "$missing" ] && failmsg "audit firmware ($t, $nm) does not call:$missing"
    if [ -n "$hits" ]; then
        echo "$hits" | head -5 || true
        echo "  panic paths (caller -> callee) in the linked firmware:"
        case "$t" in riscv*) od="$(fw_llvm_bin llvm-objdump)" ;; *) od=arm-none-eabi-objdump ;; esac
        "$od" -d -C --no-show-raw-insn "$elf" | awk '
            /^[0-9a-f]+ <.*>:$/ { fn = substr($0, index($0, "<")) }
            /\t(b|bl|b\.w|jal|j|call|tail)\t.*</ && /panic|_fail|unwind|unwrap|expect/ {
                callee = substr($0, index($0, "<")); print "    " fn " -> " callee }' | sort -u | head -20 || true
        failmsg "panic machinery in the C firmware ($t, $nm)"
    fi
    status="linked"
    if [ "$board" != none ]; then
        if fw_qemu "$board" "$elf" 60 > "$OUT/audit-run-$v-$t.txt" 2>&1; then
            status="ran on $board: $(grep -c '^ok ' "$OUT/audit-run-$v-$t.txt") calls ok"
            case " $ran " in *" $board "*) ;; *) ran="$ran $board" ;; esac
        else
            cat "$OUT/audit-run-$v-$t.txt"; failmsg "audit firmware run ($t, $nm on $board)"; continue
        fi
    fi
    if [ -n "$hits" ]; then
        printf 'C firmware %-5s %-28s %s, but panic machinery present\n' "$nm" "$t" "$status"; continue
    fi
    cfwok=$((cfwok + 1))
    printf 'no-panic %-8s %-28s C firmware --gc-sections, %s: ok\n' "$nm" "$t" "$status"
done
done

# ---- 4. system-libm on bare metal: whose expf/tanhf end up in the firmware --
# compiler_builtins (inside libatome.a) defines expf/tanhf weakly on the
# none targets, so a plain "libatome.a -lm" link takes the Rust libm port,
# not newlib's. The documented fix puts newlib's first:
#   -Wl,-u,expf -Wl,-u,tanhf -lm  before libatome.a (cmake/atome.cmake does it).
libmok=0
for tb in thumbv7m-none-eabi:mps2-an385 thumbv7em-none-eabihf:mps2-an386; do
    t="${tb%%:*}"; board="${tb##*:}"
    lib="$(fw_lib_path cross-libm firmware "$t")"
    if [ "$("$NM" -u "$lib" 2>/dev/null | grep -cE "^ +U (expf|tanhf)$")" = 0 ]; then
        failmsg "system-libm build for $t does not call expf"; continue
    fi
    for mode in plain fixed; do
        elf="$OUT/libm-$mode-$t.elf"
        pre=""; [ $mode = fixed ] && pre="-Wl,-u,expf -Wl,-u,tanhf -lm"
        if ! FW_LDSPECS="--specs=nano.specs" FW_LDPRE="$pre" FW_LDFLAGS="-lm -lc -lgcc" \
                fw_link_firmware "$elf" "$board" "$t" "$lib" "$KNOBS" "" \
                firmware/src/audit_main.c "$blobdir/blob.S" > "$OUT/libm-$mode-$t.log" 2>&1; then
            cat "$OUT/libm-$mode-$t.log"; failmsg "system-libm link ($mode, $t)"; continue
        fi
        # the archive members the linker took to define expf and tanhf
        src="$(awk '/^[^ ]/ {m=$0} /\((expf|tanhf)\)$/ {print m}' "${elf%.elf}.map" \
               | grep -oE "libm\.a|compiler_builtins" | sort -u | tr '\n' ' ' || true)"
        src="${src% }"
        if [ $mode = plain ]; then
            echo "system-libm $t: with 'libatome.a -lm' expf comes from ${src:-?} (link order matters, see firmware/README.md)"
        elif [ "$src" = "libm.a" ] && fw_qemu "$board" "$elf" 60 > "$OUT/libm-run-$t.txt" 2>&1; then
            libmok=$((libmok + 1))
            echo "system-libm $t: with '-Wl,-u,expf -Wl,-u,tanhf -lm' first, expf/tanhf come from newlib's libm.a; ran on $board: ok"
        else
            tail -3 "$OUT/libm-run-$t.txt" 2>/dev/null || true; failmsg "system-libm $t: newlib's expf not linked (got ${src:-?}) or run failed"
        fi
    done
done

TOTAL=$(( $(fw_now) - T0 ))
npass=$((audits + gnuaudits + lldok + cfwok + libmok))
echo
if [ "$fail" = 0 ]; then
    echo "cross summary: OK: 7 targets x (default, system-libm, q15, q15 tiny) built; $audits/14 symbol audits, $gnuaudits/28 binutils audits passed; no-panic (float, q15, q15 tiny): $lldok/21 rust-lld root links, $cfwok/$cfwn C firmwares (run on$ran); newlib expf/tanhf with system-libm: $libmok/2; ${TOTAL}s"
else
    echo "cross summary: FAILED: $audits/14 symbol audits, $gnuaudits/28 binutils audits passed; no-panic (float, q15, q15 tiny): $lldok/21 rust-lld root links, $cfwok/$cfwn C firmwares; ${TOTAL}s"
fi
echo "cross: $npass passed, $fail failed"
[ "$fail" = 0 ]
