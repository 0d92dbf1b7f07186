#!/usr/bin/env python3
"""Engine flash per kernel, from linker maps: each kept input section of the
Rust object (function sections: one per function) is put in the bucket of
its module path (the first three components after `atome::`, e.g.
`kernels::q15::matvec`, `q15::arith`, `forward::layers`; code of `core`
inlined into the engine object is `core`).

    kernel_text.py OUT.md BUILD=CORE=FIRMWARE.map [BUILD=CORE=FIRMWARE.map ...]

Prints one markdown table per build: a row per bucket (.text bytes), a
column per core, the total .text (the same sum as mapsize.py's engine
text) and the engine's .rodata (the constant tables)."""
import collections
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mapsize  # noqa: E402


def demangle_path(sym):
    """The identifier path of a legacy-mangled Rust symbol (_ZN...E), else []."""
    m = re.search(r"_ZN(.*)", sym)
    if not m:
        return []
    s, i, out = m.group(1), 0, []
    while i < len(s) and s[i].isdigit():
        j = i
        while j < len(s) and s[j].isdigit():
            j += 1
        n = int(s[i:j])
        out.append(s[j:j + n])
        i = j + n
    return out


SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "src")
_defined = {}


def module_of_label(name):
    """The module (from its file under src/) that defines the assembly or
    exported function `name`."""
    if name not in _defined:
        _defined[name] = None
        pat = re.compile(r"(^|[\s\"])%s:|fn %s\b" % (re.escape(name), re.escape(name)))
        for root, _, files in sorted(os.walk(SRC)):
            for f in sorted(files):
                if f.endswith(".rs") and pat.search(open(os.path.join(root, f)).read()):
                    rel = os.path.relpath(os.path.join(root, f[:-3]), SRC).split(os.sep)
                    if rel[-1] == "mod":
                        rel = rel[:-1]
                    _defined[name] = "::".join(rel[:3])
                    break
            if _defined[name]:
                break
    return _defined[name]


def bucket(section):
    comps = demangle_path(section)
    if not comps:
        name = section.split(".")[-1] or section
        mod = module_of_label(name)
        return mod if mod else "(not Rust: %s)" % name[:40]
    # A trait impl: `_$LT$atome..forward..X$u20$as$u20$...$GT$`: its type's path.
    first = comps[0]
    if first.startswith("_$LT$") or first.startswith("$LT$"):
        inner = first.replace("_$LT$", "").replace("$LT$", "").split("$u20$")[0]
        comps = inner.split("..") + comps[1:]
    if comps and re.fullmatch(r"h[0-9a-f]{16}", comps[-1]):
        comps = comps[:-1]
    if not comps or comps[0] != "atome":
        return comps[0] if comps else "?"
    mods = comps[1:-1] if len(comps) > 2 else comps[1:]
    # Modules only: up to the first type (capitalized) or generic/impl part.
    keep = []
    for c in mods[:3]:
        if "$" in c or c[:1].isupper():
            break
        keep.append(c)
    return "::".join(keep) or "(crate root)"


def table(build, cores, maps):
    text = collections.defaultdict(lambda: collections.Counter())
    rodata = collections.Counter()
    totals = collections.Counter()
    for core, path in maps:
        def each(sec, kind, owner, size, core=core):
            if owner != "engine":
                return
            if kind == "text":
                name = sec[len(".text"):].lstrip(".")
                text[bucket(name)][core] += size
                totals[core] += size
            elif kind == "rodata":
                rodata[core] += size
        sums, _ = mapsize.parse(open(path).read(), each)
        assert sums["engine"]["text"] == totals[core], (path, sums["engine"]["text"], totals[core])
    rows = sorted(text.items())
    out = ["### %s build: engine .text per kernel (bytes)" % build, "",
           "| kernel | " + " | ".join(cores) + " |", "|---|" + "---:|" * len(cores)]
    for b, c in rows:
        out.append("| `%s` | " % b + " | ".join("{:,}".format(c[k]) if c[k] else "-" for k in cores) + " |")
    out.append("| **total .text** | " + " | ".join("**{:,}**".format(totals[k]) for k in cores) + " |")
    out.append("| .rodata (tables, constants) | " + " | ".join("{:,}".format(rodata[k]) for k in cores) + " |")
    return "\n".join(out) + "\n"


def main():
    dest, specs = sys.argv[1], sys.argv[2:]
    builds = collections.OrderedDict()
    for s in specs:
        build, core, path = s.split("=", 2)
        builds.setdefault(build, []).append((core, path))
    parts = [table(b, [c for c, _ in m], m) for b, m in builds.items()]
    text = "\n".join(parts)
    open(dest, "w").write(text)
    print(text)


if __name__ == "__main__":
    main()
