"""The usage example in python/README.md runs as written (from the repo root)."""

from __future__ import annotations

import contextlib
import io
import re

from conftest import PYDIR, REPO, requires_shared


@requires_shared
def test_readme_example(lib, monkeypatch):
    lib("toy"), lib("cls")  # (the example builds these two configurations)
    text = (PYDIR / "README.md").read_text()
    code = re.search(r"```python\n(.*?)```", text, re.S).group(1)
    monkeypatch.chdir(REPO)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "README.md", "exec"), {"__name__": "__readme__"})
    lines = out.getvalue().splitlines()
    assert len(lines) == 7
    assert lines[0].endswith("bytes of state")
    assert lines[6].startswith("(")
