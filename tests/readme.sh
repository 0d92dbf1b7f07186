#!/usr/bin/env bash
# Runs every ```sh block of README.md that follows a "<!-- tested -->" line,
# in order, from the repository root, so the README's examples stay true.
# Needs ../shared (the examples use its models); skips with a message without it.
set -uo pipefail
cd "$(dirname "$0")/.."
if [ ! -d ../shared/models ]; then
  # In CI ../shared is always beside the checkout: its absence is a failure.
  case "${CI:-}" in ""|false|0) echo "SKIP README examples: ../shared absent"; exit 0 ;; esac
  echo "FAIL README examples: ../shared absent in CI"; exit 1
fi
python3 - <<'PY'
import re, subprocess, sys
text = open("README.md").read()
blocks = re.findall(r"<!-- tested -->\s*```sh\n(.*?)```", text, re.S)
ok = bad = 0
for i, b in enumerate(blocks):
    r = subprocess.run(["bash", "-eu", "-c", b], capture_output=True, text=True)
    out = (r.stdout + r.stderr).strip().splitlines()
    if r.returncode == 0:
        ok += 1
        print(f"ok - README example {i + 1}: {out[-1] if out else ''}")
    else:
        bad += 1
        print(f"FAIL - README example {i + 1} (exit {r.returncode}):\n" + "\n".join(out[-15:]))
print(f"readme: {ok} passed, {bad} failed")
sys.exit(1 if bad or not blocks else 0)
PY
