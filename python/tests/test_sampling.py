"""atome_generate_sampled (CONTRACT.md 'Sampling') through the package."""

from __future__ import annotations

import math

import numpy as np
import pytest

import atome
import numpy_ref as R
from conftest import CONFIGS, GOLDEN, model_bytes

PARAMS = [  # temperature, top_k, top_p
    (1.0, 0, 1.0), (0.7, 0, 1.0), (1.3, 5, 1.0), (0.9, 0, 0.9), (1.1, 8, 0.6),
    (2.0, 1000, 0.0), (0.5, -1, 1.5), (1.0, 3, 0.3),
]


@pytest.fixture(scope="module")
def tiny_model(lib):
    cfg = R.Config.of(CONFIGS["tiny"])
    blob = R.random_blob(cfg, "ATOME01", seed=12)
    return atome.Model.load(blob, engine=lib("tiny")), R.parse_blob(blob, cfg)


@pytest.fixture(scope="module")
def toy_model(lib):
    if GOLDEN.exists():
        blob = model_bytes("model_toy.atome")
    else:
        blob = R.random_blob(R.Config.of(CONFIGS["toy"]), "ATOME01", seed=13)
    return atome.Model.load(blob, engine=lib("toy")), R.parse_blob(blob, CONFIGS["toy"])


def test_same_seed_same_tokens(toy_model):
    m, _ = toy_model
    prompt = list(b"Once upon a time")
    a = m.generate_sampled(prompt, 24, temperature=0.9, top_k=40, top_p=0.95, seed=1234)
    assert len(a) == 24
    # interleave other calls: the result depends on (model, prompt, params) only
    m.generate_sampled(prompt, 5, temperature=1.5, seed=1)
    m.predict_next([1, 2, 3])
    assert m.generate_sampled(prompt, 24, temperature=0.9, top_k=40, top_p=0.95, seed=1234) == a
    outs = {tuple(m.generate_sampled(prompt, 24, temperature=1.2, seed=s)) for s in range(6)}
    assert len(outs) > 1


@pytest.mark.parametrize("temp", [0.0, -1.0, float("nan"), -0.0])
def test_nonpositive_temperature_is_greedy(toy_model, temp):
    m, _ = toy_model
    for prompt in (list(b"The cat"), [7], list(b"x" * 63), list(b"y" * 70)):
        assert m.generate_sampled(prompt, 20, temperature=temp, top_k=3, top_p=0.5, seed=9) == m.generate(prompt, 20)


def test_top_k_one_is_greedy(tiny_model):
    m, _ = tiny_model
    for seed in range(5):
        assert m.generate_sampled([3, 1, 4], 5, temperature=1.0, top_k=1, seed=seed) == m.generate([3, 1, 4], 5)


def test_counts_and_bad_arguments(tiny_model):
    m, w = tiny_model
    S = w.cfg.S
    assert len(m.generate_sampled([1], 100, temperature=1.0, seed=3)) == S - 1
    assert m.generate_sampled(list(range(S)), 4, temperature=1.0, seed=3) == []
    assert m.generate_sampled([1, 2], 0, temperature=1.0, seed=3) == []
    assert m.generate_sampled([], 4, temperature=1.0, seed=3) == []


@pytest.mark.parametrize("temperature,top_k,top_p", PARAMS)
def test_exact_rule_on_library_logits(tiny_model, toy_model, temperature, top_k, top_p):
    """Token for token the CONTRACT definition (splitmix64, one uniform per
    token, order, top-k, top-p, inverse CDF), fed with the library's own logits."""
    for m, w in (tiny_model, toy_model):
        for seed in (0, 1, 42, 2 ** 64 - 1, 0x9E3779B97F4A7C15):
            prompt = [5, 9, 2] if w.cfg.V < 256 else list(b"One day, ")
            n = 12
            got = m.generate_sampled(prompt, n, temperature, top_k, top_p, seed)
            probe = atome.Model.load(m._data, engine=m.engine)
            want = R.generate_sampled(w, prompt, n, temperature, top_k, top_p, seed,
                                      logits_fn=lambda s: probe.logits(s))
            assert got == want, (seed, got, want)


@pytest.mark.parametrize("temperature,top_k,top_p", PARAMS[:5])
def test_exact_against_numpy_forward(tiny_model, temperature, top_k, top_p):
    """End to end against numpy_ref (its own forward).  A difference is only
    allowed where numpy's logits differ from the library's by a few ulp and the
    draw falls on the boundary (checked with the library's logits)."""
    m, w = tiny_model
    for seed in (3, 77, 2024):
        got = m.generate_sampled([8, 8, 1], 5, temperature, top_k, top_p, seed)
        want = R.generate_sampled(w, [8, 8, 1], 5, temperature, top_k, top_p, seed)
        if got != want:
            probe = atome.Model.load(m._data, engine=m.engine)
            assert got == R.generate_sampled(w, [8, 8, 1], 5, temperature, top_k, top_p, seed,
                                             logits_fn=lambda s: probe.logits(s))


def _chi2_bound(dof: int, z: float = 4.75) -> float:
    """Wilson-Hilferty upper quantile of chi-square (z=4.75: p ~ 1e-6)."""
    a = 2.0 / (9.0 * dof)
    return dof * (1.0 - a + z * math.sqrt(a)) ** 3


@pytest.mark.parametrize("temperature,top_k,top_p", [(1.0, 0, 1.0), (0.8, 6, 1.0), (1.5, 0, 0.8)])
def test_distribution_chi_square(tiny_model, temperature, top_k, top_p):
    """Single-token draws over many seeds follow the probabilities numpy_ref
    computes from the logits (fixed seeds: deterministic)."""
    m, w = tiny_model
    prompt = [2, 7, 1, 8]
    lg = np.array(m.logits(prompt), np.float32)
    p = R.sampling_probs(lg, temperature, top_k, top_p)
    N = 6000
    counts = np.zeros(w.cfg.V)
    for seed in range(N):
        (t,) = m.generate_sampled(prompt, 1, temperature, top_k, top_p, seed)
        counts[t] += 1
    assert counts[p == 0].sum() == 0, "a token outside the kept set was drawn"
    exp = p * N
    big = exp >= 5
    obs_b, exp_b = list(counts[big]), list(exp[big])
    if (~big & (p > 0)).any():
        obs_b.append(counts[~big].sum())
        exp_b.append(exp[~big].sum())
    obs_b, exp_b = np.array(obs_b), np.array(exp_b)
    chi2 = float(((obs_b - exp_b) ** 2 / exp_b).sum())
    dof = max(1, len(exp_b) - 1)
    assert chi2 < _chi2_bound(dof), (chi2, dof)
