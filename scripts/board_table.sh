#!/usr/bin/env bash
# The board table: for each board of firmware/boards/ and each model, the
# first build in the preference order below whose firmware links against
# the part's own memory map (firmware/boards/<board>/board.ld), with the
# flash and RAM it takes and its generation speed at the board's clock.
#
#   scripts/board_table.sh [--boards "pico bluepill"] [--models "default toy"]
#
# The firmware is firmware/src/board_main.c: the model blob in flash, one
# atome_generate from the first 8 bytes of the benchmark text T until the
# window is full. Per candidate build:
#   1. link against the part's map with no stack reserved and 8 KiB of
#      flash kept free for the application (APP_FLASH): a flash overflow
#      (code + model + that reserve) or a RAM overflow (.data + .bss) ends
#      the candidate;
#   2. run the same code on the QEMU machine with the same core
#      (BOARD_QEMU; -icount shift=0): instructions of the whole call, the
#      generated count, and the whole stack's painted peak;
#   3. link against the part's map again with that peak reserved
#      (__min_stack) and the application's flash: the proof that static
#      RAM plus stack fit, and code plus model leave APP_FLASH free.
# Tokens per second = clock / (instructions of the call / tokens generated).
# Cycles per instruction and flash wait states are not modelled: on a part
# they lower the figure (weights are read from flash).
#
# The best build: of the default builds that fit, the one with the fewest
# instructions per generated token (each run here); the size-first builds
# only when no default build fits. A board/model pair with no fitting build shows the
# candidate that came closest and its overflow in bytes.
# The 944K model is tried at S=64, 32, then 24: the largest that fits goes
# in the board table. The tokens/s table after it also tries the smaller
# windows with the cached builds that did not fit a larger one, and lists
# the fastest per generated token.
# Ends with a "board_table: N passed, M failed" line; a run that fails
# (load error, no tokens, stack overflow, a crash) is a failure.
set -euo pipefail
cd "$(dirname "$0")/.."
source firmware/fw.sh

BOARDS="microbit-v1 bluepill pico blackpill-f411 nrf52840 esp32-c3 esp32-s3"
# Flash a fit leaves free for the application's own code (bytes).
APP_FLASH=8192
MODELS="default toy 944k"
while [ $# -gt 0 ]; do
    case "$1" in
        --boards) BOARDS="$2"; shift 2 ;;
        --models) MODELS="$2"; shift 2 ;;
        *) fw_die "usage: $0 [--boards \"...\"] [--models \"...\"]" ;;
    esac
done
if [ ! -f "$FW_GOLDEN" ]; then
    # Needs ../shared (models, golden configurations): skipped in a fresh
    # clone, required in CI.
    if [ -n "${CI:-}" ] && [ "${CI}" != false ] && [ "${CI}" != 0 ]; then fw_die "../shared is absent in CI"; fi
    echo "board_table: skipped (needs ../shared; set ATOME_SHARED)"; exit 0
fi
fw_ensure_tools apt rust llvm
OUT="$FW_BUILD/boards"
rm -rf "$OUT"; mkdir -p "$OUT"

# name|cargo features|extra knobs|C flags, in preference order
# name|tier|dtype|cargo features|extra knobs|C flags. Tier 2 (size-first)
# is tried only when no tier-1 build fits; within a tier the cached state
# comes before the lean one of the same dtype, which it is never slower
# than, so the lean one is tried only when the cached one does not fit,
# and the q15 tiny state (no value cache: slower, smaller) only when
# neither q15 state does.
BUILDS="f32-cached|1|f32||ATOME_STATE=cached|-DATOME_STATE_CACHED=1
q15-cached|1|q15||ATOME_DTYPE=q15 ATOME_STATE=cached|-DATOME_DTYPE_Q15=1 -DATOME_STATE_CACHED=1
q15|1|q15||ATOME_DTYPE=q15|-DATOME_DTYPE_Q15=1
q15-tiny|1|q15||ATOME_DTYPE=q15 ATOME_STATE=tiny|-DATOME_DTYPE_Q15=1 -DATOME_STATE_TINY=1
f32|1|f32|||
q15-cached size-first|2|q15|--features size-first|ATOME_DTYPE=q15 ATOME_STATE=cached|-DATOME_DTYPE_Q15=1 -DATOME_STATE_CACHED=1
q15 size-first|2|q15|--features size-first|ATOME_DTYPE=q15|-DATOME_DTYPE_Q15=1
q15-tiny size-first|2|q15|--features size-first|ATOME_DTYPE=q15 ATOME_STATE=tiny|-DATOME_DTYPE_Q15=1 -DATOME_STATE_TINY=1
f32-cached size-first|2|f32|--features size-first|ATOME_STATE=cached|-DATOME_STATE_CACHED=1
f32 size-first|2|f32|--features size-first||"

# model -> "blob golden-config S-list label"
model_info() {
    case "$1" in
        default) echo "default.atome default 32 default.atome" ;;
        toy)     echo "model_toy.atome toy 64 model_toy.atome" ;;
        944k)    echo "atome_944k.bin m944k 64,32,24 944K" ;;
        *) fw_die "unknown model $1" ;;
    esac
}

# lib_for CFGDIR "KNOBS" FEATURES TARGET: builds (once) and prints the path
lib_for() {
    local cfg="$1" knobs="$2" feats="$3" target="$4"
    if [ ! -f "$OUT/$cfg.$target.built" ]; then
        FW_CARGO_FEATURES="$feats" fw_cargo_build "$cfg" "$knobs" firmware "$target" \
            || fw_die "cargo build ($cfg, $target) failed"
        touch "$OUT/$cfg.$target.built"
    fi
    fw_lib_path "$cfg" firmware "$target"
}

# overflow LOG: "FLASH +N" / "RAM +N" from GNU ld's or lld's messages
overflow() {
    python3 - "$1" <<'EOF'
import re, sys
t = open(sys.argv[1]).read()
over = {}
for m in re.finditer(r"region `?'?(\w+)'? overflowed by (\d+) bytes", t):
    over[m.group(1)] = max(over.get(m.group(1), 0), int(m.group(2)))
for m in re.finditer(r"will not fit in region '(\w+)': overflowed by (\d+) bytes", t):
    over[m.group(1)] = max(over.get(m.group(1), 0), int(m.group(2)))
print(" ".join("%s +%d" % kv for kv in sorted(over.items())) or "link failed")
EOF
}

# defsym SYM=VAL: the link flag for the board's linker (gcc driver or rust-lld)
defsym() { case "$BOARD_TARGET" in riscv*) echo "--defsym=$1" ;; *) echo "-Wl,--defsym=$1" ;; esac; }

fmt() { python3 -c "import sys; print(f'{int(sys.argv[1]):,}')" "$1"; }

blob_asm() { # MODEL OUT.S
    printf '    .section .rodata.board_blob,"a"\n    .balign 4\n    .global board_blob\nboard_blob:\n    .incbin "%s"\n    .global board_blob_end\nboard_blob_end:\n' \
        "$1" > "$2"
}

# part_link NAME STACK NOTE: links against the part's map with STACK bytes
# reserved; on an overflow, keeps the candidate if it came closest so far.
part_link() {
    # shellcheck disable=SC2086
    FW_LDSCRIPT="$ld" FW_LDFLAGS="$(defsym "__min_stack=$2") $(defsym "__app_flash=$APP_FLASH")" \
        fw_link_firmware "$dir/$1.elf" "$BOARD_QEMU" "$BOARD_TARGET" "$lib" "$knobs" "$xcflags" $srcs \
        > "$dir/$1.log" 2>&1 && return 0
    local ov n
    ov="$(overflow "$dir/$1.log")"
    n=$(echo "$ov" | grep -o '[0-9]*' | awk '{s += $1} END {print s + 0}')
    if [ "$closest_n" -lt 0 ] || [ "$n" -lt "$closest_n" ]; then closest_n=$n; closest="$bname, S=$S: $ov B$3"; fi
    return 1
}

T0=$(fw_now)
passed=0; failed=0
ROWS=()
TPS=()
for board in $BOARDS; do
    envf="firmware/boards/$board/board.env"
    [ -f "$envf" ] || fw_die "no board $board ($envf)"
    # shellcheck disable=SC1090
    source "$envf"
    ld="$FW_ROOT/firmware/boards/$board/board.ld"
    flash_len=$(sed -n 's/.*FLASH.*LENGTH = \([0-9]*[KM]\?\).*/\1/p' "$ld")
    ram_len=$(sed -n 's/.*RAM.*LENGTH = \([0-9]*[KM]\?\).*/\1/p' "$ld")
    where="$BOARD_SOC, $BOARD_CORE, $((BOARD_CLOCK_HZ / 1000000)) MHz, $flash_len / $ram_len"
    for model in $MODELS; do
        read -r blob gcfg slist label <<< "$(model_info "$model")"
        if [ "$BOARD_TARGET" = none ]; then
            ROWS+=("| $BOARD_NAME ($where) | $label | not built: no upstream Rust target (see README) | | | |")
            continue
        fi
        # micro:bit v1: only default.atome (the others' flash or RAM is far
        # beyond a 16 KiB part; their overflow is still shown).
        row=""; tps_row=""; tps_ipt=0; closest=""; closest_n=-1; unfit=" "
        base_knobs="$(fw_knobs "$gcfg")"
        for S in ${slist//,/ }; do
            knobs="$(sed "s/ATOME_MAX_SEQ=[0-9]*/ATOME_MAX_SEQ=$S/" <<< "$base_knobs")"
            best=""
          for tier in 1 2; do
            [ -n "$best" ] && break
            fitted=" "
            while IFS='|' read -r bname btier dtype feats xknobs xcflags; do
                [ "$btier" = "$tier" ] || continue
                case "$fitted" in *" $dtype "*) continue ;; esac
                # Below the largest window that fits, only the cached builds
                # that did not fit a larger one (for the tokens/s table).
                if [ -n "$row" ]; then case "$unfit" in *" $bname "*) ;; *) continue ;; esac; fi
                tag="$(echo "$model-s$S-$bname" | tr ' ' '_')"
                cfg="board_${gcfg}_s${S}_$(echo "$bname" | tr ' -' '__')"
                lib="$(lib_for "$cfg" "$knobs $xknobs" "$feats" "$BOARD_TARGET")" || exit 1
                dir="$OUT/$board/$tag"; mkdir -p "$dir"
                blob_asm "$FW_MODELS/$blob" "$dir/blob.S"
                srcs="$FW_DIR/src/board_main.c $dir/blob.S"
                # 1. the part's map, no stack reserved
                if ! part_link part0 0 ""; then
                    case "$xknobs" in *cached*) unfit="$unfit$bname " ;; esac
                    continue
                fi
                # 2. the same code on the QEMU machine
                # shellcheck disable=SC2086
                fw_link_firmware "$dir/qemu.elf" "$BOARD_QEMU" "$BOARD_TARGET" "$lib" "$knobs" "$xcflags" $srcs \
                    > "$dir/qemu.log" 2>&1 || fw_die "link for QEMU failed: $dir/qemu.log"
                if ! fw_qemu "$BOARD_QEMU" "$dir/qemu.elf" 1800 -icount shift=0 > "$dir/run.txt" 2>&1; then
                    echo "FAIL $board $tag: run failed ($(tail -2 "$dir/run.txt" | tr '\n' ' '))" >&2
                    failed=$((failed + 1)); continue
                fi
                read -r ticks x10 count stack <<< "$(sed -n 's/^BOARD ticks \([0-9]*\) insns_x10_per_tick \([0-9]*\) count \([0-9]*\) stack \([0-9]*\).*/\1 \2 \3 \4/p' "$dir/run.txt")"
                if [ -z "${count:-}" ] || [ "$count" -le 0 ]; then
                    echo "FAIL $board $tag: no tokens ($(head -2 "$dir/run.txt" | tr '\n' ' '))" >&2
                    failed=$((failed + 1)); continue
                fi
                # 3. the part's map with the measured stack reserved
                part_link part "$stack" " (with its $stack B stack)" || continue
                passed=$((passed + 1))
                read -r eng oth ram <<< "$(python3 firmware/tools/mapsize.py "${dir}/part.map" --json | python3 -c "
import json, sys
s = json.load(sys.stdin)['sums']
fl = lambda d: d['text'] + d['rodata'] + d['data']
print(fl(s['engine']) + fl(s['builtins']), fl(s['other']), sum(d['data'] + d['bss'] for d in s.values()))")"
                mb=$(stat -c %s "$FW_MODELS/$blob")
                fw=$((oth - mb))
                insns=$(( ticks * x10 / 10 ))
                tps=$(python3 -c "import sys; c,i,n=map(int,sys.argv[1:]); print('%.1f' % (c / (i / n)))" "$BOARD_CLOCK_HZ" "$insns" "$count")
                fitted="$fitted$dtype "
                ipt=$((insns / count))
                [ -z "$best" ] || [ "$ipt" -lt "$best_ipt" ] || continue
                best_ipt=$ipt
                best_tps="$BOARD_NAME|$BOARD_CORE|$BOARD_CLOCK_HZ|$label|$S|$bname|$tps|$ipt"
                best="| $BOARD_NAME ($where) | $label, S=$S | $bname | $(fmt $((eng + mb + fw))) ($(fmt "$eng") + $(fmt "$mb") + $(fmt "$fw")) | $(fmt $((ram + stack))) ($(fmt "$ram") + $(fmt "$stack")) | $tps ($(fmt $((insns / count))) per token, $count tokens) |"
            done <<< "$BUILDS"
          done
            [ -n "$best" ] || continue
            [ -n "$row" ] || row="$best"
            if [ -z "$tps_row" ] || [ "$best_ipt" -lt "$tps_ipt" ]; then tps_row="$best_tps"; tps_ipt=$best_ipt; fi
        done
        if [ -n "$row" ]; then ROWS+=("$row"); TPS+=("$tps_row")
        else ROWS+=("| $BOARD_NAME ($where) | $label | does not fit: closest $closest | | | |"); fi
    done
done

echo
echo "| board (part, core, clock, flash / RAM) | model | best build that fits | flash used, B (engine + model + firmware) | RAM used, B (static + peak stack) | generated tokens/s at the clock (instructions per token) |"
echo "|---|---|---|---:|---:|---:|"
printf '%s\n' "${ROWS[@]}"
echo
echo "Fits: links against the part's memory map with its measured peak stack and $APP_FLASH bytes of flash left for the application."
echo "Tokens/s: clock / instructions per generated token under QEMU -icount (prompt of 8 bytes, generation until the window is full, the whole atome_generate call); cycles per instruction and flash wait states are not modelled."
echo
echo "Generated tokens per second at each board's clock: the fastest build that fits the board, at the largest window that fits it or, for a cached build, at a smaller one where only that fits (instructions per generated token under QEMU; cycles per instruction and flash wait states not modelled):"
echo
printf '%s\n' "${TPS[@]}" | python3 -c "
import sys
rows = [l.rstrip('\n').split('|') for l in sys.stdin if l.strip()]
models = []
for r in rows:
    if r[3] not in models:
        models.append(r[3])
boards = []
for r in rows:
    b = (r[0], r[1], int(r[2]))
    if b not in boards:
        boards.append(b)
print('| board | core | clock | ' + ' | '.join(models) + ' |')
print('|---|---|---:|' + '---:|' * len(models))
for name, core, hz in boards:
    cells = []
    for m in models:
        r = [r for r in rows if r[0] == name and r[3] == m]
        cells.append('%s (%s, S=%s; %s per token)' % (r[0][6], r[0][5], r[0][4], format(int(r[0][7]), ',')) if r else 'does not fit')
    print('| %s | %s | %d MHz | %s |' % (name, core, hz // 1000000, ' | '.join(cells)))
"
echo
echo "board_table: $passed passed, $failed failed ($(( $(fw_now) - T0 )) s)"
[ "$failed" = 0 ]
