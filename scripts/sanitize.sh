#!/usr/bin/env bash
# Memory-safety checks of the C API from C:
#  1. tests/c/stress.c and the C examples (c_examples/*.c) compiled with
#     -fsanitize=address,undefined (clang, else gcc) and linked with the host
#     library (target/release/libatome.a), then run;
#  2. the same programs built without sanitizers and run under valgrind
#     memcheck (--error-exitcode=1, definite leaks are errors): valgrind also
#     sees the library's own reads and writes (it is not instrumented for
#     ASan), on exactly-sized heap buffers.
# Runs in the default configuration and, for stress.c, in the odd one
# (D=22 L=3 V=40 DH=6 K=3 TOP_K=2 S=16; library in target/cfg/sanitize-odd)
# and the q15 one (the default configuration built with ATOME_DTYPE=q15, C
# side -DATOME_DTYPE_Q15=1: the integer engine behind the C API; stress.c
# and every example; library in target/cfg/q15, shared with tests/c_api.sh).
#
#   scripts/sanitize.sh        # about 1-2 minutes after the library builds
# Environment: STRESS_ITERS (ASan run, default 5000; half in q15), VALGRIND_ITERS
# (default 300; half in q15), SANITIZE_CONFIGS (default "default odd q15"), CC.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
tmp=$(mktemp -d /tmp/atome-sanitize.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

cc=${CC:-}
if [ -z "$cc" ]; then
    # clang when it can link a sanitized program (Debian's clang package
    # does not pull in its sanitizer runtimes: libclang-rt-N-dev), else gcc.
    cc=gcc
    if command -v clang >/dev/null; then
        echo 'int main(void) { return 0; }' > "$tmp/probe.c"
        if clang -fsanitize=address,undefined "$tmp/probe.c" -o "$tmp/probe" 2>/dev/null; then
            cc=clang
        else
            echo "clang cannot link -fsanitize=address (its runtime is missing): using gcc" >&2
        fi
    fi
fi
if ! command -v valgrind >/dev/null; then
    echo "valgrind missing: apt-get install -y valgrind" >&2
    exit 1
fi
iters=${STRESS_ITERS:-5000}
viters=${VALGRIND_ITERS:-300}
san="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:halt_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
vg="valgrind -q --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite --track-origins=yes"

status=0
fail() { echo "FAIL - $1"; status=1; }
pass() { echo "ok - $1"; }

cfg_env() {
    case "$1" in
    default) echo "" ;;
    odd) echo "ATOME_D_MODEL=22 ATOME_N_LAYERS=3 ATOME_VOCAB_SIZE=40 ATOME_D_HEAD=6 ATOME_KERNEL_SIZE=3 ATOME_TOP_K=2 ATOME_MAX_SEQ=16" ;;
    q15) echo "ATOME_DTYPE=q15" ;;
    esac
}
cfg_defs() {
    local e
    for e in $(cfg_env "$1"); do
        case "$e" in
        ATOME_DTYPE=q15) printf -- '-DATOME_DTYPE_Q15=1 ' ;;
        *) printf -- '-D%s ' "$e" ;;
        esac
    done
}

for cfg in ${SANITIZE_CONFIGS:-default odd q15}; do
    echo "== $cfg configuration"
    if [ "$cfg" = default ]; then
        cargo build --release --lib --quiet
        lib="$root/target/release/libatome.a"
    else
        # q15: the directory tests/c_api.sh and the suite's q15 cargo test stage build in too.
        tdir="$root/target/cfg/sanitize-$cfg"; [ "$cfg" = q15 ] && tdir="$root/target/cfg/q15"
        env $(cfg_env "$cfg") CARGO_TARGET_DIR="$tdir" cargo build --release --lib --quiet
        lib="$tdir/release/libatome.a"
    fi
    defs=$(cfg_defs "$cfg")
    inc="-I$root/include -I$root/c_examples"
    progs="stress"
    $cc -std=c99 -Wall -Wextra -O1 -g $san $defs $inc tests/c/stress.c "$lib" -lm -o "$tmp/stress-asan-$cfg"
    gcc -std=c99 -Wall -Wextra -O1 -g $defs $inc tests/c/stress.c "$lib" -lm -o "$tmp/stress-vg-$cfg"
    if [ "$cfg" = default ] || [ "$cfg" = q15 ]; then
        for ex in c_examples/*.c; do
            [ -e "$ex" ] || continue
            name=$(basename "$ex" .c)
            $cc -std=c99 -Wall -Wextra -O1 -g $san $defs $inc "$ex" "$lib" -lm -o "$tmp/$name-asan-$cfg"
            gcc -std=c99 -Wall -Wextra -O1 -g $defs $inc "$ex" "$lib" -lm -o "$tmp/$name-vg-$cfg"
            progs="$progs $name"
        done
        # Blobs for the examples, from the stress generator (no shared/ needed).
        "$tmp/stress-vg-$cfg" --write lm "$tmp/lm.atome"
        "$tmp/stress-vg-$cfg" --write cl "$tmp/cl.atomecl"
    fi
    for kind in asan vg; do
        if [ $kind = asan ]; then pre=""; n=$iters; what="ASan+UBSan"; else pre="$vg"; n=$viters; what="valgrind"; fi
        # The q15 configuration repeats the default one's calls on the other
        # engine: half the iterations keep its cost near a minute.
        [ "$cfg" = q15 ] && n=$(( (n + 1) / 2 ))
        for p in $progs; do
            exe="$tmp/$p-$kind-$cfg"
            case $p in
            stress) args=("$n" "0x5eed$((RANDOM))") ;;
            logits) args=("$tmp/lm.atome" 1 2 3 -4 99999 255) ;;
            generate) args=(--max 8 "Hello") ;;
            classify) args=("$tmp/cl.atomecl" "some text") ;;
            # The runtime API in the mode the build does not run at compile
            # time: q15 cached in the float build, float lean in the q15 one.
            any_model) if [ "$cfg" = q15 ]; then args=(--dims 256,64,4,16,5,4,32 "$tmp/lm.atome" "Hello" 8)
                       else args=(--q15 --cached --dims 256,64,4,16,5,4,32 "$tmp/lm.atome" "Hello" 8); fi ;;
            *) args=() ;;
            esac
            t0=$(date +%s)
            if $pre "$exe" "${args[@]}" >"$tmp/out" 2>&1; then
                pass "$p ($cfg, $what, ${args[*]}) $(( $(date +%s) - t0 )) s"
            else
                fail "$p ($cfg, $what, ${args[*]})"
                tail -30 "$tmp/out"
            fi
            # A run with the bundled generate model too, and the example's error paths.
            if [ "$p" = generate ] || [ "$p" = logits ] || [ "$p" = classify ] || [ "$p" = any_model ]; then
                for bad in "/nonexistent" "$tmp/out"; do
                    $pre "$exe" "$bad" 1 >/dev/null 2>"$tmp/err" || true
                    if grep -qE 'ERROR: AddressSanitizer|runtime error|Invalid (read|write)|uninitialised' "$tmp/err"; then
                        fail "$p ($cfg, $what) on a bad argument $bad"
                        tail -20 "$tmp/err"
                    elif grep -qE 'ERROR: LeakSanitizer|definitely lost' "$tmp/err"; then
                        # A buffer not freed before exit(1) on an error path: reported, not fatal.
                        echo "warn - $p ($cfg, $what) leaks on its error path ($bad): $(grep -m1 -oE '[0-9,]+ bytes in [0-9]+ blocks are definitely lost|Direct leak of [0-9]+ byte' "$tmp/err")"
                    fi
                done
            fi
        done
    done
done
if [ $status -eq 0 ]; then
    echo "sanitize: 0 errors (ASan+UBSan and valgrind)"
fi
exit $status
