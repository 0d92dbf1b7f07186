#!/usr/bin/env bash
# ATOME02 parity through the C API.
#
# 1. Converts every language-model and classifier blob in ../shared/models
#    to ATOME02 / ATOMECL02 with the CLI (cli/, `atome convert`), checks that
#    converting back gives the original bytes, and prints the sizes.
# 2. For every configuration of ../shared/golden/golden_visible.json, builds
#    libatome.a for it (ATOME_* env vars, CARGO_TARGET_DIR=target/cfg/<name>,
#    the naming tests/golden.py uses), compiles tests/c/golden_runner.c with
#    the same -D flags, runs every golden case (predict_next, classify,
#    generate) once on the original blob and once on the ATOME02 blob, and
#    requires the two outputs to be identical: same ids, classes and tokens,
#    same bit pattern of every logit.
#
# Usage: scripts/atome02_parity.sh [--states lean,cached] [--math default,system] [--configs a,b]
# Needs ../shared, or $ATOME_SHARED (skips with a message where it is absent).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
SHARED="${ATOME_SHARED:-$(dirname "$ROOT")/shared}"
if [ ! -f "$SHARED/golden/golden_visible.json" ] || [ ! -d "$SHARED/models" ]; then
    echo "SKIP atome02 parity: ../shared is absent (it is beside every CI checkout)"
    exit 0
fi
echo "building the CLI (cli/, release)"
cargo build --release --quiet --manifest-path "$ROOT/cli/Cargo.toml"
ATOME="$ROOT/cli/target/release/atome"
OUT="$ROOT/target/atome02_parity"
mkdir -p "$OUT"

exec python3 - "$ROOT" "$SHARED" "$ATOME" "$OUT" "$@" <<'PY'
import argparse, json, os, subprocess, sys, time

ROOT, SHARED, ATOME, OUT = sys.argv[1:5]
ap = argparse.ArgumentParser(prog="atome02_parity.sh")
ap.add_argument("--states", default="lean,cached")
ap.add_argument("--math", default="default")
ap.add_argument("--configs", default="")
args = ap.parse_args(sys.argv[5:])

MODELS = os.path.join(SHARED, "models")
golden = json.load(open(os.path.join(SHARED, "golden", "golden_visible.json")))

# Configuration of each blob, from the golden file (the CLI infers the rest).
blob_cfg = {}
for entry in golden.values():
    c = entry["config"]
    for case in entry["cases"] + entry.get("generate", []):
        blob_cfg[case["blob"]] = f"{c['V']},{c['D']},{c['L']},{c['DH']},{c['K']},{c['TOPK']}"

# ---- 1. convert every blob
converted, fails = {}, 0
print("converting ../shared/models to ATOME02 with the CLI:")
for name in sorted(os.listdir(MODELS)):
    src = os.path.join(MODELS, name)
    with open(src, "rb") as f:
        magic = f.read(9)
    if magic.startswith(b"ATOMECL01"):
        kind = "classifier"
    elif magic.startswith(b"ATOME01"):
        kind = "language model"
    else:
        print(f"  {name}: not ATOME01/ATOMECL01, skipped")
        continue
    dst = os.path.join(OUT, name + ".atome02")
    back = os.path.join(OUT, name + ".back")
    cfg = ["--config", blob_cfg[name]] if name in blob_cfg else []
    t0 = time.time()
    r = subprocess.run([ATOME, "convert", src, dst, "--to", "atome02", *cfg], capture_output=True, text=True)
    r2 = subprocess.run([ATOME, "convert", dst, back, "--to", "atome01", *cfg], capture_output=True, text=True) \
        if r.returncode == 0 else r
    if r.returncode != 0 or r2.returncode != 0:
        print(f"  {name}: conversion FAILED\n{r.stdout}{r.stderr}{r2.stdout}{r2.stderr}")
        fails += 1
        continue
    same = open(src, "rb").read() == open(back, "rb").read()
    a, b = os.path.getsize(src), os.path.getsize(dst)
    notes = [l for l in r.stdout.splitlines() if l.startswith("note:")]
    print(f"  {name:20s} {kind:14s} {a:8d} -> {b:8d} bytes ({100.0 * (b - a) / a:+.1f}%), "
          f"back to ATOME01: {'identical bytes' if same else 'DIFFERENT bytes'} [{time.time() - t0:.2f} s]")
    for n in notes:
        print("    " + n)
    if not same:
        fails += 1
    converted[name] = dst

# ---- 2. every golden case, through the C API, on both blobs
sys.path.insert(0, os.path.join(ROOT, "tests"))
from golden import build as golden_build  # the same per-configuration builds


def build(cfg, state, math):
    # Its own runner name, so golden.py's binary is not overwritten.
    return golden_build(cfg, state, math, runner="atome02_runner")


def lines_for(entry, path_of):
    out = []
    for c in entry["cases"]:
        toks = " ".join(map(str, c["tokens"]))
        op = "C" if "expected_class" in c else "P"
        out.append(f"{op} {path_of(c['blob'])} {len(c['tokens'])} {toks}")
    for g in entry.get("generate", []):
        out.append(f"G {path_of(g['blob'])} {g['max_tokens']} {len(g['prompt'])} {' '.join(map(str, g['prompt']))}")
    return out


def run(exe, lines):
    r = subprocess.run([exe], input="\n".join(lines) + "\n", capture_output=True, text=True, check=True)
    return r.stdout.rstrip("\n").split("\n")


def golden_line(entry, i):
    """The reference's output for case i, in the runner's format."""
    cases = entry["cases"]
    if i < len(cases):
        c = cases[i]
        if "expected_class" in c:
            return " ".join(["C", str(c["expected_class"]), *c["class_logits_f32_bits"]])
        return " ".join(["P", str(c["expected_next"]), *c["logits_f32_bits"]])
    g = entry["generate"][i - len(cases)]
    return " ".join(["G", str(g["expected_count"]), *map(str, g["expected_tokens"])])


names = args.configs.split(",") if args.configs else list(golden)
total = ok = 0
print("\nATOME02 vs ATOME01 through the C API (every golden case, outputs compared for exact equality):")
for name in names:
    entry = golden[name]
    blobs = {c["blob"] for c in entry["cases"] + entry.get("generate", [])}
    missing = [b for b in blobs if b not in converted]
    if missing:
        print(f"  {name}: blobs not converted: {missing}")
        fails += 1
        continue
    for state in args.states.split(","):
        for math in args.math.split(","):
            t0 = time.time()
            exe = build(entry["config"], state, math)
            tb = time.time() - t0
            orig = run(exe, lines_for(entry, lambda b: os.path.join(MODELS, b)))
            new = run(exe, lines_for(entry, lambda b: converted[b]))
            n = len(lines_for(entry, lambda b: b))
            bad = [i for i in range(n) if i >= len(orig) or i >= len(new) or orig[i] != new[i] or orig[i].startswith("E")]
            as_ref = sum(1 for i in range(min(n, len(orig))) if orig[i] == golden_line(entry, i))
            total += n
            ok += n - len(bad)
            print(f"  {name:10s} {state:6s} {math:7s} {n - len(bad)}/{n} cases bit-identical "
                  f"(both formats equal to the reference bits in {as_ref}/{n}) [build {tb:.0f} s, run {time.time() - t0 - tb:.1f} s]")
            for i in bad[:5]:
                print(f"    case {i}: ATOME01 {orig[i][:60] if i < len(orig) else '?'}... vs ATOME02 {new[i][:60] if i < len(new) else '?'}...")
            fails += len(bad)

m = "atome_944k.bin"
if m in converted:
    print(f"\n944K model: ATOME01 {os.path.getsize(os.path.join(MODELS, m))} bytes, ATOME02 {os.path.getsize(converted[m])} bytes")
print(f"atome02 parity: {ok}/{total} golden cases bit-identical, {fails} failure(s)")
sys.exit(1 if fails else 0)
PY
