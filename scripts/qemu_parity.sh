#!/usr/bin/env bash
# QEMU parity: libatome.a on Cortex-M gives the same bits as on x86-64.
#
#   scripts/qemu_parity.sh [--full] [--jobs N] [--only CFG,...] [--boards BOARD,...]
#                          [--builds default,size-first]
#
# For every golden configuration (shared/golden/golden_visible.json) it builds
# libatome.a once per Rust target (--profile firmware) and once for the host
# (--release, default pure-Rust math), generates a firmware holding the blobs
# and token lists (firmware/tools/gen_cases.py), runs it under
# qemu-system-arm on micro:bit (thumbv6m, Cortex-M0), mps2-an385 (thumbv7m,
# M3), mps2-an386 (thumbv7em-none-eabihf, M4F), mps2-an500 (thumbv7em-none-eabi,
# M7) and mps2-an505 (thumbv8m.main-none-eabihf, M33), and under
# qemu-system-riscv32 -M virt (riscv32imc, riscv32imac), and
# compares every printed logit bit pattern with the host program built
# from the same runner source (firmware/host/). Odd-address variants (blob at
# an address 1 mod 4) run on micro:bit, mps2-an386 and riscv32imc. The plan and its time
# budget: firmware/tools/parity_plan.py. Every firmware run is done for
# both builds of the device library (--builds, default both): the default
# build (device kernels, src/kernels/device/) and the size-first build (cargo
# feature size-first); the host reference is the same x86-64 build for both.
# Exit status 0 only when every run that fits its board matches the host bit
# for bit.
set -euo pipefail
cd "$(dirname "$0")/.."
source firmware/fw.sh

FULL=""
JOBS=2
PLANARGS=""
BUILDS="default,size-first"
while [ $# -gt 0 ]; do
    case "$1" in
        --full) FULL=--full ;;
        --jobs) JOBS="$2"; shift ;;
        --only) PLANARGS="$PLANARGS --only=$2"; shift ;;
        --boards) PLANARGS="$PLANARGS --boards=$2"; shift ;;
        --builds) BUILDS="$2"; shift ;;
        *) fw_die "usage: $0 [--full] [--jobs N] [--only CFG,...] [--boards BOARD,...] [--builds default,size-first]" ;;
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

BUILDS="$(echo "$BUILDS" | tr ',' ' ')"
for b in $BUILDS; do case "$b" in default|size-first) ;; *) fw_die "unknown build $b (default, size-first)" ;; esac; done
# cargo configuration name (target dir) and features of a build
build_cfg() { if [ "$2" = size-first ]; then echo "${1}_size_first"; else echo "$1"; fi; }
build_features() { if [ "$1" = size-first ]; then echo "--features size-first"; fi; }

declare -A KN   # configuration -> "ATOME_...=N ..." (one python call each)
for cfg in $(cut -d' ' -f1 "$OUT/plan.txt" | uniq); do KN[$cfg]="$(fw_knobs "$cfg")"; done

# ---- 1. libraries: one cargo call per configuration for all its targets ----
T1=$(fw_now)
for cfg in $(cut -d' ' -f1 "$OUT/plan.txt" | uniq); do
    knobs="${KN[$cfg]}"
    targets="$(awk -v c="$cfg" '$1==c {print $3}' "$OUT/plan.txt" | sort -u | tr '\n' ' ')"
    fw_log "build $cfg: $knobs; $targets + host"
    for b in $BUILDS; do
        # shellcheck disable=SC2086
        FW_CARGO_FEATURES="$(build_features "$b")" fw_cargo_build "$(build_cfg "$cfg" "$b")" "$knobs" firmware $targets \
            || fw_die "cargo build ($cfg, $b build, $targets) failed"
    done
    fw_cargo_build "$cfg" "$knobs" release host || fw_die "cargo build ($cfg, host) failed"
done
T_BUILD=$(( $(fw_now) - T1 ))

# ---- 2. case tables and host reference output (parallel) -------------------
T1=$(fw_now)
mkdir -p "$OUT/prep"
while read -r cfg board target off sel gen; do
    key="$cfg.$(echo "$sel" | tr ':,' '__').g$gen"
    [ -f "$OUT/prep/gen-$key.sh" ] && continue
    g="$OUT/gen/$key"
    genflag=""; [ "$gen" = 1 ] && genflag="--generate"
    cat > "$OUT/prep/gen-$key.sh" <<EOF
set -e
cd "$FW_ROOT"
python3 firmware/tools/gen_cases.py --golden "$FW_GOLDEN" --config "$cfg" \
    --models "$FW_MODELS" --out "$g" --select "$sel" $genflag
gcc -O2 -std=gnu11 -Wall -Wextra -Werror -Iinclude -Ifirmware/common $(fw_knob_defs "${KN[$cfg]}") \
    firmware/host/host_platform.c firmware/common/runner.c "$g/cases.c" "$g/blobs.S" \
    "$(fw_lib_path "$cfg" release host)" -lm -o "$g/host" > "$g/build.log" 2>&1 || { cat "$g/build.log"; exit 1; }
"$g/host" > "$g/host.txt" || { echo "host run failed ($key)"; exit 1; }
EOF
done < "$OUT/plan.txt"
ls "$OUT"/prep/gen-*.sh | xargs -P "$JOBS" -n 1 bash || fw_die "case generation / host reference failed"

# ---- 3. firmware builds (parallel) ------------------------------------------
i=0
for build in $BUILDS; do
while read -r cfg board target off sel gen; do
    i=$((i + 1))
    key="$cfg.$(echo "$sel" | tr ':,' '__').g$gen"
    name="$(printf '%03d' $i)-$build-$cfg-$board-o$off"
    d="$OUT/runs/$name"; mkdir -p "$d"
    echo "$cfg $board $target $off $sel $gen $key $build" > "$d/job"
    # the QEMU run of this job (written now, used only when the link succeeds)
    cat > "$d/run.sh" <<EOF
source "$FW_ROOT/firmware/fw.sh"
s=\$(date +%s%N)
fw_qemu $board "$d/fw.elf" ${PARITY_TIMEOUT:-300} > "$d/out.txt" 2>&1
echo \$? > "$d/rc"
echo \$(( (\$(date +%s%N) - s) / 1000000 )) > "$d/ms"
EOF
    cat > "$OUT/prep/link-$name.sh" <<EOF
cd "$FW_ROOT"
source firmware/fw.sh
if fw_link_firmware "$d/fw.elf" "$board" "$target" "$(fw_lib_path "$(build_cfg "$cfg" "$build")" firmware "$target")" \
        "${KN[$cfg]}" "-DATOME_FW_BLOB_OFFSET=$off" \
        firmware/common/runner.c firmware/src/parity_main.c "$OUT/gen/$key/cases.c" "$OUT/gen/$key/blobs.S" \
        > "$d/link.log" 2>&1; then
    cp "$d/run.sh" "$OUT/jobs/$name.sh"
elif grep -qE "ATOME_FW_RAM_OVERFLOW|will not fit in region|overflowed by" "$d/link.log"; then
    grep -oE "ATOME_FW_RAM_OVERFLOW[^\"]*|region .(FLASH|RAM). overflowed by [0-9]+ bytes" "$d/link.log" \
        | sort -u | tr '\n' ';' | sed "s/^/$name: does not fit: /" > "$d/status"
    echo >> "$d/status"
else
    cat "$d/link.log"; echo "firmware link failed: $name"; exit 1
fi
EOF
done < "$OUT/plan.txt"
done
ls "$OUT"/prep/link-*.sh | xargs -P "$JOBS" -n 1 bash || fw_die "firmware build failed"
cat "$OUT"/runs/*/status > "$OUT/skipped.txt" 2>/dev/null || true
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
printf '\n| run | build | config | board | target | blob addr | cases | stack peak | time | result |\n|---|---|---|---|---|---|---:|---:|---:|---|\n' > "$OUT/report.md"
for d in "$OUT"/runs/*; do
    name="$(basename "$d")"
    read -r cfg board target off sel gen key build < "$d/job"
    if [ -f "$d/status" ]; then
        skip=$((skip + 1))
        printf '| %s | %s | %s | %s | %s | %s | - | - | - | skipped: does not fit |\n' "$name" "$build" "$cfg" "$board" "$target" "$([ "$off" = 1 ] && echo odd || echo aligned)" >> "$OUT/report.md"
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
    printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s.%ss | %s |\n' "$name" "$build" "$cfg" "$board" "$target" "${addr:-?}" \
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
echo "qemu_parity summary: $pass runs matched the host bit for bit ($compared cases), $fail differed, $skip did not fit their board; build ${T_BUILD}s, prepare ${T_PREP}s, qemu ${T_RUN}s, total ${TOTAL}s"
echo "qemu_parity: $pass passed, $fail failed, $skip skipped"
[ "$fail" = 0 ] && [ "$pass" -gt 0 ]
