#!/usr/bin/env python3
"""How many golden logits would change if the library took expf/tanhf from
the libm crate (docs/DEPENDENCIES.md).

For every configuration of ../shared/golden/golden_visible.json (lean state):
builds libatome.a with `--features system-libm` (so the library calls the C
symbols expf and tanhf), compiles tests/c/golden_runner.c, and links it three
ways:
  glibc    -lm only: the reference's own functions (expected: 0 differences);
  libm     a static shim exporting expf/tanhf from the libm crate, linked
           before -lm, so it replaces glibc's for the library;
and also runs the default build (the library's own math, src/math.rs) for
comparison. Prints, per math, the golden cases and logits whose bit pattern
differs from the reference's, and whether ids, classes and tokens differ.
Needs ../shared, a C compiler and the network or a cargo cache for the libm
crate. Measurement, not part of the suite: its figures are in
docs/DEPENDENCIES.md.
Usage: tests/libm_golden.py [--configs a,b]
"""
import argparse, json, os, subprocess, sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))
import golden  # noqa: E402  (build directories and the case runner are shared)

SHIM = os.path.join(ROOT, "target", "libm-shim")
LIBM_VERSION = "=0.2.16"


def build_shim():
    """A no_std staticlib whose only exports are expf and tanhf from the libm crate."""
    os.makedirs(os.path.join(SHIM, "src"), exist_ok=True)
    with open(os.path.join(SHIM, "Cargo.toml"), "w") as f:
        f.write(f"""[package]
name = "libm_shim"
version = "0.0.0"
edition = "2021"
publish = false

[lib]
crate-type = ["staticlib"]
path = "src/lib.rs"

[dependencies]
libm = "{LIBM_VERSION}"

[profile.release]
panic = "abort"
lto = true
codegen-units = 1

[workspace]
""")
    with open(os.path.join(SHIM, "src", "lib.rs"), "w") as f:
        f.write("""#![no_std]
#[no_mangle]
pub extern "C" fn expf(x: f32) -> f32 { libm::expf(x) }
#[no_mangle]
pub extern "C" fn tanhf(x: f32) -> f32 { libm::tanhf(x) }
#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! { loop {} }
""")
    subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=SHIM, check=True)
    # The crate's own object, with every symbol but expf and tanhf made local
    # (its panic handler would clash with the library's).
    lib = os.path.join(SHIM, "target", "release", "liblibm_shim.a")
    members = subprocess.run(["ar", "t", lib], capture_output=True, text=True, check=True).stdout.split()
    own = [m for m in members if m.startswith("libm_shim") and m.endswith(".o")]
    subprocess.run(["ar", "x", lib, *own], cwd=SHIM, check=True)
    obj = os.path.join(SHIM, "shim.o")
    subprocess.run(["ld", "-r", "-o", obj, *[os.path.join(SHIM, m) for m in own]], check=True)
    subprocess.run(["objcopy", "-w", "--keep-global-symbol=expf", "--keep-global-symbol=tanhf", obj], check=True)
    return obj


def link(cfg, tdir, extra, name):
    defs = [f"-D{v}={cfg[k]}" for k, v in golden.KNOBS.items()]
    exe = os.path.join(tdir, name)
    subprocess.run(["cc", "-std=c99", "-O2", "-I", os.path.join(ROOT, "include"), "-I", os.path.join(ROOT, "c_examples"),
                    *defs, os.path.join(ROOT, "tests", "c", "golden_runner.c"), os.path.join(tdir, "release", "libatome.a"),
                    *extra, "-lm", "-o", exe], check=True)
    return exe


def count(exe, entry):
    """(cases, logits, cases with a different bit pattern, logits different, ids/classes/tokens different)."""
    lines, checks = [], []
    models = os.path.join(golden.SHARED, "models")
    for c in entry["cases"]:
        kind = "C" if "expected_class" in c else "P"
        lines.append(f"{kind} {os.path.join(models, c['blob'])} {len(c['tokens'])} {' '.join(map(str, c['tokens']))}")
        checks.append((kind, c.get("expected_class", c.get("expected_next")), c.get("class_logits_f32_bits", c.get("logits_f32_bits"))))
    for g in entry.get("generate", []):
        lines.append(f"G {os.path.join(models, g['blob'])} {g['max_tokens']} {len(g['prompt'])} {' '.join(map(str, g['prompt']))}")
        checks.append(("G", g["expected_count"], g["expected_tokens"]))
    out = subprocess.run([exe], input="\n".join(lines) + "\n", capture_output=True, text=True, check=True).stdout.split("\n")
    n_cases = n_logits = bad_cases = bad_logits = bad_ids = 0
    for i, (kind, exp, data) in enumerate(checks):
        got = out[i].split()
        if kind == "G":
            bad_ids += int(got[1]) != exp or [int(t) for t in got[2:]] != data
            continue
        n_cases += 1
        n_logits += len(data)
        bad_ids += int(got[1]) != exp
        diff = sum(a != b for a, b in zip(got[2:], data))
        bad_logits += diff
        bad_cases += diff > 0
    return n_cases, n_logits, bad_cases, bad_logits, bad_ids


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--configs", default="")
    a = ap.parse_args()
    path = os.path.join(golden.SHARED, "golden", "golden_visible.json")
    if not os.path.exists(path):
        print("SKIP: ../shared is absent")
        return 0
    data = json.load(open(path))
    shim = build_shim()
    names = a.configs.split(",") if a.configs else list(data)
    total = {m: [0, 0, 0, 0, 0] for m in ("own", "glibc", "libm")}
    for name in names:
        entry = data[name]
        cfg = entry["config"]
        own = golden.build(cfg, "lean", "default")
        sys_exe = golden.build(cfg, "lean", "system")
        tdir = os.path.dirname(sys_exe)
        runs = {"own": own, "glibc": sys_exe, "libm": link(cfg, tdir, [shim], "golden_runner_libm")}
        for m, exe in runs.items():
            r = count(exe, entry)
            total[m] = [x + y for x, y in zip(total[m], r)]
            print(f"{name:10s} {m:6s} cases {r[2]}/{r[0]} differ, logits {r[3]}/{r[1]} differ, ids/classes/tokens {r[4]} differ")
    labels = {"own": "src/math.rs (default build)", "glibc": "glibc (system-libm build)", "libm": "libm crate " + LIBM_VERSION}
    for m, r in total.items():
        print(f"TOTAL {labels[m]}: {r[2]} of {r[0]} golden cases and {r[3]} of {r[1]} logits differ in bits; "
              f"{r[4]} ids, classes or generated sequences differ")
    return 0


if __name__ == "__main__":
    sys.exit(main())
