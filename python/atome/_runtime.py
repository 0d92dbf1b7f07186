"""Any model through one library: the runtime-dimension API (atome_rt_*).

    import atome
    m = atome.load("atome_944k.bin")          # bare blob: dimensions inferred from its size
    m = atome.load("model.atomef")            # ATOMEF container: dimensions from its header
    print(m.generate(b"Once upon a time", 40))

The shared library is the one ``pip install ./python`` built into the package
(or $ATOME_LIB, or a development build in the repository's target/release).
"""

from __future__ import annotations

import ctypes
import os
import struct
import zlib
from ctypes import POINTER, c_float, c_int, c_int32, c_size_t, c_uint32, c_void_p
from pathlib import Path
from typing import List, Optional, Sequence, Tuple, Union

from ._engine import AtomeError, Sampling, _int_array, _tokens

try:  # logits come back as numpy arrays when numpy is there
    import numpy as _np
except ImportError:  # pragma: no cover - exercised only without numpy
    _np = None

Source = Union[str, os.PathLike, bytes, bytearray, memoryview]

CONTAINER_MAGIC = b"ATOMEF"
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
                ("work_words", c_size_t), ("kind", c_int32), ("cached", c_int32),
                ("salt", c_uint32), ("valid", c_uint32)]


def _payload_len(packing: int, n: int) -> int:
    return [(n + 3) // 4, (n + 4) // 5, 3 * ((n + 7) // 8)][packing]


def blob_size(packing: int, V: int, D: int, L: int, DH: int, K: int) -> int:
    """Bytes of a bare language-model blob (docs/FORMATS.md)."""
    T = lambda n: 4 + _payload_len(packing, n)  # noqa: E731
    return 7 + 2 * T(V * D) + L * (8 * D + T(D * K) + 12 * D + 2 * T(DH * D) + T(D * D) + T(3 * D)) + 8 * D


# Configurations in the wild, tried first (with the window they are deployed with).
KNOWN = [
    dict(vocab_size=256, d_model=256, n_layers=8, d_head=64, kernel_size=5, top_k=4, max_seq=64),
    dict(vocab_size=256, d_model=64, n_layers=4, d_head=16, kernel_size=5, top_k=4, max_seq=32),
    dict(vocab_size=256, d_model=32, n_layers=2, d_head=8, kernel_size=5, top_k=4, max_seq=32),
]


def infer_dims(blob: bytes) -> dict:
    """Dimensions of a bare blob from its magic and size: a known
    configuration first, else the only (V=256, K=5, TOP_K=4) one of its size.
    Raises ValueError when none or several fit."""
    if blob[:7] in LM_MAGICS:
        packing, extra = LM_MAGICS[blob[:7]], 0
        n_classes = 0
    elif blob[:9] in CL_MAGICS:
        packing = CL_MAGICS[blob[:9]]
        n_classes = struct.unpack_from("<i", blob, 9)[0]
        extra = 6  # 9-byte magic and the class count, against a 7-byte magic
    else:
        raise ValueError("not an atome blob (unknown magic)")

    def size(c):
        s = blob_size(packing, c["vocab_size"], c["d_model"], c["n_layers"], c["d_head"], c["kernel_size"])
        if n_classes:
            s += extra + 4 + _payload_len(packing, n_classes * c["d_model"])
        return s

    fits = lambda c: 0 <= len(blob) - size(c) <= 15  # noqa: E731
    for c in KNOWN:
        if fits(c):
            return dict(c, n_classes=n_classes)
    found = []
    for D in range(4, 1025, 4):
        for L in range(1, 33):
            for DH in (4, 8, 16, 32, 64, 128):
                c = dict(vocab_size=256, d_model=D, n_layers=L, d_head=DH, kernel_size=5, top_k=4, max_seq=64)
                if DH <= D and fits(c):
                    found.append(c)
    if len(found) != 1:
        raise ValueError(f"cannot infer the dimensions of a {len(blob)}-byte blob "
                         f"({len(found)} configurations fit): give dims=")
    return dict(found[0], n_classes=n_classes)


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


class RtModel:
    """An open model or classifier over one library build (any dimensions)."""

    def __init__(self, data: bytes, dims: Optional[dict] = None, seq: Optional[int] = None,
                 cached: bool = False, lib: Optional[str] = None):
        self.lib = _library(lib)
        self._data = bytes(data)  # the library reads the blob in place: keep it alive
        hdr = read_container_header(self._data)
        if hdr is None and dims is None:
            dims = infer_dims(self._data)
        given = None
        if dims is not None or seq is not None:
            d = dict(dims or {})
            if seq is not None:
                d["max_seq"] = seq
            given = Dims(*(int(d.get(n, 0)) for n, _t in Dims._fields_))
        if hdr is not None and hdr["max_seq"] == 0 and (given is None or given.max_seq == 0):
            given = given or Dims()
            given.max_seq = 64
        probe = given if hdr is None else self._header_dims(hdr, given)
        size = self.lib.atome_rt_work_size(ctypes.byref(probe), int(cached))
        if size == 0:
            raise AtomeError("atome_rt_work_size", 0, f"bad dimensions {probe.as_dict()}")
        self._work = (c_uint32 * ((size + 3) // 4))()
        self._rt = _Rt()
        rc = self.lib.atome_rt_open(ctypes.byref(self._rt), self._data, len(self._data),
                                    ctypes.byref(given) if given is not None else None,
                                    int(cached), self._work, size)
        if rc != 0:
            raise AtomeError("atome_rt_open", rc, "blob refused")
        out = Dims()
        self.lib.atome_rt_dims(ctypes.byref(self._rt), ctypes.byref(out))
        self.dims = out.as_dict()
        self.cached = cached

    @staticmethod
    def _header_dims(hdr: dict, given: Optional[Dims]) -> Dims:
        d = Dims(*(hdr[n] for n, _t in Dims._fields_))
        if given is not None and given.max_seq > 0:
            d.max_seq = given.max_seq
        return d

    @property
    def is_classifier(self) -> bool:
        return self.dims["n_classes"] > 0

    def predict_next(self, tokens) -> int:
        toks = _tokens(tokens)
        rc = self.lib.atome_rt_predict_next(ctypes.byref(self._rt), _int_array(toks), len(toks))
        if rc < 0:
            raise AtomeError("atome_rt_predict_next", rc)
        return rc

    def last_logits(self):
        p = self.lib.atome_rt_logits(ctypes.byref(self._rt))
        v = self.dims["vocab_size"]
        if _np is not None:
            return _np.ctypeslib.as_array(p, shape=(v,)).copy()
        return list(p[:v])

    def logits(self, tokens):
        """predict_next(tokens), then its V logits (a numpy array when numpy is there)."""
        self.predict_next(tokens)
        return self.last_logits()

    def generate(self, prompt, max_tokens: int) -> Text:
        """Greedy continuation: the generated token ids (print it to see the text)."""
        toks = _tokens(prompt)
        out = (c_int * max(1, max_tokens))()
        n = self.lib.atome_rt_generate(ctypes.byref(self._rt), _int_array(toks), len(toks), out, max_tokens)
        return Text(out[:n])

    def generate_sampled(self, prompt, max_tokens: int, temperature: float = 1.0, top_k: int = 0,
                         top_p: float = 1.0, seed: int = 0) -> Text:
        toks = _tokens(prompt)
        params = Sampling(temperature=temperature, top_k=top_k, top_p=top_p, reserved=0,
                          seed=seed & 0xFFFFFFFFFFFFFFFF)
        out = (c_int * max(1, max_tokens))()
        n = self.lib.atome_rt_generate_sampled(ctypes.byref(self._rt), _int_array(toks), len(toks), out,
                                               max_tokens, ctypes.byref(params))
        return Text(out[:n])

    def classify(self, tokens) -> Tuple[int, "list"]:
        """(class, class logits)."""
        toks = _tokens(tokens)
        nc = max(1, self.dims["n_classes"])
        out = (c_float * nc)()
        rc = self.lib.atome_rt_classify(ctypes.byref(self._rt), _int_array(toks), len(toks), out)
        if rc < 0:
            raise AtomeError("atome_rt_classify", rc)
        logits = list(out[:nc])
        return rc, (_np.array(logits, dtype=_np.float32) if _np is not None else logits)

    def router_entropy(self) -> List[float]:
        out = (c_float * self.dims["n_layers"])()
        rc = self.lib.atome_rt_router_entropy(ctypes.byref(self._rt), out)
        if rc < 0:
            raise AtomeError("atome_rt_router_entropy", rc)
        return list(out[:rc])

    def __repr__(self) -> str:
        kind = "classifier" if self.is_classifier else "model"
        return f"atome.RtModel({kind}, {self.dims}, {'cached' if self.cached else 'lean'})"


def load(source: Source, seq: Optional[int] = None, dims: Optional[dict] = None,
         cached: bool = False, lib: Optional[str] = None) -> RtModel:
    """Open a model or classifier: a path or the bytes of an ATOMEF container
    (dimensions from its header) or of a bare blob (dimensions given as
    ``dims`` or inferred from its size). ``seq`` sets the window S."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        data = bytes(source)
    else:
        data = Path(source).read_bytes()
    return RtModel(data, dims=dims, seq=seq, cached=cached, lib=lib)
