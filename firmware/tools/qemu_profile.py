#!/usr/bin/env python3
"""Instructions per function of an Arm firmware run under QEMU.

    qemu_profile.py FIRMWARE.elf BOARD [TOP]

BOARD is a QEMU Arm machine (mps2-an385, microbit, ...) or riscv-virt (the
RISC-V bench board: qemu-system-riscv32 -M virt -bios none). Runs `qemu-system-arm -M BOARD ... -d in_asm,exec,nochain` (every executed
translation block logged, no chaining so none is missed), counts the
guest instructions of each executed block and sums them per function
symbol (from arm-none-eabi-nm). The whole run is counted (for the bench
firmwares: the timed call and what follows it), so read shares, not totals.
QPROF_BLOCKS=NAME also lists the hottest blocks of the functions whose
symbol contains NAME; QPROF_CALLERS=NAME counts the entries into those
functions by the function that ran just before (their callers, for a
library routine called from many places). The log is large (about 2.5 GB for 75M instructions) and is removed after.
"""
import bisect
import collections
import os
import re
import subprocess
import sys
import tempfile


def main(elf, board, top):
    syms = []
    riscv = board.startswith("riscv-")
    nm = subprocess.run(["llvm-nm" if riscv else "arm-none-eabi-nm", "-n", "-S", "--defined-only", elf], capture_output=True, text=True).stdout
    for line in nm.splitlines():
        p = line.split()
        # Mapping symbols ($x, $t, $d) and local labels (.L0, which llvm-nm
        # lists for RISC-V) are not functions: their code is the one before.
        if len(p) >= 4 and p[2] in "tTwW" and not p[3].startswith(("$", ".L")):
            syms.append((int(p[0], 16), p[3]))
    syms.sort()
    addrs = [a for a, _ in syms]
    fd, log = tempfile.mkstemp(suffix=".qemu.log")
    os.close(fd)
    try:
        qemu = ["qemu-system-riscv32", "-M", "virt", "-bios", "none"] if riscv else ["qemu-system-arm", "-M", board]
        subprocess.run(qemu + ["-nographic", "-monitor", "none", "-serial", "none",
                        "-semihosting-config", "enable=on,target=native", "-kernel", elf,
                        "-d", "in_asm,exec,nochain", "-D", log], stdout=subprocess.DEVNULL, timeout=3600)
        size = {}
        cur = None
        counts = collections.Counter()
        # (previous block, block) pairs, for QPROF_CALLERS.
        edges = collections.Counter()
        prev = None
        want_callers = os.environ.get("QPROF_CALLERS")
        with open(log, errors="replace") as f:
            for line in f:
                if line.startswith("IN:"):
                    cur = None
                    continue
                m = re.search(r"Trace \d+: 0x[0-9a-f]+ \[[0-9a-f]+/([0-9a-f]+)/", line)
                if m:
                    pc = int(m.group(1), 16)
                    counts[pc] += 1
                    if want_callers:
                        edges[(prev, pc)] += 1
                    prev = pc
                    cur = None
                    continue
                m = re.match(r"0x([0-9a-f]+):\s", line)
                if m:
                    if cur is None:
                        cur = int(m.group(1), 16)
                        size[cur] = 0
                    size[cur] += 1
    finally:
        os.unlink(log)
    per = collections.Counter()
    for a, c in counts.items():
        i = bisect.bisect_right(addrs, a) - 1
        per[syms[i][1] if i >= 0 else "?"] += c * size.get(a, 0)
    total = sum(per.values())
    print("total %d instructions" % total)
    for name, c in per.most_common(top):
        print("%12d %5.1f%%  %s" % (c, 100 * c / total, name))
    # QPROF_BLOCKS=substring: the hottest translation blocks of the
    # functions whose symbol contains it (start address, executions,
    # instructions per execution), to read beside objdump.
    want = os.environ.get("QPROF_BLOCKS")
    if want:
        blocks = []
        for a, c in counts.items():
            i = bisect.bisect_right(addrs, a) - 1
            if i >= 0 and want in syms[i][1]:
                blocks.append((c * size.get(a, 0), a, c, size.get(a, 0), syms[i][1]))
        for w, a, c, n, name in sorted(blocks, reverse=True)[:top]:
            print("%12d  0x%08x  x%-8d %3d insns  %s" % (w, a, c, n, name[-40:]))
    if want_callers:
        entries = {a for a, name in syms if want_callers in name}
        calls = collections.Counter()
        for (p, a), c in edges.items():
            # (Thumb: the symbol's address may have its low bit set.)
            if a in entries or a | 1 in entries:
                i = bisect.bisect_right(addrs, p) - 1 if p is not None else -1
                calls[syms[i][1] if i >= 0 else "?"] += c
        print("entries into %s by caller:" % want_callers)
        for name, c in calls.most_common(top):
            print("%12d  %s" % (c, name))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 20)
