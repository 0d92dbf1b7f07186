"""The atome package (real library, one build per configuration) against the goldens."""

from __future__ import annotations

import ctypes
import platform

import numpy as np
import pytest

import atome
import numpy_ref as R
from conftest import CONFIGS, model_bytes, requires_shared

TOL = 5e-5  # default (pure-Rust) math: same ids, logits within a few ulp
GOLDEN_NAMES = [n for n in CONFIGS if n != "weird"]


def _engine_matches(eng, name):
    c = CONFIGS[name]
    cfg = eng.config
    assert (cfg["vocab_size"], cfg["d_model"], cfg["n_layers"], cfg["d_head"], cfg["kernel_size"],
            cfg["top_k"], cfg["max_seq"]) == (c["V"], c["D"], c["L"], c["DH"], c["K"], c["TOPK"], c["S"])
    assert cfg["n_pathways"] == 3
    assert cfg["state_size"] > 0


@requires_shared
@pytest.mark.parametrize("name", GOLDEN_NAMES)
def test_golden_cases(lib, golden, name):
    eng = lib(name)
    _engine_matches(eng, name)
    loaded = {}
    for c in golden[name]["cases"]:
        if c["blob"] not in loaded:
            cls = c["blob"].endswith(".atomecl")
            loaded[c["blob"]] = (atome.Classifier if cls else atome.Model).load(model_bytes(c["blob"]), engine=eng)
        m = loaded[c["blob"]]
        if "expected_next" in c:
            nid = m.predict_next(c["tokens"])
            lg = np.array(m.last_logits(), np.float32)
            exp = R.bits_to_f32(c["logits_f32_bits"])
            assert nid == c["expected_next"], c["tokens"]
        else:
            nid, lg = m.classify(c["tokens"])
            exp = R.bits_to_f32(c["class_logits_f32_bits"])
            assert nid == c["expected_class"], (c["blob"], c["tokens"])
            assert len(lg) == len(exp)
        np.testing.assert_allclose(np.array(lg, np.float32), exp, rtol=0, atol=TOL)


@requires_shared
@pytest.mark.parametrize("name", ["tiny", "default", "odd", "wide", "toy", "m944k", "m944k_s24"])
def test_golden_generate(lib, golden, name):
    # a lean state recomputes the whole window per token: the 944K model at
    # S=64 takes ~12 s a call that way, so it runs on the cached-state build
    eng = lib(name, cached=(name == "m944k"))
    models = {}
    for g in golden[name]["generate"]:
        m = models.setdefault(g["blob"], atome.Model.load(model_bytes(g["blob"]), engine=eng))
        out = m.generate(g["prompt"], g["max_tokens"])
        assert len(out) == g["expected_count"]
        assert out == g["expected_tokens"]


_glibc_x86 = platform.machine() in ("x86_64", "AMD64") and platform.libc_ver()[0] == "glibc"


@requires_shared
@pytest.mark.skipif(not _glibc_x86, reason="the goldens come from x86-64 glibc")
def test_system_libm_bit_exact(lib, golden):
    """The system-libm build reproduces the reference bit for bit (docs/ARITHMETIC.md#math-functions)."""
    eng = lib("tiny", system_libm=True)
    m = atome.Model.load(model_bytes("tiny.atome"), engine=eng)
    for c in golden["tiny"]["cases"]:
        assert m.predict_next(c["tokens"]) == c["expected_next"]
        assert R.f32_to_bits(m.last_logits()) == c["logits_f32_bits"]


@requires_shared
def test_cached_state_same_bits(lib, golden):
    """ATOME_STATE=cached gives the lean build's bits, whatever was computed before."""
    lean = atome.Model.load(model_bytes("odd.atome"), engine=lib("odd"))
    eng_c = lib("odd", cached=True)
    assert eng_c.config["state_cached"] == 1
    cached = atome.Model.load(model_bytes("odd.atome"), engine=eng_c)
    cases = golden["odd"]["cases"]
    for c in cases + cases[::-1]:
        assert R.f32_to_bits(cached.logits(c["tokens"])) == R.f32_to_bits(lean.logits(c["tokens"]))
    # growing / shrinking / editing prefixes: cache reuse must not change results
    seq = [(7 * i + 3) % 40 for i in range(20)]
    for toks in [seq[:3], seq[:4], seq[:10], seq[:9], seq[:12], seq[1:12], seq[:16], seq, seq[:2],
                 seq[:5] + [1] + seq[6:11], seq[:11]]:
        assert R.f32_to_bits(cached.logits(toks)) == R.f32_to_bits(lean.logits(toks))
        assert cached.generate(toks, 5) == lean.generate(toks, 5)


@requires_shared
def test_atome02_bit_identical_944k(lib, golden):
    """ATOME02 (229,975 bytes) gives the ATOME01 bits."""
    eng = lib("m944k_s24")
    b1 = model_bytes("atome_944k.bin")
    b2 = R.convert_blob(b1, CONFIGS["m944k_s24"], "ATOME02")
    assert len(b2) == 229975
    m1 = atome.Model.load(b1, engine=eng)
    m2 = atome.Model.load(b2, engine=eng)
    for c in golden["m944k_s24"]["cases"][:6]:
        assert R.f32_to_bits(m2.logits(c["tokens"])) == R.f32_to_bits(m1.logits(c["tokens"]))
    g = golden["m944k_s24"]["generate"][0]
    assert m2.generate(g["prompt"], g["max_tokens"]) == g["expected_tokens"]


@requires_shared
@pytest.mark.parametrize("blob", ["agri.atomecl", "voice.atomecl"])
def test_atomecl02_bit_identical(lib, golden, blob):
    eng = lib("cls")
    b1 = model_bytes(blob)
    b2 = R.convert_blob(b1, CONFIGS["cls"], "ATOMECL02")
    c1 = atome.Classifier.load(b1, engine=eng)
    c2 = atome.Classifier.load(b2, engine=eng)
    assert c1.n_classes == c2.n_classes
    for c in golden["cls"]["cases"]:
        if c["blob"] == blob:
            k1, l1 = c1.classify(c["tokens"])
            k2, l2 = c2.classify(c["tokens"])
            assert k1 == k2 == c["expected_class"]
            assert R.f32_to_bits(l1) == R.f32_to_bits(l2)


@requires_shared
def test_load_errors(lib):
    eng = lib("default")
    b = model_bytes("default.atome")
    for bad, code in [(b"ATOME0", -1), (b"XTOME01" + b[7:], -1), (b"", -1), (b[:-1], -2),
                      (b[:8], -2), (b + bytes(16), -3), (b + bytes(100), -3)]:
        with pytest.raises(atome.AtomeError) as e:
            atome.Model.load(bad, engine=eng)
        assert e.value.code == code, (len(bad), e.value.code)
    m = atome.Model.load(b + bytes(15), engine=eng)
    assert m.predict_next([1, 2, 3]) == atome.Model.load(b, engine=eng).predict_next([1, 2, 3])
    # a classifier blob is not a language model and vice versa
    with pytest.raises(atome.AtomeError):
        atome.Model.load(model_bytes("agri.atomecl"), engine=lib("cls"))
    with pytest.raises(atome.AtomeError):
        atome.Classifier.load(model_bytes("model_toy.atome"), engine=lib("toy"))
    # a blob for another configuration: truncated (-2) or trailing (-3)
    with pytest.raises(atome.AtomeError) as e:
        atome.Model.load(model_bytes("tiny.atome"), engine=eng)
    assert e.value.code == -2
    with pytest.raises(atome.AtomeError) as e:
        atome.Model.load(model_bytes("atome_944k.bin"), engine=eng)
    assert e.value.code == -3


@requires_shared
def test_refused_model_stays_refused(lib):
    """Raw C calls on a model whose load failed must all fail (docs/API.md#loading)."""
    eng = lib("default")
    L = eng.lib
    good = model_bytes("default.atome")
    st = eng.new_state()
    mdl = (ctypes.c_uint64 * (eng.model_size // 8 + 1))()
    assert L.atome_load(mdl, good, len(good)) == 0
    bad = good[:-10]
    assert L.atome_load(mdl, bad, len(bad)) == -2  # reusing a loaded struct: now refused
    toks = (ctypes.c_int * 3)(1, 2, 3)
    assert L.atome_predict_next(mdl, st, toks, 3) == -1
    out = (ctypes.c_int * 4)()
    assert L.atome_generate(mdl, st, toks, 3, out, 4) == 0
    if eng.has_sampling:
        p = atome.Sampling(temperature=1.0, top_k=0, top_p=1.0, reserved=0, seed=1)
        assert L.atome_generate_sampled(mdl, st, toks, 3, out, 4, ctypes.byref(p)) == 0
    # classifier
    ceng = lib("cls")
    cb = model_bytes("agri.atomecl")
    clf = (ctypes.c_uint64 * (ceng.classifier_size // 8 + 1))()
    cst = ceng.new_state()
    assert ceng.lib.atome_classifier_load(clf, cb, len(cb)) == 0
    assert ceng.lib.atome_classifier_load(clf, cb[:50], 50) != 0
    assert ceng.lib.atome_classify(clf, cst, toks, 3, None) == -1
    # null and bad arguments
    assert L.atome_load(None, good, len(good)) == -1
    assert L.atome_load(mdl, None, 100) == -1
    m = atome.Model.load(good, engine=eng)
    assert L.atome_predict_next(m._struct, m._state, toks, 0) == -1
    assert L.atome_predict_next(m._struct, None, toks, 3) == -1
    assert L.atome_generate(m._struct, m._state, toks, 0, out, 4) == 0
    assert L.atome_generate(m._struct, m._state, toks, 3, out, 0) == 0


@requires_shared
def test_misaligned_blob(lib):
    """A blob at any address gives the same bits (docs/FORMATS.md)."""
    eng = lib("wide")
    b = model_bytes("wide.atome")
    ref = atome.Model.load(b, engine=eng)
    want = R.f32_to_bits(ref.logits([4, 8, 15, 16, 23, 42]))
    for off in range(1, 8):
        buf = ctypes.create_string_buffer(len(b) + 16)
        ctypes.memmove(ctypes.addressof(buf) + off, b, len(b))
        mdl = (ctypes.c_uint64 * (eng.model_size // 8 + 1))()
        st = eng.new_state()
        assert eng.lib.atome_load(mdl, ctypes.addressof(buf) + off, len(b)) == 0
        toks = (ctypes.c_int * 6)(4, 8, 15, 16, 23, 42)
        eng.lib.atome_predict_next(mdl, st, toks, 6)
        got = np.ctypeslib.as_array(eng.lib.atome_get_logits(st), (eng.vocab_size,)).copy()
        assert R.f32_to_bits(got) == want


@requires_shared
def test_state_reuse_and_purity(lib, golden):
    """predict_next is a pure function of (model, tokens); one state can serve two models."""
    eng = lib("toy")
    m = atome.Model.load(model_bytes("model_toy.atome"), engine=eng)
    cases = golden["toy"]["cases"]
    first = [R.f32_to_bits(m.logits(c["tokens"])) for c in cases]
    again = [R.f32_to_bits(m.logits(c["tokens"])) for c in cases[::-1]][::-1]
    assert first == again
