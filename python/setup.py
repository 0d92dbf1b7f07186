"""Builds the one shared library the package needs at install time.

`pip install ./python` runs `cargo build --release` on the repository this
directory sits in (the default build: the runtime API inside it runs any
model), and puts libatome into the package, so that importing and using
`atome` afterwards needs no Rust toolchain. Set ATOME_LIB_PREBUILT to a
built libatome.so to bundle that instead of building.
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
LIBNAME = {"darwin": "libatome.dylib", "win32": "atome.dll"}.get(sys.platform, "libatome.so")


class BuildWithLibrary(build_py):
    def run(self):
        super().run()
        lib = os.environ.get("ATOME_LIB_PREBUILT")
        if not lib:
            if not (REPO / "Cargo.toml").exists():
                raise SystemExit("atome: no Cargo.toml beside python/ and no ATOME_LIB_PREBUILT")
            env = {k: v for k, v in os.environ.items() if not k.startswith("ATOME_")}
            target = REPO / "target" / "python"
            env["CARGO_TARGET_DIR"] = str(target)
            subprocess.run(["cargo", "build", "--release", "--lib"], cwd=REPO, env=env, check=True)
            lib = target / "release" / LIBNAME
        dest = Path(self.build_lib) / "atome" / "_lib"
        dest.mkdir(parents=True, exist_ok=True)
        shutil.copy2(lib, dest / LIBNAME)


class BinaryDistribution(Distribution):
    """The wheel carries a native library: tag it for this platform."""

    def has_ext_modules(self):
        return True


setup(cmdclass={"build_py": BuildWithLibrary}, distclass=BinaryDistribution)
