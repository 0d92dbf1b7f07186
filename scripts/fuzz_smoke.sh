#!/usr/bin/env bash
# Runs every cargo-fuzz target (fuzz/fuzz_targets: load, run, kernels,
# loaders, runtime) for a short time in each library configuration and exits non-zero
# on any crash, failed check, leak or timeout.
#
#   scripts/fuzz_smoke.sh                  # ~80 s: 5 targets x 2 configurations + 2 in q15, 6 s each, plus builds
#   FUZZ_TIME=900 scripts/fuzz_smoke.sh    # a long run: 900 s per target and configuration
#
# Environment:
#   FUZZ_TIME      seconds per target and configuration (default 6);
#                  FUZZ_TIME_<target> (e.g. FUZZ_TIME_load=600) overrides it for one
#                  target, FUZZ_TIME_<config>_<target> for one target in one configuration
#   FUZZ_CONFIGS   any of "default odd cached q15 q15odd" (default "default odd q15"):
#                  default is the library's default configuration (default.atome),
#                  odd is D=22 L=3 V=40 DH=6 K=3 TOP_K=2 S=16 (odd.atome,
#                  cls_odd.atomecl), cached is the default one with
#                  ATOME_STATE=cached, q15 the default one with ATOME_DTYPE=q15
#                  (the integer engine behind the C API, docs/Q15.md) and q15odd
#                  the odd one with ATOME_DTYPE=q15. The q15 configurations
#                  run only the targets whose calls reach the engine: run and
#                  runtime (load, loaders and kernels do not depend on the mode).
#   FUZZ_TARGETS   subset of "load run kernels loaders runtime"
#   FUZZ_SANITIZER address (default) or none
#   FUZZ_OUT       where logs, grown corpora and crash artifacts go (default: a temp dir)
# The seed corpora in fuzz/corpus are copied, never written to; one fuzzing
# process at a time (the machine has 2 cores shared with other work).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
fuzz="$root/fuzz"
time_per=${FUZZ_TIME:-6}
configs=${FUZZ_CONFIGS:-default odd q15}
targets=${FUZZ_TARGETS:-load run kernels loaders runtime}
san=${FUZZ_SANITIZER:-address}
out=${FUZZ_OUT:-$(mktemp -d /tmp/atome-fuzz.XXXXXX)}
mkdir -p "$out"

# Tools: a nightly toolchain and cargo-fuzz.
if ! rustup toolchain list | grep -q '^nightly'; then
    rustup toolchain install nightly --profile minimal
fi
if ! cargo fuzz --version >/dev/null 2>&1; then
    cargo install cargo-fuzz --locked
fi

cfg_env() {
    case "$1" in
    default) echo "" ;;
    odd) echo "ATOME_D_MODEL=22 ATOME_N_LAYERS=3 ATOME_VOCAB_SIZE=40 ATOME_D_HEAD=6 ATOME_KERNEL_SIZE=3 ATOME_TOP_K=2 ATOME_MAX_SEQ=16" ;;
    cached) echo "ATOME_STATE=cached" ;;
    q15) echo "ATOME_DTYPE=q15" ;;
    q15odd) echo "ATOME_DTYPE=q15 $(cfg_env odd)" ;;
    *) echo "unknown configuration $1" >&2; exit 2 ;;
    esac
}

status=0
total=0
summary=""
start=$(date +%s)
cd "$fuzz"
for cfg in $configs; do
    envs=$(cfg_env "$cfg")
    tdir="$fuzz/target/cfg-$cfg"
    echo "== building the fuzz targets ($cfg configuration, sanitizer $san)"
    env $envs cargo +nightly fuzz build -O -s "$san" --target-dir "$tdir" >"$out/build-$cfg.log" 2>&1 || {
        tail -30 "$out/build-$cfg.log"
        echo "fuzz build failed ($cfg)"
        exit 1
    }
    for t in $targets; do
        case "$cfg" in q15*) case "$t" in run|runtime) ;; *) continue ;; esac ;; esac
        work="$out/corpus-$cfg-$t"
        mkdir -p "$work" "$out/artifacts-$cfg-$t"
        cp -n "$fuzz/corpus/$t/"* "$work/" 2>/dev/null || true
        log="$out/$cfg-$t.log"
        tvar="FUZZ_TIME_$t"
        cvar="FUZZ_TIME_${cfg}_$t"
        secs=${!cvar:-${!tvar:-$time_per}}
        set +e
        env $envs cargo +nightly fuzz run -O -s "$san" --target-dir "$tdir" "$t" "$work" -- \
            -max_total_time="$secs" -timeout=20 -rss_limit_mb=4096 -dict="$fuzz/atome.dict" \
            -print_final_stats=1 -artifact_prefix="$out/artifacts-$cfg-$t/" >"$log" 2>&1
        rc=$?
        set -e
        execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
        execs=${execs:-0}
        total=$((total + execs))
        # libFuzzer also saves inputs slower than -report_slow_units (10 s)
        # there as slow-unit-*: reported, not failures (-timeout=20 is the
        # hang check, and a busy machine can stall a unit).
        slow=$(find "$out/artifacts-$cfg-$t" -name 'slow-unit-*' | wc -l)
        crashes=$(find "$out/artifacts-$cfg-$t" -type f ! -name 'slow-unit-*' | wc -l)
        [ "$slow" -eq 0 ] || echo "   $t ($cfg): $slow slow unit(s) kept in $out/artifacts-$cfg-$t (not a failure)"
        if [ $rc -ne 0 ] || [ "$crashes" -ne 0 ]; then
            status=1
            echo "!! $t ($cfg): exit $rc, $crashes artifact(s) in $out/artifacts-$cfg-$t"
            grep -E 'panicked|ERROR|SUMMARY|Timeout|timeout' "$log" | head -5 || true
        fi
        line=$(printf '%-8s %-8s %10s execs  exit %s  artifacts %s' "$cfg" "$t" "$execs" "$rc" "$crashes")
        echo "$line"
        summary="$summary$line"$'\n'
    done
done
end=$(date +%s)
echo "== fuzz summary ($((end - start)) s, logs in $out)"
printf '%s' "$summary"
echo "total executions: $total"
if [ $status -ne 0 ]; then
    echo "FUZZ FAILED"
else
    echo "fuzz: 0 crashes, 0 timeouts"
fi
exit $status
