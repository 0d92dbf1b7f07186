#!/usr/bin/env bash
# Scenario S1 (944K model, predict_next on T[0:64), S=64) under callgrind with
# the ATOME01 blob and with its ATOME02 conversion, both states: instructions
# inside atome_predict_next and the ATOME02/ATOME01 ratio. Needs ../shared and
# the drivers scripts/callgrind.sh builds (it runs that first for S1 if absent).
set -euo pipefail
cd "$(dirname "$0")/.."
[ -f ../shared/models/atome_944k.bin ] || { echo "SKIP: needs ../shared"; exit 0; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
(cd cli && cargo build --release -q)
cli/target/release/atome convert ../shared/models/atome_944k.bin "$tmp/atome_944k.bin" --to atome02 >/dev/null
ls target/callgrind/scenarios_D256_DH64_K5_L8_S64_TOPK4_V256_lean_default >/dev/null 2>&1 || scripts/callgrind.sh --only S1 >/dev/null
echo "| state | ATOME01 ($(stat -c %s ../shared/models/atome_944k.bin) bytes) | ATOME02 ($(stat -c %s "$tmp/atome_944k.bin") bytes) | ratio |"
echo "|---|---:|---:|---:|"
for st in lean cached; do
  exe=target/callgrind/scenarios_D256_DH64_K5_L8_S64_TOPK4_V256_${st}_default
  n=()
  for dir in ../shared/models "$tmp"; do
    valgrind --tool=callgrind --callgrind-out-file="$tmp/cg" --toggle-collect=atome_predict_next "$exe" S1 "$dir" >/dev/null 2>&1
    n+=("$(awk '/^totals:/{print $2}' "$tmp/cg")")
  done
  awk -v s="$st" -v a="${n[0]}" -v b="${n[1]}" 'BEGIN{printf "| %s | %\047d | %\047d | %.3f |\n", s, a, b, b/a}'
done
