#!/usr/bin/env python3
"""Flash/RAM taken by libatome.a's objects in a linked firmware, from the
linker map (GNU ld -Map or lld -Map).

    mapsize.py FIRMWARE.map [--json]

Input sections kept in the output are summed per archive member class:
  engine    the Rust crate's own object (atome-*.o: the engine, core and
            everything LTO merged into it)
  builtins  compiler_builtins-*.o (soft-float routines, memcpy, ...)
  other     everything not from libatome.a (start-up code, test harness,
            blobs, libgcc)
and per kind: text (.text*), rodata (.rodata*, .ARM.exidx*), data, bss.
"""
import json
import re
import sys

KINDS = (("text", (".text",)), ("rodata", (".rodata", ".ARM.exidx", ".ARM.extab", ".srodata")),
         ("data", (".data", ".sdata")), ("bss", (".bss", ".sbss", "COMMON")))


def kind_of(sec):
    for k, prefixes in KINDS:
        if any(sec == p or sec.startswith(p + ".") or sec.startswith(p + "_") for p in prefixes):
            return k
    return None


def owner_of(path):
    m = re.search(r"libatome\.a\((.+?)\)", path)
    if not m:
        return "other", None
    member = m.group(1)
    if member.startswith("compiler_builtins"):
        return "builtins", member
    return "engine", member


def parse(text, each=None):
    """The sums and per-member sums; `each(section, kind, owner, size)` is
    also called for every kept input section (kernel_text.py's detail)."""
    sums = {o: {k: 0 for k, _ in KINDS} for o in ("engine", "builtins", "other")}
    members = {}

    def add(sec, size, path):
        k = kind_of(sec)
        if k is None or size == 0:
            return
        o, member = owner_of(path)
        if each:
            each(sec, k, o, size)
        sums[o][k] += size
        if member:
            members.setdefault(member, {kk: 0 for kk, _ in KINDS})[k] += size

    lines = text.splitlines()
    if lines and re.match(r"^\s*VMA\s+LMA\s+Size", lines[0]):      # lld
        for ln in lines[1:]:
            m = re.match(r"^\s*[0-9a-f]+\s+[0-9a-f]+\s+([0-9a-f]+)\s+\d+\s+(.+?):\((\S+)\)\s*$", ln)
            if m:
                add(m.group(3), int(m.group(1), 16), m.group(2))
        return sums, members
    try:                                                              # GNU ld
        start = next(i for i, ln in enumerate(lines) if ln.startswith("Linker script and memory map"))
    except StopIteration:
        start = 0
    pending = None
    for ln in lines[start:]:
        m = re.match(r"^ (\.\S+|COMMON)\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+(\S.*)$", ln)
        if m:
            add(m.group(1), int(m.group(3), 16), m.group(4))
            pending = None
            continue
        m = re.match(r"^ (\.\S+|COMMON)\s*$", ln)
        if m:
            pending = m.group(1)
            continue
        m = re.match(r"^\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+(\S.*)$", ln)
        if m and pending:
            add(pending, int(m.group(2), 16), m.group(3))
        pending = None
    return sums, members


def main():
    sums, members = parse(open(sys.argv[1]).read())
    if "--json" in sys.argv[2:]:
        print(json.dumps({"sums": sums, "members": members}))
        return
    for o, d in sums.items():
        print("%-9s text %7d  rodata %7d  data %6d  bss %8d" % (o, d["text"], d["rodata"], d["data"], d["bss"]))


if __name__ == "__main__":
    main()
