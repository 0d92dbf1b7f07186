"""Shared fixtures: paths, golden data, and per-configuration library builds.

Library builds (cargo, one CARGO_TARGET_DIR per configuration) start in the
background, two at a time, as soon as the collected tests need them, so they
overlap with the numpy-only tests.  Set ATOME_SKIP_LIB=1 to skip every test
that needs the library.
"""

from __future__ import annotations

import concurrent.futures
import json
import os
import sys
import threading
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
PYDIR = HERE.parent
sys.path.insert(0, str(PYDIR))
sys.path.insert(0, str(HERE))

import atome  # noqa: E402
import numpy_ref as R  # noqa: E402

REPO = PYDIR.parent
SHARED = Path(os.environ.get("ATOME_SHARED", REPO.parent / "shared"))
MODELS = SHARED / "models"
GOLDEN = SHARED / "golden" / "golden_visible.json"

# The golden configurations (shared/golden/README.md), plus one extra odd one.
CONFIGS = {
    "tiny": dict(V=32, D=16, L=2, DH=8, K=5, TOPK=4, S=8),
    "default": dict(V=256, D=64, L=4, DH=16, K=5, TOPK=4, S=32),
    "odd": dict(V=40, D=22, L=3, DH=6, K=3, TOPK=2, S=16),
    "wide": dict(V=64, D=32, L=2, DH=8, K=7, TOPK=6, S=24),
    "toy": dict(V=256, D=64, L=4, DH=16, K=5, TOPK=4, S=64),
    "m944k": dict(V=256, D=256, L=8, DH=64, K=5, TOPK=4, S=64),
    "m944k_s24": dict(V=256, D=256, L=8, DH=64, K=5, TOPK=4, S=24),
    "cls": dict(V=256, D=32, L=2, DH=8, K=5, TOPK=4, S=32),
    "cls_odd": dict(V=40, D=22, L=3, DH=6, K=3, TOPK=2, S=16),
    # not a golden one: tiny odd sizes, 2 conv taps, top-1 attention, 5 classes max
    "weird": dict(V=37, D=13, L=1, DH=3, K=2, TOPK=1, S=9, MAX_CLASSES=5),
}

# (config name, cached state, system libm) built for the library tests
BUILDS = [(n, False, False) for n in CONFIGS if n != "cls_odd"] + [
    ("odd", True, False),   # ATOME_STATE=cached must give the same bits
    ("m944k", True, False),  # the 944K goldens' generate calls (lean: ~12 s each)
    ("tiny", False, True),  # system-libm: bit-exact goldens on x86-64 glibc
]

requires_shared = pytest.mark.skipif(not GOLDEN.exists(), reason=f"needs {SHARED} (the shared/ folder beside the repo)")

_lock = threading.Lock()
_futures = {}
_pool = None


def _build_key(name, cached=False, system_libm=False):
    if name == "cls_odd":
        name = "odd"
    return (name, bool(cached), bool(system_libm))


def _start(key):
    global _pool
    with _lock:
        if key not in _futures:
            if _pool is None:
                _pool = concurrent.futures.ThreadPoolExecutor(max_workers=2)
            name, cached, syslibm = key
            _futures[key] = _pool.submit(atome.build_library, CONFIGS[name], cached, syslibm)
        return _futures[key]


def lib_skipped() -> bool:
    return os.environ.get("ATOME_SKIP_LIB", "") not in ("", "0")


def _uses_lib(item) -> bool:
    return "lib" in getattr(item, "fixturenames", ())


def pytest_collection_modifyitems(session, config, items):
    if lib_skipped():
        skip = pytest.mark.skip(reason="ATOME_SKIP_LIB set")
        for it in items:
            if _uses_lib(it):
                it.add_marker(skip)


def pytest_collection_finish(session):
    # after -k/-m deselection: prebuild only when many library tests run
    n = sum(_uses_lib(it) for it in session.items)
    if n >= 20 and not lib_skipped():
        for b in BUILDS:
            _start(b)


def pytest_sessionfinish(session, exitstatus):
    if _pool is not None:
        _pool.shutdown(wait=False, cancel_futures=True)


_engines = {}


def get_engine(name, cached=False, system_libm=False) -> "atome.Engine":
    key = _build_key(name, cached, system_libm)
    if key not in _engines:
        with _lock:
            fut = _futures.get(key)
            if fut is not None and fut.cancel():  # still queued: build it now instead
                del _futures[key]
                fut = None
        if fut is None:
            path = atome.build_library(CONFIGS[key[0]], key[1], key[2])
        else:
            path = fut.result()
        _engines[key] = atome.Engine(path)
    return _engines[key]


@pytest.fixture(scope="session")
def lib():
    """lib(name, cached=False, system_libm=False) -> atome.Engine for CONFIGS[name]."""
    if lib_skipped():
        pytest.skip("ATOME_SKIP_LIB set")
    return get_engine


@pytest.fixture(scope="session")
def golden():
    if not GOLDEN.exists():
        pytest.skip(f"needs {SHARED} (the shared/ folder beside the repo)")
    return json.loads(GOLDEN.read_text())


_blobs = {}


def model_bytes(name: str) -> bytes:
    if name not in _blobs:
        _blobs[name] = (MODELS / name).read_bytes()
    return _blobs[name]


_weights = {}


def model_weights(blob: str, cfg_name: str) -> "R.Weights":
    key = (blob, cfg_name)
    if key not in _weights:
        _weights[key] = R.parse_blob(model_bytes(blob), CONFIGS[cfg_name])
    return _weights[key]
