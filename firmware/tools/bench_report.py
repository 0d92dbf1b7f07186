#!/usr/bin/env python3
"""Tables and target checks of scripts/cortex_bench.sh.

Reads OUT/rows.txt (build|core|target|board|status|reference ticks), the
firmware outputs and linker maps, and OUT/gen.txt (the S4-like generation
runs); prints markdown tables and writes the problems found to OUT/bad.json
("LIMIT: ..." for a broken .text, stack or instruction limit: the device
targets of BENCHMARKS.md#targets, named as there and all met, so that
any of them fails the run even with --report-only; "TARGET: ..." is
kept for a target not met yet, which --report-only only reports)."""
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mapsize  # noqa: E402

# S3-M4F-f32, S3-M7-f32, S3-M33-f32 (the default build on the FPU cores), checked here;
# the soft-float cores' figures (M0, M3, RV32) are printed, not checked.
S3_MAX = {"M4F": 6.0e6, "M7": 6.0e6, "M33": 6.0e6}
# Engine .text limits on thumbv7em-none-eabihf, per build: S3-M4F-f32-text, S3-M4F-size-first-text.
TEXT_MAX = {"default": 24 * 1024, "size-first": 8 * 1024}
# S3-M0-q15, S3-M3-q15, S3-M4F-q15 (20x / 20x / 8x fewer than the reference).
Q15_S3_MAX = {"M0": 6.76e6, "M3": 4.12e6, "M4F": 2.99e6}
# S3-<core>-q15-text: engine .text of the default q15 build, 32 KiB on every core.
Q15_TEXT_MAX = {c: 32 * 1024 for c in ("M0", "M3", "M4 (soft float)", "M4F", "M7", "M33", "RV32IMC", "RV32IMAC")}
# S3-M0-q15-size-first, S3-M3-q15-size-first (8x fewer than the reference).
Q15SF_S3_MAX = {"M0": 16.9e6, "M3": 10.3e6}
# S3-<core>-q15-size-first-text: engine .text of the q15 size-first build
# (about 3% above today's: a change that grows it shows here).
Q15SF_TEXT_MAX = {"M0": 20800, "M3": 20650, "RV32IMC": 28450, "M4F": 20300}
# S3-all-q15-size-first-stack.
Q15SF_STACK_MAX = 1130
BUILD_NAMES = {"default": "default (device kernels)", "size-first": "size-first (cargo feature size-first)",
               "q15": "q15 (ATOME_DTYPE=q15: integer activations, docs/Q15.md)",
               "q15-size-first": "q15 size-first (ATOME_DTYPE=q15 and the cargo feature size-first)"}
STACK_MAX = 2048
GEN_CACHED_MAX = 15e6
# The reference engine's S4 generation on M4F (blob at an
# address 1 mod 4, the only placement where it runs there).
GEN_REF = 1490.6e6


def main(out):
    rows = [l.rstrip("\n").split("|") for l in open(os.path.join(out, "rows.txt")) if l.strip()]
    bad = []
    logits = {}
    per_core = {}  # (label, board) -> {build: (instructions, .text, peak stack)}, plus "ref"
    for build in ("default", "size-first", "q15", "q15-size-first"):
        if not any(r[0] == build for r in rows):
            continue
        print()
        print("Build: %s" % BUILD_NAMES[build])
        print()
        print("| core | Rust target | QEMU board | predict_next ticks | instructions | reference C engine (same method); reference / atome | engine .text (of which core) | engine .rodata | builtins .text | peak stack predict / generate |")
        print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|")
        for bname, label, target, board, status, extra in rows:
            if bname != build:
                continue
            name = re.sub(r"[ ()]", "_", "%s-%s-%s-%s" % (bname, label, target, board))
            if status in ("skip", "fail"):
                print("| %s | %s | %s | %s | | | | | | |" % (label, target, board, ("not run: " if status == "skip" else "FAILED: ") + extra))
                if status == "fail":
                    bad.append("%s on %s (%s build): %s" % (target, board, build, extra))
                continue
            sums, members = mapsize.parse(open(os.path.join(out, name + ".map")).read())
            e, b = sums["engine"], sums["builtins"]
            core_text = sum(v["text"] for k, v in members.items() if k.startswith("core-"))
            txt = open(os.path.join(out, name + ".out")).read()
            m = re.search(r"BENCH load (-?\d+) id (-?\d+) ticks (\d+) insns_x10_per_tick (\d+) stack (\d+)", txt)
            g = re.search(r"BENCH generate ticks (\d+) count (-?\d+) stack (\d+)", txt)
            lg = re.search(r"LOGITS(.*)", txt)
            if not m or not g or not lg or m.group(1) != "0":
                bad.append("%s on %s (%s build): no result" % (target, board, build))
                continue
            logits[(build, target, board)] = lg.group(1).strip()
            t, k = int(m.group(3)), int(m.group(4))
            n_ins = t * k // 10
            r = int(extra)
            refs = "{:,} ({:,} ticks); {:.2f}x".format(r * 40, r, r * 40 / n_ins) if r else ""
            sp, sg = int(m.group(5)), int(g.group(3))
            if max(sp, sg) > STACK_MAX:
                # (Every build, the q15 one too: the micro:bit's 16 KB.)
                bad.append("LIMIT: S3-all-all-stack: peak stack %d bytes on %s (%s build; > 2 KiB)" % (max(sp, sg), target, build))
            if build == "q15" and label in Q15_S3_MAX and n_ins > Q15_S3_MAX[label]:
                # Met, so limits (they fail even --report-only).
                bad.append("LIMIT: S3-%s-q15 (%s): {:,} instructions (> %.2fM)".format(n_ins) % (label, board, Q15_S3_MAX[label] / 1e6))
            if build == "q15" and label in Q15_TEXT_MAX and board != "microbit" and e["text"] > Q15_TEXT_MAX[label]:
                bad.append("LIMIT: S3-%s-q15-text: engine .text %d bytes on %s (> %d)" % (label, e["text"], target, Q15_TEXT_MAX[label]))
            if build == "q15-size-first":
                if label in Q15SF_S3_MAX and n_ins > Q15SF_S3_MAX[label]:
                    bad.append("LIMIT: S3-%s-q15-size-first (%s): {:,} instructions (> %.1fM)".format(n_ins) % (label, board, Q15SF_S3_MAX[label] / 1e6))
                if label in Q15SF_TEXT_MAX and board != "microbit" and e["text"] > Q15SF_TEXT_MAX[label]:
                    bad.append("LIMIT: S3-%s-q15-size-first-text: engine .text %d bytes on %s (> %d)" % (label, e["text"], target, Q15SF_TEXT_MAX[label]))
                if max(sp, sg) > Q15SF_STACK_MAX:
                    bad.append("LIMIT: S3-all-q15-size-first-stack: peak stack %d bytes on %s, %s (> %d)" % (max(sp, sg), target, board, Q15SF_STACK_MAX))
            if build == "default" and label in S3_MAX and n_ins > S3_MAX[label]:
                # Met, so a limit (fails even --report-only).
                bad.append("LIMIT: S3-%s-f32: {:,} instructions (> %.1fM)".format(n_ins) % (label, S3_MAX[label] / 1e6))
            pc = per_core.setdefault((label, target, board), {})
            pc[build] = (n_ins, e["text"], max(sp, sg))
            if r:
                pc["ref"] = r * 40
            print("| %s | %s | %s | {:,} | {:,} | %s | {:,} ({:,}) | {:,} | {:,} | %d / %d |".format(
                t, n_ins, e["text"], core_text, e["rodata"], b["text"]) % (label, target, board, refs, sp, sg))
            if target == "thumbv7em-none-eabihf" and board == "mps2-an386" and e["text"] > TEXT_MAX.get(build, 1 << 30):
                bad.append("LIMIT: S3-M4F-%s-text: engine .text %d bytes on thumbv7em-none-eabihf (> %d)" % ("f32" if build == "default" else build, e["text"], TEXT_MAX[build]))
    # One table per core: the reference, the size-first and the default build.
    for (label, target, board), pc in per_core.items():
        print()
        print("S3 on %s (%s, %s):" % (label, target, board))
        print()
        print("| engine | instructions | reference / engine | engine .text | peak stack |")
        print("|---|---:|---:|---:|---:|")
        ref = pc.get("ref")
        print("| reference C engine (BENCHMARKS.md#reference-scenarios) | %s | %s | | |" % ("{:,}".format(ref) if ref else "not given", "1.00x" if ref else ""))
        for build in ("size-first", "default", "q15", "q15-size-first"):
            if build in pc:
                n_ins, text, stack = pc[build]
                print("| atome, %s build | {:,} | %s | {:,} | %d |".format(n_ins, text)
                      % (build, "{:.2f}x".format(ref / n_ins) if ref else "", stack))
    # The float builds keep the reference's bits; q15 has its own (the same on every core).
    for group, builds in (("float (default and size-first builds)", ("default", "size-first")), ("q15 (q15 and q15 size-first builds)", ("q15", "q15-size-first"))):
        vals = [v for (b, _, _), v in logits.items() if b in builds]
        if not vals:
            continue
        same = len(set(vals)) == 1
        print()
        print("Logit bits of the S3 call identical on every core run, %s: %s (%d runs)." % (group, "yes" if same else "NO", len(vals)))
        if not same:
            bad.append("logit bits differ between cores or builds (%s)" % group)

    print()
    print("S4-like generation on M4F (mps2-an386; toy model, S=64, generate from T[90:98), max_tokens 64; the whole atome_generate call):")
    print()
    print("| engine | state | instructions | per generated token | tokens | peak stack | reference / atome |")
    print("|---|---|---:|---:|---:|---:|---:|")
    print("| reference | - | {:,} | 26.6M | 56 | | 1.0x |".format(int(GEN_REF)))
    toks = {}
    for l in open(os.path.join(out, "gen.txt")):
        if not l.strip():
            continue
        build, state, status = l.strip().split("|")
        if status != "ok":
            bad.append("S4-like generation (%s build, %s) failed" % (build, state))
            continue
        txt = open(os.path.join(out, "gen-%s-%s.out" % (build, state))).read()
        m = re.search(r"GEN ticks (\d+) insns_x10_per_tick (\d+) count (-?\d+) stack (\d+)", txt)
        tk = re.search(r"TOKENS(.*)", txt)
        if not m or not tk:
            bad.append("S4-like generation (%s build, %s): no result" % (build, state))
            continue
        n_ins = int(m.group(1)) * int(m.group(2)) // 10
        cnt, st = int(m.group(3)), int(m.group(4))
        toks[(build, state)] = tk.group(1).strip()
        print("| atome, %s build | %s | {:,} | {:,} | %d | %d | {:.1f}x |".format(n_ins, n_ins // max(cnt, 1), GEN_REF / n_ins)
              % (build, state, cnt, st))
        if st > STACK_MAX:
            bad.append("LIMIT: peak stack %d bytes in the S4-like generation (%s build, %s; > 2 KiB)" % (st, build, state))
        if build == "default" and state == "cached" and n_ins > GEN_CACHED_MAX:
            bad.append("LIMIT: S4-M4F-f32-cached: {:,} instructions (> 15M)".format(n_ins))
    # No runs at all (ATOME_BENCH_BUILDS=q15: the q15 engine has no cached
    # plan, so this scenario is skipped) is not a difference.
    same = len(set(toks.values())) <= 1
    print()
    print("Generated tokens identical in both builds and states: %s (%d runs)." % ("yes" if same else "NO", len(toks)))
    if not same:
        bad.append("S4-like generation: tokens differ between builds or states")
    json.dump(bad, open(os.path.join(out, "bad.json"), "w"))


if __name__ == "__main__":
    main(sys.argv[1])
