#!/usr/bin/env bash
# The Python package installs like one (`pip install ./python`): a fresh
# virtual environment, `pip install ./python` (which builds the one shared
# library into the package), then, with no cargo on PATH, load and run the
# 944K model (a bare blob: dimensions inferred), a classifier head, an
# ATOMEF container, and the 944K model in the q15 integer mode, lean and
# cached (the same tokens). Needs ../shared (skips outside CI when absent).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
shared="$root/../shared"
if [ ! -d "$shared/models" ]; then
  if [ -n "${CI:-}" ] && [ "${CI}" != false ] && [ "${CI}" != 0 ]; then echo "FAIL: ../shared is absent in CI"; exit 1; fi
  echo "SKIP python install: ../shared is absent (it is beside every CI checkout)"; exit 0
fi
tmp=$(mktemp -d /tmp/atome-pip.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
python3 -m venv "$tmp/venv"
"$tmp/venv/bin/pip" install -q --disable-pip-version-check "$root/python"
# No cargo, rustc or repository on the way: a minimal PATH, another directory.
cd "$tmp"
out=$(env -i HOME="$tmp" PATH=/usr/bin:/bin "$tmp/venv/bin/python" - "$shared/models" <<'PY'
import shutil, sys
assert shutil.which("cargo") is None and shutil.which("rustc") is None, "cargo is on PATH"
import atome
models = sys.argv[1]
assert "site-packages" in atome.__file__, atome.__file__
m = atome.load(f"{models}/atome_944k.bin")
print("944k:", m.dims)
print("continuation:", repr(str(m.generate(b"Once upon a time", 40))))
c = atome.load(f"{models}/agri.atomecl")
k, logits = c.classify(b"soil moisture 12% temperature 31C")
print("classifier:", k, "of", c.dims["n_classes"], [round(float(v), 4) for v in logits])
blob = open(f"{models}/default.atome", "rb").read()
box = atome.make_container(blob, atome.infer_dims(blob), b"name=default")
d = atome.load(box)
print("container:", d.dims, d.predict_next(b"Once upon a time") >= 0)
ql = atome.load(f"{models}/atome_944k.bin", dtype="q15")
qc = atome.load(f"{models}/atome_944k.bin", dtype="q15", cached=True)
a, b = ql.generate(b"Once upon a time", 40), qc.generate(b"Once upon a time", 40)
print("q15 lean:", repr(str(a)))
print("q15 cached:", repr(str(b)))
print("q15 cached tokens == lean:", list(a) == list(b) and len(a) == 40)
PY
)
echo "$out"
grep -q "continuation: '" <<< "$out"
grep -q "^classifier: [0-9]" <<< "$out"
grep -q "^container: .* True$" <<< "$out"
grep -q "^q15 cached tokens == lean: True$" <<< "$out"
# The continuation is text, not one repeated byte.
python3 - "$out" <<'PY'
import sys
for tag in ("continuation:", "q15 lean:"):
    line = next(l for l in sys.argv[1].splitlines() if l.startswith(tag))
    text = eval(line.split(":", 1)[1])
    assert len(text) >= 30 and len(set(text)) > 5, (tag, text)
print("python install: ok")
PY
