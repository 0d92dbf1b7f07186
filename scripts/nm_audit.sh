#!/usr/bin/env bash
# Symbol audit of one libatome.a as a firmware team's CI would run it, with a
# given nm (GNU nm, arm-none-eabi-nm, llvm-nm):
#  - no member carries embedded LLVM bitcode (.llvmbc/.llvmcmd), which makes
#    binutils hand the object to its LLVM plugin and list nothing;
#  - `NM -g --defined-only` reads the archive without a message on stderr;
#  - every function include/atome.h declares is defined (T) in it.
#
#   scripts/nm_audit.sh NM ARCHIVE
#
# Prints one line; exits non-zero on any failure.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
nm=$1 lib=$2
tag="$(basename "$nm") ${lib#"$root"/}"
fail() { echo "FAIL $tag: $*"; exit 1; }
[ -f "$lib" ] || fail "no such archive"

# readelf reads the sections of an ELF object of any machine.
bc=$(readelf -SW "$lib" 2>/dev/null | grep -cE ' \.llvm(bc|cmd) ' || true)
[ "$bc" = 0 ] || fail "$bc embedded LLVM bitcode sections (.llvmbc/.llvmcmd)"

# The functions of the C API: every non-static, non-extern declaration in the
# header (the generated prototypes start at column 0 with their return type).
funcs=$(sed -nE '/^(static|extern|#)/d; s/^[A-Za-z_][A-Za-z0-9_ ]*[ *](atome_[a-z0-9_]+)\(.*/\1/p' "$root/include/atome.h" | sort -u)
n=$(echo "$funcs" | grep -c . || true)
[ "$n" -ge 12 ] || fail "found only $n functions in include/atome.h (parse error?)"

err=$(mktemp); trap 'rm -f "$err"' EXIT
syms=$("$nm" -g --defined-only "$lib" 2>"$err") || fail "$nm exited with an error: $(head -3 "$err")"
[ -s "$err" ] && fail "$nm complained: $(sort -u "$err" | head -3)"
missing=""
for f in $funcs; do
    grep -qE "^[0-9a-f]+ T $f\$" <<< "$syms" || missing="$missing $f"
done
[ -z "$missing" ] || fail "not defined:$missing"
echo "ok $tag: no bitcode; all $n exported functions defined"
