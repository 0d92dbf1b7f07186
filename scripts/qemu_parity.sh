#!/usr/bin/env bash
# QEMU parity: libatome.a on Cortex-M gives the same bits as on x86-64.
#
#   scripts/qemu_parity.sh [--full] [--jobs N] [--only CFG,...] [--boards BOARD,...]
#                          [--builds default,size-first,q15,q15-cached,q15-tiny]
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
# budget: firmware/tools/parity_plan.py. The device library comes in three
# builds (--builds, default all three). Every firmware run of the float plan
# is done for the default build (device kernels, src/kernels/device/) and
# the size-first build (cargo feature size-first); their host reference is
# the same x86-64 build for both. The q15 build (ATOME_DTYPE=q15, docs/Q15.md; C side -DATOME_DTYPE_Q15=1)
# has its own plan (parity_plan.py --q15) and its own host reference: the
# x86-64 q15 library on its AVX2 path (release) and again with cargo feature
# `portable` (the one-lane path every device compiles); both host programs
# must print the same text, and every board must print it too. The q15
# runs are never compared with the float output. The q15 cached build
# (ATOME_DTYPE=q15 ATOME_STATE=cached; C side also -DATOME_STATE_CACHED=1)
# runs the q15 plan (where its larger state fits the board) against the
# same host text as the q15 build: its cached plan must give the lean
# plan's bits, with one state carried through every case of a firmware
# (so each call either extends, or is refused by, the cache of the last).
# The q15 tiny build (ATOME_STATE=tiny, -DATOME_STATE_TINY=1: no value
# cache) runs the same plan against the same text.
# Exit status 0 only when every run that fits its board matches the host bit
# for bit.
set -euo pipefail
cd "$(dirname "$0")/.."
source firmware/fw.sh

FULL=""
JOBS=2
PLANARGS=""
BUILDS="default,size-first,q15,q15-cached,q15-tiny"
while [ $# -gt 0 ]; do
    case "$1" in
        --full) FULL=--full ;;
        --jobs) JOBS="$2"; shift ;;
        --only) PLANARGS="$PLANARGS --only=$2"; shift ;;
        --boards) PLANARGS="$PLANARGS --boards=$2"; shift ;;
        --builds) BUILDS="$2"; shift ;;
        *) fw_die "usage: $0 [--full] [--jobs N] [--only CFG,...] [--boards BOARD,...] [--builds default,size-first,q15,q15-cached,q15-tiny]" ;;
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

BUILDS="$(echo "$BUILDS" | tr ',' ' ')"
for b in $BUILDS; do case "$b" in default|size-first|q15|q15-cached|q15-tiny) ;; *) fw_die "unknown build $b (default, size-first, q15, q15-cached, q15-tiny)" ;; esac; done
has_build() { case " $BUILDS " in *" $1 "*) return 0 ;; esac; return 1; }
# The float builds share plan.txt; the q15 builds plan-q15.txt (a smaller state: more fits).
: > "$OUT/plan.txt"; : > "$OUT/plan-q15.txt"
if has_build default || has_build size-first; then
    python3 firmware/tools/parity_plan.py "$FW_GOLDEN" $FULL $PLANARGS > "$OUT/plan.txt"
fi
if has_build q15 || has_build q15-cached || has_build q15-tiny; then
    python3 firmware/tools/parity_plan.py "$FW_GOLDEN" --q15 $FULL $PLANARGS > "$OUT/plan-q15.txt"
fi
plan_of() { if is_q15 "$1"; then echo "$OUT/plan-q15.txt"; else echo "$OUT/plan.txt"; fi; }
fw_log "parity plan: $(wc -l < "$OUT/plan.txt") firmware runs per float build, $(wc -l < "$OUT/plan-q15.txt") q15 runs"
CFGS="$(cat "$OUT/plan.txt" "$OUT/plan-q15.txt" | cut -d' ' -f1 | awk '!s[$0]++')"

# cargo configuration name (target dir), features, environment and C flags of a build
build_cfg() { case "$2" in size-first) echo "${1}_size_first" ;; q15) echo "${1}_q15" ;; q15-cached) echo "${1}_q15c" ;; q15-tiny) echo "${1}_q15t" ;; *) echo "$1" ;; esac; }
build_features() { if [ "$1" = size-first ]; then echo "--features size-first"; fi; }
build_env() { case "$1" in q15) echo "ATOME_DTYPE=q15" ;; q15-cached) echo "ATOME_DTYPE=q15 ATOME_STATE=cached" ;; q15-tiny) echo "ATOME_DTYPE=q15 ATOME_STATE=tiny" ;; esac; }
build_cdefs() { case "$1" in q15) echo "-DATOME_DTYPE_Q15=1" ;; q15-cached) echo "-DATOME_DTYPE_Q15=1 -DATOME_STATE_CACHED=1" ;; q15-tiny) echo "-DATOME_DTYPE_Q15=1 -DATOME_STATE_TINY=1" ;; esac; }
is_q15() { case "$1" in q15|q15-cached|q15-tiny) return 0 ;; esac; return 1; }

declare -A KN   # configuration -> "ATOME_...=N ..." (one python call each)
for cfg in $CFGS; do KN[$cfg]="$(fw_knobs "$cfg")"; done

# ---- 1. libraries: one cargo call per configuration and build for all its targets
T1=$(fw_now)
for cfg in $CFGS; do
    knobs="${KN[$cfg]}"
    for b in $BUILDS; do
        targets="$(awk -v c="$cfg" '$1==c {print $3}' "$(plan_of "$b")" | sort -u | tr '\n' ' ')"
        [ -n "$targets" ] || continue
        fw_log "build $cfg ($b): $knobs $(build_env "$b"); $targets"
        # shellcheck disable=SC2086
        FW_CARGO_FEATURES="$(build_features "$b")" fw_cargo_build "$(build_cfg "$cfg" "$b")" "$knobs $(build_env "$b")" firmware $targets \
            || fw_die "cargo build ($cfg, $b build, $targets) failed"
    done
    if grep -q "^$cfg " "$OUT/plan.txt"; then
        fw_cargo_build "$cfg" "$knobs" release host || fw_die "cargo build ($cfg, host) failed"
    fi
    if grep -q "^$cfg " "$OUT/plan-q15.txt"; then
        fw_cargo_build "${cfg}_q15" "$knobs ATOME_DTYPE=q15" release host || fw_die "cargo build ($cfg, q15 host) failed"
        FW_CARGO_FEATURES="--features portable" fw_cargo_build "${cfg}_q15_portable" "$knobs ATOME_DTYPE=q15" release host \
            || fw_die "cargo build ($cfg, q15 host, portable) failed"
    fi
done
T_BUILD=$(( $(fw_now) - T1 ))

# ---- 2. case tables and host reference output (parallel) -------------------
# One case table per (configuration, selection, generate), and the host
# programs the builds need: host (float), host-q15 (q15, AVX2 path) and
# host-q15p (q15, portable path).
T1=$(fw_now)
mkdir -p "$OUT/prep"
host_prog() { # KEY CFG LIBATOME CDEFS NAME
    local g="$OUT/gen/$1"
    cat <<EOF
gcc -O2 -std=gnu11 -Wall -Wextra -Werror -Iinclude -Ifirmware/common $(fw_knob_defs "${KN[$2]}") $4 \\
    firmware/host/host_platform.c firmware/host/parity_host.c firmware/common/runner.c "$g/cases.c" "$g/blobs.S" \\
    "$3" -lm -o "$g/$5" > "$g/$5.log" 2>&1 || { cat "$g/$5.log"; exit 1; }
"$g/$5" > "$g/$5.txt" || { echo "host run failed ($1, $5)"; exit 1; }
EOF
}
for b in float q15; do
    if [ $b = q15 ]; then pf="$OUT/plan-q15.txt"; else pf="$OUT/plan.txt"; fi
    while read -r cfg board target off sel gen; do
        key="$cfg.$(echo "$sel" | tr ':,' '__').g$gen"
        s="$OUT/prep/gen-$key.sh"
        if [ ! -f "$s" ]; then
            genflag=""; [ "$gen" = 1 ] && genflag="--generate"
            cat > "$s" <<EOF
set -e
cd "$FW_ROOT"
python3 firmware/tools/gen_cases.py --golden "$FW_GOLDEN" --config "$cfg" \\
    --models "$FW_MODELS" --out "$OUT/gen/$key" --select "$sel" $genflag
EOF
        fi
        grep -qx "# host $b" "$s" && continue
        echo "# host $b" >> "$s"
        if [ $b = q15 ]; then
            host_prog "$key" "$cfg" "$(fw_lib_path "${cfg}_q15" release host)" -DATOME_DTYPE_Q15=1 host-q15 >> "$s"
            host_prog "$key" "$cfg" "$(fw_lib_path "${cfg}_q15_portable" release host)" -DATOME_DTYPE_Q15=1 host-q15p >> "$s"
        else
            host_prog "$key" "$cfg" "$(fw_lib_path "$cfg" release host)" "" host >> "$s"
        fi
    done < "$pf"
done
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
        "${KN[$cfg]}" "-DATOME_FW_BLOB_OFFSET=$off $(build_cdefs "$build")" \
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
done < "$(plan_of "$build")"
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
    ref=host; is_q15 "$build" && ref=host-q15
    grep -v '^#' "$OUT/gen/$key/$ref.txt" > "$d/expected.txt"
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

# The q15 host reference itself: the x86-64 AVX2 path and the portable path
# (cargo feature portable) print the same text for every case table.
for g in "$OUT"/gen/*; do
    [ -f "$g/host-q15.txt" ] || continue
    key="$(basename "$g")"
    ncases=$(grep -c '^[PCG] ' "$g/host-q15.txt" || true)
    if cmp -s <(grep -v '^#' "$g/host-q15.txt") <(grep -v '^#' "$g/host-q15p.txt"); then
        pass=$((pass + 1)); compared=$((compared + ncases)); res=PASS
    else
        fail=$((fail + 1)); res=FAIL
        fw_log "FAIL q15 host portable vs AVX2 ($key): first differences:"
        diff "$g/host-q15.txt" "$g/host-q15p.txt" | head -5 | cut -c1-200 >&2 || true
    fi
    printf '| host-portable-%s | q15 | %s | x86-64 | %s, feature portable | - | %s | - | - | %s |\n' "$key" "${key%%.*}" "$HOST_TARGET" "$ncases" "$res" >> "$OUT/report.md"
done

# Informational: host (pure-Rust math) against the reference engine's golden
# bits (glibc expf/tanhf): ids must agree, a few logits may differ in the last bits.
python3 - "$OUT" <<'EOF' >> "$OUT/report.md"
import glob, os, sys
out = sys.argv[1]


def pairs(name):
    """(host line, golden line) of every case a host program `name` ran."""
    for g in sorted(glob.glob(os.path.join(out, "gen", "*"))):
        if not os.path.exists(os.path.join(g, name)):
            continue
        host = [l.split() for l in open(os.path.join(g, name)) if l[:1] in "PCG"]
        gold = [l.split() for l in open(os.path.join(g, "golden.txt"))]
        yield from zip(host, gold)


def same_ids(h, r):
    return (h[2:] == r[2:]) if h[0] == "G" else (h[2] == r[2])


ids = idok = bits = bitok = 0
for h, r in pairs("host.txt"):
    ids += 1; idok += same_ids(h, r)
    if h[0] != "G":
        bits += len(r) - 3
        bitok += sum(a == b for a, b in zip(h[3:], r[3:]))
if ids:
    print("\nHost (pure-Rust math) vs reference golden (glibc): %d/%d ids/token lists equal, %d/%d logit bit patterns equal.\n" % (idok, ids, bitok, bits))
# q15 against the float golden: not a check (a different arithmetic), the
# share of predicted ids and generated token lists that agree.
ids = idok = 0
for h, r in pairs("host-q15.txt"):
    ids += 1; idok += same_ids(h, r)
if ids:
    print("\nHost q15 vs reference golden (float), informational: %d/%d ids/token lists equal.\n" % (idok, ids))
EOF

cat "$OUT/report.md"
if [ -s "$OUT/skipped.txt" ]; then echo; echo "Skipped (do not fit the board):"; sed 's/^/  /' "$OUT/skipped.txt"; fi
TOTAL=$(( $(fw_now) - T0 ))
echo
echo "qemu_parity summary: $pass runs matched the host bit for bit ($compared cases), $fail differed, $skip did not fit their board; build ${T_BUILD}s, prepare ${T_PREP}s, qemu ${T_RUN}s, total ${TOTAL}s"
echo "qemu_parity: $pass passed, $fail failed, $skip skipped"
[ "$fail" = 0 ] && [ "$pass" -gt 0 ]
