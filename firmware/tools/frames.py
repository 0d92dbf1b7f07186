#!/usr/bin/env python3
"""Largest stack frames in a linked Arm ELF, from its disassembly.

    frames.py OBJDUMP ELF [N]
    frames.py OBJDUMP ELF --path FUNCTION

For every function, the prologue's push/vpush/stmdb plus `sub sp` immediates
(register-sized `sub sp, rX` is reported as dynamic). Prints the N biggest,
demangled. With --path, the deepest chain of direct calls (bl, and b to
another function's start: a tail call) from FUNCTION, frame by frame;
indirect calls are not followed. A static figure: the painted-stack
measurement is the real peak; this says which function is deep.
"""
import re
import subprocess
import sys


def main():
    objdump, elf = sys.argv[1], sys.argv[2]
    root = sys.argv[4] if len(sys.argv) > 4 and sys.argv[3] == "--path" else None
    n = int(sys.argv[3]) if len(sys.argv) > 3 and root is None else 8
    out = subprocess.run([objdump, "-d", "-C", "--no-show-raw-insn", elf],
                         capture_output=True, text=True).stdout
    # literal pool words (Thumb-1 frames above 508 bytes load their size from one)
    words = {}
    for ln in out.splitlines():
        m = re.match(r"^\s+([0-9a-f]+):\s+\.word\s+0x([0-9a-f]+)", ln)
        if m:
            words[int(m.group(1), 16)] = int(m.group(2), 16)
    frames = []
    name, count, size, dyn = None, 0, 0, False
    regs_val = {}
    calls = {}
    for ln in out.splitlines():
        m = re.match(r"^[0-9a-f]+ <(.+)>:$", ln)
        if m:
            if name:
                frames.append((size, name, dyn))
            name, count, size, dyn = m.group(1), 0, 0, False
            regs_val = {}
            calls[name] = set()
            continue
        if name is None:
            continue
        m = re.match(r"^\s+[0-9a-f]+:\s+(bl|blx|b|b\.w|b\.n|jal|j|tail|call)\s+[0-9a-f]+ <([^>+]+)>", ln)
        if m and m.group(2) != name:
            calls[name].add(m.group(2))
        if count > 12:
            continue
        m = re.match(r"^\s+[0-9a-f]+:\s+(\S+)\s*(.*)$", ln)
        if not m:
            continue
        count += 1
        op, args = m.group(1), m.group(2)
        if op in ("push", "push.w", "stmdb", "stmdb.w") and ("sp!" in args or op.startswith("push")):
            regs = re.search(r"\{(.*)\}", args)
            if regs:
                k = 0
                for r in regs.group(1).split(","):
                    r = r.strip()
                    mm = re.match(r"r(\d+)-r(\d+)", r)
                    k += int(mm.group(2)) - int(mm.group(1)) + 1 if mm else 1
                size += 4 * k
        elif op.startswith("vpush") or (op.startswith("vstmdb") and "sp!" in args):
            regs = re.search(r"\{(.*)\}", args)
            if regs:
                k = 0
                for r in regs.group(1).split(","):
                    mm = re.match(r"\s*([sd])(\d+)-[sd](\d+)", r)
                    if mm:
                        k += (int(mm.group(3)) - int(mm.group(2)) + 1) * (2 if mm.group(1) == "d" else 1)
                    else:
                        k += 2 if r.strip().startswith("d") else 1
                size += 4 * k
        elif op.startswith("sub") and re.match(r"sp,\s*(sp,\s*)?#", args):
            imm = re.search(r"#(\d+)", args)
            if imm:
                size += int(imm.group(1))
        elif op.startswith("ldr") and "[pc" in args:
            mm = re.match(r"(r\d+),.*@ \(?([0-9a-f]+)", args)
            if mm and int(mm.group(2), 16) in words:
                regs_val[mm.group(1)] = words[int(mm.group(2), 16)]
        elif (op.startswith("sub") or op.startswith("add")) and re.match(r"sp,\s*(sp,\s*)?r\d+", args):
            reg = re.search(r"(r\d+)\s*$", args).group(1)
            if reg in regs_val:
                v = regs_val[reg]
                v = v - (1 << 32) if v >= (1 << 31) else v
                size += -v if op.startswith("add") else v
            else:
                dyn = True
    if name:
        frames.append((size, name, dyn))
    if root is not None:
        size_of = {nm: sz for sz, nm, _ in frames}
        best = {}

        def deepest(f, seen):
            if f in best:
                return best[f]
            r = (size_of.get(f, 0), [f])
            for c in calls.get(f, ()):
                if c in seen:
                    continue
                d = deepest(c, seen | {f})
                if size_of.get(f, 0) + d[0] > r[0]:
                    r = (size_of.get(f, 0) + d[0], [f] + d[1])
            best[f] = r
            return r
        total, chain = deepest(root, frozenset())
        for f in chain:
            print("%6d  %s" % (size_of.get(f, 0), f[:110]))
        print("%6d  total (direct calls)" % total)
        return
    frames.sort(reverse=True)
    for size, name, dyn in frames[:n]:
        print("%6d  %s%s" % (size, name[:110], "  (+ dynamic)" if dyn else ""))


if __name__ == "__main__":
    main()
