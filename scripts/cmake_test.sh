#!/usr/bin/env bash
# Tests of the CMake integration (cmake/atome.cmake):
#   1. tests/cmake/host: a host project building c_examples/logits.c against
#      atome::atome, run through CTest and directly;
#   2. tests/cmake/cortex_m3: a Cortex-M3 firmware (arm-none-eabi toolchain
#      file, newlib-nano + rdimon semihosting) built with the same module,
#      run under qemu-system-arm -M mps2-an385.
# Both predict the byte after T[10:42] with default.atome; the firmware's
# 256 logit bit patterns must equal the host program's.
#   3. the Cortex-M3 project again with ATOME_FEATURES=system-libm: the link
#      must take newlib's expf/tanhf (not compiler_builtins' weak copies).
set -euo pipefail
cd "$(dirname "$0")/.."
source firmware/fw.sh

T0=$(fw_now)
fw_ensure_tools apt rust cmake
OUT="$FW_BUILD/cmake"
rm -rf "$OUT"; mkdir -p "$OUT"
BLOB="$FW_MODELS/default.atome"
[ -f "$BLOB" ] || fw_die "missing $BLOB (set ATOME_SHARED)"
TOKS="$(python3 -c 'T=b"Once upon a time, there was a little girl named Lily. She loved to play outside in the sunshine. One day, she saw a big red ball in the park. She ran to get it, but a dog took it first."; print(" ".join(str(b) for b in T[10:42]))')"

echo "== host project (cmake + ctest)"
cmake -S tests/cmake/host -B "$OUT/host" -DATOME_TEST_BLOB="$BLOB" -DATOME_TEST_TOKENS="$TOKS" > "$OUT/host-configure.log" 2>&1 \
    || { cat "$OUT/host-configure.log"; fw_die "host configure failed"; }
cmake --build "$OUT/host" -j 2 > "$OUT/host-build.log" 2>&1 || { cat "$OUT/host-build.log"; fw_die "host build failed"; }
(cd "$OUT/host" && ctest --output-on-failure) || fw_die "host ctest failed"
# shellcheck disable=SC2086
"$OUT/host/logits" --hex "$BLOB" $TOKS > "$OUT/host.txt" 2> "$OUT/host.err"
echo "host: $(cat "$OUT/host.err")"

echo "== Cortex-M3 project (arm-none-eabi toolchain file, newlib-nano, qemu mps2-an385)"
cmake -S tests/cmake/cortex_m3 -B "$OUT/cm3" -DCMAKE_TOOLCHAIN_FILE="$FW_ROOT/tests/cmake/arm-none-eabi-cortex-m3.cmake" \
    -DATOME_TEST_BLOB="$BLOB" > "$OUT/cm3-configure.log" 2>&1 || { cat "$OUT/cm3-configure.log"; fw_die "cm3 configure failed"; }
grep "atome:" "$OUT/cm3-configure.log" | sed 's/^-- /  /'
cmake --build "$OUT/cm3" -j 2 > "$OUT/cm3-build.log" 2>&1 || { cat "$OUT/cm3-build.log"; fw_die "cm3 build failed"; }
fw_qemu mps2-an385 "$OUT/cm3/firmware.elf" 120 > "$OUT/cm3.out" 2>&1 || { cat "$OUT/cm3.out"; fw_die "firmware run failed"; }
grep -v '^next ' "$OUT/cm3.out" > "$OUT/cm3.txt" || true
echo "firmware: $(grep '^next ' "$OUT/cm3.out")"
arm-none-eabi-size "$OUT/cm3/firmware.elf" | sed 's/^/  /'

pass=0; fail=0
if [ "$(wc -l < "$OUT/host.txt")" = 256 ] && cmp -s "$OUT/host.txt" "$OUT/cm3.txt" \
   && [ "$(grep '^next ' "$OUT/cm3.out")" = "$(cat "$OUT/host.err")" ]; then
    pass=$((pass + 1)); echo "PASS: Cortex-M3 firmware logits == host logits (256 bit patterns)"
else
    fail=$((fail + 1)); echo "FAIL: Cortex-M3 firmware and host differ"; diff "$OUT/host.txt" "$OUT/cm3.txt" | head -5
fi
pass=$((pass + 1))   # the ctest above

echo "== Cortex-M3 project with ATOME_FEATURES=system-libm (newlib's expf/tanhf must be linked)"
cmake -S tests/cmake/cortex_m3 -B "$OUT/cm3-libm" -DCMAKE_TOOLCHAIN_FILE="$FW_ROOT/tests/cmake/arm-none-eabi-cortex-m3.cmake" \
    -DATOME_TEST_BLOB="$BLOB" -DATOME_FEATURES=system-libm > "$OUT/cm3-libm-configure.log" 2>&1 \
    || { cat "$OUT/cm3-libm-configure.log"; fw_die "cm3 (system-libm) configure failed"; }
cmake --build "$OUT/cm3-libm" -j 2 > "$OUT/cm3-libm-build.log" 2>&1 || { cat "$OUT/cm3-libm-build.log"; fw_die "cm3 (system-libm) build failed"; }
src="$(awk '/^[^ ]/ {m=$0} /\((expf|tanhf)\)$/ {print m}' "$OUT/cm3-libm/firmware.map" | grep -oE "libm\.a|compiler_builtins" | sort -u | tr '\n' ' ' || true)"
if [ "$src" = "libm.a " ] && fw_qemu mps2-an385 "$OUT/cm3-libm/firmware.elf" 120 > "$OUT/cm3-libm.out" 2>&1 \
   && grep -q '^next ' "$OUT/cm3-libm.out"; then
    pass=$((pass + 1)); echo "PASS: expf/tanhf from newlib's libm.a; firmware ran: $(grep '^next ' "$OUT/cm3-libm.out")"
else
    fail=$((fail + 1)); echo "FAIL: system-libm firmware: expf/tanhf from '${src}', run output: $(tail -2 "$OUT/cm3-libm.out" 2>/dev/null)"
fi
echo
echo "cmake_test took $(( $(fw_now) - T0 ))s"
echo "cmake_test: $pass passed, $fail failed"
[ "$fail" = 0 ]
