#!/usr/bin/env python3
"""Writes the seed corpora that are derived from /work/shared/models
(or $ATOME_MODELS): ATOME02 / ATOMECL02 / ATOMEP3 conversions of the small
ATOME01 blobs for the `loaders` target, and the framed raw blobs of the `run`
target. Run from fuzz/: python3 mkseeds.py"""
import os, random, struct, sys

MODELS = os.environ.get("ATOME_MODELS", "/work/shared/models")
DEFAULT = dict(V=256, D=64, L=4, DH=16, K=5)
ODD = dict(V=40, D=22, L=3, DH=6, K=3)


def items(c, n_classes=None):
    V, D, L, DH, K = c["V"], c["D"], c["L"], c["DH"], c["K"]
    s = [("t", V * D)]
    for _ in range(L):
        s += [("f", 2 * D), ("t", D * K), ("f", 3 * D), ("t", DH * D), ("t", DH * D), ("t", D * D), ("t", 3 * D)]
    s += [("f", 2 * D), ("t", V * D)]
    if n_classes:
        s.append(("t", n_classes * D))
    return s


def trits(payload, n):
    out = []
    for i in range(n):
        code = (payload[i >> 2] >> (2 * (i & 3))) & 3
        out.append({1: 1, 3: -1}.get(code, 0))
    return out


def pack(w, packing):
    if packing == 1:
        out = bytearray()
        for m in range((len(w) + 4) // 5):
            b, p = 0, 1
            for k in range(5):
                t = w[5 * m + k] if 5 * m + k < len(w) else 0
                b += (t + 1) * p
                p *= 3
            out.append(b)
        return bytes(out)
    out = bytearray()
    codes = {0: 0, 1: 1, -1: 2}
    for g in range((len(w) + 7) // 8):
        word = 0
        for i in range(8):
            t = w[8 * g + i] if 8 * g + i < len(w) else 0
            word |= codes[t] << (3 * i)
        out += struct.pack("<I", word)[:3]
    return bytes(out)


def convert(blob, c, packing, classifier):
    pos = 9 if classifier else 7
    nc = None
    head = b""
    if classifier:
        nc = struct.unpack_from("<i", blob, 9)[0]
        head = blob[9:13]
        pos = 13
    magic = {(0, 1): b"ATOME02", (0, 2): b"ATOMEP3", (1, 1): b"ATOMECL02"}[(int(classifier), packing)]
    out = bytearray(magic + head)
    for kind, n in items(c, nc):
        if kind == "f":
            out += blob[pos:pos + 4 * n]
            pos += 4 * n
        else:
            out += blob[pos:pos + 4]
            pl = (n + 3) // 4
            out += pack(trits(blob[pos + 4:pos + 4 + pl], n), packing)
            pos += 4 + pl
    assert pos == len(blob), (pos, len(blob))
    return bytes(out)


def main():
    random.seed(11)
    os.makedirs("corpus/loaders", exist_ok=True)
    os.makedirs("corpus/run", exist_ok=True)
    rd = lambda f: open(os.path.join(MODELS, f), "rb").read()
    # loaders: selector byte 0 (magic kept as is), a shift byte, then the blob.
    for name, c, cl in [("default.atome", DEFAULT, False), ("odd.atome", ODD, False), ("cls_odd.atomecl", ODD, True)]:
        b = rd(name)
        for packing in ((1,) if cl else (1, 2)):
            conv = convert(b, c, packing, cl)
            open(f"corpus/loaders/{name}.p{packing}", "wb").write(bytes([0, 1]) + conv)
    # the differential mode (selector 3): a generator seed and a few tokens.
    for i in range(4):
        open(f"corpus/loaders/diff{i}", "wb").write(bytes([3, i * 9, 3]) + bytes(random.getrandbits(8) for _ in range(24)))
    # run: generated-blob modes, then raw blobs (mode 7, shift, u16 length, blob, op bytes).
    for m in range(7):
        for k in range(2):
            open(f"corpus/run/gen{m}_{k}", "wb").write(bytes([m, k * 3 + 1, 5]) + bytes(random.getrandbits(8) for _ in range(80)))
    for f in ["default.atome", "odd.atome", "cls_odd.atomecl", "tiny.atome"]:
        blob = rd(f)
        open(f"corpus/run/raw_{f}", "wb").write(bytes([7, 1]) + struct.pack("<H", len(blob)) + blob + bytes(random.getrandbits(8) for _ in range(60)))


if __name__ == "__main__":
    sys.exit(main())
