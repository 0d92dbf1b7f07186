"""The Rust q15 engine (ATOME_DTYPE=q15, built through python/atome/_build.py)
against the independent numpy implementation of docs/Q15.md (q15_ref): the
logits bit for bit, the ids of predict_next, generate and classify, on the
shared golden blobs, random blobs in every packing and blobs with non-finite
parameters."""

import os
import sys

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, ".."))

import numpy_ref as nr  # noqa: E402
import q15_ref as q  # noqa: E402
from atome._build import BuildError, build_library  # noqa: E402
from atome._engine import Classifier, Engine, Model  # noqa: E402
from atome._runtime import RtModel  # noqa: E402

SHARED = os.environ.get("ATOME_SHARED", os.path.normpath(os.path.join(HERE, "..", "..", "..", "shared")))
IN_CI = os.environ.get("CI") == "true"
DEFAULT = dict(V=256, D=64, L=4, DH=16, K=5, TOPK=4, S=32)
GOLDEN = [
    ("tiny.atome", dict(V=32, D=16, L=2, DH=8, K=5, TOPK=4, S=8)),
    ("odd.atome", dict(V=40, D=22, L=3, DH=6, K=3, TOPK=2, S=16)),
    ("wide.atome", dict(V=64, D=32, L=2, DH=8, K=7, TOPK=6, S=24)),
    ("model_toy.atome", dict(V=256, D=64, L=4, DH=16, K=5, TOPK=4, S=64)),
]
# The golden configurations' other blobs: the 944K model (fewer token lists:
# the numpy path is slow there) and the classifiers.
M944K = dict(V=256, D=256, L=8, DH=64, K=5, TOPK=4, S=64)
CLASSIFIERS = [
    (("agri.atomecl", "air.atomecl", "voice.atomecl"), dict(V=256, D=32, L=2, DH=8, K=5, TOPK=4, S=32)),
    (("cls_odd.atomecl",), dict(V=40, D=22, L=3, DH=6, K=3, TOPK=2, S=16)),
]
_ENGINES = {}


def shared(path):
    p = os.path.join(SHARED, path)
    if not os.path.exists(p):
        if IN_CI:
            pytest.fail(f"{p} missing in CI")
        pytest.skip(f"{p} missing (CI unset)")
    return p


def engine(cfg):
    key = tuple(sorted(cfg.items()))
    if key not in _ENGINES:
        try:
            _ENGINES[key] = Engine(build_library(cfg, dtype="q15"))
        except BuildError as e:  # pragma: no cover - no cargo
            pytest.skip(str(e))
    return _ENGINES[key]


def bits(a):
    return np.asarray(a, np.float32).view(np.uint32).tolist()


def token_lists(cfg, seed, count=5):
    rng = np.random.default_rng(seed)
    c = nr.Config.of(cfg)
    lens = [1, 2, c.S // 2, c.S, c.S + 5] + rng.integers(1, c.S + 8, max(0, count - 5)).tolist()
    out = [rng.integers(0, c.V, n).tolist() for n in lens[:max(count, 5)]]
    out.append([-3, c.V, c.V + 100, 1])  # out-of-range ids read as 0
    return out


def same_as_ref(eng, blob, cfg, seed=0, count=5):
    """Compares every token list; returns the number of bit-identical logit vectors."""
    w = nr.parse_blob(blob, nr.Config.of(cfg))
    m = q.Q15Model(w)
    mod = Model.load(blob, eng)
    n_same = 0
    for toks in token_lists(cfg, seed, count):
        ref = q.logits_q15(m, toks)
        got = mod.logits(toks)
        assert bits(got) == bits(ref), f"tokens {toks}"
        assert mod.predict_next(toks) == nr.argmax_first(ref)
        n_same += 1
    return n_same


def test_build_config_reports_q15_and_the_state_fits():
    eng = engine(DEFAULT)
    assert eng.config["state_cached"] == 2  # bit 1: q15, bit 0 clear: lean
    assert eng.state_size <= 12000  # S3-x86-q15-state (BENCHMARKS.md#targets)
    c = nr.Config.of(DEFAULT)
    n16 = 2 * c.S * c.D + c.S * c.DH + 3 * c.S + c.K * c.D + c.K + c.DH + c.D
    n32 = c.D + (c.D + 2 * c.DH + 3) + 4 * c.TOPK + c.L + (0 if c.V >= c.D else c.D)
    assert eng.state_size == 4 * c.V + 4 * n32 + 2 * n16 + (2 * n16) % 4


def test_default_model_bit_identical():
    eng = engine(DEFAULT)
    blob = open(shared("models/default.atome"), "rb").read()
    assert same_as_ref(eng, blob, DEFAULT, seed=1, count=8) == 9


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_random_blobs_every_packing(seed):
    eng = engine(DEFAULT)
    cfg = nr.Config.of(DEFAULT)
    w = nr.random_weights(cfg, seed)
    ref = None
    for fmt in ("ATOME01", "ATOME02", "ATOMEP3"):
        blob = nr.write_blob(w, fmt)
        assert same_as_ref(eng, blob, DEFAULT, seed) == 6
        got = Model.load(blob, eng).logits([1, 2, 3, 200, 7])
        ref = got if ref is None else ref
        assert bits(got) == bits(ref)  # the same weights in every packing
    # true P3 weights (+-3, +-9)
    blob = nr.random_blob(cfg, "ATOMEP3", seed=10 + seed)
    assert same_as_ref(eng, blob, DEFAULT, seed) == 6


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("where", ["embed", "wq", "gamma", "ssm_a", "ssm_b", "unembed"])
def test_nonfinite_parameters(bad, where):
    eng = engine(DEFAULT)
    cfg = nr.Config.of(DEFAULT)
    w = nr.poison(nr.random_weights(cfg, 9), where, bad)
    blob = nr.write_blob(w, "ATOME01")
    assert same_as_ref(eng, blob, DEFAULT, seed=3, count=5) == 6
    got = np.asarray(Model.load(blob, eng).logits([5, 6, 7, 8, 9]), np.float32)
    assert not np.isnan(got).any()


def test_generate_matches_reference():
    eng = engine(DEFAULT)
    blob = open(shared("models/default.atome"), "rb").read()
    m = q.Q15Model(nr.parse_blob(blob, nr.Config.of(DEFAULT)))
    mod = Model.load(blob, eng)
    for prompt in ([1], [72, 101, 108, 108, 111], list(range(20, 40))):
        assert mod.generate(prompt, 24) == q.generate_q15(m, prompt, 24)


def test_classifier_matches_reference():
    eng = engine(DEFAULT)
    cfg = nr.Config.of(DEFAULT)
    for fmt, seed in (("ATOMECL01", 1), ("ATOMECL02", 2)):
        blob = nr.random_blob(cfg, fmt, seed=seed, n_classes=5)
        w = nr.parse_blob(blob, cfg)
        clf = Classifier.load(blob, eng)
        for toks in ([1, 2, 3], list(range(50, 90))):
            cq, lq = q.classify_q15(w, toks)
            c, lg = clf.classify(toks)
            assert c == cq
            assert bits(lg) == bits(lq)


@pytest.mark.parametrize("name,cfg", GOLDEN)
def test_golden_configuration_blobs(name, cfg):
    blob = open(shared("models/" + name), "rb").read()
    eng = engine(cfg)
    assert same_as_ref(eng, blob, cfg, seed=len(name), count=6) == 7
    # random blobs of the same configuration, every packing
    c = nr.Config.of(cfg)
    for fmt in ("ATOME01", "ATOME02", "ATOMEP3"):
        assert same_as_ref(eng, nr.random_blob(c, fmt, seed=4), cfg, seed=5) == 6


def test_944k_model_bit_identical_and_state_budget():
    blob = open(shared("models/atome_944k.bin"), "rb").read()
    eng = engine(M944K)
    assert eng.state_size <= 90000  # S1-x86-q15-state (BENCHMARKS.md#targets)
    m = q.Q15Model(nr.parse_blob(blob, nr.Config.of(M944K)))
    mod = Model.load(blob, eng)
    text = list(b"Once upon a time there was a little bird who lived in a tall tree near the park.")
    for toks in (text[:1], text[:17], text[:64], text):
        ref = q.logits_q15(m, toks)
        assert bits(mod.logits(toks)) == bits(ref)


@pytest.mark.parametrize("names,cfg", CLASSIFIERS)
def test_golden_classifiers(names, cfg):
    eng = engine(cfg)
    c = nr.Config.of(cfg)
    for name in names:
        blob = open(shared("models/" + name), "rb").read()
        w = nr.parse_blob(blob, c)
        clf = Classifier.load(blob, eng)
        rng = np.random.default_rng(len(name))
        for n in (1, c.S // 2, c.S + 3):
            toks = rng.integers(0, c.V, n).tolist()
            cq, lq = q.classify_q15(w, toks)
            got, lg = clf.classify(toks)
            assert got == cq
            assert bits(lg) == bits(lq)


def rt_dims(cfg):
    c = nr.Config.of(cfg)
    return dict(vocab_size=c.V, d_model=c.D, n_layers=c.L, d_head=c.DH, kernel_size=c.K,
                top_k=c.TOPK, max_seq=c.S)


@pytest.mark.parametrize("cached", [False, True])
def test_runtime_api_runs_q15_for_any_dimensions(cached):
    """The runtime API's q15 modes (dtype="q15", lean and cached) in one q15
    build (the default knobs) run every golden configuration's blob with the
    q15 engine (tests/test_runtime_q15.py: the same modes in the float
    build)."""
    lib = engine(DEFAULT).path
    for name, cfg in GOLDEN[:3] + [("default.atome", DEFAULT)]:
        blob = open(shared("models/" + name), "rb").read()
        m = q.Q15Model(nr.parse_blob(blob, nr.Config.of(cfg)))
        rt = RtModel(blob, dims=rt_dims(cfg), cached=cached, lib=lib, oov_as_zero=True, dtype="q15")
        for toks in token_lists(cfg, 7, 5):
            assert bits(rt.logits(toks)) == bits(q.logits_q15(m, toks)), name
        assert list(rt.generate([1, 2], 5)) == q.generate_q15(m, [1, 2], 5)
        ent = rt.router_entropy()
        assert len(ent) == nr.Config.of(cfg).L
        assert all(0.0 <= e <= np.log(3.0) + 1e-6 for e in ent)
    c = nr.Config.of(CLASSIFIERS[1][1])
    blob = open(shared("models/cls_odd.atomecl"), "rb").read()
    w = nr.parse_blob(blob, c)
    rt = RtModel(blob, dims=rt_dims(CLASSIFIERS[1][1]), cached=cached, lib=lib, oov_as_zero=True, dtype="q15")
    cq, lq = q.classify_q15(w, [3, 1, 4, 1, 5])
    got, lg = rt.classify([3, 1, 4, 1, 5])
    assert got == cq and bits(lg) == bits(lq)


def cached_engine(cfg):
    key = ("cached",) + tuple(sorted(cfg.items()))
    if key not in _ENGINES:
        try:
            _ENGINES[key] = Engine(build_library(cfg, cached=True, dtype="q15"))
        except BuildError as e:  # pragma: no cover - no cargo
            pytest.skip(str(e))
    return _ENGINES[key]


def test_q15_cached_state_matches_the_cached_reference():
    """The q15 cached library (ATOME_DTYPE=q15 ATOME_STATE=cached): flags 3,
    its state within 30,000 bytes, and for prompts that extend one another
    (so the cache is reused) the numpy reference's cached-plan bits; its
    generation equals the reference's."""
    eng = cached_engine(DEFAULT)
    assert eng.config["state_cached"] == 3  # bit 1: q15, bit 0: cached
    assert eng.state_size <= 30000
    blob = open(shared("models/default.atome"), "rb").read()
    w = nr.parse_blob(blob, nr.Config.of(DEFAULT))
    m = q.Q15Model(w)
    mod = Model.load(blob, eng)
    long = list(range(30, 70))
    for n in (1, 2, 5, 6, 17, 32, 33, 40):
        toks = long[:n]
        got = mod.logits(toks)
        assert bits(got) == bits(q.logits_q15_cached(m, toks)), f"{n} tokens"
        assert bits(got) == bits(q.logits_q15(m, toks)), f"{n} tokens"
    for prompt in ([1], [72, 101, 108, 108, 111]):
        assert mod.generate(prompt, 24) == q.generate_q15(m, prompt, 24)
