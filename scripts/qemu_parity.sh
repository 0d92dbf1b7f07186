#!/usr/bin/env bash
# QEMU parity: libatome.a on Cortex-M gives the same bits as on x86-64.
#
#   scripts/qemu_parity.sh [--full] [--jobs N] [--only CFG,...] [--boards BOARD,...]
#
# For every golden configuration (shared/golden/golden_visible.json) it builds
# libatome.a once per Rust target (--profile firmware) and once for the host
# (--release, default pure-Rust math), generates a firmware holding the blobs
# and token lists (firmware/tools/gen_cases.py), runs it under
# qemu-system-arm on micro:bit (thumbv6m, Cortex-M0), mps2-an385 (thumbv7m,
# M3), mps2-an386 (thumbv7em-none-eabihf, M4F) and mps2-an500 (thumbv7em-none-eabi,
# M7), and compares every printed logit bit pattern with the host program built
# from the same runner source (firmware/host/). Odd-address variants (blob at
# an address 1 mod 4) run on micro:bit and mps2-an386. The plan and its time
# budget: firmware/tools/parity_plan.py. Exit status 0 only when every run
# that fits its board matches the host bit for bit.
set -euo pipefail
cd "$(dirname "$0")/.."
source firmware/fw.sh

FULL=""
JOBS=2
PLANARGS=""
while [ $# -gt 0 ]; do
    case "$1" in
        --full) FULL=--full ;;
        --jobs) JOBS="$2"; shift ;;
        --only) PLANARGS="$PLANARGS --only=$2"; shift ;;
        --boards) PLANARGS="$PLANARGS --boards=$2"; shift ;;
        *) fw_die "usage: $0 [--full] [--jobs N] [--only CFG,...] [--boards BOARD,...]" ;;
    esac
    shift
done

T0=$(fw_now)
fw_ensure_tools apt rust
[ -f "$FW_GOLDEN" ] || fw_die "golden file not found (set ATOME_SHARED): $FW_GOLDEN"

OUT="$FW_BUILD/parity"
rm -rf "$OUT"
mkdir -p "$OUT/jobs" "$OUT/gen" "$OUT/runs"
HOST_TARGET="$(rustc -vV | sed -n 's/^host: //p')"

python3 firmware/tools/parity_plan.py "$FW_GOLDEN" $FULL $PLANARGS > "$OUT/plan.txt"
njobs=$(wc -l < "$OUT/plan.txt")
fw_log "parity plan: $njobs firmware runs"

# ---- 1. libraries: one cargo call per configuration for all its targets ----
T1=$(fw_now)
for cfg in $(cut -d' ' -f1 "$OUT/plan.txt" | uniq); do
    knobs="$(fw_knobs "$cfg")"
    targets="$(awk -v c="$cfg" '$1==c {print $3}' "$OUT/plan.txt" | sort -u | tr '\n' ' ')"
    fw_log "build $cfg: $knobs; $targets + host"
    # shellcheck disable=SC2086
    fw_cargo_build "$cfg" "$knobs" firmware $targets || fw_die "cargo build ($cfg, $targets) failed"
    fw_cargo_build "$cfg" "$knobs" release host || fw_die "cargo build ($cfg, host) failed"
done
T_BUILD=$(( $(fw_now) - T1 ))

# ---- 2. case tables and host reference output ----------------------------
T1=$(fw_now)
while read -r cfg board target off sel gen; do
    key="$cfg.$(echo "$sel" | tr ':,' '__').g$gen"
    [ -d "$OUT/gen/$key" ] && continue
    g="$OUT/gen/$key"
    genflag=""; [ "$gen" = 1 ] && genflag="--generate"
    python3 firmware/tools/gen_cases.py --golden "$FW_GOLDEN" --config "$cfg" \
        --models "$FW_MODELS" --out "$g" --select "$sel" $genflag
    knobs="$(fw_knobs "$cfg")"
    # shellcheck disable=SC2046
    gcc -O2 -std=gnu11 -Wall -Wextra -Werror -Iinclude -Ifirmware/common $(fw_knob_defs "$knobs") \
        firmware/host/host_platform.c firmware/common/runner.c "$g/cases.c" "$g/blobs.S" \
        "$(fw_lib_path "$cfg" release host)" -lm -o "$g/host" || fw_die "host build failed ($key)"
    "$g/host" > "$g/host.txt" || fw_die "host run failed ($key)"
done < "$OUT/plan.txt"

# ---- 3. firmware builds ---------------------------------------------------
i=0
: > "$OUT/skipped.txt"
while read -r cfg board target off sel gen; do
    i=$((i + 1))
    key="$cfg.$(echo "$sel" | tr ':,' '__').g$gen"
    name="$(printf '%02d' $i)-$cfg-$board-o$off"
    d="$OUT/runs/$name"; mkdir -p "$d"
    echo "$cfg $board $target $off $sel $gen $key" > "$d/job"
    knobs="$(fw_knobs "$cfg")"
    if ! fw_link_firmware "$d/fw.elf" "$board" "$target" "$(fw_lib_path "$cfg" firmware "$target")" \
            "$knobs" "-DATOME_FW_BLOB_OFFSET=$off" \
            firmware/common/runner.c firmware/src/parity_main.c "$OUT/gen/$key/cases.c" "$OUT/gen/$key/blobs.S" \
            > "$d/link.log" 2>&1; then
        if grep -qE "ATOME_FW_RAM_OVERFLOW|will not fit in region|overflowed by" "$d/link.log"; then
            why="$(grep -oE "ATOME_FW_RAM_OVERFLOW[^\"]*|region .(FLASH|RAM). overflowed by [0-9]+ bytes" "$d/link.log" | sort -u | tr '\n' ';')"
            echo "$name: does not fit: $why" >> "$OUT/skipped.txt"
            echo skip > "$d/status"
            continue
        fi
        cat "$d/link.log" >&2
        fw_die "firmware link failed: $name"
    fi
    # The run itself: one line per job for xargs.
    cat > "$OUT/jobs/$name.sh" <<EOF
source "$FW_ROOT/firmware/fw.sh"
s=\$(date +%s%N)
fw_qemu $board "$d/fw.elf" ${PARITY_TIMEOUT:-300} > "$d/out.txt" 2>&1
echo \$? > "$d/rc"
echo \$(( (\$(date +%s%N) - s) / 1000000 )) > "$d/ms"
EOF
done < "$OUT/plan.txt"
T_PREP=$(( $(fw_now) - T1 ))

# ---- 4. run (longest first so the two cores stay busy) ---------------------
T1=$(fw_now)
( for j in "$OUT"/jobs/*.sh; do
      n=$(basename "$j" .sh); read -r cfg board _ <<< "$(cat "$OUT/runs/$n/job")"
      w=1; case "$cfg" in m944k*) w=3 ;; toy|default) w=2 ;; esac
      [ "$board" = mps2-an385 ] && w=$((w + 1))
      echo "$w $j"
  done ) | sort -rn | cut -d' ' -f2 | xargs -P "$JOBS" -n 1 bash
T_RUN=$(( $(fw_now) - T1 ))

# ---- 5. compare -------------------------------------------------------------
pass=0; fail=0; skip=0; compared=0
printf '\n| run | config | board | target | blob addr | cases | stack peak | time | result |\n|---|---|---|---|---|---:|---:|---:|---|\n' > "$OUT/report.md"
for d in "$OUT"/runs/*; do
    name="$(basename "$d")"
    read -r cfg board target off sel gen key < "$d/job"
    if [ -f "$d/status" ]; then
        skip=$((skip + 1))
        printf '| %s | %s | %s | %s | %s | - | - | - | skipped: does not fit |\n' "$name" "$cfg" "$board" "$target" "$([ "$off" = 1 ] && echo odd || echo aligned)" >> "$OUT/report.md"
        continue
    fi
    rc="$(cat "$d/rc" 2>/dev/null || echo '?')"
    grep -v '^#' "$OUT/gen/$key/host.txt" > "$d/expected.txt"
    grep -v '^#' "$d/out.txt" > "$d/got.txt" || true
    ncases=$(grep -c '^[PCG] ' "$d/expected.txt" || true)
    peak="$(sed -n 's/^# stack_peak //p' "$d/out.txt")"
    addr="$(sed -n 's/^# blob 0 at \(0x[0-9a-f]*\).*/\1/p' "$d/out.txt")"
    ms="$(cat "$d/ms" 2>/dev/null || echo 0)"
    if [ "$rc" = 0 ] && cmp -s "$d/expected.txt" "$d/got.txt"; then
        pass=$((pass + 1)); compared=$((compared + ncases)); res=PASS
    else
        fail=$((fail + 1))
        res="FAIL (rc $rc)"
        fw_log "FAIL $name (rc=$rc): first differences:"
        diff "$d/expected.txt" "$d/got.txt" | head -5 | cut -c1-200 >&2 || true
    fi
    printf '| %s | %s | %s | %s | %s | %s | %s | %s.%ss | %s |\n' "$name" "$cfg" "$board" "$target" "${addr:-?}" \
        "$ncases" "${peak:-?}" "$((ms / 1000))" "$(( (ms % 1000) / 100 ))" "$res" >> "$OUT/report.md"
done

# Informational: host (pure-Rust math) against the reference engine's golden
# bits (glibc expf/tanhf): ids must agree, a few logits may differ in the last bits.
python3 - "$OUT" <<'EOF' >> "$OUT/report.md"
import glob, os, sys
out = sys.argv[1]
ids = idok = bits = bitok = 0
for g in sorted(glob.glob(os.path.join(out, "gen", "*"))):
    host = [l.split() for l in open(os.path.join(g, "host.txt")) if l[:1] in "PCG"]
    gold = [l.split() for l in open(os.path.join(g, "golden.txt"))]
    for h, r in zip(host, gold):
        if h[0] == "G":
            ids += 1; idok += h[2:] == r[2:]
            continue
        ids += 1; idok += h[2] == r[2]
        bits += len(r) - 3
        bitok += sum(a == b for a, b in zip(h[3:], r[3:]))
print("\nHost (pure-Rust math) vs reference golden (glibc): %d/%d ids/token lists equal, %d/%d logit bit patterns equal.\n" % (idok, ids, bitok, bits))
EOF

cat "$OUT/report.md"
if [ -s "$OUT/skipped.txt" ]; then echo; echo "Skipped (do not fit the board):"; sed 's/^/  /' "$OUT/skipped.txt"; fi
TOTAL=$(( $(fw_now) - T0 ))
echo
echo "qemu_parity: $pass passed, $fail failed, $skip skipped (does not fit); $compared cases bit-identical to the host; build ${T_BUILD}s, prepare ${T_PREP}s, qemu ${T_RUN}s, total ${TOTAL}s"
[ "$fail" = 0 ] && [ "$pass" -gt 0 ]
