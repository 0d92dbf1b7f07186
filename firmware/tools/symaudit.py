#!/usr/bin/env python3
"""Symbol audit of a libatome.a (used by scripts/cross.sh).

    symaudit.py NM LIBATOME.A [--system-libm]

Checks, over all members of the archive:
  * every docs/ARITHMETIC.md function is a defined global function;
  * the symbols left undefined once the archive's own definitions are
    subtracted (what the final firmware link must supply) are only
    memcpy/memset/memmove/memcmp/bcmp, compiler builtins (__aeabi_*, the
    compiler-rt names __addsf3, __fixsfsi, __floatsisf, ...), and expf/tanhf
    only with --system-libm;
  * nothing, defined or undefined, is a heap, stdio/file, socket or OS call.
Prints one line per finding and a summary; exit status 1 on any failure.
"""
import re
import subprocess
import sys

REQUIRED = """atome_init atome_load atome_predict_next atome_get_logits atome_generate
atome_classifier_load atome_classify atome_ternary_matvec atome_layer_norm
atome_causal_conv atome_ssm_forward atome_sparse_attn""".split()

MEM = {"memcpy", "memset", "memmove", "memcmp", "bcmp"}
BUILTIN = re.compile(r"^__(aeabi_\w+|\w+[0-9]|float\w+|fix\w+|atomic_\w+|sync_\w+|gnu_\w+)$")
LIBM = {"expf", "tanhf"}

FORBIDDEN = set("""
malloc calloc realloc free aligned_alloc posix_memalign memalign valloc pvalloc
_malloc_r _calloc_r _realloc_r _free_r sbrk _sbrk brk
fopen fclose fread fwrite fseek ftell fflush fprintf printf sprintf snprintf vprintf
vfprintf vsnprintf puts fputs putchar fputc putc getchar fgets fgetc scanf sscanf perror
stdin stdout stderr _impure_ptr __errno __errno_location errno
socket connect bind listen accept send recv sendto recvfrom getaddrinfo
open close read write lseek mmap munmap ioctl fcntl stat fstat unlink
_open _close _read _write _lseek _fstat _isatty isatty _kill _getpid getpid
exit _exit abort raise signal kill atexit getenv time clock gettimeofday nanosleep sleep
pthread_create pthread_mutex_lock dlopen dlsym syscall
__rust_alloc __rust_dealloc __rust_realloc __rust_alloc_zeroed rust_eh_personality
_Unwind_Resume _Unwind_RaiseException __cxa_begin_catch
""".split())


def nm(tool, lib, *flags):
    r = subprocess.run([tool, *flags, lib], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("nm failed on %s: %s" % (lib, r.stderr.strip()))
    return r.stdout


def main():
    tool, lib = sys.argv[1], sys.argv[2]
    system_libm = "--system-libm" in sys.argv[3:]
    defined = {}
    undefined = set()
    for line in nm(tool, lib, "--no-sort").splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1].isupper():       # defined global (T D R B W V A C ...)
            defined.setdefault(parts[2], parts[1])
        elif len(parts) == 2 and parts[0] in ("U", "w", "v"):  # undefined (strong or weak)
            undefined.add(parts[1])
    problems = []
    for f in REQUIRED:
        if defined.get(f) not in ("T", "W"):
            problems.append("missing exported function %s (nm type %s)" % (f, defined.get(f)))
    unresolved = sorted(undefined - set(defined))
    for s in unresolved:
        ok = s in MEM or (BUILTIN.match(s) and s not in FORBIDDEN) or (system_libm and s in LIBM)
        if not ok:
            problems.append("undefined symbol outside the allowlist: %s" % s)
    for s in sorted((set(defined) | undefined) & FORBIDDEN):
        problems.append("forbidden symbol present: %s" % s)
    if not system_libm:
        for s in sorted(undefined & LIBM):
            problems.append("%s referenced without --features system-libm" % s)
    exports = sorted(n for n, t in defined.items() if n.startswith("atome_") and t == "T")
    for p in problems:
        print("  FAIL " + p)
    print("  %s: %d exported atome_* functions, unresolved: %s" % (
        "ok" if not problems else "FAILED", len(exports), " ".join(unresolved) or "none"))
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
