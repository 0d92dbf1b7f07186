"""numpy_ref (the independent numpy engine) against the goldens and itself."""

from __future__ import annotations

import platform
import struct

import numpy as np
import pytest

import numpy_ref as R
from conftest import CONFIGS, model_bytes, model_weights, requires_shared

LOGIT_TOL = 1e-4


def _cases(golden, name):
    return golden[name]["cases"]


@requires_shared
@pytest.mark.parametrize("name", list(CONFIGS)[:-1])
def test_golden_config_matches_readme(golden, name):
    assert golden[name]["config"] == CONFIGS[name]


@requires_shared
@pytest.mark.parametrize("name", list(CONFIGS)[:-1])
def test_golden_predict_and_classify(golden, name):
    for c in _cases(golden, name):
        w = model_weights(c["blob"], name)
        if "expected_next" in c:
            nid, lg = R.predict_next(w, c["tokens"])
            exp = R.bits_to_f32(c["logits_f32_bits"])
            assert nid == c["expected_next"], c["tokens"]
        else:
            nid, lg = R.classify(w, c["tokens"])
            exp = R.bits_to_f32(c["class_logits_f32_bits"])
            assert nid == c["expected_class"], c["tokens"]
        np.testing.assert_allclose(lg, exp, rtol=0, atol=LOGIT_TOL)


@requires_shared
@pytest.mark.parametrize("name", ["tiny", "default", "odd", "wide", "toy", "m944k", "m944k_s24"])
def test_golden_generate(golden, name):
    for g in golden[name]["generate"]:
        w = model_weights(g["blob"], name)
        out = R.generate(w, g["prompt"], g["max_tokens"])
        assert len(out) == g["expected_count"]
        assert out == g["expected_tokens"]


_glibc_x86 = platform.machine() in ("x86_64", "AMD64") and platform.libc_ver()[0] == "glibc"


@requires_shared
@pytest.mark.skipif(not _glibc_x86, reason="goldens were made with x86-64 glibc expf/tanhf")
@pytest.mark.parametrize("name", ["tiny", "odd", "wide", "cls_odd", "default"])
def test_golden_bit_exact_with_glibc_math(golden, name):
    """With glibc's expf/tanhf, numpy_ref reproduces every golden bit: its
    operation order is the contract (docs/)'s."""
    R.set_math("libm")
    try:
        for c in golden[name]["cases"][:6]:
            w = model_weights(c["blob"], name)
            if "expected_next" in c:
                lg = R.logits(w, c["tokens"])
                bits = c["logits_f32_bits"]
            else:
                lg = R.classify(w, c["tokens"])[1]
                bits = c["class_logits_f32_bits"]
            assert R.f32_to_bits(lg) == bits
    finally:
        R.set_math("f64")


# --------------------------------------------------------------------------
# blob formats


@requires_shared
def test_blob_sizes():
    cfg = CONFIGS["m944k"]
    assert R.blob_size(R.Config.of(cfg), "ATOME01") == 276655
    assert R.blob_size(R.Config.of(cfg), "ATOME02") == 229975
    assert R.blob_size(R.Config.of(CONFIGS["toy"]), "ATOME01") == 20575
    b = model_bytes("atome_944k.bin")
    assert len(b) == 276655
    b2 = R.convert_blob(b, cfg, "ATOME02")
    assert len(b2) == 229975 and b2[:7] == b"ATOME02"
    assert R.convert_blob(b2, cfg, "ATOME01") == b


@requires_shared
@pytest.mark.parametrize("blob,name", [("tiny.atome", "tiny"), ("odd.atome", "odd"),
                                       ("cls_odd.atomecl", "cls_odd"), ("agri.atomecl", "cls")])
def test_convert_round_trip(blob, name):
    b = model_bytes(blob)
    cls = blob.endswith("atomecl")
    b2 = R.convert_blob(b, CONFIGS[name], "ATOMECL02" if cls else "ATOME02")
    assert R.convert_blob(b2, CONFIGS[name], "ATOMECL01" if cls else "ATOME01") == b
    w1, w2 = R.parse_blob(b, CONFIGS[name]), R.parse_blob(b2, CONFIGS[name])
    toks = [3, 1, 4, 1, 5, 9, 2, 6]
    if cls:
        assert R.f32_to_bits(R.classify(w1, toks)[1]) == R.f32_to_bits(R.classify(w2, toks)[1])
    else:
        assert R.f32_to_bits(R.logits(w1, toks)) == R.f32_to_bits(R.logits(w2, toks))


@pytest.mark.parametrize("fmt", R.FORMATS)
@pytest.mark.parametrize("name", ["tiny", "odd", "weird"])
def test_writer_round_trip(fmt, name):
    cfg = R.Config.of(CONFIGS[name])
    cls = fmt.startswith("ATOMECL")
    w = R.random_weights(cfg, seed=7, p3=(fmt == "ATOMEP3"), n_classes=3 if cls else 0)
    b = R.write_blob(w, fmt)
    assert len(b) == R.blob_size(cfg, fmt, 3 if cls else 0)
    w2 = R.parse_blob(b, cfg)
    assert R.write_blob(w2, fmt) == b
    assert np.array_equal(w.embed.w, w2.embed.w) and w.embed.scale == w2.embed.scale
    for a, c in zip(w.layers, w2.layers):
        for f in ("conv", "wq", "wk", "wv", "router"):
            assert np.array_equal(getattr(a, f).w, getattr(c, f).w)
        assert np.array_equal(a.ssm_a, c.ssm_a) and np.array_equal(a.norm_b, c.norm_b)
    if cls:
        assert np.array_equal(w.head.w, w2.head.w)


def test_encodings_bit_level():
    """Hand-checked bytes of each encoding (docs/FORMATS.md)."""
    t = R.Ternary(np.array([[1, -1, 0, 1, -1]], np.int8), np.float32(0.5))
    for enc, payload in [("01", bytes([0b01_00_11_01, 0b11])),
                         ("02", bytes([2 + 3 * 0 + 9 * 1 + 27 * 2 + 81 * 0]))]:
        wr = R._Writer(enc)
        wr.ternary(t)
        assert wr.bytes() == struct.pack("<f", 0.5) + payload
    t3 = R.Ternary(np.array([[0, 1, -1, 3, -3, 9, -9, 1, -9]], np.int8), np.float32(2.0))
    wr = R._Writer("P3")
    wr.ternary(t3)
    word = sum(c << (3 * i) for i, c in enumerate([0, 1, 2, 3, 4, 5, 6, 1]))
    assert wr.bytes() == struct.pack("<f", 2.0) + word.to_bytes(3, "little") + bytes([6, 0, 0])
    # decoding: 01 code 10 reads as 0, P3 code 111 reads as 0
    r = R._Reader(struct.pack("<f", 1.0) + bytes([0b10_11_01_10]), 0, "01")
    assert r.ternary(1, 4).w.tolist() == [[0, 1, -1, 0]]
    r = R._Reader(struct.pack("<f", 1.0) + (0o77777777).to_bytes(3, "little"), 0, "P3")
    assert r.ternary(1, 8).w.tolist() == [[0] * 8]


def test_load_errors():
    cfg = R.Config.of(CONFIGS["tiny"])
    b = R.random_blob(cfg, "ATOME01", seed=1)
    for bad, code in [(b"ATOME0", -1), (b"XTOME01" + b[7:], -1), (b[:-1], -2), (b[:100], -2),
                      (b + bytes(16), -3)]:
        with pytest.raises(R.BlobError) as e:
            R.parse_blob(bad, cfg)
        assert e.value.code == code
    R.parse_blob(b + bytes(15), cfg)
    c = R.random_blob(cfg, "ATOMECL01", seed=1, n_classes=16)
    R.parse_blob(c, cfg)
    for nc in (0, 17, -1):
        with pytest.raises(R.BlobError) as e:
            R.parse_blob(c[:9] + struct.pack("<i", nc) + c[13:], cfg)
        assert e.value.code == -1
    b2 = bytearray(R.convert_blob(b, cfg, "ATOME02"))
    b2[20] = 243
    with pytest.raises(R.BlobError) as e:
        R.parse_blob(bytes(b2), cfg)
    assert e.value.code == -4


def test_p3_unit_weights_equal_ternary():
    """ATOMEP3 holding only 0/+-1 gives the ATOME01 results bit for bit."""
    cfg = R.Config.of(CONFIGS["odd"])
    w = R.random_weights(cfg, seed=3)
    w1 = R.parse_blob(R.write_blob(w, "ATOME01"), cfg)
    w3 = R.parse_blob(R.write_blob(w, "ATOMEP3"), cfg)
    for toks in ([5], [1, 2, 3, 4, 5, 6, 7], list(range(20))):
        assert R.f32_to_bits(R.logits(w1, toks)) == R.f32_to_bits(R.logits(w3, toks))


# --------------------------------------------------------------------------
# forward-pass properties


def test_incremental_equals_fresh():
    cfg = R.Config.of(CONFIGS["wide"])
    w = R.random_weights(cfg, seed=11)
    toks = list(np.random.default_rng(0).integers(0, cfg.V, cfg.S))
    f = R.Forward(w)
    for i, t in enumerate(toks):
        f.extend([t])
        assert R.f32_to_bits(f.logits()) == R.f32_to_bits(R.logits(w, toks[: i + 1]))


def test_window_and_out_of_range_ids():
    cfg = R.Config.of(CONFIGS["tiny"])
    w = R.random_weights(cfg, seed=5)
    long = list(range(3, 3 + 2 * cfg.S))
    assert R.f32_to_bits(R.logits(w, long)) == R.f32_to_bits(R.logits(w, long[-cfg.S:]))
    assert R.f32_to_bits(R.logits(w, [1, -5, 99, cfg.V])) == R.f32_to_bits(R.logits(w, [1, 0, 0, 0]))
    with pytest.raises(ValueError):
        R.logits(w, [])


def test_top_slots_tie_rule():
    s = np.array([1, 2, 2, 0.5, 2, 3], np.float32)
    ss, ii = R.top_slots(s, 4)
    assert ii == [5, 1, 2, 4]
    # literal path (a -1e30 score present) agrees
    s2 = np.array([1, 2, 2, -1e30, 2, 3], np.float32)
    assert R.top_slots(s2, 4)[1] == [5, 1, 2, 4]
    assert R.top_slots(np.array([np.nan, -1e30], np.float32), 2)[1] == [-1, -1]
    assert R.top_slots(np.array([np.nan, 1.0], np.float32), 2)[1] == [1, -1]


def test_entropy_bounds():
    cfg = R.Config.of(CONFIGS["odd"])
    w = R.random_weights(cfg, seed=2)
    e = R.router_entropy_all(w, list(range(cfg.S + 3)))
    assert e.shape == (cfg.S, cfg.L)
    assert np.all(e >= 0) and np.all(e <= np.log(3) + 1e-6)
    assert np.array_equal(R.router_entropy(w, list(range(cfg.S + 3))), e[-1])


# --------------------------------------------------------------------------
# sampling


def test_splitmix64_known_values():
    g = R.SplitMix64(0)
    assert [g.next() for _ in range(3)] == [0xE220A8397B1DCDAF, 0x6E789E6AA1B965F4, 0x06C45D188009454F]
    u = R.SplitMix64(0).uniform()
    assert u == np.float32(0xE220A8 / 2**24)


def test_sampling_rules():
    lg = np.array([1.0, 3.0, 3.0, 2.0, -1.0], np.float32)
    order, e = R.sampling_candidates(lg, 1.0, 0, 1.0)
    assert order.tolist() == [1, 2, 3, 0, 4]
    assert R.sampling_candidates(lg, 1.0, 2, 1.0)[0].tolist() == [1, 2]
    assert R.sampling_candidates(lg, 1.0, 5, 1.0)[0].tolist() == [1, 2, 3, 0, 4]  # top_k >= V: all
    assert R.sampling_candidates(lg, 1.0, 0, 1e-6)[0].tolist() == [1]  # first always kept
    # top_p 0.5: e = [1, 1, e^-1, ...]; c before the 2nd = 1 < 0.5 * Z, so 2 kept; c = 2 >= 0.5 Z
    assert R.sampling_candidates(lg, 1.0, 0, 0.5)[0].tolist() == [1, 2]
    assert R.sample_from_logits(lg, 1.0, 0, 1.0, np.float32(0.0)) == 1
    assert R.sample_from_logits(lg, 1.0, 0, 1.0, np.float32(1 - 2**-24)) == 4
    assert R.sample_from_logits(lg, 1.0, 2, 1.0, np.float32(0.5)) == 2
    p = R.sampling_probs(lg, 1.0, 2, 1.0)
    assert p[1] == p[2] == 0.5
    assert R.sampling_probs(lg, 0.0)[1] == 1.0


def test_sampled_generation_numpy():
    cfg = R.Config.of(CONFIGS["tiny"])
    w = R.random_weights(cfg, seed=9)
    a = R.generate_sampled(w, [1, 2], 6, 0.8, 0, 0.95, seed=42)
    assert a == R.generate_sampled(w, [1, 2], 6, 0.8, 0, 0.95, seed=42)
    assert len(a) == 6
    assert R.generate_sampled(w, [1, 2], 6, 0.0, seed=42) == R.generate(w, [1, 2], 6)
    assert R.generate_sampled(w, [1, 2], 6, float("nan"), seed=1) == R.generate(w, [1, 2], 6)
    # the logits_fn path equals the incremental numpy forward
    b = R.generate_sampled(w, [1, 2], 6, 0.8, 0, 0.95, seed=42, logits_fn=lambda s: R.logits(w, s))
    assert a == b
