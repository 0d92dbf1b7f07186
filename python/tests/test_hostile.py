"""atome.load and RtModel on hostile input: dimensions of bare blobs are
inferred right or refused, never guessed; out-of-range and mistyped
arguments raise, naming the argument; one model shared by 8 threads gives
every call its single-thread result (the model's lock)."""

from __future__ import annotations

import json
import threading

import pytest

import atome
from atome._runtime import OPEN_CODES
from conftest import GOLDEN, MODELS, requires_shared



@pytest.fixture(scope="module")
def rtlib(lib):
    """Any build's shared library runs the runtime API (the default one)."""
    return lib("default").path


def golden_configs():
    """blob name -> the golden V, D, L, DH, K, TOPK of it (from ../shared)."""
    out = {}
    for entry in json.loads(GOLDEN.read_text()).values():
        c = entry["config"]
        for case in entry["cases"]:
            out[case["blob"]] = dict(vocab_size=c["V"], d_model=c["D"], n_layers=c["L"], d_head=c["DH"],
                                     kernel_size=c["K"], top_k=c["TOPK"])
    return out


SHAPE = ("vocab_size", "d_model", "n_layers", "d_head", "kernel_size", "top_k")


@requires_shared
def test_load_infers_every_shared_model_right_or_raises(rtlib):
    want = golden_configs()
    opened = refused = 0
    for path in sorted(MODELS.iterdir()):
        try:
            m = atome.load(path, lib=rtlib)
        except atome.InferError as e:
            assert path.name in str(e) and ("dims=" in str(e))
            refused += 1
            continue
        opened += 1
        assert path.name in want, f"{path.name}: opened, but no golden configuration to check it against"
        assert {k: m.dims[k] for k in SHAPE} == want[path.name], path.name
    # The blobs of the known configurations open; the others need their top-k.
    assert opened >= 14 and refused >= 3, (opened, refused)


@requires_shared
def test_bare_blobs_of_other_shapes_are_not_guessed(rtlib):
    want = golden_configs()
    for name in ("tiny.atome", "odd.atome", "wide.atome", "cls_odd.atomecl"):
        blob = (MODELS / name).read_bytes()
        with pytest.raises(atome.InferError, match="top-k"):
            atome.load(blob, lib=rtlib)
        # With the top-k given, the rest is inferred, and right.
        m = atome.load(blob, dims=dict(top_k=want[name]["top_k"]), seq=8, lib=rtlib)
        assert {k: m.dims[k] for k in SHAPE} == want[name], name
    # Wrong dims given for a bare blob: refused, naming both.
    with pytest.raises(atome.InferError, match="disagree"):
        atome.load(MODELS / "tiny.atome", dims=dict(vocab_size=256, top_k=4), lib=rtlib)


@requires_shared
@pytest.mark.parametrize("cut", [1, 2, 7, 15, 16, 17, 100, 1000, 4096, 50000, 200000])
def test_truncated_944k_blobs_are_refused(rtlib, cut):
    blob = (MODELS / "atome_944k.bin").read_bytes()
    with pytest.raises((atome.InferError, atome.AtomeError)):
        atome.load(blob[:-cut], lib=rtlib)


@requires_shared
def test_one_model_from_8_threads(rtlib):
    """Every result of 8 threads sharing one model equals the single-thread one."""
    blob = (MODELS / "default.atome").read_bytes()
    for cached in (False, True):
        m = atome.load(blob, cached=cached, lib=rtlib)
        prompts = [bytes((i * 37 + j * 11) % 251 for j in range(3 + i % 20)) for i in range(96)]
        alone = {p: (m.predict_next(p), list(m.generate(p, 3))) for p in prompts}
        logits_alone = {p: m.logits(p).tobytes() for p in prompts[:16]}
        results, errors = {}, []

        def work(k):
            try:
                for p in prompts[k::8]:
                    results[p] = (m.predict_next(p), list(m.generate(p, 3)))
                for p in prompts[k:16:8]:
                    assert m.logits(p).tobytes() == logits_alone[p]
            except Exception as e:  # noqa: BLE001 - reported below
                errors.append(e)

        ts = [threading.Thread(target=work, args=(k,)) for k in range(8)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        assert not errors, errors
        wrong = sum(results[p] != alone[p] for p in prompts)
        assert len(results) == 96 and wrong == 0, f"cached={cached}: {wrong} of 96 wrong"


@requires_shared
def test_integers_out_of_range_raise_naming_the_argument(rtlib):
    m = atome.load(MODELS / "default.atome", lib=rtlib)
    with pytest.raises(OverflowError, match="max_tokens"):
        m.generate(b"Once", 2**31)
    with pytest.raises(OverflowError, match=r"tokens\[0\]"):
        m.predict_next([2**32 + 65])
    with pytest.raises(OverflowError, match="seq"):
        atome.load(MODELS / "default.atome", seq=2**40, lib=rtlib)
    with pytest.raises(ValueError, match="seq"):
        atome.load(MODELS / "default.atome", seq=0, lib=rtlib)
    with pytest.raises(TypeError, match="max_tokens"):
        m.generate(b"x", 5.5)
    with pytest.raises(TypeError, match="max_tokens"):
        m.generate(b"x", True)
    with pytest.raises(ValueError, match="max_tokens"):
        m.generate(b"x", 0)
    with pytest.raises(ValueError, match="seed"):
        m.generate_sampled(b"x", 2, seed=-1)
    with pytest.raises(ValueError, match="top_p"):
        m.generate_sampled(b"x", 2, top_p=0.0)
    with pytest.raises(ValueError, match="temperature"):
        m.generate_sampled(b"x", 2, temperature=float("nan"))
    with pytest.raises(ValueError, match="top_k"):
        m.generate_sampled(b"x", 2, top_k=-1)
    with pytest.raises(TypeError, match=r"tokens\[1\]"):
        m.predict_next([1, 2.0])


@requires_shared
def test_empty_results_are_errors(rtlib):
    m = atome.load(MODELS / "default.atome", lib=rtlib)
    clf = atome.load(MODELS / "agri.atomecl", lib=rtlib)
    with pytest.raises(TypeError, match="classifier"):
        clf.generate(b"x", 3)
    with pytest.raises(TypeError, match="classifier"):
        clf.generate_sampled(b"x", 3)
    with pytest.raises(TypeError, match="classifier"):
        clf.last_logits()
    with pytest.raises(TypeError, match="language model"):
        m.classify(b"x")
    with pytest.raises(ValueError, match="empty"):
        m.generate(b"", 3)
    with pytest.raises(ValueError, match="empty"):
        m.predict_next(b"")
    with pytest.raises(atome.AtomeError, match="no predict_next yet"):
        m.last_logits()
    for bad in (-1, 300):
        with pytest.raises(ValueError, match="outside the vocabulary"):
            m.predict_next([5, bad])
    # The C contract (an id outside 0..V-1 is read as 0) is one explicit option away.
    c = atome.load(MODELS / "default.atome", lib=rtlib, oov_as_zero=True)
    assert c.predict_next([5, 300]) == c.predict_next([5, 0]) == c.predict_next([5, -1])


@requires_shared
def test_errors_explain_themselves(rtlib):
    with pytest.raises(atome.InferError, match="12 bytes"):
        atome.load(b"ATOME01" + bytes(5), lib=rtlib)
    with pytest.raises(atome.AtomeError, match="truncated"):
        atome.load(b"ATOMEF", lib=rtlib)
    with pytest.raises(atome.AtomeError, match="truncated"):
        atome.load(b"ATOMEF" + bytes(20), lib=rtlib)
    with pytest.raises(atome.InferError, match="unknown magic"):
        atome.load(b"NOTAMODEL" + bytes(100), lib=rtlib)
    blob = (MODELS / "default.atome").read_bytes()
    dims = atome.infer_dims(blob)
    box = bytearray(atome.make_container(blob, dims))
    box[-1] ^= 1
    with pytest.raises(atome.AtomeError, match="corrupted") as e:
        atome.load(bytes(box), lib=rtlib)
    assert e.value.code == -6 and "blob" in str(e.value)
    # A header a few bytes off its payload (K=4 around a K=5 model): -8.
    with pytest.raises(atome.AtomeError, match="does not describe its payload") as e:
        atome.load(atome.make_container(blob, dict(dims, kernel_size=4)), lib=rtlib)
    assert e.value.code == -8
    # n_classes in the header against a 5-class payload.
    clf = (MODELS / "agri.atomecl").read_bytes()
    cd = atome.infer_dims(clf)
    head = bytearray(atome.make_container(clf, cd))
    for n in (4, 16, 99, 0xFFFFFFFF):
        h = _with_classes(bytes(head), n)
        with pytest.raises(atome.AtomeError) as e:
            atome.load(h, lib=rtlib)
        assert e.value.code == -8, n
    assert set(OPEN_CODES) == set(range(-9, 0))


def _with_classes(box: bytes, n: int) -> bytes:
    """The container with its header's n_classes set to n (header CRC redone)."""
    import struct
    import zlib
    b = bytearray(box)
    struct.pack_into("<I", b, 40, n)
    meta_len = struct.unpack_from("<I", b, 44)[0]
    struct.pack_into("<I", b, 56, zlib.crc32(bytes(b[:56]) + bytes(b[60:60 + meta_len])))
    return bytes(b)
