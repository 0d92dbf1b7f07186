#!/usr/bin/env bash
# A benchmark report, never a failure: what the retired S1-x86-q15 target
# (q15, lean state: at most 8,770,000 instructions under callgrind;
# BENCHMARKS.md#targets, docs/PERFORMANCE.md) would take, measured:
#   1. the AVX2 matvec's instructions for S1's 50,790,400 weight terms
#      (tests/q15_matvec_cost.rs, random Trit2 weights and activations),
#      one position per call (the engine today) and all 64 positions in
#      one call (decode shared by every position);
#   2. the bytes that batching needs: every batched position keeps its
#      int32 matvec outputs (Wk, Wv, router, Wq) and its normalized row
#      until they are quantized, against what the 90,000-byte state target
#      leaves (sizeof(atome_state_t) of the q15 lean 944K build, S=64);
#   3. whether valgrind can count the instructions that would lift the
#      AVX2 ceiling (AVX-VNNI vpdpwssd, AVX-512).
# Prints a markdown report; exits non-zero only when a step fails.
#   scripts/q15_x86_bound.sh
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
for t in valgrind cc cargo; do
    command -v "$t" >/dev/null || { echo "error: $t not found (apt-get install valgrind gcc)" >&2; exit 2; }
done
grep -q -w avx2 /proc/cpuinfo || { echo "error: this host has no AVX2: the kernel measured here would not run" >&2; exit 2; }
OUT=$ROOT/target/q15_x86_bound
mkdir -p "$OUT"
fmt() { echo "$1" | sed -e ':a' -e 's/\B[0-9]\{3\}\>/,&/' -e 'ta'; }

echo "## Machine"
echo
echo "- CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//') ($(nproc) cores online; flags: $(grep -m1 -o -w -E 'avx2|avx512f|avx512_vnni|avx_vnni' /proc/cpuinfo | sort -u | tr '\n' ' ' | sed 's/ $//'))"
echo "- $(rustc --version), $(valgrind --version), git $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
echo

# 1. The matvec work of S1.
bin=$(cargo test --release --test q15_matvec_cost --no-run --message-format=json 2>/dev/null |
    python3 -c 'import json,sys
for l in sys.stdin:
    m = json.loads(l)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["name"] == "q15_matvec_cost":
        print(m["executable"])')
[ -x "$bin" ] || { echo "error: tests/q15_matvec_cost.rs did not build" >&2; exit 1; }
TERMS=50790400
echo "## 1. The AVX2 matvec on S1's weight terms (tests/q15_matvec_cost.rs)"
echo
echo "| positions per call | instructions (avx2::matvec, inclusive) | per 16 terms | share of the 8,770,000 budget |"
echo "|---|---:|---:|---:|"
for t in s1_matvec_per_position:1 s1_matvec_work:64; do
    name=${t%%:*}; per=${t##*:}
    valgrind --tool=callgrind --toggle-collect='*q15::matvec::avx2::matvec' --callgrind-out-file="$OUT/$name.cg" \
        "$bin" --ignored --exact "$name" > "$OUT/$name.log" 2>&1 || { tail -5 "$OUT/$name.log" >&2; exit 1; }
    n=$(awk '/^totals:/ {print $2; exit}' "$OUT/$name.cg")
    echo "| $per | $(fmt "$n") | $(awk -v n="$n" -v t=$TERMS 'BEGIN { printf "%.2f", 16 * n / t }') | $(awk -v n="$n" 'BEGIN { printf "%.0f%%", 100 * n / 8770000 }') |"
done
# Computed, not measured: 16 weights decoded in two instructions (the
# wide loop's vpslld, vpsraw) shared by three positions, each with its
# vpmaddwd + vpaddd: 8 instructions per 3 x 16 terms.
b3=$((TERMS / 48 * 8))
echo "| 3, computed: decode (2) shared, vpmaddwd + vpaddd (2) per position | $(fmt $b3) | 2.67 | $(awk -v n=$b3 'BEGIN { printf "%.0f%%", 100 * n / 8770000 }') |"
echo "| floor: one vpmaddwd + one vpaddd per 16 terms, decode free | $(fmt $((TERMS / 8))) | 2.00 | $(awk -v n=$((TERMS / 8)) 'BEGIN { printf "%.0f%%", 100 * n / 8770000 }') |"
echo
echo "$(fmt $TERMS) terms (the engine's lean plan skips some of them in its last layer): per layer Wq, Wk (64 x 256), Wv (256 x 256) and the router (3 x 256) for 64 positions, then the head (256 x 256) once."
echo

# 2. The bytes batching needs.
D=256; DH=64; S=64
name=D${D}_DH${DH}_K5_L8_S${S}_TOPK4_V256_lean_q15
tdir=$ROOT/target/cfg/$name
ATOME_D_MODEL=$D ATOME_N_LAYERS=8 ATOME_D_HEAD=$DH ATOME_MAX_SEQ=$S ATOME_VOCAB_SIZE=256 ATOME_KERNEL_SIZE=5 \
    ATOME_TOP_K=4 ATOME_STATE=lean ATOME_DTYPE=q15 CARGO_TARGET_DIR=$tdir cargo build --release --quiet --lib
cc -std=c99 -O2 -Wall -Wextra -Werror -I include -DATOME_D_MODEL=$D -DATOME_N_LAYERS=8 -DATOME_D_HEAD=$DH \
    -DATOME_MAX_SEQ=$S -DATOME_DTYPE_Q15=1 benches/state_size.c "$tdir/release/libatome.a" -lm -o "$OUT/state_size"
state=$("$OUT/state_size")
per_pos=$(( (2 * DH + D + 3) * 4 + 2 * D ))
head=$((90000 - state))
echo "## 2. RAM for batching (944K: D=$D, DH=$DH, S=$S)"
echo
echo "- sizeof(atome_state_t), q15 lean: $(fmt "$state") bytes; the target is 90,000: $(fmt $head) bytes left."
echo "- each further position in a batch: (2 DH + D + 3) int32 outputs + D int16 normalized row = $(fmt $per_pos) bytes;"
echo "  the left bytes hold $((head / per_pos)) more, a batch of $((head / per_pos + 1)); all $S positions need $(fmt $(( (S - 1) * per_pos ))) bytes more."
echo

# 3. Instructions past AVX2 under valgrind.
echo "## 3. Past AVX2 under valgrind"
echo
probe() { # file name, label, bytes of one instruction (by hand: assemblers pick EVEX for vpdpwssd)
    printf '#include <stdio.h>\nint main(void) { __asm__ volatile("vpxor %%%%ymm0, %%%%ymm0, %%%%ymm0\\n\\t.byte %s" ::: "xmm0", "xmm1"); puts("ran"); return 0; }\n' "$3" > "$OUT/$1.c"
    cc -O1 "$OUT/$1.c" -o "$OUT/$1"
    local host=no vg=no
    bash -c '"$0" > /dev/null 2>&1' "$OUT/$1" 2> /dev/null && host=yes
    # (Through bash -c, whose "Illegal instruction" report goes to /dev/null.)
    bash -c '"$0" -q "$1" > /dev/null 2>&1' valgrind "$OUT/$1" 2> /dev/null && vg=yes
    echo "| $2 | $host | $vg |"
}
echo "| instruction | runs on this host | runs under valgrind |"
echo "|---|---|---|"
probe vnni "vpdpwssd ymm (AVX-VNNI, VEX: multiply and accumulate in one)" "0xc4, 0xe2, 0x7d, 0x52, 0xc8"
probe avx512 "vpxord zmm (AVX-512F, EVEX)" "0x62, 0xf1, 0x7d, 0x48, 0xef, 0xc0"
