"""Independent numpy reference of the q15 arithmetic contract (docs/Q15.md).

Written from docs/Q15.md only.  Every activation is a block: integer
mantissas (int16 range for activations, wider where the contract says so)
and one power-of-two exponent per vector (per position and per row).  All
arithmetic is on int64 numpy arrays with the contract's explicit rounding
(``rshr``: round half up) and saturation; the few float operations (the
LayerNorm's 1/sqrtf, the final conversion of logits) are binary32/binary64
IEEE operations in the contract's order.  Integer dot products may be
computed in float64 (BLAS) only where every partial sum is an integer below
2^53, so they are exact in any order.

The blob readers and Weights come from numpy_ref (its float path is not
touched).  Entry points:
  * Q15Model(weights)            parameters turned into integers once
  * Q15Forward(model).extend()   incremental ("cached") forward pass
  * logits_q15(w, tokens)        "lean": the whole window at once
  * predict_next_q15, generate_q15, classify_q15
  * window_logits_q15(model, windows)   logits at every position of a batch
"""

from __future__ import annotations

from typing import List, Optional, Sequence, Tuple

import numpy as np

import numpy_ref as nr

I64 = np.int64
F32 = np.float32

# ---------------------------------------------------------------- constants

QA = 15                 # activation mantissa bits: |m| <= 2^15 - 1
QP = 23                 # parameter-vector mantissa bits (gamma, beta, b, c_out)
QH = 30                 # SSM hidden-state mantissa bits
E_ZERO = -32768         # exponent of an all-zero block
ONE_Q30 = 1 << 30
U_MAX = 1 << 30         # exp2 input saturation (Q24: 64.0)
EPS_M = 21475           # LayerNorm epsilon = 21475 * 2^-31 (1.0000076e-5)
L2E_Q30 = 1549082005    # round(log2(e) * 2^30)
L2E2_Q30 = 3098164009   # round(2 * log2(e) * 2^30)
# 2^-f for f in [0, 1), Q30 coefficients of f^0 .. f^5 (f in Q24)
EXP2_C = (1073741824, -744258021, 257897342, -59392531, 9905124, -1022888)
FLT_MAX = float(np.finfo(np.float32).max)


# ---------------------------------------------------------------- primitives


def rshr(v, s):
    """Round(v / 2^s) with ties toward +infinity, for int64 v with
    |v| < 2^62; s <= 0 is an exact left shift (the caller keeps the result
    below 2^63); s >= 63 gives 0."""
    v = np.asarray(v, dtype=I64)
    s = np.asarray(s, dtype=I64)
    v, s = np.broadcast_arrays(v, s)
    out = np.zeros(v.shape, I64)
    pos = (s > 0) & (s < 63)
    if np.any(pos):
        sp = s[pos]
        out[pos] = (v[pos] + (np.int64(1) << (sp - 1))) >> sp
    neg = s <= 0
    if np.any(neg):
        out[neg] = v[neg] << (-s[neg])
    return out


def bitlen(m):
    """Bits of non-negative int64 values (0 for 0): m < 2^bitlen(m)."""
    m = np.asarray(m, dtype=I64)
    # frexp is exact below 2^53; above, rounding can only carry m up to the
    # next power of two, which the comparison undoes.
    n = np.frexp(m.astype(np.float64))[1].astype(I64)
    n = np.where((n > 0) & (m < (np.int64(1) << np.maximum(n - 1, 0))), n - 1, n)
    return np.where(m > 0, n, 0)


# Experiments only (q15_quality.py --ablate): narrower activations or decay,
# to show the margin of the contract's choices.  The contract is the default.
EXPERIMENT = {"act_bits": QA, "decay_bits": 30}


def quant(v, e, bits: Optional[int] = None):
    """Block quantization of exact integers v (..., n) at exponents e (...):
    the exponent moves by s = bitlen(max |v|) - bits, each mantissa is
    rshr(v, s) saturated to +-(2^bits - 1).  All-zero rows get E_ZERO.
    Returns (mantissas int64 (..., n), exponents int64 (...))."""
    if bits is None:
        bits = EXPERIMENT["act_bits"]
    v = np.asarray(v, dtype=I64)
    e = np.asarray(e, dtype=I64)
    mx = np.abs(v).max(axis=-1)
    s = bitlen(mx) - bits
    lim = (1 << bits) - 1
    m = np.clip(rshr(v, s[..., None]), -lim, lim)
    ex = np.where(mx == 0, E_ZERO, e + s)
    return m, np.broadcast_to(ex, mx.shape).astype(I64)


def grid15(v, e):
    """quant15 without the saturation, for a block that is only read by the
    mix (never stored): |m| <= 2^15."""
    v = np.asarray(v, dtype=I64)
    e = np.asarray(e, dtype=I64)
    mx = np.abs(v).max(axis=-1)
    s = bitlen(mx) - QA
    m = rshr(v, s[..., None])
    return m, np.broadcast_to(np.where(mx == 0, E_ZERO, e + s), mx.shape).astype(I64)


def quant_scalar(v, e, bits: Optional[int] = None):
    """quant of one value per row: v (...) at exponent e (...)."""
    v, e = np.broadcast_arrays(np.asarray(v, I64), np.asarray(e, I64))
    m, ex = quant(v[..., None], e, bits)
    return m[..., 0], ex


def f32_parts(a):
    """Exact (signed integer significand, exponent) of binary32 values, with
    NaN read as 0 and +-infinity as +-FLT_MAX (docs/Q15.md, non-finite)."""
    a = np.asarray(a, dtype=F32).astype(np.float64)
    a = np.where(np.isnan(a), 0.0, a)
    a = np.clip(a, -FLT_MAX, FLT_MAX)
    fr, ex = np.frexp(a)  # a = fr * 2^ex, 0.5 <= |fr| < 1
    m = (fr * (1 << 24)).astype(I64)  # exact: binary32 has 24 significant bits
    return m, ex.astype(I64) - 24


def fquant(a, bits: int):
    """Block of a binary32 vector (last axis): exponent
    max_i(E_i + bitlen(|M_i|)) - bits, mantissas rshr(M_i, e - E_i), saturated."""
    m, ex = f32_parts(a)
    return pquant(m, ex, bits)


def fquant_prod(a, b, bits: int):
    """Block of the exact elementwise products of two binary32 vectors
    (M_a M_b at E_a + E_b, |M_a M_b| < 2^48), as fquant does for one."""
    ma, ea = f32_parts(a)
    mb, eb = f32_parts(b)
    return pquant(ma * mb, ea + eb, bits)


def pquant(m, ex, bits: int):
    """Block of exact values m_i * 2^ex_i (last axis): the common exponent
    max_i(ex_i + bitlen(|m_i|)) - bits, one rounding per element."""
    nz = m != 0
    top = np.where(nz, ex + bitlen(np.abs(m)), np.iinfo(I64).min // 4).max(axis=-1)
    e = top - bits
    lim = (1 << bits) - 1
    mm = np.clip(rshr(m, np.minimum(e[..., None] - ex, 63)), -lim, lim)
    allz = ~nz.any(axis=-1)
    return np.where(allz[..., None], 0, mm), np.where(allz, E_ZERO, e)


def fquant_scalar(x, bits: int = QA) -> Tuple[int, int]:
    m, e = fquant(np.asarray([x], F32), bits)
    return int(m[0]), int(e)


def ecomb(*es):
    """Exponent of a product of blocks: their sum, or E_ZERO when any is a
    zero block."""
    es = [np.asarray(e, I64) for e in es]
    out = sum(es[1:], es[0])
    for e in es:
        out = np.where(e == E_ZERO, E_ZERO, out)
    return out


def align_sum(terms, room: int):
    """Exact-then-rounded sum of terms (m, e, top_bits): each term is an
    integer array (..., n) at exponent e (...) with |m| < 2^top_bits.  The
    sum is taken at A = max(e + top_bits) - room, each term rounded there
    by rshr(m, A - e); returns (sum, A)."""
    tops = [np.where(np.asarray(e) == E_ZERO, np.iinfo(I64).min // 4, np.asarray(e, I64) + tb)
            for (_, e, tb) in terms]
    top = tops[0]
    for t in tops[1:]:
        top = np.maximum(top, t)
    allz = top < -(1 << 40)
    A = np.where(allz, 0, top - room)
    acc = None
    for (m, e, _) in terms:
        sh = np.where(np.asarray(e) == E_ZERO, 63, A - np.asarray(e, I64))
        sh = np.minimum(sh, 63)
        t = rshr(m, sh[..., None])
        acc = t if acc is None else acc + t
    return acc, A


def exp2q(v):
    """2^(-v / 2^24) in Q30 for int64 v >= 0 (v saturated at U_MAX): integer
    part by a rounded shift, fraction by the degree-5 polynomial EXP2_C in
    Horner order, each step rshr(acc * f, 24)."""
    v = np.minimum(np.asarray(v, I64), U_MAX)
    ip = v >> 24
    fp = v & ((1 << 24) - 1)
    acc = np.full(v.shape, EXP2_C[5], I64)
    for c in EXP2_C[4::-1]:
        acc = c + rshr(acc * fp, 24)
    acc = np.clip(acc, 0, ONE_Q30)
    return rshr(acc, ip)


def softmax_q(sig, cm, ce):
    """Softmax of the real scores sig_j * cm * 2^ce (sig int64 (..., m),
    cm an int scalar, ce int64 (...)).  Returns Q30 probabilities (int64)."""
    sig = np.asarray(sig, I64)
    sg = 1 if cm > 0 else (-1 if cm < 0 else 0)
    s = sig * sg
    d = s.max(axis=-1, keepdims=True) - s  # >= 0
    km, ke = quant_scalar(abs(int(cm)) * L2E_Q30, np.asarray(ce, I64) - 30)
    sh = (ke + 24)[..., None]
    v = d * km[..., None]  # < 2^53
    left = np.where(sh >= 0, np.minimum(sh, 62), 0)
    big = (sh >= 0) & (v > (np.int64(U_MAX) >> left))
    u = np.where(sh >= 0, np.where(big, U_MAX, v << left),
                 np.minimum(rshr(v, np.maximum(-sh, 0)), U_MAX))
    e = exp2q(u)
    Z = e.sum(axis=-1, keepdims=True)  # >= 2^30 (the maximum gives 2^30)
    RZ = (np.int64(1) << 61) // Z
    return rshr(e * RZ, 31)


def tanh_q30(a):
    """Q30 tanh of binary32 values a (contract: from exp2q)."""
    m, ex = f32_parts(a)
    am = np.abs(m)
    # u = 2|a| log2(e) in Q24 = am * L2E2 * 2^(ex - 30 + 24)
    sh = ex - 6
    prod = am * L2E2_Q30 >> 0  # am < 2^24, L2E2 < 2^32: < 2^56
    left = np.where(sh >= 0, np.minimum(sh, 62), 0)
    big = (sh >= 0) & (prod > (np.int64(U_MAX) >> left))
    u = np.where(sh >= 0, np.where(big, U_MAX, prod << left),
                 np.minimum(rshr(prod, np.maximum(-sh, 0)), U_MAX))
    E = exp2q(u)
    num = 2 * (ONE_Q30 - E) * ONE_Q30 + (ONE_Q30 + E)
    T = num // (2 * (ONE_Q30 + E))
    return np.where(m < 0, -T, T)


def inv_sqrt_parts(N):
    """1/sqrtf((float)N) in binary32 for int64 N > 0, as exact parts."""
    nf = np.asarray(N, I64).astype(F32)  # IEEE int64 -> binary32, nearest-even
    with np.errstate(divide="ignore"):
        inv = F32(1.0) / np.sqrt(nf)
    return f32_parts(inv)


def dot_exact(a, b):
    """Exact integer a @ b via float64 BLAS: valid while every partial sum is
    an integer below 2^53 (asserted through the operand bounds)."""
    a = np.asarray(a)
    b = np.asarray(b)
    bound = float(np.abs(a).max(initial=0)) * float(np.abs(b).max(initial=0)) * a.shape[-1]
    assert bound < 2.0 ** 53
    return np.rint(a.astype(np.float64) @ b.astype(np.float64)).astype(I64)


# ---------------------------------------------------------------- model


class _Mat:
    def __init__(self, t: nr.Ternary):
        self.w = t.w.astype(I64)
        self.wt = np.ascontiguousarray(self.w.T)
        self.sm, self.se = fquant_scalar(t.scale)


class _Layer:
    def __init__(self, ly: nr.Layer, DH: int):
        self.gm, self.ge = fquant(ly.norm_g, QA)
        self.bm, self.be = fquant(ly.norm_b, QA)
        self.conv = _Mat(ly.conv)
        self.T = tanh_q30(ly.ssm_a)
        drop = 30 - EXPERIMENT["decay_bits"]
        if drop > 0:
            self.T = rshr(self.T, drop) << drop
        # the SSM runs on c_out * hs: its input gain is b * c_out
        self.sbm, self.sbe = fquant_prod(ly.ssm_b, ly.ssm_c, QP)
        self.wq, self.wk, self.wv, self.router = (_Mat(ly.wq), _Mat(ly.wk), _Mat(ly.wv), _Mat(ly.router))
        ism, ise = fquant_scalar(F32(1.0) / np.sqrt(F32(DH)))
        self.cqm, self.cqe = (int(v) for v in quant_scalar(
            self.wq.sm * self.wk.sm * ism, self.wq.se + self.wk.se + ise))


class Q15Model:
    """The blob's parameters in the contract's integer forms."""

    def __init__(self, w: nr.Weights):
        self.w = w
        self.cfg = w.cfg
        self.embed = _Mat(w.embed)
        self.layers = [_Layer(ly, w.cfg.DH) for ly in w.layers]
        self.fgm, self.fge = fquant(w.final_g, QA)
        self.fbm, self.fbe = fquant(w.final_b, QA)
        self.unembed = _Mat(w.unembed)
        self.head = _Mat(w.head) if w.head is not None else None


def layer_norm_q(xm, ex, gm, ge, bm, be):
    """LayerNorm of blocks xm (..., D) at ex (...) -> blocks (h, eh)."""
    D = xm.shape[-1]
    S = xm.sum(axis=-1)
    Q = (xm * xm).sum(axis=-1)
    N = D * Q - S * S  # exact, 0 <= N < 2^62
    sh = 31 + 2 * ex
    base = np.int64(EPS_M * D * D)
    lim = np.int64(1) << 62
    left = np.minimum(np.maximum(-sh, 0), 62)
    eps = np.where(sh >= 0, rshr(base, np.maximum(sh, 0)),
                   np.where(base > (lim >> left), lim, base << left))
    eps = np.where(ex == E_ZERO, lim, eps)
    N2 = N + eps
    Mi, Ei = inv_sqrt_parts(np.maximum(N2, 1))
    # c = D m - S (all 0 when N2 = 0: then every m is equal) on a 15-bit
    # grid, times the inverse as a 15-bit scalar, on a 15-bit grid again:
    # z = c / sqrt(N2) (no saturation: |cm|, |zm| <= 2^15)
    c = D * xm - S[..., None]
    sc = bitlen(np.abs(c).max(axis=-1)) - QA
    cm = rshr(c, sc[..., None])
    im, ie = quant_scalar(Mi, Ei)
    z = cm * im[..., None]
    mz = np.abs(z).max(axis=-1)
    sz = bitlen(mz) - QA
    zm = rshr(z, sz[..., None])
    ze = np.where(mz == 0, E_ZERO, sc + ie + sz)
    g_e = ecomb(np.full(ex.shape, ge, I64), ze)
    b_e = np.full(ex.shape, be, I64)
    acc, A = align_sum([(gm * zm, g_e, 30), (np.broadcast_to(bm, zm.shape), b_e, QA)], LN_ROOM)
    return quant(acc, A)


LN_ROOM = 29  # LayerNorm's grid: 29 bits below its largest term's bound


def matvec_q(mat: _Mat, hm):
    """Exact integer W h over the last axis of hm."""
    return dot_exact(hm, mat.wt)


def mix_coef(r, sm, se):
    """quant15 of the Q30 probability r times a scale mantissa."""
    return quant_scalar(r * sm, np.full(np.shape(r), se - 30, I64))


SSM_ROOM = 30  # the SSM's grid: each term below 2^30, the sum an int32
MIX_ROOM = 29  # the mix's grid: 29 bits below its largest term's bound


def mix_q(X, eX, terms):
    """The mix (docs/Q15.md#mix) of the residual blocks (X (..., D), eX (...))
    with terms (cm, ce, pm, pe): coefficient blocks (...) times pathway
    blocks (..., D).  Each coefficient is rounded once onto the grid
    A = max(eX + 15, ce + pe + 30) - MIX_ROOM, the residual too; the sum is
    then exact (|W| < 2^31) and quantized."""
    neg = np.iinfo(I64).min // 4
    eX = np.asarray(eX, I64)
    es = [ecomb(ce, pe) for (_, ce, _, pe) in terms]
    top = np.where(eX == E_ZERO, neg, eX + QA)
    for e in es:
        top = np.maximum(top, np.where(e == E_ZERO, neg, e + 30))
    A = np.where(top < -(1 << 40), 0, top - MIX_ROOM)
    sh = lambda e: np.where(e == E_ZERO, 63, np.minimum(A - e, 63))
    W = rshr(X, sh(eX)[..., None])
    for (cm, _, pm, _), e in zip(terms, es):
        W = W + rshr(cm, sh(e))[..., None] * pm
    return quant(W, A)


class Q15Forward:
    """Forward pass over a batch of token sequences (B, growing T).

    extend(ids (B, m)) appends m positions; per-position exponents make it
    equal to one pass over the whole sequence."""

    def __init__(self, model: Q15Model, batch: int = 1):
        self.m = model
        c = model.cfg
        self.cfg = c
        self.B = batch
        self.n = 0
        S, D, DH, L = c.S, c.D, c.DH, c.L
        z = lambda *s: np.zeros(s, I64)
        self.H = [z(batch, S, D) for _ in range(L)]
        self.eH = [np.full((batch, S), E_ZERO, I64) for _ in range(L)]
        self.Kc = [z(batch, S, DH) for _ in range(L)]
        self.eK = [np.full((batch, S), E_ZERO, I64) for _ in range(L)]
        self.Vc = [z(batch, S, D) for _ in range(L)]
        self.eV = [np.full((batch, S), E_ZERO, I64) for _ in range(L)]
        self.hs = [z(batch, D) for _ in range(L)]
        self.ehs = [np.full(batch, E_ZERO, I64) for _ in range(L)]
        self.X = None  # (B, m, D) residual of the last extend
        self.eX = None

    def extend(self, ids) -> None:
        c = self.cfg
        mdl = self.m
        ids = np.asarray(ids, dtype=I64).reshape(self.B, -1)
        ids = np.where((ids >= 0) & (ids < c.V), ids, 0)
        mlen = ids.shape[1]
        if mlen == 0:
            return
        t0, t1 = self.n, self.n + mlen
        if t1 > c.S:
            raise ValueError("more than S positions")
        B, D, K = self.B, c.D, c.K
        em = mdl.embed
        X, eX = quant(em.w[ids] * em.sm, np.full((B, mlen), em.se, I64))
        for l, ly in enumerate(mdl.layers):
            H, eH = layer_norm_q(X, eX, ly.gm, ly.ge, ly.bm, ly.be)
            self.H[l][:, t0:t1] = H
            self.eH[l][:, t0:t1] = eH
            Hall, eHall = self.H[l], self.eH[l]
            # router: softmax of acc * scale * 2^eh
            racc = matvec_q(ly.router, H)  # (B, m, 3)
            R = softmax_q(racc, ly.router.sm, ly.router.se + eH)
            # conv: taps aligned to the largest exponent among them
            Et = np.full((B, mlen), E_ZERO, I64)
            for k in range(K):
                src = np.arange(t0, t1) - k
                ok = src >= 0
                ek = np.where(ok[None, :], eHall[:, np.maximum(src, 0)], E_ZERO)
                Et = np.maximum(Et, ek)
            Lacc = np.zeros((B, mlen, D), I64)
            cw = ly.conv.w  # (D, K)
            for k in range(K):
                src = np.arange(t0, t1) - k
                ok = src >= 0
                rows = Hall[:, np.maximum(src, 0)]
                ek = eHall[:, np.maximum(src, 0)]
                sh = np.where(ok[None, :] & (ek != E_ZERO), Et - ek, 63)
                Lacc += cw[:, k] * rshr(rows, np.minimum(sh, 63)[..., None])
            local, elocal = grid15(Lacc, Et)
            # SSM, position by position
            state = np.zeros((B, mlen, D), I64)
            estate = np.zeros((B, mlen), I64)
            hs, ehs = self.hs[l], self.ehs[l]
            for i in range(mlen):
                acc, A = align_sum([(ly.T * hs, ecomb(ehs, -30), 60),
                                    (ly.sbm * H[:, i], ecomb(ly.sbe, eH[:, i]), QP + QA)], SSM_ROOM)
                hs, ehs = quant(acc, A, QH)
                state[:, i], estate[:, i] = grid15(hs, ehs)
            self.hs[l], self.ehs[l] = hs, ehs
            # attention
            Q, eQ = quant(matvec_q(ly.wq, H), eH)
            Kn, eKn = quant(matvec_q(ly.wk, H), eH)
            Vn, eVn = quant(matvec_q(ly.wv, H), eH)
            self.Kc[l][:, t0:t1], self.eK[l][:, t0:t1] = Kn, eKn
            self.Vc[l][:, t0:t1], self.eV[l][:, t0:t1] = Vn, eVn
            sparse = np.zeros((B, mlen, D), I64)
            esparse = np.zeros((B, mlen), I64)
            for i in range(mlen):
                t = t0 + i
                keys = self.Kc[l][:, : t + 1]
                ek = self.eK[l][:, : t + 1]
                dots = np.einsum("bjd,bd->bj", keys.astype(np.float64), Q[:, i].astype(np.float64))
                dots = np.rint(dots).astype(I64)  # exact: |.| <= DH * 2^30 < 2^53
                ekmax = np.where(ek == E_ZERO, np.iinfo(I64).min // 4, ek).max(axis=1)
                ekmax = np.maximum(ekmax, E_ZERO)
                sh = np.where(ek == E_ZERO, 63, np.minimum(ekmax[:, None] - ek, 63))
                sig = rshr(dots, sh)
                sg = 1 if ly.cqm > 0 else (-1 if ly.cqm < 0 else 0)
                k_eff = min(c.TOPK, t + 1)
                idx = np.argsort(-(sig * sg), axis=1, kind="stable")[:, :k_eff]
                ssel = np.take_along_axis(sig, idx, axis=1)
                P = softmax_q(ssel, ly.cqm, ly.cqe + eQ[:, i] + ekmax)
                vsel = np.take_along_axis(self.Vc[l][:, : t + 1], idx[:, :, None], axis=1)
                evs = np.take_along_axis(self.eV[l][:, : t + 1], idx, axis=1)
                F = np.where(evs == E_ZERO, np.iinfo(I64).min // 4, evs).max(axis=1)
                F = np.maximum(F, E_ZERO)
                # each probability on the grid of the largest value (Q15 there)
                ksh = np.where(evs == E_ZERO, 63, np.minimum(F[:, None] + 15 - evs, 63))
                kw = rshr(P, ksh)
                sparse[:, i], esparse[:, i] = quant((kw[:, :, None] * vsel).sum(axis=1), F - 15)
            # mix
            c0m, c0e = mix_coef(R[..., 0], ly.conv.sm, ly.conv.se)
            c1m, c1e = mix_coef(R[..., 1], 1, 0)
            c2m, c2e = mix_coef(R[..., 2], ly.wv.sm, ly.wv.se)

            X, eX = mix_q(X, eX, [(c0m, c0e, local, elocal), (c1m, c1e, state, estate),
                                  (c2m, c2e, sparse, esparse)])
        self.n = t1
        self.X, self.eX = X, eX

    # -- heads
    def final_hidden(self, X=None, eX=None):
        m = self.m
        if X is None:
            X, eX = self.X[:, -1], self.eX[:, -1]
        return layer_norm_q(X, eX, m.fgm, m.fge, m.fbm, m.fbe)

    def _head(self, mat: _Mat, X=None, eX=None) -> np.ndarray:
        h, eh = self.final_hidden(X, eX)
        acc = matvec_q(mat, h)
        return to_f32(acc * mat.sm, mat.se + eh)

    def logits(self) -> np.ndarray:
        """(B, V) binary32 logits of the last position."""
        return self._head(self.m.unembed)

    def logits_all(self) -> np.ndarray:
        """(B, m, V) logits of every position of the last extend."""
        return self._head(self.m.unembed, self.X, self.eX)

    def class_logits(self) -> np.ndarray:
        return self._head(self.m.head)


def to_f32(v, e) -> np.ndarray:
    """binary32 nearest (ties to even) to v * 2^e, v int64 with |v| < 2^53:
    exact float64 product by a power of two, then one rounding to binary32."""
    v = np.asarray(v, I64)
    assert np.all(np.abs(v) < (np.int64(1) << 53))
    e = np.asarray(e, I64)
    e = np.clip(e, -2000, 2000)[..., None] if np.ndim(e) == v.ndim - 1 else np.clip(e, -2000, 2000)
    with np.errstate(over="ignore", under="ignore"):
        # two exact steps keep every intermediate a normal float64 or zero
        half = e // 2
        r = np.ldexp(np.ldexp(v.astype(np.float64), half), e - half)
        return r.astype(F32)


# ---------------------------------------------------------------- API-like


def lean_state_bytes(cfg, chunk: int = 4) -> dict:
    """Bytes of a q15 lean state, from docs/Q15.md's buffer list (int16
    mantissas, int16 exponents, int32 where the contract needs 32 bits).
    The logits area (V binary32, the C API's field) doubles as scratch for
    the per-layer tanh constants and the chunk's queries, router
    probabilities and slots when they fit in it."""
    c = nr.Config.of(cfg)
    V, D, L, DH, K, TOPK, S = c.V, c.D, c.L, c.DH, c.K, c.TOPK, c.S
    b = {
        "logits (V f32)": 4 * V,
        "x residual (S x D i16 + S exps)": 2 * S * D + 2 * S,
        "keys, one layer (S x DH i16 + S exps)": 2 * S * DH + 2 * S,
        "values, one layer (S x D i16 + S exps)": 2 * S * D + 2 * S,
        "SSM hidden (D i32 + exp)": 4 * D + 4,
        "h rows (K-1+chunk) x D i16 + exps": 2 * (K - 1 + chunk) * D + 2 * (K - 1 + chunk),
        "last-position entropies (L f32)": 4 * L,
    }
    scratch = {
        "tanh(a) Q30, one layer (D i32)": 4 * D,
        "queries (chunk x DH i16 + exps)": 2 * chunk * DH + 2 * chunk,
        "router probabilities (chunk x 3 i32)": 12 * chunk,
        "slots (chunk x TOPK x (i64 score + i32 index))": 12 * chunk * TOPK,
    }
    if sum(scratch.values()) <= 4 * V:
        b["(scratch inside the logits area)"] = 0
    else:
        b.update(scratch)
    b["total"] = sum(b.values())
    return b


def op_counts(cfg, n: int) -> dict:
    """Operations of one lean predict_next on n tokens, by kind (the
    contract's forward pass counted, every layer mixing every position)."""
    c = nr.Config.of(cfg)
    V, D, L, DH, K, TOPK = c.V, c.D, c.L, c.DH, c.K, c.TOPK
    slots = sum(min(TOPK, t + 1) for t in range(n))
    return {
        "matvec weight terms (router, Wq, Wk, Wv; head)": n * L * (3 + 2 * DH + D) * D + V * D,
        "conv weight terms": n * L * D * K,
        "LayerNorm elements": (n * L + 1) * D,
        "LayerNorm rows (one sqrtf and one division each)": n * L + 1,
        "SSM channel steps (two 64-bit products each)": n * L * D,
        "q.k products": L * DH * n * (n + 1) // 2,
        "exp2q calls (router and attention softmax)": n * L * 3 + L * slots,
        "weighted-sum products": L * slots * D,
        "mix elements": n * L * D,
        "logit conversions": V,
    }


def _model(w) -> Q15Model:
    return w if isinstance(w, Q15Model) else Q15Model(w)


def logits_q15(w, tokens: Sequence[int]) -> np.ndarray:
    """Lean sense: the whole window in one pass; V binary32 logits."""
    m = _model(w)
    f = Q15Forward(m)
    f.extend([nr.window(tokens, m.cfg.S)])
    return f.logits()[0]


def logits_q15_cached(w, tokens: Sequence[int]) -> np.ndarray:
    """Cached sense: one position at a time."""
    m = _model(w)
    f = Q15Forward(m)
    for t in nr.window(tokens, m.cfg.S):
        f.extend([[t]])
    return f.logits()[0]


def predict_next_q15(w, tokens) -> Tuple[int, np.ndarray]:
    lg = logits_q15(w, tokens)
    return nr.argmax_first(lg), lg


def classify_q15(w, tokens) -> Tuple[int, np.ndarray]:
    m = _model(w)
    if m.head is None:
        raise ValueError("not a classifier")
    f = Q15Forward(m)
    f.extend([nr.window(tokens, m.cfg.S)])
    lg = f.class_logits()[0]
    return nr.argmax_first(lg), lg


def generate_q15(w, prompt: Sequence[int], max_tokens: int) -> List[int]:
    """Greedy continuation as atome_generate (cached forward)."""
    m = _model(w)
    S = m.cfg.S
    if len(prompt) < 1 or max_tokens < 1:
        return []
    seq = [int(t) for t in prompt[:S]]
    out: List[int] = []
    if len(seq) >= S:
        return out
    f = Q15Forward(m)
    f.extend([seq])
    while len(out) < max_tokens and len(seq) < S:
        tok = nr.argmax_first(f.logits()[0])
        out.append(tok)
        seq.append(tok)
        if len(seq) < S and len(out) < max_tokens:
            f.extend([[tok]])
    return out


def window_logits_q15(w, windows) -> np.ndarray:
    """(B, T, V) logits at every position of B windows of T <= S tokens."""
    m = _model(w)
    windows = np.asarray(windows, I64)
    f = Q15Forward(m, batch=windows.shape[0])
    f.extend(windows)
    return f.logits_all()
