"""Dimensions of a bare blob from its size and contents (docs/FORMATS.md).

A bare blob stores no dimensions. Every configuration in the search space
(V in VOCABS, D <= MAX_D, L <= MAX_L, DH <= D, K <= MAX_K) whose layout has
the blob's size, up to 15 trailing bytes, is a candidate; a candidate whose
values no trainer writes (scales outside [1e-12, 1e6] or not finite, norm and
SSM floats that are not finite, above 1e6 or non-zero below 1e-30, codes no
encoder writes) is implausible. The dimensions are inferred only when exactly
one plausible candidate remains; otherwise InferError names the candidates
and asks for ``dims=`` or an ATOMEF container. The same search and the same
checks as the CLI's ``inspect`` (cli/src/blob.rs).
"""

from __future__ import annotations

import math
import struct
from typing import List, Tuple

VOCABS = (256, 32, 40, 64, 128, 512)
MAX_D = 1024
MAX_L = 32
MAX_K = 9
MAX_TRAILING = 15
DEFAULT_TOP_K = 4

LM_MAGICS = {b"ATOME01": 0, b"ATOME02": 1, b"ATOMEP3": 2}
CL_MAGICS = {b"ATOMECL01": 0, b"ATOMECL02": 1}

# (weights per unit, bytes per unit) of each packing
_UNIT = [(4, 1), (5, 1), (8, 3)]

# trit2 bytes holding the unused code 10 in any of their four 2-bit fields
_TRIT2_BAD = bytes(1 if any((b >> (2 * i)) & 3 == 2 for i in range(4)) else 0 for b in range(256))
_BASE3_BAD = bytes(1 if b > 242 else 0 for b in range(256))


class InferError(ValueError):
    """The dimensions of a bare blob cannot be told from its bytes."""


def _t(packing: int, n: int) -> int:
    per, nb = _UNIT[packing]
    return 4 + nb * ((n + per - 1) // per)


def blob_len(packing: int, v: int, d: int, l: int, dh: int, k: int, n_classes: int = 0) -> int:
    """Exact bytes of a blob (a classifier when n_classes > 0)."""
    t = lambda n: _t(packing, n)  # noqa: E731
    block = 8 * d + t(d * k) + 12 * d + 2 * t(dh * d) + t(d * d) + t(3 * d)
    body = 2 * t(v * d) + l * block + 8 * d
    return (13 + body + t(n_classes * d)) if n_classes else (7 + body)


def _kind(blob: bytes) -> Tuple[int, int]:
    """(packing, n_classes) from the magic (n_classes 0 for a language model)."""
    if blob[:7] in LM_MAGICS:
        return LM_MAGICS[blob[:7]], 0
    if blob[:9] in CL_MAGICS:
        if len(blob) < 13:
            raise InferError(f"a {len(blob)}-byte classifier blob is truncated: the class count needs 13 bytes")
        n = struct.unpack_from("<i", blob, 9)[0]
        if n < 1:
            raise InferError(f"classifier blob: n_classes {n} (expected >= 1)")
        return CL_MAGICS[blob[:9]], n
    if blob[:6] == b"ATOMEF":
        raise InferError("an ATOMEF container: its header gives the dimensions")
    if len(blob) < 7:
        raise InferError(f"{len(blob)} bytes: truncated, shorter than any magic (7 bytes)")
    raise InferError(f"not an atome blob: unknown magic {blob[:9]!r} (expected ATOME01, ATOME02, ATOMEP3, "
                     "ATOMECL01, ATOMECL02 or an ATOMEF container)")


def size_candidates(blob: bytes) -> List[dict]:
    """Every configuration of the search space whose layout has this size."""
    packing, nc = _kind(blob)
    per, nb = _UNIT[packing]
    t = lambda n: _t(packing, n)  # noqa: E731
    n = len(blob)
    out = []
    for v in VOCABS:
        for d in range(1, MAX_D + 1):
            fixed = (13 + t(nc * d) if nc else 7) + 2 * t(v * d) + 8 * d
            r = n - fixed
            if r <= 0:
                break
            for k in range(1, MAX_K + 1):
                a = 8 * d + t(d * k) + 12 * d + t(d * d) + t(3 * d)  # the block without Wq, Wk
                least = a + 2 * t(d)  # DH = 1
                if r < least:
                    break
                for l in range(1, min(MAX_L, r // least) + 1):
                    # l * (a + 2 t(dh d)) in [r - 15, r]: the payload units u of Wq.
                    lo2 = -(-(r - MAX_TRAILING) // l) - a
                    hi2 = r // l - a
                    u_lo = max(1, -(-(lo2 - 8) // (2 * nb)))
                    u_hi = (hi2 - 8) // (2 * nb)
                    if u_hi < u_lo:
                        continue
                    dh_lo = max(1, (u_lo - 1) * per // d + 1)
                    dh_hi = min(d, u_hi * per // d)
                    for dh in range(dh_lo, dh_hi + 1):
                        size = blob_len(packing, v, d, l, dh, k, nc)
                        if 0 <= n - size <= MAX_TRAILING:
                            out.append(dict(vocab_size=v, d_model=d, n_layers=l, d_head=dh, kernel_size=k,
                                            top_k=DEFAULT_TOP_K, n_classes=nc, trailing=n - size))
    return out


def _odd_float(x: float) -> bool:
    return not math.isfinite(x) or abs(x) > 1e6 or (x != 0.0 and abs(x) < 1e-30)


def _parts(blob: bytes, c: dict):
    """(offset, is_tensor, count) of every part, in blob order."""
    packing, nc = _kind(blob)
    v, d, l, dh, k = c["vocab_size"], c["d_model"], c["n_layers"], c["d_head"], c["kernel_size"]
    at = 13 if nc else 7
    seq = [(True, v * d)]
    seq += [(False, d), (False, d), (True, d * k), (False, d), (False, d), (False, d),
            (True, dh * d), (True, dh * d), (True, d * d), (True, 3 * d)] * l
    seq += [(False, d), (False, d), (True, v * d)] + ([(True, nc * d)] if nc else [])
    for is_t, n in seq:
        yield at, is_t, n
        at += _t(packing, n) if is_t else 4 * n


def _plausible(blob: bytes, c: dict) -> bool:
    """True when no value read with the candidate's dimensions is one no
    trainer writes: scales and floats first (cheap), then the codes."""
    packing, _nc = _kind(blob)
    parts = list(_parts(blob, c))
    for at, is_t, n in parts:
        if is_t:
            s = struct.unpack_from("<f", blob, at)[0]
            if not (math.isfinite(s) and 1e-12 <= abs(s) <= 1e6):
                return False
        elif any(_odd_float(x) for x in struct.unpack_from(f"<{n}f", blob, at)):
            return False
    for at, is_t, n in parts:
        if not is_t:
            continue
        payload = blob[at + 4:at + _t(packing, n)]
        if packing == 0 and payload.translate(_TRIT2_BAD).count(1):
            return False
        if packing == 1 and payload.translate(_BASE3_BAD).count(1):
            return False
        if packing == 2:
            for u in range(0, len(payload), 3):
                w = int.from_bytes(payload[u:u + 3], "little")
                if any((w >> (3 * i)) & 7 == 7 for i in range(8)):
                    return False
    return True


def _show(c: dict) -> str:
    s = "V={vocab_size} D={d_model} L={n_layers} DH={d_head} K={kernel_size}".format(**c)
    return s + (f" (+{c['trailing']} trailing bytes)" if c.get("trailing") else "")


def infer(blob: bytes, name: str = "blob") -> dict:
    """The one plausible configuration of a bare blob, or InferError."""
    cands = size_candidates(blob)
    if not cands:
        raise InferError(f"{name}: no configuration (V in {list(VOCABS)}, D <= {MAX_D}, L <= {MAX_L}, DH <= D, "
                         f"K <= {MAX_K}) has a layout of {len(blob)} bytes (up to 15 trailing): truncated or "
                         "not a whole blob; give dims= or use an ATOMEF container")
    plausible = [c for c in cands if _plausible(blob, c)]
    if len(plausible) == 1:
        c = dict(plausible[0])
        c.pop("trailing")
        return c
    shown = plausible or cands
    listed = "; ".join(_show(c) for c in shown[:8]) + (f"; ... {len(shown) - 8} more" if len(shown) > 8 else "")
    if not plausible:
        raise InferError(f"{name}: {len(cands)} configuration(s) of {len(blob)} bytes, none plausible (each reads "
                         f"values no trainer writes): {listed}; give dims= or use an ATOMEF container")
    raise InferError(f"{name}: {len(plausible)} plausible configurations of {len(blob)} bytes: {listed}; "
                     "give dims= or use an ATOMEF container")
