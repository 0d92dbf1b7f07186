"""atome.load(..., dtype="q15") and its cached plan through the runtime API of
the default (float) build: every mode runs in any build. The q15 logits
equal the numpy reference of docs/Q15.md (q15_ref: logits_q15 for the lean
sense, logits_q15_cached for the cached one, one position at a time) bit
for bit, on random small blobs in every packing; ids, greedy generation and
classes too; the float mode of the same library is unchanged."""

from __future__ import annotations

import numpy as np
import pytest

import atome
import numpy_ref as nr
import q15_ref as q
from atome._runtime import rt_flags

# Small odd configurations (V below 4 D: parameter vectors past the logits
# area; K = 1 and 2; a top-k above S).
CFGS = [
    dict(V=40, D=22, L=2, DH=6, K=3, TOPK=2, S=12),
    dict(V=20, D=16, L=1, DH=4, K=1, TOPK=9, S=6),
    dict(V=64, D=8, L=3, DH=8, K=2, TOPK=1, S=10),
]


@pytest.fixture(scope="module")
def rtlib(lib):
    """The default build's shared library (float, lean: the q15 modes are
    chosen at open)."""
    return lib("default").path


def bits(a):
    return np.asarray(a, np.float32).view(np.uint32).tolist()


def dims_of(c: nr.Config) -> dict:
    return dict(vocab_size=c.V, d_model=c.D, n_layers=c.L, d_head=c.DH, kernel_size=c.K, top_k=c.TOPK)


def token_lists(c: nr.Config, seed: int):
    rng = np.random.default_rng(seed)
    lens = [1, 2, c.S // 2, c.S, c.S + 3]
    return [rng.integers(0, c.V, n).tolist() for n in lens]


@pytest.mark.parametrize("fmt", ["ATOME01", "ATOME02", "ATOMEP3"])
@pytest.mark.parametrize("ci", range(len(CFGS)))
def test_q15_modes_equal_the_numpy_reference(rtlib, ci, fmt):
    c = nr.Config.of(CFGS[ci])
    blob = nr.random_blob(c, fmt, seed=7 * ci + len(fmt))
    m = q.Q15Model(nr.parse_blob(blob, c))
    lean = atome.load(blob, dims=dims_of(c), seq=c.S, dtype="q15", lib=rtlib)
    cached = atome.load(blob, dims=dims_of(c), seq=c.S, dtype="q15", cached=True, lib=rtlib)
    assert (lean.dtype, lean.cached, cached.dtype, cached.cached) == ("q15", False, "q15", True)
    toks = token_lists(c, ci)
    for t in toks:
        ref = q.logits_q15(m, t)
        assert bits(lean.logits(t)) == bits(ref), f"lean, {len(t)} tokens"
        assert lean.predict_next(t) == nr.argmax_first(ref)
    # The cached handle on growing prefixes (each call one new position),
    # then a list that leaves the prefix: the cached sense's bits.
    long = toks[-1]
    for n in list(range(1, c.S + 1)) + [c.S + 3, 2]:
        t = long[:n] if n > 2 else long[1:1 + n]
        ref = q.logits_q15_cached(m, t)
        assert bits(cached.logits(t)) == bits(ref), f"cached, {n} tokens"
        assert bits(ref) == bits(q.logits_q15(m, t))
    for prompt in ([1], long[:c.S // 2]):
        want = q.generate_q15(m, prompt, c.S)
        assert list(lean.generate(prompt, c.S)) == want
        assert list(cached.generate(prompt, c.S)) == want


def test_q15_classifier_equals_the_numpy_reference(rtlib):
    c = nr.Config.of(CFGS[0])
    for fmt, seed in (("ATOMECL01", 3), ("ATOMECL02", 4)):
        blob = nr.random_blob(c, fmt, seed=seed, n_classes=5)
        w = nr.parse_blob(blob, c)
        for cached in (False, True):
            clf = atome.load(blob, dims=dims_of(c), seq=c.S, dtype="q15", cached=cached, lib=rtlib)
            for t in ([3, 1, 4], list(range(2, 2 + c.S + 2))):
                k, lg = q.classify_q15(w, t)
                got, glg = clf.classify(t)
                assert got == k and bits(glg) == bits(lg), (fmt, cached, len(t))


def test_float_mode_is_unchanged_and_differs_from_q15(rtlib):
    """dtype="f32" (the default) is the float engine: the numpy float
    reference's ids; its logits are not the q15 ones."""
    c = nr.Config.of(CFGS[0])
    blob = nr.random_blob(c, "ATOME01", seed=11)
    w = nr.parse_blob(blob, c)
    f = atome.load(blob, dims=dims_of(c), seq=c.S, lib=rtlib)
    g = atome.load(blob, dims=dims_of(c), seq=c.S, lib=rtlib, dtype="q15")
    assert f.dtype == "f32" and "f32" in repr(f) and "q15" in repr(g)
    t = [1, 5, 9, 2, 7]
    assert f.predict_next(t) == nr.predict_next(w, t)[0]
    assert bits(f.logits(t)) != bits(g.logits(t))


def test_work_sizes_and_flags(rtlib):
    c = nr.Config.of(CFGS[0])
    blob = nr.random_blob(c, "ATOME01", seed=1)
    sizes = {}
    for dtype in ("f32", "q15"):
        for cached in (False, True):
            sizes[dtype, cached] = atome.load(blob, dims=dims_of(c), seq=c.S, dtype=dtype, cached=cached,
                                              lib=rtlib).work_size
    # The q15 buffers are the smaller ones (int16 activations).
    assert sizes["q15", False] < sizes["f32", False] and sizes["q15", True] < sizes["f32", True]
    assert [rt_flags(d, k) for d in ("f32", "q15") for k in (False, True)] == [0, 1, 2, 3]
    with pytest.raises(ValueError, match="dtype"):
        atome.load(blob, dims=dims_of(c), seq=c.S, dtype="int8", lib=rtlib)
    with pytest.raises(TypeError, match="cached"):
        atome.load(blob, dims=dims_of(c), seq=c.S, cached="yes", lib=rtlib)
