"""ctypes binding of the atome C API (include/atome.h, docs/CONTRACT.md)."""

from __future__ import annotations

import ctypes
import os
import struct
from ctypes import POINTER, c_float, c_int, c_int32, c_size_t, c_uint8, c_uint32, c_uint64, c_void_p
from typing import Iterable, List, Optional, Sequence, Tuple, Union

Tokens = Union[Sequence[int], bytes, bytearray, str]

class AtomeError(RuntimeError):
    """A C call failed; ``code`` is its return value."""

    def __init__(self, func: str, code: int, msg: str = ""):
        super().__init__(f"{func} returned {code}" + (f": {msg}" if msg else ""))
        self.func = func
        self.code = code


class BuildConfig(ctypes.Structure):
    _fields_ = [
        ("vocab_size", c_int32), ("d_model", c_int32), ("max_seq", c_int32),
        ("n_layers", c_int32), ("n_pathways", c_int32), ("d_head", c_int32),
        ("kernel_size", c_int32), ("top_k", c_int32), ("max_classes", c_int32),
        ("state_cached", c_int32), ("state_size", c_uint32),
        # added by include/atome.h after docs/CONTRACT.md's first version:
        ("model_size", c_uint32), ("classifier_size", c_uint32),
    ]


class Sampling(ctypes.Structure):
    _fields_ = [
        ("temperature", c_float), ("top_k", c_int32), ("top_p", c_float),
        ("reserved", c_uint32), ("seed", c_uint64),
    ]


def _tokens(tokens: Tokens) -> List[int]:
    if isinstance(tokens, str):
        tokens = tokens.encode("utf-8")
    return [int(t) for t in tokens]


def _int_array(tokens: Sequence[int]):
    arr = (c_int * max(1, len(tokens)))()
    for i, t in enumerate(tokens):
        arr[i] = t
    return arr


def _aligned_buffer(size: int):
    """Zeroed, 8-byte aligned buffer of at least size bytes."""
    return (c_uint64 * ((max(1, size) + 7) // 8))()


class Engine:
    """One libatome shared library (one configuration).

    ``Engine(path)``; without a path, $ATOME_LIB.  ``config`` is the dict of
    atome_get_build_config (vocab_size, d_model, max_seq, n_layers, n_pathways,
    d_head, kernel_size, top_k, max_classes, state_cached, state_size)."""

    def __init__(self, lib_path: Optional[os.PathLike] = None):
        if lib_path is None:
            lib_path = os.environ.get("ATOME_LIB")
            if not lib_path:
                raise ValueError("no library path given and $ATOME_LIB is not set")
        self.path = os.fspath(lib_path)
        self.lib = lib = ctypes.CDLL(os.path.abspath(self.path))
        P = c_void_p
        lib.atome_get_build_config.argtypes = [POINTER(BuildConfig)]
        lib.atome_get_build_config.restype = c_int
        lib.atome_init.argtypes = [P]
        lib.atome_init.restype = None
        lib.atome_load.argtypes = [P, P, c_size_t]
        lib.atome_load.restype = c_int
        lib.atome_predict_next.argtypes = [P, P, POINTER(c_int), c_int]
        lib.atome_predict_next.restype = c_int
        lib.atome_get_logits.argtypes = [P]
        lib.atome_get_logits.restype = POINTER(c_float)
        lib.atome_generate.argtypes = [P, P, POINTER(c_int), c_int, POINTER(c_int), c_int]
        lib.atome_generate.restype = c_int
        lib.atome_classifier_load.argtypes = [P, P, c_size_t]
        lib.atome_classifier_load.restype = c_int
        lib.atome_classify.argtypes = [P, P, POINTER(c_int), c_int, POINTER(c_float)]
        lib.atome_classify.restype = c_int
        self.has_entropy = hasattr(lib, "atome_router_entropy")
        if self.has_entropy:
            lib.atome_router_entropy.argtypes = [P, POINTER(c_float)]
            lib.atome_router_entropy.restype = c_int
        self.has_entropy_all = hasattr(lib, "atome_router_entropy_all")
        if self.has_entropy_all:
            # include/atome.h: (model, state, tokens, n_tokens, out, out_len): runs the
            # forward pass itself and writes out[t * N_LAYERS + l] for the window.
            lib.atome_router_entropy_all.argtypes = [P, P, POINTER(c_int), c_int, POINTER(c_float), c_int]
            lib.atome_router_entropy_all.restype = c_int
        self.has_sampling = hasattr(lib, "atome_generate_sampled")
        if self.has_sampling:
            lib.atome_generate_sampled.argtypes = [P, P, POINTER(c_int), c_int, POINTER(c_int),
                                                   c_int, POINTER(Sampling)]
            lib.atome_generate_sampled.restype = c_int
        # a zeroed buffer larger than the struct, so that a library with more
        # fields than this binding knows cannot write past it
        raw = _aligned_buffer(256)
        rc = lib.atome_get_build_config(ctypes.cast(raw, POINTER(BuildConfig)))
        if rc != 0:
            raise AtomeError("atome_get_build_config", rc)
        bc = ctypes.cast(raw, POINTER(BuildConfig)).contents
        self.config = {name: int(getattr(bc, name)) for name, _t in BuildConfig._fields_}
        # struct sizes: atome_get_build_config reports them (include/atome.h)
        self.model_size = self.config["model_size"]
        self.classifier_size = self.config["classifier_size"]
        if not self.model_size or not self.classifier_size:
            raise AtomeError("atome_get_build_config", rc, "model_size/classifier_size not reported")
        self.vocab_size = self.config["vocab_size"]
        self.max_seq = self.config["max_seq"]
        self.n_layers = self.config["n_layers"]
        self.max_classes = self.config["max_classes"]
        self.state_size = self.config["state_size"]

    def __repr__(self) -> str:
        return f"Engine({self.path!r}, {self.config})"

    def new_state(self):
        st = _aligned_buffer(self.state_size)
        self.lib.atome_init(st)
        return st

    def load_model(self, data: bytes) -> "Model":
        return Model.load(data, engine=self)

    def load_classifier(self, data: bytes) -> "Classifier":
        return Classifier.load(data, engine=self)


def _blob(data) -> bytes:
    if isinstance(data, bytes):
        return data
    return bytes(data)


class _Base:
    _load_func = ""

    def __init__(self, engine: Engine, data: bytes, size: int):
        self.engine = engine
        self.lib = engine.lib
        self._data = _blob(data)  # the model points into these bytes: keep them alive
        self._struct = _aligned_buffer(size)
        self._state = engine.new_state()
        self._last_tokens: Optional[List[int]] = None  # tokens of the last forward pass
        ptr = ctypes.c_char_p(self._data)
        self._data_ptr = ptr
        rc = getattr(self.lib, self._load_func)(self._struct, ptr, len(self._data))
        if rc != 0:
            raise AtomeError(self._load_func, rc, "blob refused")

    @property
    def config(self) -> dict:
        return self.engine.config

    def _forward_done(self, toks: List[int]) -> None:
        self._last_tokens = toks

    def router_entropy(self) -> List[float]:
        """Router entropy (nats) per layer at the last position of the last
        predict_next / logits / classify / generate call of this object."""
        if self._last_tokens is None:
            raise AtomeError("atome_router_entropy", -1, "no forward pass yet")
        L = self.engine.n_layers
        out = (c_float * L)()
        rc = self.lib.atome_router_entropy(self._state, out)
        if rc < 0:
            raise AtomeError("atome_router_entropy", rc)
        return list(out[:rc])

    def router_entropy_all(self, tokens: Optional[Tokens] = None) -> List[List[float]]:
        """Router entropy (nats) [position][layer] over the window (last S) of
        ``tokens``, by default the tokens of the last call.  The C function runs
        the forward pass itself (and leaves its logits in the state)."""
        if tokens is None:
            if self._last_tokens is None:
                raise AtomeError("atome_router_entropy_all", -1, "no tokens and no forward pass yet")
            toks = self._last_tokens
        else:
            toks = _tokens(tokens)
        L = self.engine.n_layers
        cap = self.engine.max_seq * L
        out = (c_float * cap)()
        rc = self.lib.atome_router_entropy_all(self._struct, self._state, _int_array(toks), len(toks), out, cap)
        if rc < 0:
            raise AtomeError("atome_router_entropy_all", rc)
        self._forward_done(toks)
        return [list(out[t * L:(t + 1) * L]) for t in range(rc)]


class Model(_Base):
    """A loaded language model (ATOME01 / ATOME02 / ATOMEP3 blob) with its own state."""

    _load_func = "atome_load"

    @classmethod
    def load(cls, data: bytes, engine: Optional[Engine] = None) -> "Model":
        """Load a blob (bytes are referenced in place, not copied).  Raises
        AtomeError with atome_load's code (-1 magic, -2 truncated, -3 trailing)."""
        engine = engine or Engine()
        return cls(engine, data, engine.model_size)

    def predict_next(self, tokens: Tokens) -> int:
        toks = _tokens(tokens)
        rc = self.lib.atome_predict_next(self._struct, self._state, _int_array(toks), len(toks))
        if rc < 0:
            raise AtomeError("atome_predict_next", rc)
        self._forward_done(toks)
        return rc

    def last_logits(self) -> List[float]:
        """Logits of the last predict_next (atome_get_logits)."""
        p = self.lib.atome_get_logits(self._state)
        if not p:
            raise AtomeError("atome_get_logits", 0, "null")
        return list(p[: self.engine.vocab_size])

    def logits(self, tokens: Tokens) -> List[float]:
        """predict_next(tokens), then its V logits."""
        self.predict_next(tokens)
        return self.last_logits()

    def generate(self, prompt: Tokens, max_tokens: int) -> List[int]:
        """Greedy continuation (atome_generate): the generated tokens."""
        toks = _tokens(prompt)
        out = (c_int * max(1, min(max_tokens, self.engine.max_seq)))()  # never more than S
        n = self.lib.atome_generate(self._struct, self._state, _int_array(toks), len(toks), out, max_tokens)
        if n < 0:
            raise AtomeError("atome_generate", n)
        return self._generated(toks, list(out[:n]))

    def generate_sampled(self, prompt: Tokens, max_tokens: int, temperature: float = 1.0,
                         top_k: int = 0, top_p: float = 1.0, seed: int = 0) -> List[int]:
        """Sampled continuation (atome_generate_sampled, CONTRACT.md)."""
        toks = _tokens(prompt)
        params = Sampling(temperature=temperature, top_k=top_k, top_p=top_p, reserved=0,
                          seed=seed & 0xFFFFFFFFFFFFFFFF)
        out = (c_int * max(1, min(max_tokens, self.engine.max_seq)))()
        n = self.lib.atome_generate_sampled(self._struct, self._state, _int_array(toks), len(toks),
                                            out, max_tokens, ctypes.byref(params))
        if n < 0:
            raise AtomeError("atome_generate_sampled", n)
        return self._generated(toks, list(out[:n]))

    def _generated(self, prompt: List[int], out: List[int]) -> List[int]:
        if out:  # the last forward pass was predict_next(prompt + out[:-1])
            self._forward_done(prompt[: self.engine.max_seq] + out[:-1])
        return out


class Classifier(_Base):
    """A loaded classifier (ATOMECL01 / ATOMECL02 blob) with its own state."""

    _load_func = "atome_classifier_load"

    @classmethod
    def load(cls, data: bytes, engine: Optional[Engine] = None) -> "Classifier":
        """Load a classifier blob (referenced in place).  Raises AtomeError with
        atome_classifier_load's code."""
        engine = engine or Engine()
        return cls(engine, data, engine.classifier_size)

    @property
    def n_classes(self) -> int:
        return struct.unpack_from("<i", self._data, 9)[0]

    def classify(self, tokens: Tokens) -> Tuple[int, List[float]]:
        """(class, n_classes logits)."""
        toks = _tokens(tokens)
        out = (c_float * max(1, self.engine.max_classes))()
        rc = self.lib.atome_classify(self._struct, self._state, _int_array(toks), len(toks), out)
        if rc < 0:
            raise AtomeError("atome_classify", rc)
        self._forward_done(toks)
        return rc, list(out[: self.n_classes])
