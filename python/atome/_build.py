"""Building (or finding) libatome.so for one configuration."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Dict, Mapping, Optional

# knob name -> (ATOME_* env var, default, accepted spellings in a config dict);
# the defaults are build.rs's (tests/knob_defaults.rs checks them)
KNOBS = {
    "vocab_size": ("ATOME_VOCAB_SIZE", 256, ("V", "vocab_size", "ATOME_VOCAB_SIZE")),
    "d_model": ("ATOME_D_MODEL", 64, ("D", "d_model", "ATOME_D_MODEL")),
    "max_seq": ("ATOME_MAX_SEQ", 32, ("S", "max_seq", "ATOME_MAX_SEQ")),
    "n_layers": ("ATOME_N_LAYERS", 4, ("L", "n_layers", "ATOME_N_LAYERS")),
    "n_pathways": ("ATOME_N_PATHWAYS", 3, ("n_pathways", "ATOME_N_PATHWAYS")),
    "d_head": ("ATOME_D_HEAD", 16, ("DH", "d_head", "ATOME_D_HEAD")),
    "kernel_size": ("ATOME_KERNEL_SIZE", 5, ("K", "kernel_size", "ATOME_KERNEL_SIZE")),
    "top_k": ("ATOME_TOP_K", 4, ("TOPK", "top_k", "ATOME_TOP_K")),
    "max_classes": ("ATOME_MAX_CLASSES", 16, ("MAX_CLASSES", "max_classes", "ATOME_MAX_CLASSES")),
}


class BuildError(RuntimeError):
    pass


def normalize_config(config: Optional[Mapping] = None) -> Dict[str, int]:
    """Full knob dict (build-config names: vocab_size, d_model, ...) from a dict
    using golden-style keys (V, D, L, DH, K, TOPK, S), build-config names or
    ATOME_* names; missing knobs take the contract (docs/) defaults."""
    config = dict(config or {})
    out = {}
    for name, (_env, default, spellings) in KNOBS.items():
        val = default
        for s in spellings:
            if s in config:
                val = int(config[s])
                break
        out[name] = val
    known = {s for _n, (_e, _d, sp) in KNOBS.items() for s in sp}
    known |= {"state_cached", "cached", "state_size", "ATOME_STATE"}
    unknown = set(config) - known
    if unknown:
        raise ValueError(f"unknown configuration keys: {sorted(unknown)}")
    return out


def config_name(config: Optional[Mapping] = None, cached: bool = False,
                system_libm: bool = False, dtype: str = "f32") -> str:
    """Derived CARGO_TARGET_DIR leaf for a configuration, the same scheme as
    tests/golden.py (so both share builds), e.g.
    ``D64_DH16_K5_L4_S32_TOPK4_V256_lean_default``; ``_cached`` for
    ATOME_STATE=cached, ``_system`` for the system-libm feature, and
    ``_MC<n>`` / ``_P<n>`` before them when ATOME_MAX_CLASSES / ATOME_N_PATHWAYS
    are not the defaults; ``_q15`` last for ATOME_DTYPE=q15."""
    c = normalize_config(config)
    short = {"D": "d_model", "DH": "d_head", "K": "kernel_size", "L": "n_layers",
             "S": "max_seq", "TOPK": "top_k", "V": "vocab_size"}
    name = "_".join(f"{k}{c[short[k]]}" for k in sorted(short))
    if c["max_classes"] != KNOBS["max_classes"][1]:
        name += f"_MC{c['max_classes']}"
    if c["n_pathways"] != KNOBS["n_pathways"][1]:
        name += f"_P{c['n_pathways']}"
    name += "_cached" if cached else "_lean"
    name += "_system" if system_libm else "_default"
    if dtype != "f32":
        name += "_" + dtype
    return name


def _is_repo(p: Path) -> bool:
    try:
        text = (p / "Cargo.toml").read_text()
    except OSError:
        return False
    return 'name = "atome"' in text


def repo_root() -> Path:
    """The atome repository (where cargo builds): $ATOME_REPO, else the first
    folder holding the atome Cargo.toml above this package (python/atome in a
    checkout, or an editable install), else above the working directory."""
    env = os.environ.get("ATOME_REPO")
    if env:
        return Path(env).resolve()
    here = Path(__file__).resolve().parent
    for p in [*here.parents, Path.cwd().resolve(), *Path.cwd().resolve().parents]:
        if _is_repo(p):
            return p
    raise BuildError("cannot find the atome repository: set ATOME_REPO (or pass repo=)")


def _lib_filename() -> str:
    if sys.platform == "darwin":
        return "libatome.dylib"
    if sys.platform == "win32":
        return "atome.dll"
    return "libatome.so"


def _matches(lib_path: str, want: Dict[str, int], cached: bool, dtype: str = "f32") -> bool:
    from ._engine import Engine  # local import: no cycle at module load

    try:
        got = Engine(lib_path).config
    except (OSError, AttributeError, RuntimeError):
        return False
    # state_cached: bit 0 the cached plan, bit 1 the q15 mode
    flags = int(got.get("state_cached", 0))
    return (all(got.get(k) == v for k, v in want.items()) and bool(flags & 1) == bool(cached)
            and bool(flags & 2) == (dtype == "q15"))


def build_library(config: Optional[Mapping] = None, cached: bool = False,
                  system_libm: bool = False, *, dtype: str = "f32", profile: str = "release",
                  repo: Optional[os.PathLike] = None, quiet: bool = True) -> str:
    """Path of a libatome shared library built for ``config``.

    ``config`` holds the ATOME_* knobs (keys V, D, L, DH, K, TOPK, S,
    MAX_CLASSES, or the build-config / ATOME_* names; missing ones default).
    ``cached`` selects ATOME_STATE=cached, ``system_libm`` the
    ``system-libm`` cargo feature, ``dtype`` ATOME_DTYPE (``f32``, the
    default, or ``q15``: the integer mode of docs/Q15.md, either state).

    If $ATOME_LIB names a library whose atome_get_build_config matches the
    configuration (and state kind), it is returned as is.  Otherwise this runs
    ``cargo build --release`` in the repository root with the ATOME_* variables
    and CARGO_TARGET_DIR=target/cfg/<config_name(...)> (a no-op when up to
    date) and returns target/cfg/<name>/release/libatome.so.  Without cargo on
    PATH an existing build there is returned."""
    if dtype not in ("f32", "q15"):
        raise ValueError(f"dtype must be f32 or q15, not {dtype!r}")
    want = normalize_config(config)
    env_lib = os.environ.get("ATOME_LIB")
    if env_lib and os.path.exists(env_lib) and _matches(env_lib, want, cached, dtype):
        return env_lib

    root = Path(repo).resolve() if repo else repo_root()
    name = config_name(want, cached, system_libm, dtype)
    target_dir = root / "target" / "cfg" / name
    out_dir = "release" if profile in ("release", None) else profile
    lib = target_dir / out_dir / _lib_filename()

    cargo = shutil.which("cargo") or os.path.expanduser("~/.cargo/bin/cargo")
    if not os.path.exists(cargo):
        if lib.exists():
            return str(lib)
        raise BuildError("cargo not found and no library at %s" % lib)

    env = dict(os.environ)
    for k, (var, default, _s) in KNOBS.items():
        if k in ("max_classes", "n_pathways") and want[k] == default:
            # left unset at the default, as tests/golden.py does: the same
            # environment keeps cargo's fingerprint, so the builds are shared
            env.pop(var, None)
        else:
            env[var] = str(want[k])
    env["ATOME_STATE"] = "cached" if cached else "lean"
    if dtype == "f32":
        env.pop("ATOME_DTYPE", None)  # unset at the default: shared fingerprints
    else:
        env["ATOME_DTYPE"] = dtype
    env["CARGO_TARGET_DIR"] = str(target_dir)
    cmd = [cargo, "build", "--lib"]
    cmd += ["--release"] if profile in ("release", None) else ["--profile", profile]
    if system_libm:
        cmd += ["--features", "system-libm"]
    proc = subprocess.run(cmd, cwd=str(root), env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True)
    if proc.returncode != 0:
        raise BuildError("%s failed (%d):\n%s" % (" ".join(cmd), proc.returncode, proc.stdout[-4000:]))
    if not quiet:
        print(proc.stdout, end="")
    if not lib.exists():
        raise BuildError("cargo succeeded but %s is missing" % lib)
    return str(lib)
