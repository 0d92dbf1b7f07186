#!/usr/bin/env python3
"""The q15 generation table of scripts/cortex_bench.sh: reads OUT/q15gen.txt
(scenario|state|core|run name|status) and the runs' GEN lines, prints the
markdown table and appends problems to OUT/bad.json. Limits: S4-like whole
call, S2-like per generated token (the whole call / tokens); a miss is a
TARGET problem until met. Tokens must be the same on every core and state."""
import json, os, re, sys

LIM = {("S4", "M0"): 16.5e6, ("S4", "M3"): 10e6, ("S4", "M4F"): 7.0e6,
       ("S2", "M0"): 3.6e6, ("S2", "M3"): 2.2e6, ("S2", "M4F"): 1.6e6, ("S2", "RV32IMC"): 3.2e6}


def main(out):
    bad = json.load(open(os.path.join(out, "bad.json")))
    rows = [l.strip().split("|") for l in open(os.path.join(out, "q15gen.txt")) if l.strip()]
    toks = {}
    if rows:
        print()
        print("q15 generation (QEMU -icount shift=0; S4-like: toy model, S=64, T[90:98), max_tokens 64; "
              "S2-like: 944K model, S=64, T[64:80), max_tokens 64; the whole atome_generate call):")
        print()
        print("| scenario | core | state | instructions | tokens | per generated token | peak stack | limit |")
        print("|---|---|---|---:|---:|---:|---:|---|")
    for sc, state, label, name, status in rows:
        tag = "%s-%s-q15-%s" % (sc, label, state)
        if status != "ok":
            bad.append("q15 generation %s failed" % tag)
            continue
        txt = open(os.path.join(out, name + ".out")).read()
        m = re.search(r"GEN ticks (\d+) insns_x10_per_tick (\d+) count (-?\d+) stack (\d+)", txt)
        tk = re.search(r"TOKENS(.*)", txt)
        if not m or not tk:
            bad.append("q15 generation %s: no result" % tag)
            continue
        n = int(m.group(1)) * int(m.group(2)) // 10
        cnt, st = int(m.group(3)), int(m.group(4))
        per = n // max(cnt, 1)
        toks.setdefault(sc, {})[(label, state)] = tk.group(1).strip()
        lim = LIM.get((sc, label)) if state == "cached" else None
        fig = n if sc == "S4" else per
        limtxt = "-"
        if lim is not None:
            limtxt = "%s <= %s%s" % (tag, "{:,}".format(int(lim)), "" if fig <= lim else " (not met)")
        print("| %s | %s | %s | {:,} | %d | {:,} | %d | %s |".format(n, per) % (sc, label, state, cnt, st, limtxt))
        if lim is not None and fig > lim:
            what = "" if sc == "S4" else " per generated token"
            bad.append("TARGET: %s: {:,} instructions%s (> {:,})".format(fig, int(lim)) % (tag, what))
        if st > 2048:
            bad.append("TARGET: peak stack %d bytes in the q15 generation %s (> 2 KiB)" % (st, tag))
    for sc, d in sorted(toks.items()):
        same = len(set(d.values())) == 1
        print()
        print("%s-like q15 tokens identical on every core and state run: %s (%d runs)." % (sc, "yes" if same else "NO", len(d)))
        if not same:
            bad.append("%s-like q15 generation: tokens differ between cores or states" % sc)
    json.dump(bad, open(os.path.join(out, "bad.json"), "w"))


if __name__ == "__main__":
    main(sys.argv[1])
