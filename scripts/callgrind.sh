#!/usr/bin/env bash
# Instruction counts of the BENCHMARKS.md#reference-scenarios scenarios S1-S5 under callgrind.
#
#   scripts/callgrind.sh [--check] [--only S1,S3,...] [--states lean,cached]
#
# For each scenario's configuration and each state (ATOME_STATE=lean|cached)
# it builds libatome.a (release, default math) in target/cfg/<config>_<state>_default
# (the same directories tests/golden.py uses), compiles benches/scenarios.c with
# the matching -D flags, and runs
#   valgrind --tool=callgrind --toggle-collect=<call> scenarios <S> <models>
# so only the instructions inside the one measured call (atome_predict_next,
# atome_generate or atome_classify, on a freshly atome_init'ed state; blob read
# and load happen before it) are counted: the "totals:" line of the out file.
# Prints the machine and a markdown table (reference = BENCHMARKS.md#reference-scenarios,
# ref/x = how many times fewer instructions than the reference, target =
# S<n>-x86-f32 for the lean state and S<n>-x86-f32-cached, BENCHMARKS.md#targets),
# the runtime-dimension API against the compile-time build (S1-x86-f32-rt,
# S3-x86-f32-rt) and the q15 build's S1 and S3 counts (a report: no target).
# With --check, exits non-zero when any target fails or any run fails.
# Models come from $ATOME_MODELS (default ../shared/models).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
MODELS=${ATOME_MODELS:-$ROOT/../shared/models}
CHECK=0
ONLY="S1,S2,S3,S4,S5"
STATES="lean,cached"
while [ $# -gt 0 ]; do
    case "$1" in
        --check) CHECK=1 ;;
        --only) ONLY=$2; shift ;;
        --states) STATES=$2; shift ;;
        -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
        *) echo "unknown argument $1" >&2; exit 2 ;;
    esac
    shift
done
for t in valgrind cc cargo; do
    command -v "$t" >/dev/null || { echo "error: $t not found (apt-get install valgrind gcc)" >&2; exit 2; }
done
[ -f "$MODELS/atome_944k.bin" ] || { echo "error: models not found in $MODELS (set ATOME_MODELS)" >&2; exit 2; }

# scenario | D L DH S | call | reference | S<n>-x86-f32 | S<n>-x86-f32-cached
SCEN="S1|256 8 64 64|atome_predict_next|876860014|87700000|87700000
S2|256 8 64 64|atome_generate|25929160570|2593000000|130000000
S3|64 4 16 32|atome_predict_next|16427010|1643000|1643000
S4|64 4 16 64|atome_generate|1030274409|103000000|10300000
S5|32 2 8 32|atome_classify|2510788|251000|251000"

OUT=$ROOT/target/callgrind
rm -rf "$OUT"; mkdir -p "$OUT"
T0=$(date +%s)

echo "## Machine"
echo
echo "- CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//') ($(nproc) cores online; flags: $(grep -m1 -o -w -E 'avx2|avx512f' /proc/cpuinfo | sort -u | tr '\n' ' ' | sed 's/ $//'))"
echo "- $(rustc --version), $(cc --version | head -1), $(valgrind --version)"
echo "- git: $(git rev-parse --short HEAD 2>/dev/null || echo '?')$(git diff --quiet HEAD -- src build.rs include 2>/dev/null || echo ' + uncommitted changes in src/build.rs/include')"
echo

# build_driver D L DH S state -> path of the scenario driver
build_driver() {
    local d=$1 l=$2 dh=$3 s=$4 state=$5
    local name="D${d}_DH${dh}_K5_L${l}_S${s}_TOPK4_V256_${state}_default"
    local tdir=$ROOT/target/cfg/$name
    ATOME_D_MODEL=$d ATOME_N_LAYERS=$l ATOME_D_HEAD=$dh ATOME_MAX_SEQ=$s \
    ATOME_VOCAB_SIZE=256 ATOME_KERNEL_SIZE=5 ATOME_TOP_K=4 ATOME_STATE=$state \
        CARGO_TARGET_DIR=$tdir cargo build --release --quiet --lib >&2
    local defs="-DATOME_D_MODEL=$d -DATOME_N_LAYERS=$l -DATOME_D_HEAD=$dh -DATOME_MAX_SEQ=$s"
    [ "$state" = cached ] && defs="$defs -DATOME_STATE_CACHED=1"
    # shellcheck disable=SC2086
    cc -std=c99 -O2 -g -Wall -Wextra -Werror -I include -I c_examples $defs benches/scenarios.c \
        "$tdir/release/libatome.a" -lm -o "$OUT/scenarios_$name" >&2
    echo "$OUT/scenarios_$name"
}

# Build every driver first (sequentially: cargo holds a lock per target dir anyway).
JOBS=$OUT/jobs.txt
: > "$JOBS"
while IFS='|' read -r sc dims call ref tl tc; do
    case ",$ONLY," in *",$sc,"*) ;; *) continue ;; esac
    for state in ${STATES//,/ }; do
        # shellcheck disable=SC2086
        exe=$(build_driver $dims "$state")
        echo "$sc $state $call $exe" >> "$JOBS"
    done
done <<< "$SCEN"

# One callgrind run: writes <sc>_<state>.count (instructions) or .err.
run_one() {
    local sc=$1 state=$2 call=$3 exe=$4 out=$OUT/${1}_$2
    if valgrind --tool=callgrind --toggle-collect="$call" --callgrind-out-file="$out.cg" \
            "$exe" "$sc" "$MODELS" > "$out.stdout" 2> "$out.valgrind"; then
        # "totals:" (or "summary:") = Ir collected inside the toggled call.
        awk '/^totals:/ {print $2; f=1; exit} /^summary:/ {s=$2} END {if (!f && s != "") print s}' "$out.cg" > "$out.count"
        # Cross-check: the call must have been entered exactly once.
        if ! grep -q "$sc" "$out.stdout"; then echo "no output" > "$out.err"; fi
    else
        echo "valgrind/driver failed: $(tail -3 "$out.valgrind" | tr '\n' ' ')" > "$out.err"
    fi
}
export -f run_one
export OUT MODELS
# Longest first, two at a time.
{ grep '^S2 lean' "$JOBS" || true; grep '^S4 lean' "$JOBS" || true; grep -v -E '^S(2|4) lean' "$JOBS" || true; } |
    xargs -P "$(nproc)" -L 1 bash -c 'run_one "$@"' _

fmt() { echo "$1" | sed -e ':a' -e 's/\B[0-9]\{3\}\>/,&/' -e 'ta'; }
ratio() { awk -v r="$1" -v m="$2" 'BEGIN { if (m > 0) printf "%.1fx", r / m; else print "-" }'; }
FAIL=0
MISSED=""
echo "## Instructions inside the call (callgrind Ir)"
echo
echo "| scenario | call | reference | lean | ref/lean | target lean | | cached | ref/cached | target cached | |"
echo "|---|---|---:|---:|---:|---:|---|---:|---:|---:|---|"
while IFS='|' read -r sc dims call ref tl tc; do
    case ",$ONLY," in *",$sc,"*) ;; *) continue ;; esac
    row="| $sc | $call | $(fmt "$ref")"
    for state in lean cached; do
        target=$tl; name=$sc-x86-f32
        if [ "$state" = cached ]; then target=$tc; name=$name-cached; fi
        f=$OUT/${sc}_$state
        if ! case ",$STATES," in *",$state,"*) true ;; *) false ;; esac; then
            row="$row | - | - | <= $(fmt "$target") | not run"
        elif [ -s "$f.count" ] && [ ! -e "$f.err" ]; then
            n=$(cat "$f.count")
            verdict=PASS; [ "$n" -le "$target" ] || { verdict=FAIL; FAIL=1; MISSED="$MISSED $name"; }
            row="$row | $(fmt "$n") | $(ratio "$ref" "$n") | <= $(fmt "$target") | $verdict"
        else
            row="$row | error | - | <= $(fmt "$target") | FAIL"; FAIL=1
            echo "$sc $state: $(cat "$f.err" 2>/dev/null)" >&2
        fi
    done
    echo "$row |"
done <<< "$SCEN"
echo
echo "Results of the measured calls:"
echo
echo '```'
for f in "$OUT"/S*_*.stdout; do [ -e "$f" ] && head -1 "$f"; done
echo '```'
echo
echo "($(($(date +%s) - T0)) s; callgrind out files in target/callgrind/)"
# The runtime-dimension API (one library built with no knobs) on S1 and S3,
# lean: S1-x86-f32-rt and S3-x86-f32-rt, within 5% of the compile-time
# build's lean count.
if case ",$STATES," in *",lean,"*) true ;; *) false ;; esac; then
    RT_DIR=$ROOT/target/cfg/runtime_default
    env $(env | grep -o '^ATOME_[A-Z_]*' | sed 's/^/-u /') CARGO_TARGET_DIR=$RT_DIR cargo build --release --quiet --lib
    cc -std=c99 -O2 -g -Wall -Wextra -Werror -I include -I c_examples benches/scenarios_rt.c \
        "$RT_DIR/release/libatome.a" -lm -o "$OUT/scenarios_rt"
    echo "## Runtime-dimension API (lean, library built with no knobs)"
    echo
    echo "| scenario | compile-time lean | runtime API | ratio | target | |"
    echo "|---|---:|---:|---:|---:|---|"
    for sc in S1 S3; do
        case ",$ONLY," in *",$sc,"*) ;; *) continue ;; esac
        f=$OUT/${sc}_lean
        valgrind --tool=callgrind --toggle-collect=atome_rt_predict_next --callgrind-out-file="$f.rt.cg" \
            "$OUT/scenarios_rt" "$sc" "$MODELS" > "$f.rt.stdout" 2> "$f.rt.valgrind"
        rt=$(awk '/^totals:/ {print $2; exit}' "$f.rt.cg")
        ct=$(cat "$f.count" 2>/dev/null || echo 0)
        verdict=$(awk -v a="$rt" -v b="$ct" 'BEGIN { print (b > 0 && a <= 1.05 * b) ? "PASS" : "FAIL" }')
        [ "$verdict" = PASS ] || { FAIL=1; MISSED="$MISSED $sc-x86-f32-rt"; }
        echo "| $sc | $(fmt "$ct") | $(fmt "$rt") | $(awk -v a="$rt" -v b="$ct" 'BEGIN { if (b > 0) printf "%.3f", a / b; else print "-" }') | <= 1.05 | $verdict |"
    done
    echo
fi
# The q15 integer mode (ATOME_DTYPE=q15, docs/Q15.md), lean state, S1 and
# S3: a report, no target (the x86-64 q15 targets are retired: why, in
# docs/PERFORMANCE.md). A failed run still fails --check.
Q15FAIL=0
if case ",$STATES," in *",lean,"*) true ;; *) false ;; esac; then
    echo "## q15 mode (ATOME_DTYPE=q15, lean)"
    echo
    echo "| scenario | reference | q15 lean | ref/q15 |"
    echo "|---|---:|---:|---:|"
    while IFS='|' read -r sc dims call ref tl tc; do
        case "$sc" in S1|S3) ;; *) continue ;; esac
        case ",$ONLY," in *",$sc,"*) ;; *) continue ;; esac
        # shellcheck disable=SC2086
        set -- $dims
        name="D${1}_DH${3}_K5_L${2}_S${4}_TOPK4_V256_lean_q15"
        tdir=$ROOT/target/cfg/$name
        ATOME_D_MODEL=$1 ATOME_N_LAYERS=$2 ATOME_D_HEAD=$3 ATOME_MAX_SEQ=$4 ATOME_VOCAB_SIZE=256 ATOME_KERNEL_SIZE=5 \
            ATOME_TOP_K=4 ATOME_STATE=lean ATOME_DTYPE=q15 CARGO_TARGET_DIR=$tdir cargo build --release --quiet --lib
        cc -std=c99 -O2 -g -Wall -Wextra -Werror -I include -I c_examples -DATOME_D_MODEL=$1 -DATOME_N_LAYERS=$2 \
            -DATOME_D_HEAD=$3 -DATOME_MAX_SEQ=$4 -DATOME_DTYPE_Q15=1 benches/scenarios.c "$tdir/release/libatome.a" -lm \
            -o "$OUT/scenarios_$name"
        f=$OUT/${sc}_q15
        if valgrind --tool=callgrind --toggle-collect="$call" --callgrind-out-file="$f.cg" \
                "$OUT/scenarios_$name" "$sc" "$MODELS" > "$f.stdout" 2> "$f.valgrind" && grep -q "$sc" "$f.stdout"; then
            n=$(awk '/^totals:/ {print $2; exit}' "$f.cg")
            echo "| $sc | $(fmt "$ref") | $(fmt "$n") | $(ratio "$ref" "$n") |"
        else
            echo "| $sc | $(fmt "$ref") | error (run failed) | - |"; Q15FAIL=1
            tail -3 "$f.valgrind" >&2
        fi
    done <<< "$SCEN"
    echo
    echo "q15 results: $(for f in "$OUT"/S*_q15.stdout; do [ -e "$f" ] && head -1 "$f"; done | tr '\n' ' ')"
    echo
    [ "$Q15FAIL" = 1 ] && FAIL=1
fi
if [ "$CHECK" = 1 ] && [ "$FAIL" = 1 ]; then
    echo "callgrind.sh --check: FAIL${MISSED:+ (targets missed:$MISSED)}" >&2
    exit 1
fi
exit 0
