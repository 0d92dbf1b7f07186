#!/usr/bin/env python3
"""Golden parity through the C API (the reference's results, every golden case).

For every configuration of ../shared/golden/golden_visible.json, builds
libatome.a for that configuration (lean and cached states, default math and
system-libm), compiles tests/c/golden_runner.c against include/atome.h with
the same -D flags, runs every case and compares:
  system-libm: every logit bit pattern, id, class and token equal;
  default math: ids, classes and tokens equal, logits within 5e-5.
Needs ../shared (skips with a message where it is absent, fails when CI is
set: CI has it).
Runtime API: tests/c/golden_rt.c, built once against a library built with no
knobs, runs the same calls through atome_rt_* with each configuration's
dimensions; its output must equal the compile-time build's (default math)
byte for byte, so every logit bit pattern, id, class and token is the same.
The q15 modes of the runtime API (flags 2 and 3) have no golden file: on the
"default" configuration (the build's default knobs) their output must equal
the compile-time q15 builds' (ATOME_DTYPE=q15, lean and cached, the
libraries tests/c_api.sh also builds in target/cfg/q15 and
target/cfg/q15_cached) byte for byte; tests/rt_q15.rs checks the q15 modes
on every other configuration against the q15 Rust types.
Usage: tests/golden.py [--states lean,cached] [--math default,system] [--configs a,b] [--no-q15]
"""
import argparse, json, os, struct, subprocess, sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED = os.path.join(os.path.dirname(ROOT), "shared")
KNOBS = {"V": "ATOME_VOCAB_SIZE", "D": "ATOME_D_MODEL", "L": "ATOME_N_LAYERS", "DH": "ATOME_D_HEAD",
         "K": "ATOME_KERNEL_SIZE", "TOPK": "ATOME_TOP_K", "S": "ATOME_MAX_SEQ"}


def build(cfg, state, math, runner="golden_runner"):
    """Builds the library and tests/c/golden_runner.c (as `runner`, in the
    configuration's target directory); returns the runner's path."""
    name = "_".join(f"{k}{cfg[k]}" for k in sorted(KNOBS)) + f"_{state}_{math}"
    tdir = os.path.join(ROOT, "target", "cfg", name)
    env = dict(os.environ, CARGO_TARGET_DIR=tdir, ATOME_STATE=state)
    for k, v in KNOBS.items():
        env[v] = str(cfg[k])
    cmd = ["cargo", "build", "--release", "--quiet", "--lib"]
    if math == "system":
        cmd += ["--features", "system-libm"]
    subprocess.run(cmd, cwd=ROOT, env=env, check=True)
    exe = os.path.join(tdir, runner)
    defs = [f"-D{v}={cfg[k]}" for k, v in KNOBS.items()]
    if state == "cached":
        defs.append("-DATOME_STATE_CACHED=1")
    subprocess.run(["cc", "-std=c99", "-O2", "-Wall", "-Wextra", "-Werror", "-I", os.path.join(ROOT, "include"),
                    "-I", os.path.join(ROOT, "c_examples"), *defs, os.path.join(ROOT, "tests", "c", "golden_runner.c"),
                    os.path.join(tdir, "release", "libatome.a"), "-lm", "-o", exe], check=True)
    return exe


def build_rt():
    """The library with no knobs and tests/c/golden_rt.c against it."""
    tdir = os.path.join(ROOT, "target", "cfg", "runtime_default")
    env = {k: v for k, v in os.environ.items() if not k.startswith("ATOME_")}
    env["CARGO_TARGET_DIR"] = tdir
    subprocess.run(["cargo", "build", "--release", "--quiet", "--lib"], cwd=ROOT, env=env, check=True)
    exe = os.path.join(tdir, "golden_rt")
    subprocess.run(["cc", "-std=c99", "-O2", "-Wall", "-Wextra", "-Werror", "-I", os.path.join(ROOT, "include"),
                    "-I", os.path.join(ROOT, "c_examples"), os.path.join(ROOT, "tests", "c", "golden_rt.c"),
                    os.path.join(tdir, "release", "libatome.a"), "-lm", "-o", exe], check=True)
    return exe


def build_q15(state):
    """The default-configuration q15 library of `state` (the environment of
    tests/c_api.sh's build, so the two share one build) and
    tests/c/golden_runner.c against it."""
    name = "q15" if state == "lean" else "q15_cached"
    tdir = os.path.join(ROOT, "target", "cfg", name)
    env = {k: v for k, v in os.environ.items() if k not in ("ATOME_STATE", "ATOME_DTYPE")}
    env.update(CARGO_TARGET_DIR=tdir, ATOME_DTYPE="q15")
    defs = ["-DATOME_DTYPE_Q15=1"]
    if state == "cached":
        env["ATOME_STATE"] = "cached"
        defs.append("-DATOME_STATE_CACHED=1")
    subprocess.run(["cargo", "build", "--release", "--quiet", "--lib"], cwd=ROOT, env=env, check=True)
    exe = os.path.join(tdir, "golden_runner")
    subprocess.run(["cc", "-std=c99", "-O2", "-Wall", "-Wextra", "-Werror", "-I", os.path.join(ROOT, "include"),
                    "-I", os.path.join(ROOT, "c_examples"), *defs, os.path.join(ROOT, "tests", "c", "golden_runner.c"),
                    os.path.join(tdir, "release", "libatome.a"), "-lm", "-o", exe], check=True)
    return exe


def calls(entry):
    """The golden protocol's input for every case and generation of `entry`."""
    models = os.path.join(SHARED, "models")
    lines = []
    for c in entry["cases"]:
        op = "C" if "expected_class" in c else "P"
        lines.append(f"{op} {os.path.join(models, c['blob'])} {len(c['tokens'])} {' '.join(map(str, c['tokens']))}")
    for g in entry.get("generate", []):
        lines.append(f"G {os.path.join(models, g['blob'])} {g['max_tokens']} {len(g['prompt'])} {' '.join(map(str, g['prompt']))}")
    return "\n".join(lines) + "\n"


def run_q15(rt, entry, state):
    """The runtime API's q15 mode (flags 2 lean, 3 cached) against the
    compile-time q15 build of `state`: (lines, identical)."""
    stdin = calls(entry)
    want = subprocess.run([build_q15(state)], input=stdin, capture_output=True, text=True, check=True).stdout
    cfg = entry["config"]
    dims = ",".join(str(cfg[k]) for k in ("V", "D", "L", "DH", "K", "TOPK", "S"))
    got = subprocess.run([rt, dims, "3" if state == "cached" else "2"], input=stdin, capture_output=True,
                         text=True, check=True).stdout
    n = len(want.strip().split("\n"))
    if got != want:
        diff = next((i for i, (a, b) in enumerate(zip(got.split("\n"), want.split("\n"))) if a != b), 0)
        print(f"  q15 runtime API differs from the compile-time q15 build (first at line {diff})")
        return n, False
    return n, True


def f32(h):
    return struct.unpack(">f", bytes.fromhex(h))[0]


def run(exe, entry, math, rt=None, state="lean"):
    lines, checks = [], []
    models = os.path.join(SHARED, "models")
    for c in entry["cases"]:
        blob = os.path.join(models, c["blob"])
        toks = " ".join(map(str, c["tokens"]))
        if "expected_class" in c:
            lines.append(f"C {blob} {len(c['tokens'])} {toks}")
            checks.append(("C", c["expected_class"], c["class_logits_f32_bits"]))
        else:
            lines.append(f"P {blob} {len(c['tokens'])} {toks}")
            checks.append(("P", c["expected_next"], c["logits_f32_bits"]))
    for g in entry.get("generate", []):
        blob = os.path.join(models, g["blob"])
        lines.append(f"G {blob} {g['max_tokens']} {len(g['prompt'])} {' '.join(map(str, g['prompt']))}")
        checks.append(("G", g["expected_count"], g["expected_tokens"]))
    stdin = "\n".join(lines) + "\n"
    raw = subprocess.run([exe], input=stdin, capture_output=True, text=True, check=True).stdout
    out = raw.split("\n")
    fails = 0
    if rt is not None:
        cfg = entry["config"]
        dims = ",".join(str(cfg[k]) for k in ("V", "D", "L", "DH", "K", "TOPK", "S"))
        got = subprocess.run([rt, dims, "1" if state == "cached" else "0"], input=stdin, capture_output=True,
                             text=True, check=True).stdout
        if got != raw:
            diff = next(i for i, (a, b) in enumerate(zip(got.split("\n"), out)) if a != b) if got else 0
            print(f"  runtime API differs from the compile-time build (first at line {diff})")
            fails += 1
    worst = 0.0
    for i, (kind, exp, data) in enumerate(checks):
        got = out[i].split()
        if got[0] != kind or int(got[1]) != exp:
            print(f"  case {i}: {kind} expected {exp}, got {got[:2]}")
            fails += 1
            continue
        if kind == "G":
            if [int(t) for t in got[2:]] != data:
                print(f"  case {i}: tokens {got[2:]} != {data}")
                fails += 1
            continue
        bits = got[2:]
        if len(bits) != len(data):
            print(f"  case {i}: {len(bits)} logits, expected {len(data)}")
            fails += 1
        elif math == "system":
            bad = [j for j, (a, b) in enumerate(zip(bits, data)) if a != b]
            if bad:
                print(f"  case {i}: {len(bad)} logit bit patterns differ (first at {bad[0]}: {bits[bad[0]]} vs {data[bad[0]]})")
                fails += 1
        else:
            d = max(abs(f32(a) - f32(b)) for a, b in zip(bits, data))
            worst = max(worst, d)
            if not d <= 5e-5:
                print(f"  case {i}: logits differ by {d}")
                fails += 1
    return len(checks), fails, worst


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--states", default="lean,cached")
    ap.add_argument("--math", default="default,system")
    ap.add_argument("--configs", default="")
    ap.add_argument("--no-q15", action="store_true", help="skip the q15 runtime-API pass")
    a = ap.parse_args()
    path = os.path.join(SHARED, "golden", "golden_visible.json")
    if not os.path.exists(path):
        # In CI a skip would be a test that does not exist: fail there.
        if os.environ.get("CI", "") not in ("", "false", "0"):
            print("FAIL golden parity: ../shared is absent, and CI must run it")
            return 1
        print("SKIP golden parity: ../shared is absent (it is beside every CI checkout)")
        return 0
    golden = json.load(open(path))
    names = a.configs.split(",") if a.configs else list(golden)
    passed = failed = 0
    rt = build_rt()
    for name in names:
        entry = golden[name]
        for state in a.states.split(","):
            for math in a.math.split(","):
                exe = build(entry["config"], state, math)
                n, f, worst = run(exe, entry, math, rt if math == "default" else None, state)
                tag = f"{name:10s} {state:6s} {math:7s}"
                print(f"{tag} {n - f}/{n} cases ok" + (f", max |logit diff| {worst:.3g}, runtime API identical" if math == "default" else ", bit-exact"))
                passed += n - f
                failed += f
    if "default" in names and not a.no_q15:
        for state in a.states.split(","):
            n, same = run_q15(rt, golden["default"], state)
            print(f"{'default':10s} {state:6s} q15     {n} calls, runtime API (flags {3 if state == 'cached' else 2}) "
                  + ("identical to the compile-time q15 build" if same else "DIFFERS from the compile-time q15 build"))
            passed += same
            failed += not same
    print(f"golden: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
