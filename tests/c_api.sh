#!/usr/bin/env bash
# C-side checks of the host library (needs a C compiler):
#  - the C examples build with -std=c99 -Wall -Wextra -Werror and run correctly;
#  - a C file built for one configuration links with a matching library and is
#    refused at link time, naming the knob, by a library built for another;
#  - GNU nm reads the host libatome.a (no embedded LLVM bitcode), finds every
#    function of include/atome.h, and no allocator, stdio/file, socket or OS call;
#  - sizeof(atome_state_t) targets (lean): S1-x86-f32-state (944K at S=64
#    <= 160000), S3-x86-f32-state (default <= 24000), and the q15 ones.
# Blob-based runs need ../shared (skipped with a message where it is absent).
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
SHARED=$ROOT/../shared
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
pass=0; fail=0
ok() { echo "ok - $1"; pass=$((pass+1)); }
bad() { echo "FAIL - $1"; fail=$((fail+1)); }
CFLAGS="-std=c99 -Wall -Wextra -Werror -O2 -I$ROOT/include -I$ROOT/c_examples"

build() { # name, env..., -> prints lib dir
  local name=$1; shift
  env "$@" CARGO_TARGET_DIR="$ROOT/target/cfg/$name" cargo build --release --quiet --lib >&2 || return 1
  echo "$ROOT/target/cfg/$name/release"
}
DEF=$(build default) || { bad "build default"; exit 1; }
M944=$(build m944k_s64 ATOME_D_MODEL=256 ATOME_N_LAYERS=8 ATOME_D_HEAD=64 ATOME_MAX_SEQ=64) || bad "build 944K"
CLS=$(build cls ATOME_D_MODEL=32 ATOME_N_LAYERS=2 ATOME_D_HEAD=8) || bad "build cls"
F944="-DATOME_D_MODEL=256 -DATOME_N_LAYERS=8 -DATOME_D_HEAD=64 -DATOME_MAX_SEQ=64"
FCLS="-DATOME_D_MODEL=32 -DATOME_N_LAYERS=2 -DATOME_D_HEAD=8"

# 1. Examples.
for ex in generate classify logits; do
  if cc $CFLAGS c_examples/$ex.c "$DEF/libatome.a" -lm -o "$TMP/$ex"; then ok "$ex.c builds with -Wall -Wextra -Werror -std=c99"; else bad "$ex.c build"; fi
done
out=$("$TMP/generate" "Hello there" 2>&1)
if grep -q "tokens in" <<< "$out" && grep -q "built-in" <<< "$out"; then ok "generate.c runs on the built-in model"; else bad "generate.c built-in: $out"; fi
if [ -d "$SHARED/models" ]; then
  cc $CFLAGS $F944 c_examples/generate.c "$M944/libatome.a" -lm -o "$TMP/gen944" && \
  out=$("$TMP/gen944" --model "$SHARED/models/atome_944k.bin" "Once upon a time, there was a little girl") && \
  grep -q "girl| named Lily" <<< "$out" && ok "generate.c continues TinyStories text with the 944K model" || bad "generate.c 944K: $out"
  cc $CFLAGS $FCLS c_examples/classify.c "$CLS/libatome.a" -lm -o "$TMP/classify_cls" && \
  out=$("$TMP/classify_cls" "$SHARED/models/agri.atomecl" "$(printf 't a')") && \
  grep -q "^class 1 of 5" <<< "$out" && [ "$(echo "$out" | wc -l)" = 6 ] && ok "classify.c on agri.atomecl" || bad "classify.c: $out"
  # logits.c against a golden case, within 5e-5, default math.
  python3 - "$TMP/logits" "$SHARED" <<'PY' && ok "logits.c prints the golden logits (default config)" || bad "logits.c vs golden"
import json, subprocess, sys, struct
exe, shared = sys.argv[1], sys.argv[2]
c = json.load(open(shared + "/golden/golden_visible.json"))["default"]["cases"][0]
out = subprocess.run([exe, shared + "/models/" + c["blob"], *map(str, c["tokens"])], capture_output=True, text=True, check=True).stdout.split()
exp = [struct.unpack(">f", bytes.fromhex(h))[0] for h in c["logits_f32_bits"]]
assert len(out) == 256 and max(abs(float(a) - b) for a, b in zip(out, exp)) < 5e-5
PY
else
  echo "SKIP blob runs: ../shared absent (beside every CI checkout)"
fi

# 2. Configuration mismatch: matching link works, a mismatched one is refused naming the knob.
if cc $CFLAGS $F944 c_examples/logits.c "$M944/libatome.a" -lm -o "$TMP/match" 2>"$TMP/err"; then ok "matching configuration links"; else bad "matching link: $(cat "$TMP/err")"; fi
if cc $CFLAGS c_examples/logits.c "$M944/libatome.a" -lm -o "$TMP/mismatch" 2>"$TMP/err"; then
  bad "a default-configuration C file linked against the 944K library"
elif grep -q "atome_cfg_D_MODEL_64" "$TMP/err" && grep -q "atome_cfg_MAX_SEQ_32" "$TMP/err"; then
  ok "mismatched configuration refused at link time: $(grep -o 'atome_cfg_[A-Z_]*_[0-9]*' "$TMP/err" | sort -u | tr '\n' ' ')"
else bad "mismatch message: $(cat "$TMP/err")"; fi
if cc $CFLAGS -DATOME_STATE_CACHED=1 c_examples/logits.c "$DEF/libatome.a" -lm -o "$TMP/mismatch2" 2>"$TMP/err"; then
  bad "a cached-state C file linked against a lean library"
elif grep -q "atome_cfg_STATE_cached" "$TMP/err"; then ok "cached/lean state mismatch refused at link time"; else bad "state mismatch message"; fi
# The arithmetic mode (ATOME_DTYPE=q15 <-> -DATOME_DTYPE_Q15=1): both directions refused, naming the knob;
# the matching pair links and runs.
Q15=$(build q15 ATOME_DTYPE=q15) || bad "build q15"
if cc $CFLAGS -DATOME_DTYPE_Q15=1 c_examples/logits.c "$DEF/libatome.a" -lm -o "$TMP/mismatch4" 2>"$TMP/err"; then
  bad "a q15 C file linked against an f32 library"
elif grep -q "atome_cfg_DTYPE_q15" "$TMP/err"; then ok "q15 C file / f32 library refused at link time"; else bad "dtype mismatch message: $(cat "$TMP/err")"; fi
if cc $CFLAGS c_examples/logits.c "$Q15/libatome.a" -lm -o "$TMP/mismatch5" 2>"$TMP/err"; then
  bad "an f32 C file linked against a q15 library"
elif grep -q "atome_cfg_DTYPE_f32" "$TMP/err"; then ok "f32 C file / q15 library refused at link time"; else bad "dtype mismatch message: $(cat "$TMP/err")"; fi
if cc $CFLAGS -DATOME_DTYPE_Q15=1 c_examples/generate.c "$Q15/libatome.a" -lm -o "$TMP/q15gen" 2>"$TMP/err" \
   && "$TMP/q15gen" "Hello there" > "$TMP/q15.out" 2>&1 && grep -q "tokens in" "$TMP/q15.out"; then
  ok "q15 library and C file link and run (c_examples/generate.c, built-in model)"
else bad "q15 link/run: $(cat "$TMP/err" "$TMP/q15.out" 2>/dev/null | tail -3)"; fi
# The q15 cached state (ATOME_DTYPE=q15 ATOME_STATE=cached <-> -DATOME_DTYPE_Q15=1
# -DATOME_STATE_CACHED=1): links only with both macros, and gives q15 lean's tokens.
Q15C=$(build q15_cached ATOME_DTYPE=q15 ATOME_STATE=cached) || bad "build q15 cached"
if cc $CFLAGS -DATOME_DTYPE_Q15=1 c_examples/logits.c "$Q15C/libatome.a" -lm -o "$TMP/mismatch6" 2>"$TMP/err"; then
  bad "a q15 lean C file linked against a q15 cached library"
elif grep -q "atome_cfg_STATE_lean" "$TMP/err"; then ok "q15 lean C file / q15 cached library refused at link time"; else bad "q15 state mismatch message: $(cat "$TMP/err")"; fi
if cc $CFLAGS -DATOME_STATE_CACHED=1 c_examples/logits.c "$Q15C/libatome.a" -lm -o "$TMP/mismatch7" 2>"$TMP/err"; then
  bad "a float cached C file linked against a q15 cached library"
elif grep -q "atome_cfg_DTYPE_f32" "$TMP/err"; then ok "f32 cached C file / q15 cached library refused at link time"; else bad "q15 cached dtype mismatch message: $(cat "$TMP/err")"; fi
if cc $CFLAGS -DATOME_DTYPE_Q15=1 -DATOME_STATE_CACHED=1 c_examples/logits.c "$Q15/libatome.a" -lm -o "$TMP/mismatch8" 2>"$TMP/err"; then
  bad "a q15 cached C file linked against a q15 lean library"
elif grep -q "atome_cfg_STATE_cached" "$TMP/err"; then ok "q15 cached C file / q15 lean library refused at link time"; else bad "q15 cached state mismatch message: $(cat "$TMP/err")"; fi
if cc $CFLAGS -DATOME_DTYPE_Q15=1 -DATOME_STATE_CACHED=1 c_examples/generate.c "$Q15C/libatome.a" -lm -o "$TMP/q15cgen" 2>"$TMP/err" \
   && "$TMP/q15cgen" "Hello there" > "$TMP/q15c.out" 2>&1 && [ -s "$TMP/q15.out" ] \
   && [ "$(head -n -1 "$TMP/q15c.out")" = "$(head -n -1 "$TMP/q15.out")" ]; then
  ok "q15 cached library and C file link and run, q15 lean's text (c_examples/generate.c, built-in model)"
else bad "q15 cached link/run or text: $(cat "$TMP/err" "$TMP/q15c.out" 2>/dev/null | tail -3)"; fi
# The q15 tiny state (ATOME_DTYPE=q15 ATOME_STATE=tiny <-> -DATOME_DTYPE_Q15=1
# -DATOME_STATE_TINY=1): links only with both macros, gives q15 lean's tokens,
# and the header refuses the macros without q15 or with the cached state.
Q15T=$(build q15_tiny ATOME_DTYPE=q15 ATOME_STATE=tiny) || bad "build q15 tiny"
if cc $CFLAGS -DATOME_DTYPE_Q15=1 c_examples/logits.c "$Q15T/libatome.a" -lm -o "$TMP/mismatch9" 2>"$TMP/err"; then
  bad "a q15 lean C file linked against a q15 tiny library"
elif grep -q "atome_cfg_STATE_lean" "$TMP/err"; then ok "q15 lean C file / q15 tiny library refused at link time"; else bad "q15 tiny state mismatch message: $(cat "$TMP/err")"; fi
if cc $CFLAGS -DATOME_DTYPE_Q15=1 -DATOME_STATE_TINY=1 c_examples/logits.c "$Q15/libatome.a" -lm -o "$TMP/mismatch10" 2>"$TMP/err"; then
  bad "a q15 tiny C file linked against a q15 lean library"
elif grep -q "atome_cfg_STATE_tiny" "$TMP/err"; then ok "q15 tiny C file / q15 lean library refused at link time"; else bad "q15 tiny state mismatch message: $(cat "$TMP/err")"; fi
for defs in "-DATOME_STATE_TINY=1" "-DATOME_DTYPE_Q15=1 -DATOME_STATE_TINY=1 -DATOME_STATE_CACHED=1"; do
  if cc $CFLAGS $defs -c c_examples/logits.c -o "$TMP/tinybad.o" 2>"$TMP/err"; then bad "the header accepted $defs"
  elif grep -q "ATOME_STATE_TINY" "$TMP/err"; then ok "the header refuses $defs by name"; else bad "tiny macro message: $(cat "$TMP/err")"; fi
done
if cc $CFLAGS -DATOME_DTYPE_Q15=1 -DATOME_STATE_TINY=1 c_examples/generate.c "$Q15T/libatome.a" -lm -o "$TMP/q15tgen" 2>"$TMP/err" \
   && "$TMP/q15tgen" "Hello there" > "$TMP/q15t.out" 2>&1 && [ -s "$TMP/q15.out" ] \
   && [ "$(head -n -1 "$TMP/q15t.out")" = "$(head -n -1 "$TMP/q15.out")" ]; then
  ok "q15 tiny library and C file link and run, q15 lean's text (c_examples/generate.c, built-in model)"
else bad "q15 tiny link/run or text: $(cat "$TMP/err" "$TMP/q15t.out" 2>/dev/null | tail -3)"; fi
# Also with --gc-sections (firmware links), which may drop unreferenced data.
if cc $CFLAGS -DATOME_D_MODEL=17 -ffunction-sections -fdata-sections c_examples/logits.c "$DEF/libatome.a" -Wl,--gc-sections -lm -o "$TMP/mismatch3" 2>"$TMP/err"; then
  bad "a D=17 C file linked against a D=64 library with --gc-sections"
elif grep -q "atome_cfg_D_MODEL_17" "$TMP/err"; then ok "mismatch refused with --gc-sections too"; else bad "gc-sections mismatch message: $(cat "$TMP/err")"; fi
# The header takes macros defined before the include too.
cat > "$TMP/predef.c" <<'C'
#define ATOME_D_MODEL 32
#define ATOME_N_LAYERS 2
#define ATOME_D_HEAD 8
#include "atome.h"
#include <stdlib.h>
static atome_model_t m;
static atome_state_t s;
int main(void) {
    atome_state_t *h = (atome_state_t *)malloc(sizeof(atome_state_t));
    int t[2] = {1, 2};
    int r = atome_predict_next(&m, &s, t, 2); /* never loaded: refused */
    free(h);
    return (r == -1 && ATOME_STATE_SIZE == sizeof(atome_state_t)) ? 0 : 1;
}
C
if cc $CFLAGS "$TMP/predef.c" "$CLS/libatome.a" -lm -o "$TMP/predef" && "$TMP/predef"; then ok "#define before #include, static and heap states"; else bad "predefined macros"; fi

# 3. Symbol audit of the host library with GNU nm, as a user's CI would run it
# (the cross-target audit is scripts/cross.sh). nm_audit.sh fails on embedded
# LLVM bitcode, on any nm message (binutils' LLVM plugin refusing an object)
# and on any function of include/atome.h not defined.
if out=$(scripts/nm_audit.sh nm "$DEF/libatome.a"); then ok "${out#ok }"; else bad "${out#FAIL }"; fi
undef=$(nm -g --undefined-only "$DEF/libatome.a" 2>&1 | awk 'NF == 2 && $1 ~ /^[UwW]$/ {print $2}' | sort -u)
defined=$(nm -g --defined-only "$DEF/libatome.a" 2>&1 | awk 'NF == 3 {print $3}' | sort -u)
undef=$(comm -23 <(echo "$undef") <(echo "$defined"))
forbidden=$(echo "$undef" | grep -E '^(malloc|calloc|realloc|free|posix_memalign|aligned_alloc|f?open|fopen64|fclose|fread|fwrite|fseek|ftell|fprintf|printf|puts|fputs|putchar|stdout|stderr|socket|connect|bind|listen|accept|send|recv|read|write|close|mmap|munmap|exit|_exit|abort|getenv|pthread_.*|__errno_location)$' || true)
if [ -z "$forbidden" ] && [ -n "$defined" ]; then ok "nm: no allocator/stdio/file/socket/OS symbol in libatome.a (undefined: $(echo $undef | tr '\n' ' '))"; else bad "nm found: ${forbidden:-no defined symbol at all}"; fi

# 4. sizeof targets, asserted in C.
cat > "$TMP/size.c" <<'C'
#include "atome.h"
#include <stdio.h>
int main(void) {
    printf("sizeof(atome_state_t) = %lu\n", (unsigned long)sizeof(atome_state_t));
    return sizeof(atome_state_t) <= LIMIT ? 0 : 1;
}
C
cc $CFLAGS $F944 -DLIMIT=160000 "$TMP/size.c" "$M944/libatome.a" -o "$TMP/s1" && r=$("$TMP/s1") && ok "944K at S=64, lean: $r <= 160000" || bad "944K sizeof: $r"
cc $CFLAGS -DLIMIT=24000 "$TMP/size.c" "$DEF/libatome.a" -o "$TMP/s2" && r=$("$TMP/s2") && ok "default configuration, lean: $r <= 24000" || bad "default sizeof: $r"
# The q15 lean state: S3-x86-q15-state (default <= 12,000 bytes) and
# S1-x86-q15-state (944K at S=64 <= 90,000), BENCHMARKS.md#targets.
cc $CFLAGS -DATOME_DTYPE_Q15=1 -DLIMIT=12000 "$TMP/size.c" "$Q15/libatome.a" -o "$TMP/s3" && r=$("$TMP/s3") && ok "default configuration, q15 lean: $r <= 12000" || bad "q15 default sizeof: $r"
Q944=$(build m944k_s64_q15 ATOME_D_MODEL=256 ATOME_N_LAYERS=8 ATOME_D_HEAD=64 ATOME_MAX_SEQ=64 ATOME_DTYPE=q15) || bad "build 944K q15"
cc $CFLAGS $F944 -DATOME_DTYPE_Q15=1 -DLIMIT=90000 "$TMP/size.c" "$Q944/libatome.a" -o "$TMP/s4" && r=$("$TMP/s4") && ok "944K at S=64, q15 lean: $r <= 90000" || bad "944K q15 sizeof: $r"

# 5. Hostile sizes, container headers and missing dimensions, on x86-64 and
# on a 32-bit core under QEMU (a size_t of 32 bits: sizes that wrap there).
if out=$(scripts/rt_hostile.sh "$DEF/libatome.a" 2>&1); then ok "rt_hostile.c: $(echo "$out" | tr '\n' ';')"; else bad "rt_hostile.c: $out"; fi

echo "c_api: $pass passed, $fail failed"
[ "$fail" = 0 ]
