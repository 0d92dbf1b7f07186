"""Any model through one library: the runtime-dimension API (atome_rt_*).

    import atome
    m = atome.load("atome_944k.bin")          # bare blob: dimensions inferred from its size
    m = atome.load("model.atomef")            # ATOMEF container: dimensions from its header
    print(m.generate(b"Once upon a time", 40))
    q = atome.load("atome_944k.bin", dtype="q15", cached=True)   # the q15 integer mode, cached plan

Every mode (dtype "f32" or "q15", cached or lean) runs in any build of the
library: the mode is the flags word of atome_rt_open (ATOME_RT_CACHED = 1,
ATOME_RT_Q15 = 2).

The shared library is the one ``pip install ./python`` built into the package
(or $ATOME_LIB, or a development build in the repository's target/release).
"""

from __future__ import annotations

import ctypes
import math
import os
import struct
import threading
import zlib
from ctypes import POINTER, c_float, c_int, c_int32, c_size_t, c_uint32, c_void_p
from pathlib import Path
from typing import List, Optional, Sequence, Tuple, Union

from ._engine import AtomeError, Sampling, _int_array
from ._infer import InferError, blob_len, infer

try:  # logits come back as numpy arrays when numpy is there
    import numpy as _np
except ImportError:  # pragma: no cover - exercised only without numpy
    _np = None

Source = Union[str, os.PathLike, bytes, bytearray, memoryview]

CONTAINER_MAGIC = b"ATOMEF"
# atome_rt_open's flags (include/atome.h).
RT_CACHED = 1
RT_Q15 = 2
DTYPES = ("f32", "q15")
HEADER_LEN = 60
LM_MAGICS = {b"ATOME01": 0, b"ATOME02": 1, b"ATOMEP3": 2}
CL_MAGICS = {b"ATOMECL01": 0, b"ATOMECL02": 1}


class Dims(ctypes.Structure):
    """atome_dims_t."""

    _fields_ = [(n, c_int32) for n in ("vocab_size", "d_model", "n_layers", "d_head",
                                      "kernel_size", "top_k", "max_seq", "n_classes")]

    def as_dict(self) -> dict:
        return {n: int(getattr(self, n)) for n, _t in self._fields_}


class _Rt(ctypes.Structure):
    """atome_rt_t: the library's fields, mirrored so Python can hold one."""

    _fields_ = [("dims", Dims), ("blob", c_void_p), ("blob_len", c_size_t), ("work", c_void_p),
                ("work_words", c_size_t), ("kind", c_int32), ("flags", c_int32),
                ("salt", c_uint32), ("valid", c_uint32)]


def rt_flags(dtype: str = "f32", cached: bool = False) -> int:
    """atome_rt_open's flags word for a mode: ATOME_RT_Q15 for dtype "q15",
    ATOME_RT_CACHED for cached. ValueError for another dtype, TypeError for
    a cached that is not a bool (or 0 / 1)."""
    if not isinstance(dtype, str) or dtype not in DTYPES:
        raise ValueError(f"dtype: expected one of {DTYPES}, got {dtype!r}")
    if not isinstance(cached, int) or cached not in (0, 1):
        raise TypeError(f"cached: expected a bool, got {type(cached).__name__} {cached!r}")
    return (RT_Q15 if dtype == "q15" else 0) | (RT_CACHED if cached else 0)


def blob_size(packing: int, V: int, D: int, L: int, DH: int, K: int) -> int:
    """Bytes of a bare language-model blob (docs/FORMATS.md)."""
    return blob_len(packing, V, D, L, DH, K)


# Configurations in the wild (with the attention top-k and the window they
# are deployed with): the top-k is not stored in a blob, so a bare blob of
# another configuration needs dims=dict(top_k=...).
KNOWN = [
    dict(vocab_size=256, d_model=256, n_layers=8, d_head=64, kernel_size=5, top_k=4, max_seq=64),
    dict(vocab_size=256, d_model=64, n_layers=4, d_head=16, kernel_size=5, top_k=4, max_seq=32),
    dict(vocab_size=256, d_model=32, n_layers=2, d_head=8, kernel_size=5, top_k=4, max_seq=32),
]
SHAPE = ("vocab_size", "d_model", "n_layers", "d_head", "kernel_size")
DIM_MAX = 65535

# What atome_rt_open's codes mean (docs/API.md).
OPEN_CODES = {
    -1: "unknown magic, fewer than 7 bytes, or a dimension outside 1..65535",
    -2: "truncated: shorter than its header or its dimensions need",
    -3: "more than 15 bytes after the end",
    -4: "an ATOME02 payload byte above 242",
    -5: "dims= disagree with the container header",
    -6: "a CRC does not match: corrupted",
    -7: "the work buffer is too small or its size does not fit a size_t",
    -8: "the container header does not describe its payload (dimensions or n_classes)",
    -9: "dimensions missing: give dims= (and seq= for a container without a window)",
}


def infer_dims(blob: bytes, name: str = "blob") -> dict:
    """Dimensions of a bare blob from its magic, size and contents: the one
    plausible configuration of its size (atome._infer), its top-k and window
    from a known configuration. Raises InferError (a ValueError) naming the
    candidates when none or several fit, or when the configuration is not a
    known one (the top-k is not stored: give dims=)."""
    c = infer(bytes(blob), name)
    for k in KNOWN:
        if all(k[f] == c[f] for f in SHAPE):
            return dict(k, n_classes=c["n_classes"])
    raise InferError(f"{name}: V={c['vocab_size']} D={c['d_model']} L={c['n_layers']} DH={c['d_head']} "
                     f"K={c['kernel_size']} fits, but the attention top-k is not stored in a bare blob and this "
                     "is not a known configuration: give dims=dict(top_k=...) (and seq=), or use an ATOMEF container")


def read_container_header(data: bytes) -> Optional[dict]:
    """The header fields of an ATOMEF container (None for a bare blob)."""
    if not data.startswith(CONTAINER_MAGIC) or len(data) < HEADER_LEN:
        return None
    f = struct.unpack_from("<6sHHBB10I2I", data, 0)
    names = ("vocab_size", "d_model", "n_layers", "d_head", "kernel_size", "top_k", "max_seq",
             "n_classes", "metadata_len", "payload_len")
    h = dict(zip(names, f[5:15]))
    h.update(version=f[1], kind=f[3], packing=f[4], payload_crc=f[15], header_crc=f[16])
    h["metadata"] = data[HEADER_LEN:HEADER_LEN + h["metadata_len"]]
    return h


def make_container(payload: bytes, dims: dict, metadata: bytes = b"") -> bytes:
    """An ATOMEF container around a bare blob (docs/CONTAINER.md), written
    here independently of the library's writer."""
    if payload[:7] in LM_MAGICS:
        kind, packing, n_classes = 1, LM_MAGICS[payload[:7]], 0
    else:
        kind, packing = 2, CL_MAGICS[payload[:9]]
        n_classes = struct.unpack_from("<i", payload, 9)[0]
    fields = [dims["vocab_size"], dims["d_model"], dims["n_layers"], dims["d_head"], dims["kernel_size"],
              dims["top_k"], dims.get("max_seq", 0), n_classes, len(metadata), len(payload)]
    head = struct.pack("<6sHHBB10II", CONTAINER_MAGIC, 1, 0, kind, packing, *fields, zlib.crc32(payload))
    return head + struct.pack("<I", zlib.crc32(head + metadata)) + metadata + payload


def _find_library() -> str:
    env = os.environ.get("ATOME_LIB")
    if env:
        return env
    here = Path(__file__).resolve().parent
    for cand in (here / "_lib" / "libatome.so", here / "_lib" / "libatome.dylib",
                 here.parent.parent / "target" / "release" / "libatome.so"):
        if cand.exists():
            return str(cand)
    raise FileNotFoundError("libatome not found: install the package with `pip install ./python`, "
                            "build it with `cargo build --release`, or set $ATOME_LIB")


_LIBS = {}


def _library(path: Optional[str] = None):
    path = os.path.abspath(path or _find_library())
    lib = _LIBS.get(path)
    if lib is None:
        lib = ctypes.CDLL(path)
        P = c_void_p
        sig = {
            "atome_rt_work_size": ([POINTER(Dims), c_int], c_size_t),
            "atome_rt_open": ([POINTER(_Rt), P, c_size_t, POINTER(Dims), c_int, P, c_size_t], c_int),
            "atome_rt_dims": ([POINTER(_Rt), POINTER(Dims)], c_int),
            "atome_rt_predict_next": ([POINTER(_Rt), POINTER(c_int), c_int], c_int),
            "atome_rt_logits": ([POINTER(_Rt)], POINTER(c_float)),
            "atome_rt_generate": ([POINTER(_Rt), POINTER(c_int), c_int, POINTER(c_int), c_int], c_int),
            "atome_rt_generate_sampled": ([POINTER(_Rt), POINTER(c_int), c_int, POINTER(c_int), c_int,
                                           POINTER(Sampling)], c_int),
            "atome_rt_classify": ([POINTER(_Rt), POINTER(c_int), c_int, POINTER(c_float)], c_int),
            "atome_rt_router_entropy": ([POINTER(_Rt), POINTER(c_float)], c_int),
        }
        for name, (args, res) in sig.items():
            fn = getattr(lib, name)
            fn.argtypes = args
            fn.restype = res
        _LIBS[path] = lib
    return lib


class Text(list):
    """Generated token ids; printed as the text they spell (byte tokens)."""

    def __str__(self) -> str:
        return bytes(t & 0xFF for t in self).decode("utf-8", errors="replace")


def _int(name: str, v, lo: int, hi: int) -> int:
    """v as an int in lo..hi: TypeError for a non-int (bool and float too),
    OverflowError past 32 bits, ValueError outside the range."""
    if isinstance(v, bool) or not isinstance(v, int):
        try:
            import numbers
            ok = isinstance(v, numbers.Integral) and not isinstance(v, bool)
        except ImportError:  # pragma: no cover
            ok = False
        if not ok:
            raise TypeError(f"{name}: expected an int, got {type(v).__name__} {v!r}")
        v = int(v)
    if not -2**31 <= v < 2**31 and not (lo >= 0 and hi >= 2**31):
        raise OverflowError(f"{name}: {v} does not fit a C int (expected {lo}..{hi})")
    if not lo <= v <= hi:
        raise ValueError(f"{name}: {v} is outside {lo}..{hi}")
    return v


def _float(name: str, v, lo: float, hi: float, lo_open: bool = False) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise TypeError(f"{name}: expected a number, got {type(v).__name__} {v!r}")
    f = float(v)
    if not math.isfinite(f) or f < lo or f > hi or (lo_open and f == lo):
        raise ValueError(f"{name}: {v!r} is outside {'(' if lo_open else '['}{lo}, {hi}]")
    return f


class RtModel:
    """An open model or classifier over one library build (any dimensions).

    Refusals (every message names the argument or file, what was expected
    and what was found):

    - opening: ``InferError`` (a ``ValueError``) when a bare blob's
      dimensions cannot be told (none or several plausible configurations of
      its size, values no trainer writes, or an unknown top-k), and
      ``AtomeError`` with atome_rt_open's code otherwise (``.code``; the
      meanings are ``OPEN_CODES``, docs/API.md): -1 unknown magic or fewer
      than 7 bytes, -2 truncated, -3 trailing bytes, -4 bad ATOME02 byte,
      -5 dims= against the header, -6 corrupted, -8 a header that does not
      describe its payload, -9 dimensions missing; ``TypeError`` /
      ``ValueError`` / ``OverflowError`` for ``seq`` or ``dims`` values
      that are not ints in 1..65535, ``ValueError`` for a ``dtype`` other
      than "f32" and "q15", ``TypeError`` for a ``cached`` that is not a
      bool (or 0 / 1).
    - calls: tokens must be a non-empty sequence of ints (or bytes / str) in
      0..V-1: ``ValueError`` for an empty list or an id outside the
      vocabulary (``oov_as_zero=True`` at load reads such ids as 0, the C
      contract), ``TypeError`` for a non-int, ``OverflowError`` past 32
      bits; ``max_tokens`` an int in 1..2**31-1; sampling parameters
      finite, ``top_p`` in (0, 1], ``top_k`` in 0..V, ``seed`` in
      0..2**64-1. ``generate``, ``generate_sampled``, ``predict_next``,
      ``logits`` and ``last_logits`` on a classifier, and ``classify`` on a
      language model, raise ``TypeError``; ``last_logits`` before any
      ``predict_next`` raises ``AtomeError``.

    Threads: one model may be shared by any number of threads. Each model
    holds a lock, taken by every call for the whole C call (and the logits
    read that follows it), so concurrent calls run one at a time and each
    returns what it would alone. ``last_logits()`` returns the logits of
    the last ``predict_next`` of any thread; ``logits(tokens)`` is the
    atomic predict-then-read. For parallel speed, open one model per thread
    (the blob bytes may be shared).
    """

    def __init__(self, data: bytes, dims: Optional[dict] = None, seq: Optional[int] = None,
                 cached: bool = False, lib: Optional[str] = None, name: str = "blob",
                 oov_as_zero: bool = False, dtype: str = "f32"):
        flags = rt_flags(dtype, cached)
        self.lib = _library(lib)
        self.name = name
        self.oov_as_zero = bool(oov_as_zero)
        self._lock = threading.Lock()
        self._predicted = False
        self._data = bytes(data)  # the library reads the blob in place: keep it alive
        data = self._data
        if seq is not None:
            seq = _int("seq", seq, 1, DIM_MAX)
        if dims is not None:
            if not isinstance(dims, dict):
                raise TypeError(f"dims: expected a dict of {[n for n, _t in Dims._fields_]}, got {type(dims).__name__}")
            unknown = set(dims) - {n for n, _t in Dims._fields_}
            if unknown:
                raise ValueError(f"dims: unknown field(s) {sorted(unknown)}")
            dims = {k: _int(f"dims[{k!r}]", v, 0, DIM_MAX) for k, v in dims.items()}
        if data.startswith(CONTAINER_MAGIC):
            if len(data) < HEADER_LEN:
                raise AtomeError("atome_rt_open", -2 if len(data) >= 7 else -1,
                                 f"{name}: truncated ATOMEF container: {len(data)} bytes, its header needs {HEADER_LEN}")
            hdr = read_container_header(data)
        elif len(data) < 7:
            raise AtomeError("atome_rt_open", -1, f"{name}: {len(data)} bytes: truncated, shorter than any magic (7 bytes)")
        else:
            hdr = None
        if hdr is None and (dims is None or any(not dims.get(f) for f in SHAPE) or not dims.get("top_k")):
            got = infer(data, name)
            if dims:
                wrong = {f: (dims[f], got[f]) for f in SHAPE if dims.get(f) and dims[f] != got[f]}
                if wrong:
                    raise InferError(f"{name}: dims= {wrong} (given, fitting) disagree with the blob's size and contents")
            if not (dims or {}).get("top_k"):
                known = infer_dims(data, name)  # raises when the top-k cannot be known
                got["top_k"], got["max_seq"] = known["top_k"], known["max_seq"]
            dims = dict(got, **{k: v for k, v in (dims or {}).items() if v})
        given = None
        if dims is not None or seq is not None:
            d = dict(dims or {})
            if seq is not None:
                d["max_seq"] = seq
            if hdr is None:
                d.pop("n_classes", None)  # the blob's own count
            given = Dims(*(int(d.get(n, 0)) for n, _t in Dims._fields_))
        if hdr is not None and hdr["max_seq"] == 0 and (given is None or given.max_seq == 0):
            given = given or Dims()
            given.max_seq = 64
        if hdr is None and given.max_seq == 0:
            given.max_seq = 64
        probe = given if hdr is None else self._header_dims(hdr, given)
        size = self.lib.atome_rt_work_size(ctypes.byref(probe), flags)
        if size == 0:
            raise AtomeError("atome_rt_work_size", 0, f"{name}: dimensions outside 1..65535 or a buffer past "
                             f"size_t: {probe.as_dict()}")
        self._work = (c_uint32 * ((size + 3) // 4))()
        self._rt = _Rt()
        rc = self.lib.atome_rt_open(ctypes.byref(self._rt), self._data, len(self._data),
                                    ctypes.byref(given) if given is not None else None,
                                    flags, self._work, size)
        if rc != 0:
            what = "ATOMEF container" if hdr is not None else f"bare blob opened with {given.as_dict()}"
            raise AtomeError("atome_rt_open", rc, f"{name} ({len(self._data)} bytes, {what}): "
                             f"{OPEN_CODES.get(rc, 'refused')}")
        out = Dims()
        self.lib.atome_rt_dims(ctypes.byref(self._rt), ctypes.byref(out))
        self.dims = out.as_dict()
        self.cached = bool(cached)
        self.dtype = dtype
        self.work_size = size

    @staticmethod
    def _header_dims(hdr: dict, given: Optional[Dims]) -> Dims:
        d = Dims(*(min(hdr[n], 2**31 - 1) for n, _t in Dims._fields_))
        if given is not None and given.max_seq > 0:
            d.max_seq = given.max_seq
        return d

    @property
    def is_classifier(self) -> bool:
        return self.dims["n_classes"] > 0

    def _need(self, what: str, classifier: bool) -> None:
        if self.is_classifier != classifier:
            if classifier:
                raise TypeError(f"{what}: {self.name} is a language model (no classes); use predict_next or generate")
            raise TypeError(f"{what}: {self.name} is a classifier ({self.dims['n_classes']} classes); use classify")

    def _tokens(self, name: str, tokens) -> List[int]:
        if isinstance(tokens, str):
            tokens = tokens.encode("utf-8")
        if isinstance(tokens, (bytes, bytearray, memoryview)):
            toks = list(bytes(tokens))
        else:
            try:
                seq = list(tokens)
            except TypeError:
                raise TypeError(f"{name}: expected a sequence of ints, bytes or str, got {type(tokens).__name__}") from None
            toks = [_int(f"{name}[{i}]", t, -2**31, 2**31 - 1) for i, t in enumerate(seq)]
        if not toks:
            raise ValueError(f"{name}: empty (at least one token)")
        if len(toks) >= 2**31:
            raise OverflowError(f"{name}: {len(toks)} tokens do not fit a C int")
        v = self.dims["vocab_size"]
        if not self.oov_as_zero:
            for i, t in enumerate(toks):
                if not 0 <= t < v:
                    raise ValueError(f"{name}[{i}]: token id {t} is outside the vocabulary 0..{v - 1} "
                                     "(load with oov_as_zero=True to read it as 0, as the C API does)")
        return toks

    def predict_next(self, tokens) -> int:
        """The id of the next token after ``tokens`` (its last S)."""
        self._need("predict_next", False)
        toks = self._tokens("tokens", tokens)
        with self._lock:
            rc = self.lib.atome_rt_predict_next(ctypes.byref(self._rt), _int_array(toks), len(toks))
            self._predicted = rc >= 0
        if rc < 0:
            raise AtomeError("atome_rt_predict_next", rc, f"{self.name}")
        return rc

    def _read_logits(self):
        p = self.lib.atome_rt_logits(ctypes.byref(self._rt))
        v = self.dims["vocab_size"]
        if _np is not None:
            return _np.ctypeslib.as_array(p, shape=(v,)).copy()
        return list(p[:v])

    def last_logits(self):
        """The V logits of the last predict_next (of any thread)."""
        self._need("last_logits", False)
        with self._lock:
            if not self._predicted:
                raise AtomeError("atome_rt_logits", -1, f"{self.name}: no predict_next yet")
            return self._read_logits()

    def logits(self, tokens):
        """predict_next(tokens), then its V logits (a numpy array when numpy
        is there), in one locked step."""
        self._need("logits", False)
        toks = self._tokens("tokens", tokens)
        with self._lock:
            rc = self.lib.atome_rt_predict_next(ctypes.byref(self._rt), _int_array(toks), len(toks))
            if rc < 0:
                raise AtomeError("atome_rt_predict_next", rc, f"{self.name}")
            self._predicted = True
            return self._read_logits()

    def generate(self, prompt, max_tokens: int) -> Text:
        """Greedy continuation: the generated token ids (print it to see the
        text); fewer than max_tokens when the prompt leaves less room in the
        window (none when it fills it), as atome_generate."""
        self._need("generate", False)
        toks = self._tokens("prompt", prompt)
        max_tokens = _int("max_tokens", max_tokens, 1, 2**31 - 1)
        room = max(0, min(max_tokens, self.dims["max_seq"] - len(toks)))
        out = (c_int * max(1, room))()
        with self._lock:
            n = self.lib.atome_rt_generate(ctypes.byref(self._rt), _int_array(toks), len(toks), out, room) if room else 0
            self._predicted = self._predicted or n > 0
        return Text(out[:n])

    def generate_sampled(self, prompt, max_tokens: int, temperature: float = 1.0, top_k: int = 0,
                         top_p: float = 1.0, seed: int = 0) -> Text:
        """Sampled continuation, as atome_generate_sampled (temperature 0 is
        greedy; top_k 0 keeps every token)."""
        self._need("generate_sampled", False)
        toks = self._tokens("prompt", prompt)
        max_tokens = _int("max_tokens", max_tokens, 1, 2**31 - 1)
        temperature = _float("temperature", temperature, 0.0, 1e30)
        top_k = _int("top_k", top_k, 0, self.dims["vocab_size"])
        top_p = _float("top_p", top_p, 0.0, 1.0, lo_open=True)
        seed = _int("seed", seed, 0, 2**64 - 1)
        params = Sampling(temperature=temperature, top_k=top_k, top_p=top_p, reserved=0, seed=seed)
        room = max(0, min(max_tokens, self.dims["max_seq"] - len(toks)))
        out = (c_int * max(1, room))()
        with self._lock:
            n = self.lib.atome_rt_generate_sampled(ctypes.byref(self._rt), _int_array(toks), len(toks), out,
                                                   room, ctypes.byref(params)) if room else 0
            self._predicted = self._predicted or n > 0
        return Text(out[:n])

    def classify(self, tokens) -> Tuple[int, "list"]:
        """(class, class logits)."""
        self._need("classify", True)
        toks = self._tokens("tokens", tokens)
        nc = self.dims["n_classes"]
        out = (c_float * nc)()
        with self._lock:
            rc = self.lib.atome_rt_classify(ctypes.byref(self._rt), _int_array(toks), len(toks), out)
        if rc < 0:
            raise AtomeError("atome_rt_classify", rc, f"{self.name}")
        logits = list(out[:nc])
        return rc, (_np.array(logits, dtype=_np.float32) if _np is not None else logits)

    def router_entropy(self) -> List[float]:
        """Router entropy (nats) per layer at the last position of the last
        predict_next or classify (of any thread)."""
        out = (c_float * self.dims["n_layers"])()
        with self._lock:
            rc = self.lib.atome_rt_router_entropy(ctypes.byref(self._rt), out)
        if rc < 0:
            raise AtomeError("atome_rt_router_entropy", rc, f"{self.name}")
        return list(out[:rc])

    def __repr__(self) -> str:
        kind = "classifier" if self.is_classifier else "model"
        return f"atome.RtModel({kind}, {self.dims}, {self.dtype}, {'cached' if self.cached else 'lean'})"


#: Bigger inputs are refused before they are read (a stated cap: the largest
#: model the runtime API opens in practice is far smaller).
MAX_MODEL_BYTES = 1 << 30


def load(source: Source, seq: Optional[int] = None, dims: Optional[dict] = None,
         cached: bool = False, lib: Optional[str] = None, oov_as_zero: bool = False,
         dtype: str = "f32") -> RtModel:
    """Open a model or classifier: a path or the bytes of an ATOMEF container
    (dimensions from its header) or of a bare blob (dimensions given as
    ``dims``, or inferred from its size and contents when exactly one
    plausible configuration fits: see ``infer_dims``). ``seq`` sets the
    window S (1..65535). ``dtype`` is the arithmetic, "f32" (the float
    engine, the reference's bits) or "q15" (the integer mode, docs/Q15.md),
    and ``cached`` the memory plan (True: a call whose tokens extend the
    last call's computes only the new positions; the same bits as lean);
    every mode runs in the installed library, whatever it was built with.
    Every refusal is listed in ``RtModel``'s docstring. The model is safe to
    share between threads (a lock per model)."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        data, name = bytes(source), "blob"
    elif isinstance(source, (str, os.PathLike)):
        path = Path(source)
        name = str(path)
        size = path.stat().st_size
        if size > MAX_MODEL_BYTES:
            raise ValueError(f"{name}: {size} bytes, more than the {MAX_MODEL_BYTES}-byte cap on a model")
        data = path.read_bytes()
    else:
        raise TypeError(f"source: expected a path or bytes, got {type(source).__name__}")
    return RtModel(data, dims=dims, seq=seq, cached=cached, lib=lib, name=name, oov_as_zero=oov_as_zero,
                   dtype=dtype)
