"""Independent numpy reference of the Atome engine (docs/ARITHMETIC.md).

Written from /work/shared/SPEC.md and docs/CONTRACT.md only (not from the
Rust sources), so it can check the library.  Arithmetic is binary32 in the
the contract's order: sequential sums are ``np.add.accumulate`` on float32 (a single
left-to-right accumulator), there is no FMA.  expf/tanhf are evaluated in
float64 and rounded to float32 (the correctly rounded value, almost always),
so results are bit-exact with the contract (docs/) arithmetic except where a libm's
expf/tanhf is off by an ulp.

Contents:
  * Config              the ATOME_* knobs (golden-style keys V, D, L, DH, K, TOPK, S)
  * parse_blob          ATOME01, ATOMECL01, ATOME02, ATOMECL02, ATOMEP3 -> Weights
  * write_blob          Weights -> bytes in any of these formats
  * random_weights      random Weights shaped like trained ones (any config)
  * convert_blob        re-encode a blob into another format (01 <-> 02 ...)
  * Forward             the forward pass, incremental over positions
  * predict_next, logits, generate, classify, router_entropy(_all)
  * splitmix64, sample_from_logits, generate_sampled (CONTRACT.md sampling)
"""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass, field, replace
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

F32 = np.float32
_ZERO = F32(0.0)

# --------------------------------------------------------------------------
# configuration


@dataclass(frozen=True)
class Config:
    V: int = 256
    D: int = 64
    L: int = 4
    DH: int = 16
    K: int = 5
    TOPK: int = 4
    S: int = 32
    MAX_CLASSES: int = 16

    _ALIASES = {
        "V": ("V", "vocab_size", "ATOME_VOCAB_SIZE"),
        "D": ("D", "d_model", "ATOME_D_MODEL"),
        "L": ("L", "n_layers", "ATOME_N_LAYERS"),
        "DH": ("DH", "d_head", "ATOME_D_HEAD"),
        "K": ("K", "kernel_size", "ATOME_KERNEL_SIZE"),
        "TOPK": ("TOPK", "top_k", "ATOME_TOP_K"),
        "S": ("S", "max_seq", "ATOME_MAX_SEQ"),
        "MAX_CLASSES": ("MAX_CLASSES", "max_classes", "ATOME_MAX_CLASSES"),
    }

    @classmethod
    def of(cls, c=None, **kw) -> "Config":
        """Config from a Config, a dict with golden-style keys (V, D, ...),
        build-config names (vocab_size, d_model, ...) or ATOME_* names."""
        if isinstance(c, Config):
            return replace(c, **kw) if kw else c
        d = dict(c or {})
        d.update(kw)
        args = {}
        for name, aliases in cls._ALIASES.items():
            for a in aliases:
                if a in d:
                    args[name] = int(d[a])
                    break
        return cls(**args)


# --------------------------------------------------------------------------
# blob formats

MAGIC_LM = {b"ATOME01": "01", b"ATOME02": "02", b"ATOMEP3": "P3"}
MAGIC_CLS = {b"ATOMECL01": "01", b"ATOMECL02": "02"}
FORMATS = ("ATOME01", "ATOME02", "ATOMEP3", "ATOMECL01", "ATOMECL02")

# ATOMEP3 3-bit codes
_P3_DECODE = np.array([0, 1, -1, 3, -3, 9, -9, 0], dtype=np.int8)
_P3_ENCODE = {0: 0, 1: 1, -1: 2, 3: 3, -3: 4, 9: 5, -9: 6}
# ATOME01 2-bit codes
_T2_DECODE = np.array([0, 1, 0, -1], dtype=np.int8)


class BlobError(ValueError):
    """A blob the engine must refuse; ``code`` is atome_load's return code."""

    def __init__(self, code: int, msg: str):
        super().__init__(f"{msg} (code {code})")
        self.code = code


def payload_bytes(enc: str, n: int) -> int:
    """Bytes after the f32 scale of a ternary/conv record of n weights."""
    if enc == "01":
        return (n + 3) // 4
    if enc == "02":
        return (n + 4) // 5
    if enc == "P3":
        return 3 * ((n + 7) // 8)
    raise ValueError(enc)


def body_size(cfg: Config, enc: str) -> int:
    """Size of the body after the magic (ATOME0x layout)."""
    V, D, L, DH, K = cfg.V, cfg.D, cfg.L, cfg.DH, cfg.K

    def T(n):
        return 4 + payload_bytes(enc, n)

    per = 8 * D + T(D * K) + 12 * D + 2 * T(DH * D) + T(D * D) + T(3 * D)
    return T(V * D) + L * per + 8 * D + T(V * D)


def blob_size(cfg: Config, fmt: str, n_classes: int = 0) -> int:
    enc = _enc_of(fmt)
    if fmt.startswith("ATOMECL"):
        return 9 + 4 + body_size(cfg, enc) + 4 + payload_bytes(enc, n_classes * cfg.D)
    return 7 + body_size(cfg, enc)


def _enc_of(fmt: str) -> str:
    return {"ATOME01": "01", "ATOME02": "02", "ATOMEP3": "P3",
            "ATOMECL01": "01", "ATOMECL02": "02"}[fmt]


@dataclass
class Ternary:
    """A ternary (or P3) matrix: integer weights (rows x cols) and a scale."""
    w: np.ndarray  # int8, shape (rows, cols)
    scale: np.float32

    @property
    def wf(self) -> np.ndarray:  # float32 weights, cached
        c = self.__dict__.get("_wf")
        if c is None:
            c = self.w.astype(F32)
            self.__dict__["_wf"] = c
        return c


@dataclass
class Layer:
    norm_g: np.ndarray
    norm_b: np.ndarray
    conv: Ternary  # (D, K): trit c*K + k
    ssm_a: np.ndarray
    ssm_b: np.ndarray
    ssm_c: np.ndarray
    wq: Ternary
    wk: Ternary
    wv: Ternary
    router: Ternary


@dataclass
class Weights:
    cfg: Config
    embed: Ternary
    layers: List[Layer]
    final_g: np.ndarray
    final_b: np.ndarray
    unembed: Ternary
    head: Optional[Ternary] = None  # classifier only
    fmt: str = "ATOME01"

    @property
    def n_classes(self) -> int:
        return 0 if self.head is None else self.head.w.shape[0]

    @property
    def is_classifier(self) -> bool:
        return self.head is not None


class _Reader:
    def __init__(self, buf: bytes, off: int, enc: str):
        self.buf = buf
        self.off = off
        self.enc = enc

    def floats(self, n: int) -> np.ndarray:
        a = np.frombuffer(self.buf, dtype="<f4", count=n, offset=self.off).astype(F32)
        self.off += 4 * n
        return a

    def ternary(self, rows: int, cols: int) -> Ternary:
        n = rows * cols
        scale = F32(np.frombuffer(self.buf, dtype="<f4", count=1, offset=self.off)[0])
        nb = payload_bytes(self.enc, n)
        b = np.frombuffer(self.buf, dtype=np.uint8, count=nb, offset=self.off + 4)
        self.off += 4 + nb
        if self.enc == "01":
            codes = (b[:, None] >> np.array([0, 2, 4, 6], np.uint8)) & 3
            w = _T2_DECODE[codes.reshape(-1)[:n]]
        elif self.enc == "02":
            if np.any(b > 242):
                raise BlobError(-4, "ATOME02 byte above 242")
            d = b.astype(np.int16)
            digits = np.stack([(d // p) % 3 for p in (1, 3, 9, 27, 81)], axis=1)
            w = (digits.reshape(-1)[:n] - 1).astype(np.int8)
        else:  # P3
            t = b.reshape(-1, 3).astype(np.uint32)
            words = t[:, 0] | (t[:, 1] << 8) | (t[:, 2] << 16)
            codes = (words[:, None] >> (3 * np.arange(8, dtype=np.uint32))) & 7
            w = _P3_DECODE[codes.reshape(-1)[:n]]
        return Ternary(np.ascontiguousarray(w.reshape(rows, cols)), scale)


def parse_blob(blob: bytes, cfg, classifier: Optional[bool] = None) -> Weights:
    """Parse a blob for configuration cfg.  Raises BlobError(code) with the
    code atome_load / atome_classifier_load return (-1 magic/short header or
    n_classes out of range, -2 truncated, -3 more than 15 trailing bytes, -4
    an ATOME02 byte above 242)."""
    cfg = Config.of(cfg)
    blob = bytes(blob)
    if classifier is None:
        classifier = blob[:7] == b"ATOMECL"
    if classifier:
        if len(blob) < 9 or blob[:9] not in MAGIC_CLS:
            raise BlobError(-1, "bad classifier magic")
        enc = MAGIC_CLS[blob[:9]]
        fmt = blob[:9].decode()
        if len(blob) < 13:
            raise BlobError(-2, "truncated")
        (nc,) = struct.unpack_from("<i", blob, 9)
        if not 1 <= nc <= cfg.MAX_CLASSES:
            raise BlobError(-1, f"n_classes {nc} out of range")
        need = blob_size(cfg, fmt, nc)
        off = 13
    else:
        if len(blob) < 7 or blob[:7] not in MAGIC_LM:
            raise BlobError(-1, "bad magic")
        enc = MAGIC_LM[blob[:7]]
        fmt = blob[:7].decode()
        need = blob_size(cfg, fmt)
        off = 7
        nc = 0
    if len(blob) < need:
        raise BlobError(-2, f"truncated: {len(blob)} < {need}")
    if len(blob) - need > 15:
        raise BlobError(-3, f"{len(blob) - need} trailing bytes")
    V, D, DH, K = cfg.V, cfg.D, cfg.DH, cfg.K
    r = _Reader(blob, off, enc)
    embed = r.ternary(V, D)
    layers = []
    for _ in range(cfg.L):
        g = r.floats(D)
        b = r.floats(D)
        conv = r.ternary(D, K)
        a = r.floats(D)
        sb = r.floats(D)
        sc = r.floats(D)
        wq = r.ternary(DH, D)
        wk = r.ternary(DH, D)
        wv = r.ternary(D, D)
        router = r.ternary(3, D)
        layers.append(Layer(g, b, conv, a, sb, sc, wq, wk, wv, router))
    fg = r.floats(D)
    fb = r.floats(D)
    unembed = r.ternary(V, D)
    head = r.ternary(nc, D) if classifier else None
    assert r.off == need, (r.off, need)
    return Weights(cfg, embed, layers, fg, fb, unembed, head, fmt)


class _Writer:
    def __init__(self, enc: str):
        self.enc = enc
        self.parts: List[bytes] = []

    def floats(self, a) -> None:
        self.parts.append(np.asarray(a, dtype="<f4").tobytes())

    def ternary(self, t: Ternary) -> None:
        w = np.asarray(t.w).reshape(-1).astype(np.int64)
        n = w.size
        self.parts.append(struct.pack("<f", float(t.scale)))
        if self.enc == "01":
            if np.any(np.abs(w) > 1):
                raise ValueError("weights outside {-1,0,1} cannot be written as ATOME01")
            codes = np.where(w == 1, 1, np.where(w == -1, 3, 0)).astype(np.uint8)
            codes = np.concatenate([codes, np.zeros((-n) % 4, np.uint8)]).reshape(-1, 4)
            b = codes[:, 0] | (codes[:, 1] << 2) | (codes[:, 2] << 4) | (codes[:, 3] << 6)
            self.parts.append(b.astype(np.uint8).tobytes())
        elif self.enc == "02":
            if np.any(np.abs(w) > 1):
                raise ValueError("weights outside {-1,0,1} cannot be written as ATOME02")
            d = np.concatenate([w + 1, np.ones((-n) % 5, np.int64)]).reshape(-1, 5)
            b = d[:, 0] + 3 * d[:, 1] + 9 * d[:, 2] + 27 * d[:, 3] + 81 * d[:, 4]
            self.parts.append(b.astype(np.uint8).tobytes())
        else:
            lut = np.full(19, -1, np.int64)
            for v, c in _P3_ENCODE.items():
                lut[v + 9] = c
            if np.any(np.abs(w) > 9) or np.any(lut[w + 9] < 0):
                raise ValueError("weights outside {0,+-1,+-3,+-9}")
            codes = np.concatenate([lut[w + 9], np.zeros((-n) % 8, np.int64)]).reshape(-1, 8)
            words = np.zeros(codes.shape[0], np.int64)
            for i in range(8):
                words |= codes[:, i] << (3 * i)
            b = np.stack([words & 255, (words >> 8) & 255, (words >> 16) & 255], axis=1)
            self.parts.append(b.astype(np.uint8).tobytes())

    def bytes(self) -> bytes:
        return b"".join(self.parts)


def write_blob(w: Weights, fmt: Optional[str] = None) -> bytes:
    """Serialise Weights as fmt (default: ATOME01, or ATOMECL01 with a head).
    A classifier's Weights written as ATOME0x gives its language-model body;
    a language model cannot be written as ATOMECL (no head)."""
    if fmt is None:
        fmt = "ATOMECL01" if w.is_classifier else "ATOME01"
    if fmt not in FORMATS:
        raise ValueError(fmt)
    enc = _enc_of(fmt)
    wr = _Writer(enc)
    wr.parts.append(fmt.encode())
    cls = fmt.startswith("ATOMECL")
    if cls:
        if w.head is None:
            raise ValueError("classifier format needs a head")
        wr.parts.append(struct.pack("<i", w.n_classes))
    wr.ternary(w.embed)
    for ly in w.layers:
        wr.floats(ly.norm_g)
        wr.floats(ly.norm_b)
        wr.ternary(ly.conv)
        wr.floats(ly.ssm_a)
        wr.floats(ly.ssm_b)
        wr.floats(ly.ssm_c)
        wr.ternary(ly.wq)
        wr.ternary(ly.wk)
        wr.ternary(ly.wv)
        wr.ternary(ly.router)
    wr.floats(w.final_g)
    wr.floats(w.final_b)
    wr.ternary(w.unembed)
    if cls:
        wr.ternary(w.head)
    out = wr.bytes()
    assert len(out) == blob_size(w.cfg, fmt, w.n_classes), (len(out), fmt)
    return out


def convert_blob(blob: bytes, cfg, fmt: str) -> bytes:
    """Re-encode blob (any format) as fmt: ATOME01 <-> ATOME02, ATOMECL01 <->
    ATOMECL02, and ATOME01/02 -> ATOMEP3 (same weights)."""
    w = parse_blob(blob, cfg)
    if fmt.startswith("ATOMECL") != w.is_classifier:
        raise ValueError("cannot convert between classifier and language model")
    return write_blob(w, fmt)


def poison(w: "Weights", where: str, bad) -> "Weights":
    """Puts the non-finite value `bad` into one parameter of w (in place):
    `where` is embed, wq, gamma, ssm_a, ssm_b or unembed (the places the
    non-finite blob tests cover). Returns w."""
    bad = np.float32(bad)
    if where == "embed":
        w.embed.scale = bad
    elif where == "wq":
        w.layers[0].wq.scale = bad
    elif where == "gamma":
        w.layers[1].norm_g[3] = bad
    elif where == "ssm_a":
        w.layers[0].ssm_a[:] = bad
    elif where == "ssm_b":
        w.layers[2].ssm_b[5] = bad
    elif where == "unembed":
        w.unembed.scale = bad
    else:
        raise ValueError(where)
    return w


def random_weights(cfg, seed: int = 0, p3: bool = False, n_classes: int = 0,
                   sparsity: float = 0.45) -> Weights:
    """Random Weights shaped like trained ones: about 45% zero trits, scales
    near 1/sqrt(fan-in), norms near (1, 0), SSM decay tanh(a) in (0.3, 0.95).
    p3=True draws weights from {0, +-1, +-3, +-9} (ATOMEP3 only)."""
    cfg = Config.of(cfg)
    rng = np.random.default_rng(seed)
    V, D, DH, K = cfg.V, cfg.D, cfg.DH, cfg.K

    def tern(rows, cols, scale):
        if p3:
            vals = np.array([0, 1, -1, 3, -3, 9, -9], np.int8)
            probs = np.array([sparsity, 0.2, 0.2, 0.06, 0.06, 0.015, 0.015])
            probs = probs / probs.sum()
            w = rng.choice(vals, size=(rows, cols), p=probs)
            scale = scale / 2.0
        else:
            q = (1.0 - sparsity) / 2.0
            w = rng.choice(np.array([0, 1, -1], np.int8), size=(rows, cols),
                           p=[sparsity, q, q])
        s = F32(scale * rng.uniform(0.7, 1.3))
        return Ternary(w.astype(np.int8), s)

    def fl(n, mu, sd):
        return (mu + sd * rng.standard_normal(n)).astype(F32)

    embed = tern(V, D, 0.8)
    layers = []
    for _ in range(cfg.L):
        layers.append(Layer(
            norm_g=fl(D, 1.0, 0.15), norm_b=fl(D, 0.0, 0.05),
            conv=tern(D, K, 0.4),
            ssm_a=np.arctanh(rng.uniform(0.3, 0.95, D)).astype(F32),
            ssm_b=fl(D, 0.0, 0.4), ssm_c=fl(D, 0.0, 0.4),
            wq=tern(DH, D, 1.5 / math.sqrt(D)), wk=tern(DH, D, 1.5 / math.sqrt(D)),
            wv=tern(D, D, 1.0 / math.sqrt(D)), router=tern(3, D, 1.0 / math.sqrt(D))))
    head = tern(n_classes, D, 1.0 / math.sqrt(D)) if n_classes else None
    return Weights(cfg, embed, layers, fl(D, 1.0, 0.1), fl(D, 0.0, 0.05),
                   tern(V, D, 2.0 / math.sqrt(D)), head,
                   "ATOMEP3" if p3 else ("ATOMECL01" if n_classes else "ATOME01"))


def random_blob(cfg, fmt: str = "ATOME01", seed: int = 0, n_classes: int = 4) -> bytes:
    """A random-weight blob of configuration cfg in format fmt."""
    cls = fmt.startswith("ATOMECL")
    w = random_weights(cfg, seed, p3=(fmt == "ATOMEP3"), n_classes=n_classes if cls else 0)
    return write_blob(w, fmt)


# --------------------------------------------------------------------------
# float32 kernels in the contract (docs/)'s order


_MATH = {"mode": "f64"}


def set_math(mode: str) -> None:
    """'f64': expf/tanhf = float64 exp/tanh rounded to float32 (the default);
    'libm': the C library's expf/tanhf through ctypes.  With glibc on x86-64
    the 'libm' mode reproduces the reference engine's golden logits bit for
    bit (the goldens were made with glibc's expf/tanhf)."""
    if mode == "libm":
        _libm_funcs()
    elif mode != "f64":
        raise ValueError(mode)
    _MATH["mode"] = mode


def _libm_funcs():
    if "libm" not in _MATH:
        import ctypes
        import ctypes.util

        name = ctypes.util.find_library("m") or "libm.so.6"
        lib = ctypes.CDLL(name)
        fs = []
        for fn in ("expf", "tanhf"):
            f = getattr(lib, fn)
            f.restype = ctypes.c_float
            f.argtypes = [ctypes.c_float]
            fs.append(np.frompyfunc(lambda x, f=f: f(float(x)), 1, 1))
        _MATH["libm"] = fs
    return _MATH["libm"]


def expf(v) -> np.ndarray:
    if _MATH["mode"] == "libm":
        return np.asarray(_libm_funcs()[0](np.asarray(v, F32)), dtype=F32)
    return np.exp(np.asarray(v, dtype=np.float64)).astype(F32)


def tanhf(v) -> np.ndarray:
    if _MATH["mode"] == "libm":
        return np.asarray(_libm_funcs()[1](np.asarray(v, F32)), dtype=F32)
    return np.tanh(np.asarray(v, dtype=np.float64)).astype(F32)


def seqsum(a: np.ndarray) -> np.ndarray:
    """Sequential float32 sum over the last axis, accumulator from +0.0."""
    a = np.asarray(a, dtype=F32)
    if a.shape[-1] == 0:
        return np.zeros(a.shape[:-1], F32)
    # accumulate starts at a[0] instead of +0.0 + a[0]: they differ only in
    # the sign of an all-zero sum, which adding +0.0 fixes.
    return np.add.accumulate(a, axis=-1, dtype=F32)[..., -1] + _ZERO


def matvec(t: Ternary, x: np.ndarray) -> np.ndarray:
    """y = W x for x of shape (..., cols): acc += w*x in column order (for
    ternary weights w*x is exact, i.e. the contract (docs/)'s add/subtract; for P3 it is
    CONTRACT.md's one rounded product then the add), then acc * scale."""
    x = np.asarray(x, dtype=F32)
    terms = t.wf * x[..., None, :]
    return seqsum(terms) * t.scale


def layer_norm(x: np.ndarray, g: np.ndarray, b: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=F32)
    n = F32(x.shape[-1])
    mean = seqsum(x) / n
    d = x - mean[..., None]
    var = seqsum(d * d) / n
    inv = F32(1.0) / np.sqrt(var + F32(1e-5))
    return g * d * inv[..., None] + b


def softmax_rows(v: np.ndarray) -> np.ndarray:
    """contract softmax along the last axis."""
    v = np.asarray(v, dtype=F32)
    mx = v[..., 0].copy()
    for i in range(1, v.shape[-1]):
        mx = np.where(v[..., i] > mx, v[..., i], mx)
    e = expf(v - mx[..., None])
    s = seqsum(e)
    inv = F32(1.0) / (s + F32(1e-10))
    return e * inv[..., None]


def argmax_first(v) -> int:
    v = np.asarray(v)
    best = 0
    mx = v[0]
    for i in range(1, len(v)):
        if v[i] > mx:
            mx = v[i]
            best = i
    return best


def top_slots(scores: np.ndarray, k_eff: int) -> Tuple[np.ndarray, List[int]]:
    """contract top-k: (slot scores, slot indices; -1 for an empty slot)."""
    if np.all(scores > F32(-1e30)):  # finite, no NaN: the stable sort order
        idx = np.argsort(-scores, kind="stable")[:k_eff]
        return scores[idx].astype(F32), [int(i) for i in idx]
    ss = [F32(-1e30)] * k_eff
    ii = [-1] * k_eff
    for j, s in enumerate(scores):
        if s > ss[-1]:
            ss[-1] = s
            ii[-1] = j
            p = k_eff - 1
            while p > 0 and ss[p] > ss[p - 1]:
                ss[p], ss[p - 1] = ss[p - 1], ss[p]
                ii[p], ii[p - 1] = ii[p - 1], ii[p]
                p -= 1
    return np.array(ss, F32), ii


# --------------------------------------------------------------------------
# the forward pass


class Forward:
    """Forward pass over a growing token sequence (at most S positions).

    extend(ids) appends positions; causality makes this equal to a fresh
    computation over the whole sequence (docs/ARITHMETIC.md: the pathways read only h)."""

    def __init__(self, w: Weights):
        self.w = w
        c = w.cfg
        self.cfg = c
        S = c.S
        self.n = 0
        self.H = [np.zeros((S, c.D), F32) for _ in range(c.L)]
        self.Kc = [np.zeros((S, c.DH), F32) for _ in range(c.L)]
        self.Vc = [np.zeros((S, c.D), F32) for _ in range(c.L)]
        self.hs = [np.zeros(c.D, F32) for _ in range(c.L)]
        self.R = [np.zeros((S, 3), F32) for _ in range(c.L)]
        self.x_last: Optional[np.ndarray] = None
        self.inv_sqrt_dh = F32(1.0) / np.sqrt(F32(c.DH))
        self._tanh_a = [tanhf(ly.ssm_a) for ly in w.layers]

    def extend(self, ids: Sequence[int]) -> None:
        c = self.cfg
        ids = [int(t) if 0 <= int(t) < c.V else 0 for t in ids]
        m = len(ids)
        if m == 0:
            return
        t0 = self.n
        if t0 + m > c.S:
            raise ValueError("more than S positions")
        t1 = t0 + m
        w = self.w
        X = w.embed.wf[ids] * w.embed.scale  # (m, D)
        pos = np.arange(t0, t1)
        for l, ly in enumerate(w.layers):
            H = layer_norm(X, ly.norm_g, ly.norm_b)
            self.H[l][t0:t1] = H
            Hall = self.H[l]
            r = softmax_rows(matvec(ly.router, H))
            self.R[l][t0:t1] = r
            # local: causal conv, taps k = 0..K-1 in order
            acc = np.zeros((m, c.D), F32)
            cw = ly.conv.wf  # (D, K)
            for k in range(c.K):
                src = pos - k
                ok = (src >= 0)[:, None]
                acc = np.where(ok, acc + cw[:, k] * Hall[np.maximum(src, 0)], acc)
            local = acc * ly.conv.scale
            # state
            hs = self.hs[l]
            ta = self._tanh_a[l]
            state = np.empty((m, c.D), F32)
            for i in range(m):
                hs = ta * hs + ly.ssm_b * H[i]
                state[i] = ly.ssm_c * hs
            self.hs[l] = hs
            # sparse attention
            Q = matvec(ly.wq, H)
            self.Kc[l][t0:t1] = matvec(ly.wk, H)
            self.Vc[l][t0:t1] = matvec(ly.wv, H)
            keys = self.Kc[l][:t1]
            vals = self.Vc[l][:t1]
            scores_all = seqsum(Q[:, None, :] * keys[None, :, :]) * self.inv_sqrt_dh
            sparse = np.empty((m, c.D), F32)
            for i in range(m):
                t = t0 + i
                k_eff = min(c.TOPK, t + 1)
                ss, ii = top_slots(scores_all[i, : t + 1], k_eff)
                p = softmax_rows(ss)
                out = np.zeros(c.D, F32)
                for s in range(k_eff):
                    if ii[s] >= 0:
                        out = out + p[s] * vals[ii[s]]
                sparse[i] = out
            X = X + ((r[:, 0:1] * local + r[:, 1:2] * state) + r[:, 2:3] * sparse)
        self.n = t1
        self.x_last = X[-1].copy()

    def final_hidden(self) -> np.ndarray:
        return layer_norm(self.x_last, self.w.final_g, self.w.final_b)

    def logits(self) -> np.ndarray:
        return matvec(self.w.unembed, self.final_hidden())

    def class_logits(self) -> np.ndarray:
        return matvec(self.w.head, self.final_hidden())

    def entropy(self) -> np.ndarray:
        """(n, L) router entropies in nats, float64."""
        R = np.stack([r[: self.n] for r in self.R], axis=1).astype(np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            t = np.where(R > 0, R * np.log(np.where(R > 0, R, 1.0)), 0.0)
        return -t.sum(axis=-1)


def window(tokens: Sequence[int], S: int) -> List[int]:
    tokens = [int(t) for t in tokens]
    if len(tokens) < 1:
        raise ValueError("n < 1")
    return tokens[-S:] if len(tokens) > S else tokens


def run(w: Weights, tokens: Sequence[int]) -> Forward:
    f = Forward(w)
    f.extend(window(tokens, w.cfg.S))
    return f


def logits(w: Weights, tokens: Sequence[int]) -> np.ndarray:
    return run(w, tokens).logits()


def predict_next(w: Weights, tokens: Sequence[int]) -> Tuple[int, np.ndarray]:
    lg = logits(w, tokens)
    return argmax_first(lg), lg


def classify(w: Weights, tokens: Sequence[int]) -> Tuple[int, np.ndarray]:
    if w.head is None:
        raise ValueError("not a classifier")
    lg = run(w, tokens).class_logits()
    return argmax_first(lg), lg


def router_entropy_all(w: Weights, tokens: Sequence[int]) -> np.ndarray:
    """(n_window, L) router entropy per position (after the last-S window) and layer."""
    return run(w, tokens).entropy()


def router_entropy(w: Weights, tokens: Sequence[int]) -> np.ndarray:
    """(L,) router entropy of the last position."""
    return router_entropy_all(w, tokens)[-1]


def _generate(w: Weights, prompt, max_tokens, choose) -> List[int]:
    S = w.cfg.S
    if len(prompt) < 1 or max_tokens < 1:
        return []
    seq = [int(t) for t in prompt[:S]]
    out: List[int] = []
    if len(seq) >= S:
        return out
    f = Forward(w)
    f.extend(seq)
    while len(out) < max_tokens and len(seq) < S:
        lg = f.logits()
        tok = choose(lg)
        out.append(tok)
        seq.append(tok)
        if len(seq) < S and len(out) < max_tokens:
            f.extend([tok])
    return out


def generate(w: Weights, prompt: Sequence[int], max_tokens: int) -> List[int]:
    """atome_generate: greedy continuation (returns the generated tokens)."""
    return _generate(w, prompt, max_tokens, argmax_first)


# --------------------------------------------------------------------------
# sampling (CONTRACT.md)

_M64 = (1 << 64) - 1


class SplitMix64:
    def __init__(self, seed: int):
        self.state = seed & _M64

    def next(self) -> int:
        self.state = (self.state + 0x9E3779B97F4A7C15) & _M64
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _M64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _M64
        return z ^ (z >> 31)

    def uniform(self) -> np.float32:
        return F32(self.next() >> 40) * F32(2.0 ** -24)


def sampling_candidates(lg: np.ndarray, temperature: float, top_k: int,
                        top_p: float) -> Tuple[np.ndarray, np.ndarray]:
    """(token ids of the final set in order, their e values) for temperature > 0."""
    lg = np.asarray(lg, dtype=F32)
    V = lg.shape[0]
    z = lg / F32(temperature)
    order = np.argsort(-z, kind="stable")
    if 1 <= top_k < V:
        order = order[:top_k]
    m = z[order[0]]
    e = expf(z[order] - m)
    tp = F32(top_p)
    if F32(0) < tp < F32(1):
        Z = seqsum(e)
        thr = tp * Z
        c = _ZERO
        keep = 0
        for i in range(len(order)):
            if i > 0 and not (c < thr):
                break
            keep += 1
            c = c + e[i]
        order = order[:keep]
        e = e[:keep]
    return order, e


def sample_from_logits(lg: np.ndarray, temperature: float, top_k: int, top_p: float,
                       u: np.float32) -> int:
    order, e = sampling_candidates(lg, temperature, top_k, top_p)
    Zp = seqsum(e)
    t = F32(u) * Zp
    c = _ZERO
    for i in range(len(order)):
        c = c + e[i]
        if t < c:
            return int(order[i])
    return int(order[-1])


def sampling_probs(lg: np.ndarray, temperature: float, top_k: int = 0,
                   top_p: float = 1.0) -> np.ndarray:
    """(V,) float64 probability of each token under one sampled draw."""
    lg = np.asarray(lg, dtype=F32)
    p = np.zeros(lg.shape[0])
    if not (temperature > 0):
        p[argmax_first(lg)] = 1.0
        return p
    order, e = sampling_candidates(lg, temperature, top_k, top_p)
    p[order] = e.astype(np.float64) / float(e.astype(np.float64).sum())
    return p


def generate_sampled(w: Weights, prompt: Sequence[int], max_tokens: int,
                     temperature: float, top_k: int = 0, top_p: float = 1.0,
                     seed: int = 0, logits_fn=None) -> List[int]:
    """atome_generate_sampled.  logits_fn(seq) -> V logits can replace the
    numpy forward (to check the sampling rule alone on another engine's logits)."""
    rng = SplitMix64(seed)
    greedy = not (temperature > 0)  # also NaN

    def choose(lg):
        if greedy:
            return argmax_first(lg)
        return sample_from_logits(lg, temperature, top_k, top_p, rng.uniform())

    if logits_fn is None:
        return _generate(w, prompt, max_tokens, choose)
    S = w.cfg.S
    if len(prompt) < 1 or max_tokens < 1:
        return []
    seq = [int(t) for t in prompt[:S]]
    out: List[int] = []
    while len(out) < max_tokens and len(seq) < S:
        tok = choose(np.asarray(logits_fn(seq), F32))
        out.append(tok)
        seq.append(tok)
    return out


# --------------------------------------------------------------------------
# golden helpers


def bits_to_f32(hexes: Sequence[str]) -> np.ndarray:
    return np.array([int(h, 16) for h in hexes], dtype=np.uint32).view(F32)


def f32_to_bits(a) -> List[str]:
    return ["%08x" % int(v) for v in np.asarray(a, F32).view(np.uint32)]
