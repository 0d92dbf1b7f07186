#!/usr/bin/env bash
# sizeof(atome_state_t) for every configuration of the golden file, plus the
# 944K model at S=24, S=32 and S=128, in both states, plus the q15 cached
# state (ATOME_DTYPE=q15 ATOME_STATE=cached), beside the reference engine's.
#
#   scripts/state_sizes.sh [--check]
#
# Each configuration x state: libatome.a is built (release, default math) in
# target/cfg/<config>_<state>_default (as tests/golden.py does) and
# benches/state_size.c is compiled with the matching -D flags and linked
# against it (so the header's link-time configuration check passes); it prints
# sizeof(atome_state_t) after checking it equals the library's own figure.
# Reference size = the reference engine's struct: floats x, normed,
# path_local, path_ssm, path_attn (5*S*D), ssm_h L*D, logits V, router_w 3*S,
# q DH, k_cache S*DH, v_cache S*D, attn_scores S; times 4 bytes. The script
# checks that this reproduces every figure BENCHMARKS.md#reference-scenarios gives.
# --check: also builds and runs benches/sizeof_check.c (lean 944K at S=64
# <= 160000 bytes, lean default configuration <= 24000; q15 cached 944K at
# S=64 <= 365000, at S=32 <= 200000, default configuration <= 30000) and
# exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
GOLDEN=${ATOME_GOLDEN:-$ROOT/../shared/golden/golden_visible.json}
CHECK=0
[ "${1:-}" = --check ] && CHECK=1
OUT=$ROOT/target/state_sizes
mkdir -p "$OUT"

# name V D L DH K TOPK S, one a line: the golden configurations, then the extra 944K windows.
if [ -f "$GOLDEN" ]; then
    CONFIGS=$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
for name, e in d.items():
    c = e["config"]
    print(name, *(c[k] for k in ("V", "D", "L", "DH", "K", "TOPK", "S")))
' "$GOLDEN")
else
    echo "warning: $GOLDEN not found; using the contract (docs/) configurations only" >&2
    CONFIGS="default 256 64 4 16 5 4 32
toy 256 64 4 16 5 4 64
m944k 256 256 8 64 5 4 64
cls 256 32 2 8 5 4 32"
fi
grep -q '^m944k_s24 ' <<< "$CONFIGS" || CONFIGS="$CONFIGS
m944k_s24 256 256 8 64 5 4 24"
grep -q '^m944k_s32 ' <<< "$CONFIGS" || CONFIGS="$CONFIGS
m944k_s32 256 256 8 64 5 4 32"
CONFIGS="$CONFIGS
m944k_s128 256 256 8 64 5 4 128"

ref_size() { # V D L DH S
    echo $(( (5 * $5 * $2 + $3 * $2 + $1 + 3 * $5 + $4 + $5 * $4 + $5 * $2 + $5) * 4 ))
}
# The reference's own figures (BENCHMARKS.md#reference-scenarios) must come out of the formula.
for fig in "256 256 8 64 64 420096" "256 256 8 64 24 163456" "256 256 8 64 128 830720" \
           "256 64 4 16 32 53824" "256 32 2 8 32 27424"; do
    set -- $fig
    got=$(ref_size "$1" "$2" "$3" "$4" "$5")
    [ "$got" = "$6" ] || { echo "error: reference formula gives $got for V=$1 D=$2 L=$3 DH=$4 S=$5, contract says $6" >&2; exit 1; }
done

# state: lean, cached (float) or q15cached (ATOME_DTYPE=q15 ATOME_STATE=cached).
lib_for() { # state V D L DH K TOPK S -> target dir (library built)
    local state=$1 v=$2 d=$3 l=$4 dh=$5 k=$6 tk=$7 s=$8 dtype=f32 suffix=""
    if [ "$state" = q15cached ]; then state=cached dtype=q15 suffix=_q15; fi
    local tdir=$ROOT/target/cfg/D${d}_DH${dh}_K${k}_L${l}_S${s}_TOPK${tk}_V${v}_${state}_default$suffix
    ATOME_VOCAB_SIZE=$v ATOME_D_MODEL=$d ATOME_N_LAYERS=$l ATOME_D_HEAD=$dh ATOME_KERNEL_SIZE=$k \
    ATOME_TOP_K=$tk ATOME_MAX_SEQ=$s ATOME_STATE=$state ATOME_DTYPE=$dtype \
        CARGO_TARGET_DIR=$tdir cargo build --release --quiet --lib >&2
    echo "$tdir"
}
defs_for() { # state V D L DH K TOPK S
    local defs="-DATOME_VOCAB_SIZE=$2 -DATOME_D_MODEL=$3 -DATOME_N_LAYERS=$4 -DATOME_D_HEAD=$5 -DATOME_KERNEL_SIZE=$6 -DATOME_TOP_K=$7 -DATOME_MAX_SEQ=$8"
    [ "$1" = cached ] && defs="$defs -DATOME_STATE_CACHED=1"
    [ "$1" = q15cached ] && defs="$defs -DATOME_STATE_CACHED=1 -DATOME_DTYPE_Q15=1"
    echo "$defs"
}
state_size() { # state V D L DH K TOPK S
    local tdir exe
    tdir=$(lib_for "$@")
    exe=$OUT/state_size_$(basename "$tdir")
    # shellcheck disable=SC2046
    cc -std=c99 -O2 -Wall -Wextra -Werror -I include $(defs_for "$@") benches/state_size.c \
        "$tdir/release/libatome.a" -lm -o "$exe" >&2
    "$exe"
}
pct() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f%%", 100 * a / b }'; }
fmt() { echo "$1" | sed -e ':a' -e 's/\B[0-9]\{3\}\>/,&/' -e 'ta'; }

echo "## sizeof(atome_state_t), bytes"
echo
echo "| configuration | V | D | L | DH | K | TOPK | S | reference | lean | lean/ref | cached | cached/ref | q15 cached | q15 cached/ref |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
while read -r name v d l dh k tk s; do
    [ -n "$name" ] || continue
    ref=$(ref_size "$v" "$d" "$l" "$dh" "$s")
    lean=$(state_size lean "$v" "$d" "$l" "$dh" "$k" "$tk" "$s")
    cached=$(state_size cached "$v" "$d" "$l" "$dh" "$k" "$tk" "$s")
    q15c=$(state_size q15cached "$v" "$d" "$l" "$dh" "$k" "$tk" "$s")
    echo "| $name | $v | $d | $l | $dh | $k | $tk | $s | $(fmt "$ref") | $(fmt "$lean") | $(pct "$lean" "$ref") | $(fmt "$cached") | $(pct "$cached" "$ref") | $(fmt "$q15c") | $(pct "$q15c" "$ref") |"
done <<< "$CONFIGS"
echo
echo "Reference = (5*S*D + L*D + V + 3*S + DH + S*DH + S*D + S) * 4 bytes; it reproduces BENCHMARKS.md#reference-scenarios's"
echo "420,096 (944K, S=64), 163,456 (S=24), 830,720 (S=128), 53,824 (default) and 27,424 (classifier heads)."

if [ "$CHECK" = 1 ]; then
    echo
    echo "## benches/sizeof_check.c"
    echo
    echo '```'
    fail=0
    for sc in "lean 256 256 8 64 5 4 64" "lean 256 64 4 16 5 4 32" "q15cached 256 256 8 64 5 4 64" \
              "q15cached 256 256 8 64 5 4 32" "q15cached 256 64 4 16 5 4 32"; do
        st=${sc%% *} cfg=${sc#* }
        # shellcheck disable=SC2086
        tdir=$(lib_for "$st" $cfg)
        exe=$OUT/sizeof_check_$(basename "$tdir")
        # shellcheck disable=SC2046,SC2086
        if cc -std=c99 -O2 -Wall -Wextra -Werror -I include $(defs_for "$st" $cfg) benches/sizeof_check.c \
                "$tdir/release/libatome.a" -lm -o "$exe"; then
            "$exe" || fail=1
        else
            echo "FAIL: benches/sizeof_check.c did not build for $st $cfg"; fail=1
        fi
    done
    echo '```'
    [ "$fail" = 0 ] || { echo "state_sizes.sh --check: FAIL" >&2; exit 1; }
fi
