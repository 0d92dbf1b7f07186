"""Unit tests of the q15 contract's primitives (docs/Q15.md) as q15_ref
implements them, and agreement of q15 logits with the float path."""

import math
import os
import sys
from fractions import Fraction

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy_ref as nr  # noqa: E402
import q15_ref as q  # noqa: E402

SHARED = os.environ.get("ATOME_SHARED", os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "shared")))
IN_CI = os.environ.get("CI") == "true"


def shared(path):
    p = os.path.join(SHARED, path)
    if not os.path.exists(p):
        if IN_CI:
            pytest.fail(f"{p} missing in CI")
        pytest.skip(f"{p} missing (CI unset)")
    return p


def exact_rshr(v, s):
    return math.floor(Fraction(v, 2 ** s) + Fraction(1, 2)) if s >= 0 else v * 2 ** (-s)


# ---------------------------------------------------------------- rounding


def test_rshr_ties_go_up():
    v = np.array([3, -3, 5, -5, 6, -6, 1, -1, 2, -2], np.int64)
    assert q.rshr(v, 1).tolist() == [2, -1, 3, -2, 3, -3, 1, 0, 1, -1]
    assert q.rshr(np.array([6, -6, 5, -5]), 2).tolist() == [2, -1, 1, -1]


def test_rshr_matches_exact_rounding():
    rng = np.random.default_rng(1)
    v = rng.integers(-(1 << 61), 1 << 61, 2000, dtype=np.int64)
    s = rng.integers(-1, 70, 2000)
    s = np.where(s < 0, 0, s)
    got = q.rshr(v, s)
    for a, b, c in zip(v.tolist(), s.tolist(), got.tolist()):
        assert c == exact_rshr(a, b)


def test_rshr_left_shift_and_large_shift():
    assert q.rshr(np.array([3, -3]), -4).tolist() == [48, -48]
    assert q.rshr(np.array([(1 << 61) - 1, -(1 << 61)]), 63).tolist() == [0, 0]
    assert q.rshr(np.array([(1 << 61)]), 62).tolist() == [1]


# ---------------------------------------------------------------- quantization


def test_quant_exponent_choice_and_normalization():
    rng = np.random.default_rng(2)
    for _ in range(200):
        n = int(rng.integers(1, 9))
        scale = int(rng.integers(0, 50))
        v = rng.integers(-(1 << scale), (1 << scale) + 1, n, dtype=np.int64)
        if not v.any():
            continue
        m, e = q.quant(v, np.int64(-7))
        mx = int(np.abs(m).max())
        assert (1 << 14) <= mx <= 32767
        s = int(e) + 7
        assert s == int(np.abs(v).max()).bit_length() - 15
        for a, b in zip(v.tolist(), m.tolist()):
            assert b == max(-32767, min(32767, exact_rshr(a, s)))


def test_quant_saturates_the_rounding_carry():
    m, e = q.quant(np.array([65535, -65535, 3], np.int64), np.int64(0))
    assert m.tolist() == [32767, -32767, 2] and int(e) == 1
    m, e = q.quant(np.array([-32768], np.int64), np.int64(5))
    assert m.tolist() == [-16384] and int(e) == 6


def test_quant_small_values_shift_left_exactly():
    m, e = q.quant(np.array([3, -1, 0], np.int64), np.int64(0))
    assert m.tolist() == [3 << 13, -(1 << 13), 0] and int(e) == -13


def test_bitlen():
    vals = [0, 1, 2, 3, (1 << 53) - 1, 1 << 53, (1 << 53) + 1, (1 << 62) - 1, 1 << 61]
    vals += [(1 << k) + d for k in range(1, 62) for d in (-1, 0, 1)]
    got = q.bitlen(np.array(vals, np.int64)).tolist()
    assert got == [v.bit_length() for v in vals]


def test_quant_zero_rows():
    v = np.array([[0, 0, 0], [1, 0, 0]], np.int64)
    m, e = q.quant(v, np.array([4, 4]))
    assert m[0].tolist() == [0, 0, 0] and int(e[0]) == q.E_ZERO
    assert int(e[1]) == 4 - 14


def test_f32_parts_exact_and_nonfinite():
    xs = np.array([1.0, -0.1, 3.5e-42, 0.0, -0.0, 1e38, np.nan, np.inf, -np.inf], np.float32)
    m, e = q.f32_parts(xs)
    for x, mm, ee in zip(xs[:6].tolist(), m[:6].tolist(), e[:6].tolist()):
        assert Fraction(mm) * Fraction(2) ** ee == Fraction(float(np.float32(x)))
    fmax = Fraction(float(np.finfo(np.float32).max))
    assert m[6] == 0
    assert Fraction(int(m[7])) * Fraction(2) ** int(e[7]) == fmax
    assert Fraction(int(m[8])) * Fraction(2) ** int(e[8]) == -fmax


def test_fquant_vectors():
    m, e = q.fquant(np.array([0.5, -0.25, 0.0, 1e-30], np.float32), 15)
    assert m.tolist() == [16384, -8192, 0, 0] and int(e) == -15
    m, e = q.fquant(np.zeros(4, np.float32), 15)
    assert not m.any() and int(e) == q.E_ZERO
    m, e = q.fquant(np.array([np.nan, 2.0], np.float32), 15)
    assert m.tolist() == [0, 16384] and int(e) == -13
    m, e = q.fquant(np.array([np.inf, 1.0], np.float32), 23)
    assert int(m[0]) == (1 << 23) - 1 and int(m[1]) == 0
    # a value whose 24-bit significand rounds up to 2^15 saturates
    m, e = q.fquant(np.array([np.float32(0.99999994)], np.float32), 15)
    assert m.tolist() == [32767] and int(e) == -15


# ---------------------------------------------------------------- exp, tanh, softmax


def test_exp2q_accuracy_and_monotone():
    assert int(q.exp2q(np.array([0]))[0]) == 1 << 30
    v = np.arange(0, 40 << 24, 7919 * 37, dtype=np.int64)
    got = q.exp2q(v).astype(np.float64)
    want = np.exp2(-v / 2.0 ** 24) * 2.0 ** 30
    assert np.all(np.abs(got - want) <= want * 2.5e-7 + 1.0)
    assert np.all(np.diff(got) <= 0)
    assert q.exp2q(np.array([1 << 40]))[0] == 0  # saturates at 2^-64 -> 0


def test_tanh_q30():
    a = np.array([0.0, 1e-3, -0.3, 0.7, 2.0, -5.0, 20.0, 1e-30], np.float32)
    t = q.tanh_q30(a).astype(np.float64) / 2.0 ** 30
    assert np.all(np.abs(t - np.tanh(a.astype(np.float64))) < 2e-6)
    rng = np.random.default_rng(4)
    a = np.concatenate([rng.uniform(-12, 12, 3000), rng.uniform(-1e-3, 1e-3, 500)]).astype(np.float32)
    t = q.tanh_q30(a).astype(np.float64) / 2.0 ** 30
    assert np.all(np.abs(t - np.tanh(a.astype(np.float64))) < 2e-6)
    assert q.tanh_q30(np.array([np.nan], np.float32))[0] == 0
    assert q.tanh_q30(np.array([np.inf, -np.inf], np.float32)).tolist() == [1 << 30, -(1 << 30)]


def test_softmax_q():
    sig = np.array([[100, 40, -20, 100]], np.int64)
    p = q.softmax_q(sig, 12345, np.array([-20]))
    real = sig[0] * 12345 * 2.0 ** -20
    f = np.exp(real - real.max())
    f /= f.sum()
    assert np.all(np.abs(p[0] / 2.0 ** 30 - f) < 2e-6)
    assert abs(int(p.sum()) - (1 << 30)) <= 4
    assert p[0, 0] == p[0, 3]
    u = q.softmax_q(sig, 0, np.array([0]))  # zero scale: uniform
    assert u.tolist() == [[1 << 28] * 4]
    n = q.softmax_q(sig, -12345, np.array([-20]))  # negative scale flips the order
    assert n[0, 2] > n[0, 1] > n[0, 0]


# ---------------------------------------------------------------- float conversions


def nearest_even_f32(fr: Fraction) -> np.float32:
    """Correctly rounded binary32 (normal range) of an exact rational."""
    if fr == 0:
        return np.float32(0)
    s = -1 if fr < 0 else 1
    a = abs(fr)
    e = math.floor(math.log2(a))
    while Fraction(2) ** e > a:
        e -= 1
    while Fraction(2) ** (e + 1) <= a:
        e += 1
    ulp = Fraction(2) ** (e - 23)
    k = a / ulp
    fl = math.floor(k)
    r = k - fl
    if r > Fraction(1, 2) or (r == Fraction(1, 2) and fl % 2 == 1):
        fl += 1
    return np.float32(s * float(fl * ulp))


def test_int64_to_f32_is_one_rounding():
    rng = np.random.default_rng(3)
    vals = [(1 << 24) + 1, (1 << 24) + 3, (1 << 25) + 2, (1 << 25) + 6, (1 << 61) + (1 << 37)]
    vals += rng.integers(1, 1 << 62, 300).tolist()
    got = np.array(vals, np.int64).astype(np.float32)
    for v, g in zip(vals, got.tolist()):
        assert np.float32(g) == nearest_even_f32(Fraction(v))


def test_to_f32():
    v = np.array([3, (1 << 24) + 1, (1 << 24) + 3, -5], np.int64)
    got = q.to_f32(v, np.int64(-2))
    for a, g in zip(v.tolist(), got.tolist()):
        assert np.float32(g) == nearest_even_f32(Fraction(a, 4))
    assert np.isinf(q.to_f32(np.array([1]), np.int64(200))[0])
    assert q.to_f32(np.array([1]), np.int64(-400))[0] == 0
    assert q.to_f32(np.array([0]), np.int64(q.E_ZERO))[0] == 0


# ---------------------------------------------------------------- the forward pass

SMALL = nr.Config(V=256, D=32, L=2, DH=8, K=5, TOPK=4, S=16)


def cosine(a, b):
    a = np.asarray(a, np.float64)
    b = np.asarray(b, np.float64)
    return float(a @ b / np.linalg.norm(a) / np.linalg.norm(b))


def bits(a):
    return np.asarray(a, np.float32).view(np.uint32).tolist()


def test_default_model_close_to_float():
    w = nr.parse_blob(open(shared("models/default.atome"), "rb").read(), nr.Config())
    m = q.Q15Model(w)
    text = open(shared("data/sample.txt"), "rb").read()
    for off in (0, 70000, 150000):
        toks = list(text[off:off + 32])
        lq = q.logits_q15(m, toks)
        lf = nr.logits(w, toks)
        assert nr.argmax_first(lq) == nr.argmax_first(lf)
        assert cosine(lq, lf) > 0.99999
    # lean (one pass) and cached (one position at a time) give the same bits
    toks = list(text[5000:5012])
    assert bits(q.logits_q15(m, toks)) == bits(q.logits_q15_cached(m, toks))


@pytest.mark.parametrize("seed", [0, 1])
def test_random_blobs_all_packings(seed):
    w = nr.random_weights(SMALL, seed)
    toks = list(np.random.default_rng(seed).integers(0, 256, 11))
    ref = None
    for fmt in ("ATOME01", "ATOME02", "ATOMEP3"):
        wf = nr.parse_blob(nr.write_blob(w, fmt), SMALL)
        lean = q.logits_q15(wf, toks)
        if ref is None:
            ref = lean
            lf = nr.logits(wf, toks)
            assert cosine(lean, lf) > 0.9999
            assert nr.argmax_first(lean) == nr.argmax_first(lf)
        # the three packings of the same ternary weights: the same bits
        assert bits(lean) == bits(ref)
    assert bits(q.logits_q15_cached(w, toks)) == bits(ref)


def test_random_p3_blob():
    w = nr.parse_blob(nr.random_blob(SMALL, "ATOMEP3", seed=5), SMALL)
    toks = [1, 200, 3, 45, 90, 7, 7, 7, 12]
    lq = q.logits_q15(w, toks)
    lf = nr.logits(w, toks)
    assert cosine(lq, lf) > 0.9999
    assert nr.argmax_first(lq) == nr.argmax_first(lf)
    assert bits(q.logits_q15_cached(w, toks)) == bits(lq)


def test_window_longer_than_s_uses_last_s():
    w = nr.random_weights(SMALL, 7)
    toks = list(range(40, 40 + SMALL.S + 5))
    assert bits(q.logits_q15(w, toks)) == bits(q.logits_q15(w, toks[-SMALL.S:]))


def test_generate_is_the_loop_of_predict_next():
    w = nr.random_weights(SMALL, 8)
    m = q.Q15Model(w)
    prompt = [10, 20, 30]
    out = q.generate_q15(m, prompt, 5)
    seq = list(prompt)
    for tok in out:
        assert tok == q.predict_next_q15(m, seq)[0]
        seq.append(tok)
    assert len(out) == 5


def test_classifier():
    p = shared("models/agri.atomecl")
    cfg = nr.Config(V=256, D=32, L=2, DH=8, K=5)
    w = nr.parse_blob(open(p, "rb").read(), cfg)
    for toks in ([1, 2, 3, 4], list(b"temperature 31 humidity 80")):
        cq, lq = q.classify_q15(w, toks)
        cf, lf = nr.classify(w, toks)
        assert cq == cf
        assert np.max(np.abs(lq - lf)) < 1e-2 * (1 + np.max(np.abs(lf)))


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_nonfinite_parameters_give_a_defined_result(bad):
    toks = [5, 6, 7, 8, 9]
    for where in ("embed", "wq", "gamma", "ssm_a", "unembed"):
        w = nr.poison(nr.random_weights(SMALL, 9), where, bad)
        blob = nr.write_blob(w, "ATOME01")
        wp = nr.parse_blob(blob, SMALL)
        a = q.logits_q15(wp, toks)
        b = q.logits_q15_cached(wp, toks)
        assert bits(a) == bits(b)
        assert not np.any(np.isnan(a))
        if where == "unembed" and np.isinf(bad):
            # a FLT_MAX scale: the larger logits overflow to infinities of
            # their sign, the rest stay finite (no NaN, checked above)
            assert np.any(np.isinf(a))
            assert np.all(np.sign(a[np.isinf(a)]) == np.sign(bad) * np.sign(
                q.logits_q15(nr.parse_blob(nr.write_blob(nr.random_weights(SMALL, 9)), SMALL),
                             toks)[np.isinf(a)]))


def test_nan_reads_as_zero():
    toks = [5, 6, 7, 8, 9]
    w0 = nr.random_weights(SMALL, 9)
    w0.embed.scale = np.float32(0)
    wn = nr.random_weights(SMALL, 9)
    wn.embed.scale = np.float32(np.nan)
    assert bits(q.logits_q15(w0, toks)) == bits(q.logits_q15(wn, toks))


def test_zero_embedding_gives_beta_path():
    w = nr.random_weights(SMALL, 10)
    w.embed.scale = np.float32(0)
    lq = q.logits_q15(w, [1, 2, 3])
    lf = nr.logits(w, [1, 2, 3])
    assert cosine(lq, lf) > 0.9999


def test_lean_state_budget():
    assert q.lean_state_bytes(nr.Config())["total"] <= 12000
    m944 = nr.Config(V=256, D=256, L=8, DH=64, K=5, TOPK=4, S=64)
    assert q.lean_state_bytes(m944)["total"] <= 90000


@pytest.mark.parametrize("name,cfg", [
    ("tiny.atome", dict(V=32, D=16, L=2, DH=8, K=5, TOPK=4, S=8)),
    ("odd.atome", dict(V=40, D=22, L=3, DH=6, K=3, TOPK=2, S=16)),
    ("wide.atome", dict(V=64, D=32, L=2, DH=8, K=7, TOPK=6, S=24)),
])
def test_golden_configuration_blobs(name, cfg):
    cfg = nr.Config.of(cfg)
    w = nr.parse_blob(open(shared("models/" + name), "rb").read(), cfg)
    m = q.Q15Model(w)
    rng = np.random.default_rng(len(name))
    for n in (1, cfg.S // 2, cfg.S + 3):
        toks = rng.integers(0, cfg.V, n).tolist()
        lq = q.logits_q15(m, toks)
        lf = nr.logits(w, toks)
        assert cosine(lq, lf) > 0.9999
        assert bits(lq) == bits(q.logits_q15_cached(m, toks))


# ------------------------------------------------ plain-integer cross-checks
# The doc's LayerNorm and mix written again with Python integers (no numpy,
# no width limits): catches a silent int64 overflow or a misplaced shift.


def py_rshr(v, s):
    if s <= 0:
        return v << -s
    return (v + (1 << (s - 1))) >> s


def py_quant(vals, e, b=15):
    mx = max(abs(v) for v in vals)
    if mx == 0:
        return [0] * len(vals), q.E_ZERO
    s = mx.bit_length() - b
    lim = (1 << b) - 1
    return [max(-lim, min(lim, py_rshr(v, s))) for v in vals], e + s


def py_align(terms, room):
    live = [(m, e, t) for (m, e, t) in terms if e != q.E_ZERO]
    if not live:
        return [0] * len(terms[0][0]), 0
    A = max(e + t for (_, e, t) in live) - room
    out = [0] * len(terms[0][0])
    for m, e, _ in live:
        out = [o + py_rshr(v, A - e) for o, v in zip(out, m)]
    return out, A


def py_layer_norm(m, e, gm, ge, bm, be):
    D = len(m)
    S = sum(m)
    N = D * sum(v * v for v in m) - S * S
    B = 21475 * D * D
    h = 31 + 2 * e
    if e == q.E_ZERO:
        eps = 1 << 62
    elif h >= 0:
        eps = py_rshr(B, h) if h < 63 else 0
    else:
        eps = min(B << -h, 1 << 62)
    N2 = N + eps
    # docs/Q15.md#layernorm (second edition), in plain integers
    inv = np.float32(1.0) / np.sqrt(np.array([max(N2, 1)], np.int64).astype(np.float32))[0]
    Mi, Ei = (int(v[0]) for v in q.f32_parts(np.array([inv], np.float32)))
    c = [D * v - S for v in m]
    sc = max(abs(v) for v in c).bit_length() - 15
    cm = [py_rshr(v, sc) for v in c]
    (im,), ie = py_quant([Mi], Ei)
    z = [v * im for v in cm]
    mz = max(abs(v) for v in z)
    sz = mz.bit_length() - 15
    zm = [py_rshr(v, sz) for v in z]
    ze = q.E_ZERO if mz == 0 else sc + ie + sz
    gterm = [g * zz for g, zz in zip(gm, zm)]
    ge2 = q.E_ZERO if q.E_ZERO in (ge, ze) else ge + ze
    acc, A = py_align([(gterm, ge2, 30), (list(bm), be, 15)], 29)
    return py_quant(acc, A)


def test_layer_norm_matches_plain_integers():
    rng = np.random.default_rng(11)
    for trial in range(40):
        D = int(rng.integers(1, 70))
        g = (rng.standard_normal(D) * 10.0 ** rng.uniform(-3, 3)).astype(np.float32)
        bb = (rng.standard_normal(D) * 10.0 ** rng.uniform(-4, 2)).astype(np.float32)
        if trial % 7 == 0:
            bb[:] = 0
        gm, ge = q.fquant(g, q.QA)
        bm, be = q.fquant(bb, q.QA)
        x = rng.integers(-32767, 32768, D)
        if trial % 5 == 0:
            x[:] = x[0]  # constant row: N = 0
        if trial % 11 == 0:
            x[:] = 0
        ex = int(rng.integers(-40, 20)) if x.any() else q.E_ZERO
        hm, he = q.layer_norm_q(x[None].astype(np.int64), np.array([ex]), gm, int(ge), bm, int(be))
        pm, pe = py_layer_norm([int(v) for v in x], ex, [int(v) for v in gm], int(ge),
                               [int(v) for v in bm], int(be))
        assert hm[0].tolist() == pm and int(he[0]) == pe


def test_align_sum_matches_plain_integers():
    rng = np.random.default_rng(12)
    for _ in range(200):
        n = 5
        terms = []
        for tb in (15, 30, 30, 30):
            m = rng.integers(-(1 << tb) + 1, 1 << tb, n)
            e = int(rng.integers(-60, 60)) if rng.random() > 0.1 else q.E_ZERO
            terms.append((m, e, tb))
        got, A = q.align_sum([(m[None], np.array([e]), tb) for m, e, tb in terms], 60)
        want, A2 = py_align([([int(v) for v in m], e, tb) for m, e, tb in terms], 60)
        if any(e != q.E_ZERO for _, e, _ in terms):
            assert got[0].tolist() == want and int(A[0]) == A2
            assert max(abs(v) for v in want) < 1 << 62
