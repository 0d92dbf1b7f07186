"""Quality of the q15 contract against the float path (docs/Q15.md#quality-944k-model).

    python3 python/tests/q15_quality.py [blob] [text] [--config V,D,L,DH,K,TOPK,S]

Defaults: ../shared/models/atome_944k.bin (V=256 D=256 L=8 DH=64 K=5 TOPK=4
S=64) on ../shared/data/sample.txt.  Prints, for 64-byte windows every 4096
bytes with every position scored (the target of position t is byte t+1):
next-byte cross-entropy (nats) of the float path (numpy_ref) and of the q15
contract (q15_ref), argmax agreement over all positions, the mean cosine of
the logit vectors; then greedy generation from 10 prompts (16 bytes each,
48 tokens): how many generated tokens equal the float path's, position by
position, and the length of the common prefix.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import numpy_ref as nr  # noqa: E402
import q15_ref as q  # noqa: E402

SHARED = os.environ.get("ATOME_SHARED", os.path.normpath(os.path.join(HERE, "..", "..", "..", "shared")))


def xent(logits: np.ndarray, targets: np.ndarray) -> float:
    z = logits.astype(np.float64)
    z = z - z.max(axis=-1, keepdims=True)
    lse = np.log(np.exp(z).sum(axis=-1))
    return float(np.mean(lse - np.take_along_axis(z, targets[..., None], -1)[..., 0]))


def float_window_logits(w, win) -> np.ndarray:
    """(T, V) float-path logits at every position (incremental Forward:
    equal to a fresh pass on each prefix, by causality)."""
    f = nr.Forward(w)
    out = []
    for t in win:
        f.extend([int(t)])
        out.append(f.logits())
    return np.stack(out)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("blob", nargs="?", default=os.path.join(SHARED, "models", "atome_944k.bin"))
    ap.add_argument("text", nargs="?", default=os.path.join(SHARED, "data", "sample.txt"))
    ap.add_argument("--config", default="256,256,8,64,5,4,64")
    ap.add_argument("--window", type=int, default=64)
    ap.add_argument("--stride", type=int, default=4096)
    ap.add_argument("--windows", type=int, default=64)
    ap.add_argument("--prompts", type=int, default=10)
    ap.add_argument("--prompt-len", type=int, default=16)
    ap.add_argument("--gen", type=int, default=48)
    ap.add_argument("--ram-only", action="store_true",
                    help="print the q15 lean-state buffer list for --config and stop")
    ap.add_argument("--ablate", action="append", default=[], metavar="NAME=BITS",
                    help="experiment, not the contract: act_bits=12 (activation blocks "
                         "and mixing coefficients) or decay_bits=15 (the SSM decay); "
                         "prints the q15 figures only, against the float path")
    a = ap.parse_args()
    for spec in a.ablate:
        k, v = spec.split("=")
        if k not in q.EXPERIMENT:
            ap.error(f"unknown ablation {k}")
        q.EXPERIMENT[k] = int(v)
    V, D, L, DH, K, TOPK, S = (int(v) for v in a.config.split(","))
    cfg = nr.Config(V=V, D=D, L=L, DH=DH, K=K, TOPK=TOPK, S=S)
    if a.ram_only:
        for k, v in q.lean_state_bytes(cfg).items():
            print(f"{v:8d}  {k}")
        print(f"operations of one predict_next on {S} tokens:")
        for k, v in q.op_counts(cfg, S).items():
            print(f"{v:10d}  {k}")
        return 0
    w = nr.parse_blob(open(a.blob, "rb").read(), cfg)
    qm = q.Q15Model(w)
    text = np.frombuffer(open(a.text, "rb").read(), np.uint8).astype(np.int64)
    T = a.window
    offs = [i * a.stride for i in range(a.windows) if i * a.stride + T < len(text)]
    wins = np.stack([text[o:o + T] for o in offs])
    tgts = np.stack([text[o + 1:o + T + 1] for o in offs])

    t0 = time.time()
    lq = q.window_logits_q15(qm, wins)
    tq = time.time() - t0
    t0 = time.time()
    lf = np.stack([float_window_logits(w, win) for win in wins])
    tf = time.time() - t0

    ce_f = xent(lf, tgts)
    ce_q = xent(lq, tgts)
    af = lf.argmax(-1)  # first maximum, as argmax_first
    aq = lq.argmax(-1)
    agree = float(np.mean(af == aq))
    lf64 = lf.astype(np.float64)
    lq64 = lq.astype(np.float64)
    cos = (lf64 * lq64).sum(-1) / np.linalg.norm(lf64, axis=-1) / np.linalg.norm(lq64, axis=-1)
    n = lf.shape[0] * lf.shape[1]
    if a.ablate:
        print("ABLATION (not the contract):", ", ".join(a.ablate))
    print(f"blob {os.path.basename(a.blob)}  config V={V} D={D} L={L} DH={DH} K={K} TOPK={TOPK} S={S}")
    print(f"windows {lf.shape[0]} x {T} bytes every {a.stride} bytes: {n} positions scored")
    print(f"cross-entropy float {ce_f:.5f}  q15 {ce_q:.5f}  relative {100 * (ce_q / ce_f - 1):+.3f}%")
    print(f"argmax agreement {int((af == aq).sum())}/{n} = {100 * agree:.2f}%")
    print(f"logit cosine mean {cos.mean():.6f}  min {cos.min():.6f}")
    print(f"max |q15 - float| logit {np.abs(lq64 - lf64).max():.3g}")
    print(f"(q15 {tq:.1f} s, float {tf:.1f} s)")
    for name, c in (("default", nr.Config()), ("this blob", cfg)):
        r = q.lean_state_bytes(c)
        print(f"q15 lean state estimate, {name} (D={c.D} L={c.L} DH={c.DH} S={c.S}): "
              f"{r['total']} bytes")

    P = a.prompt_len
    matches = []
    prefixes = []
    for i in range(a.prompts):
        o = offs[(i * len(offs)) // a.prompts] + 1000
        prompt = [int(t) for t in text[o:o + P]]
        gf = nr.generate(w, prompt, a.gen)
        gq = q.generate_q15(qm, prompt, a.gen)
        same = sum(int(x == y) for x, y in zip(gf, gq))
        pre = 0
        while pre < min(len(gf), len(gq)) and gf[pre] == gq[pre]:
            pre += 1
        matches.append(same)
        prefixes.append(pre)
        print(f"prompt {i} (offset {o}): {same}/{len(gf)} tokens equal, common prefix {pre}")
    print(f"greedy: equal tokens {sum(matches)}/{a.gen * a.prompts}, "
          f"per prompt {matches}; prompts fully equal {sum(m == a.gen for m in matches)}/{a.prompts}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
