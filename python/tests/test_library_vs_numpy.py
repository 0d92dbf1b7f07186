"""The atome package (real library) against numpy_ref on random-weight blobs:
odd shapes, every blob format, ATOMEP3, router entropy."""

from __future__ import annotations

import numpy as np
import pytest

import atome
import numpy_ref as R
from conftest import CONFIGS

TOL = 1e-4
LM_CONFIGS = ["tiny", "odd", "wide", "weird", "default"]


def token_cases(cfg: R.Config, seed: int):
    rng = np.random.default_rng(seed)
    S, V = cfg.S, cfg.V
    cases = [[0], [V - 1], [int(rng.integers(V))] * 3,
             list(rng.integers(0, V, S)), list(rng.integers(0, V, max(1, S // 2 + 1))),
             list(rng.integers(0, V, S + 5)),                       # longer than S: last S
             [-1, V, 2 * V, int(rng.integers(V)), -(2 ** 31), 2 ** 31 - 1]]  # ids out of range read as 0
    return [[int(t) for t in c] for c in cases]


def check_lm(model: atome.Model, w: R.Weights, toks):
    nid = model.predict_next(toks)
    lg = np.array(model.last_logits(), np.float32)
    ref = R.logits(w, toks)
    np.testing.assert_allclose(lg, ref, rtol=0, atol=TOL, err_msg=str(toks))
    assert nid == R.argmax_first(lg)
    if nid != R.argmax_first(ref):  # only a near tie may flip the id
        assert ref[nid] >= ref.max() - TOL
    return lg, ref


def check_generate(model: atome.Model, w: R.Weights, prompt, max_tokens):
    got = model.generate(prompt, max_tokens)
    want = R.generate(w, prompt, max_tokens)
    if got != want:  # acceptable only where numpy's logits have a near tie
        i = next(i for i in range(min(len(got), len(want))) if got[i] != want[i])
        ref = R.logits(w, list(prompt[: w.cfg.S]) + got[:i])
        assert ref[got[i]] >= ref.max() - TOL, (got, want)
    else:
        assert len(got) == len(want)
    return got


@pytest.mark.parametrize("name", LM_CONFIGS)
@pytest.mark.parametrize("fmt", ["ATOME01", "ATOME02", "ATOMEP3"])
def test_random_lm(lib, name, fmt):
    eng = lib(name)
    cfg = R.Config.of(CONFIGS[name])
    for seed in (1, 2):
        blob = R.random_blob(cfg, fmt, seed=seed)
        w = R.parse_blob(blob, cfg)
        m = atome.Model.load(blob, engine=eng)
        for toks in token_cases(cfg, seed):
            check_lm(m, w, toks)
            ent = np.array(m.router_entropy_all())
            ref_ent = R.router_entropy_all(w, toks)
            assert ent.shape == ref_ent.shape
            np.testing.assert_allclose(ent, ref_ent, rtol=0, atol=1e-5)
            np.testing.assert_allclose(m.router_entropy(), ref_ent[-1], rtol=0, atol=1e-5)
        rng = np.random.default_rng(seed)
        for plen in (1, cfg.S // 2, cfg.S - 1, cfg.S, cfg.S + 2):
            prompt = [int(t) for t in rng.integers(0, cfg.V, plen)]
            got = check_generate(m, w, prompt, cfg.S)
            assert len(got) == max(0, cfg.S - plen)
        assert m.generate([1, 2], 3) == check_generate(m, w, [1, 2], 3)


@pytest.mark.parametrize("name", LM_CONFIGS)
def test_atome02_bit_identical(lib, name):
    eng = lib(name)
    cfg = R.Config.of(CONFIGS[name])
    b1 = R.random_blob(cfg, "ATOME01", seed=21)
    b2 = R.convert_blob(b1, cfg, "ATOME02")
    assert R.convert_blob(b2, cfg, "ATOME01") == b1
    m1 = atome.Model.load(b1, engine=eng)
    m2 = atome.Model.load(b2, engine=eng)
    for toks in token_cases(cfg, 3):
        assert R.f32_to_bits(m1.logits(toks)) == R.f32_to_bits(m2.logits(toks))
        assert m1.router_entropy_all() == m2.router_entropy_all()
    assert m1.generate([5], cfg.S) == m2.generate([5], cfg.S)


@pytest.mark.parametrize("name", ["odd", "weird"])
def test_p3_unit_weights_bit_identical(lib, name):
    """ATOMEP3 with weights in {0, +-1} = the ATOME01 arithmetic exactly (CONTRACT.md)."""
    eng = lib(name)
    cfg = R.Config.of(CONFIGS[name])
    w = R.random_weights(cfg, seed=5)
    m1 = atome.Model.load(R.write_blob(w, "ATOME01"), engine=eng)
    m3 = atome.Model.load(R.write_blob(w, "ATOMEP3"), engine=eng)
    for toks in token_cases(cfg, 4):
        assert R.f32_to_bits(m1.logits(toks)) == R.f32_to_bits(m3.logits(toks))


def test_p3_full_range_weights(lib):
    """Every P3 code, including +-9 and the unused 111 read as 0, through the library."""
    eng = lib("wide")
    cfg = R.Config.of(CONFIGS["wide"])
    w = R.random_weights(cfg, seed=8, p3=True, sparsity=0.2)
    blob = bytearray(R.write_blob(w, "ATOMEP3"))
    # turn some zero codes of the unembedding into code 111 (read as 0)
    ue_off = len(blob) - (4 + 3 * ((cfg.V * cfg.D + 7) // 8))
    w2 = R.parse_blob(bytes(blob), cfg)
    for g in range(0, 40):
        base = ue_off + 4 + 3 * g
        word = int.from_bytes(blob[base:base + 3], "little")
        for i in range(8):
            if (word >> (3 * i)) & 7 == 0:
                word |= 7 << (3 * i)
        blob[base:base + 3] = word.to_bytes(3, "little")
    w3 = R.parse_blob(bytes(blob), cfg)
    assert np.array_equal(w2.unembed.w, w3.unembed.w)
    m = atome.Model.load(bytes(blob), engine=eng)
    for toks in token_cases(cfg, 6):
        check_lm(m, w3, toks)


@pytest.mark.parametrize("name", ["cls", "odd", "weird"])
@pytest.mark.parametrize("fmt", ["ATOMECL01", "ATOMECL02"])
def test_random_classifier(lib, name, fmt):
    eng = lib(name)
    cfg = R.Config.of(CONFIGS[name])
    for nc in sorted({1, 3, cfg.MAX_CLASSES}):
        blob = R.random_blob(cfg, fmt, seed=nc, n_classes=nc)
        w = R.parse_blob(blob, cfg)
        c = atome.Classifier.load(blob, engine=eng)
        assert c.n_classes == nc
        for toks in token_cases(cfg, nc):
            k, lg = c.classify(toks)
            rk, rl = R.classify(w, toks)
            assert len(lg) == nc
            np.testing.assert_allclose(np.array(lg, np.float32), rl, rtol=0, atol=TOL)
            assert k == R.argmax_first(np.array(lg, np.float32))
            if k != rk:
                assert rl[k] >= rl.max() - TOL
            np.testing.assert_allclose(np.array(c.router_entropy_all()), R.router_entropy_all(w, toks),
                                       rtol=0, atol=1e-5)
    # n_classes outside 1..=MAX_CLASSES is refused
    good = R.random_blob(cfg, fmt, seed=0, n_classes=1)
    for nc in (0, cfg.MAX_CLASSES + 1, -3):
        bad = good[:9] + int(nc).to_bytes(4, "little", signed=True) + good[13:]
        with pytest.raises(atome.AtomeError):
            atome.Classifier.load(bad, engine=eng)


def test_bad_atome02_byte_refused(lib):
    eng = lib("tiny")
    cfg = R.Config.of(CONFIGS["tiny"])
    b = bytearray(R.convert_blob(R.random_blob(cfg, "ATOME01", seed=1), cfg, "ATOME02"))
    b[7 + 4 + 3] = 243
    with pytest.raises(atome.AtomeError) as e:
        atome.Model.load(bytes(b), engine=eng)
    assert e.value.code == -4  # include/atome.h


def test_entropy_calls(lib):
    eng = lib("tiny")
    cfg = R.Config.of(CONFIGS["tiny"])
    blob = R.random_blob(cfg, "ATOME01", seed=1)
    w = R.parse_blob(blob, cfg)
    m = atome.Model.load(blob, engine=eng)
    with pytest.raises(atome.AtomeError):
        m.router_entropy()  # (the Python object refuses before any forward pass)
    with pytest.raises(atome.AtomeError):
        m.router_entropy_all()
    # explicit tokens: runs the forward pass, leaves the logits of those tokens
    toks = [4, 5, 6, 7, 8]
    ent = m.router_entropy_all(toks)
    np.testing.assert_allclose(ent, R.router_entropy_all(w, toks), rtol=0, atol=1e-5)
    np.testing.assert_allclose(m.last_logits(), R.logits(w, toks), rtol=0, atol=TOL)
    assert m.router_entropy() == ent[-1]
    # after generate: the last forward pass was on prompt + generated[:-1]
    out = m.generate([1, 2], 3)
    np.testing.assert_allclose(m.router_entropy(), R.router_entropy(w, [1, 2] + out[:-1]), rtol=0, atol=1e-5)
    import ctypes
    L = cfg.L
    buf = (ctypes.c_float * (3 * L))()
    t3 = (ctypes.c_int * 3)(1, 2, 3)
    assert eng.lib.atome_router_entropy_all(m._struct, m._state, t3, 3, buf, 3 * L - 1) == -1
    assert eng.lib.atome_router_entropy_all(m._struct, m._state, t3, 3, buf, 3 * L) == 3
    assert eng.lib.atome_router_entropy_all(m._struct, m._state, t3, 0, buf, 3 * L) == -1
    assert eng.lib.atome_router_entropy_all(None, m._state, t3, 3, buf, 3 * L) == -1
    assert eng.lib.atome_router_entropy(None, buf) == -1
    # a window longer than S: S rows
    assert len(m.router_entropy_all(list(range(cfg.S + 4)))) == cfg.S


def _mutations(blob: bytes, cls: bool):
    hdr = 13 if cls else 7
    yield blob
    yield blob + bytes(15)
    yield blob + bytes(16)
    yield blob[:-1]
    yield blob[:hdr]
    yield blob[:hdr - 1]
    yield blob[:5]
    yield b""
    yield b"X" + blob[1:]
    yield blob[:6] + b"9" + blob[7:]
    if cls:
        for nc in (0, 1, 16, 17, -1, 2 ** 31 - 1):
            yield blob[:9] + int(nc).to_bytes(4, "little", signed=True) + blob[13:]
        yield blob[:9] + bytes([1, 0])
    else:
        yield b"ATOMECL01" + blob[7:]


@pytest.mark.parametrize("fmt", ["ATOME01", "ATOME02", "ATOMEP3", "ATOMECL01", "ATOMECL02"])
def test_load_codes_match_numpy(lib, fmt):
    """atome_load / atome_classifier_load codes equal numpy_ref's parse_blob codes."""
    eng = lib("wide")
    cfg = R.Config.of(CONFIGS["wide"])
    cls = fmt.startswith("ATOMECL")
    blob = R.random_blob(cfg, fmt, seed=3, n_classes=4)
    cases = list(_mutations(blob, cls))
    if fmt.endswith("02"):
        bad = bytearray(blob)
        bad[-1] = 250  # in the last payload (unembed or head)
        cases.append(bytes(bad))
    for b in cases:
        try:
            R.parse_blob(b, cfg, classifier=cls)
            want = 0
        except R.BlobError as e:
            want = e.code
        try:
            (atome.Classifier if cls else atome.Model).load(b, engine=eng)
            got = 0
        except atome.AtomeError as e:
            got = e.code
        assert got == want, (len(b), b[:13], got, want)


_glibc_x86 = __import__("platform").machine() in ("x86_64", "AMD64") and \
    __import__("platform").libc_ver()[0] == "glibc"


@pytest.mark.skipif(not _glibc_x86, reason="numpy_ref's 'libm' mode is glibc's expf/tanhf")
@pytest.mark.parametrize("fmt", ["ATOME01", "ATOME02", "ATOMEP3", "ATOMECL01"])
def test_system_libm_bit_exact_random(lib, fmt):
    """The system-libm build and numpy_ref with the same expf/tanhf agree bit
    for bit on random blobs, ATOMEP3 included (two independent implementations
    of the contract (docs/) order and of CONTRACT.md's P3 arithmetic)."""
    eng = lib("tiny", system_libm=True)
    cfg = R.Config.of(CONFIGS["tiny"])
    cls = fmt.startswith("ATOMECL")
    R.set_math("libm")
    try:
        for seed in (1, 2, 3):
            blob = R.random_blob(cfg, fmt, seed=seed, n_classes=5)
            w = R.parse_blob(blob, cfg)
            m = (atome.Classifier if cls else atome.Model).load(blob, engine=eng)
            for toks in token_cases(cfg, seed):
                if cls:
                    k, lg = m.classify(toks)
                    rk, rl = R.classify(w, toks)
                else:
                    lg = m.logits(toks)
                    rl = R.logits(w, toks)
                assert R.f32_to_bits(lg) == R.f32_to_bits(rl), (seed, toks)
            if not cls:
                prompt = [seed, 2 * seed]
                assert m.generate(prompt, 8) == R.generate(w, prompt, 8)
                for temp, tk, tp in ((1.0, 0, 1.0), (0.8, 5, 0.9)):
                    assert m.generate_sampled(prompt, 6, temp, tk, tp, seed) == \
                        R.generate_sampled(w, prompt, 6, temp, tk, tp, seed)
    finally:
        R.set_math("f64")
