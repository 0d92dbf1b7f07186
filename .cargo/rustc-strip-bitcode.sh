#!/bin/sh
# Cargo runs this in place of rustc for this package (.cargo/config.toml,
# build.rustc-workspace-wrapper): it runs rustc unchanged, then removes the
# embedded LLVM bitcode (.llvmbc/.llvmcmd sections) from the libatome.a that
# rustc wrote.
#
# Why: rustc's objects carry that bitcode, and so do the precompiled core and
# compiler_builtins objects it copies into every static library, whatever the
# flags (-C embed-bitcode=no only reaches our own object). A binutils with an
# older LLVM plugin installed (Debian's clang) then hands each object to that
# plugin, which fails, and GNU nm / arm-none-eabi-nm list no symbol at all.
# Nothing in the archive uses the bitcode: the C side links the machine code.
#
# The tool: rustup's llvm-objcopy (llvm-tools), else llvm-objcopy or GNU
# objcopy on PATH. Without any of them the build fails with a message.
set -e
rustc="$1"
"$@"

staticlib=0; name=""; extra=""; outdir=""; prev=""
for a in "$@"; do
    case "$prev" in
        --crate-type) [ "$a" = staticlib ] && staticlib=1 ;;
        --crate-name) name="$a" ;;
        --out-dir) outdir="$a" ;;
        -C) case "$a" in extra-filename=*) extra="${a#extra-filename=}" ;; esac ;;
    esac
    case "$a" in
        --crate-type=staticlib) staticlib=1 ;;
        -Cextra-filename=*) extra="${a#-Cextra-filename=}" ;;
        --out-dir=*) outdir="${a#--out-dir=}" ;;
    esac
    prev="$a"
done
[ "$staticlib" = 1 ] && [ "$name" = atome ] && [ -n "$outdir" ] || exit 0
lib="$outdir/lib$name$extra.a"
# No archive when a tool around rustc (Miri, check builds) emitted none.
[ -f "$lib" ] || exit 0

sysroot="$("$rustc" --print sysroot)"
host="$("$rustc" -vV | sed -n 's/^host: //p')"
tool=""
for t in "$sysroot/lib/rustlib/$host/bin/llvm-objcopy" llvm-objcopy objcopy; do
    if command -v "$t" >/dev/null 2>&1; then tool="$t"; break; fi
done
if [ -z "$tool" ]; then
    echo "error: no llvm-objcopy or objcopy to remove the LLVM bitcode from $lib" >&2
    echo "       (rustup component add llvm-tools, or install binutils)" >&2
    exit 1
fi
"$tool" --remove-section .llvmbc --remove-section .llvmcmd "$lib" "$lib.nobc"
mv -f "$lib.nobc" "$lib"
