"""Writes test/golden/muon.safetensors: three optimizer steps of Muon + AdamW (our optimizer type
`muon`) on a small set of named tensors with given gradients, computed here in PyTorch, float32,
for the engine's test (test/unit/engine/optim/muon.test.ts) and the PyTorch trainer's
(test/unit/lab/pytorch/muon.test.ts) to reproduce to 1e-5.

Muon is written out here on purpose, apart from the trainer's (python/attention_lab_trainer/
muon.py), so the golden does not follow an edit to the trainer. As modded-nanogpt and nanochat
(Jordan et al. 2024) but in float32 (theirs orthogonalises in bf16): for each hidden matrix
[rows, cols]

    buf <- beta*buf + (1-beta)*g ; u = (1-beta)*g + beta*buf            (Nesterov momentum)
    X = NS5(u): X <- u/(|u|_F + 1e-7), transposed when rows > cols; 5 times
        A = X X^T ; B = b*A + c*A A ; X = a*X + B X   with (a, b, c) = (3.4445, -4.7750, 2.0315)
    p <- p*(1 - lr_m*wd) ; p <- p - lr_m*max(1, rows/cols)^0.5 * X
    lr_m = muonLr * (the step's rate / lr)

and torch.optim.AdamW (decay on tensors of dim >= 2) for the rest, at the step's rate.

Tensors written: param.<name> (before), grad.<step>.<name> (the gradient of 1-based step),
after.<step>.<name> (the parameters after that step). Metadata: format attention-lab-golden,
name muon, optimizer (JSON, our OptimizerConfig), segments (JSON [{name, shape, hidden,
decay}] in flat order), lrs (JSON, the rate of each step), torch.

Run: /usr/bin/python3 scripts/pytorch/make_muon_golden.py
"""

import json
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from safetensors_io import write_safetensors  # noqa: E402

STEPS = 3
OPTIMIZER = {
    "type": "muon",
    "lr": 0.01,
    "beta1": 0.9,
    "beta2": 0.99,
    "eps": 1e-8,
    "weightDecay": 0.1,
    "clipGradNorm": 0,
    "schedule": {"type": "constant", "warmup": 2},
    "muonLr": 0.02,
    "muonMomentum": 0.95,
}
# name, shape, hidden (Muon) — in flat order, as a model's parameter plan lists them.
SEGMENTS = [
    ("wte.weight", [7, 4], False),  # an embedding: AdamW, decayed
    ("h.0.attn.c_attn_q.weight", [4, 4], True),  # square
    ("h.0.attn.c_attn_q.bias", [4], False),  # a vector: AdamW, not decayed
    ("h.0.mlp.c_fc.weight", [6, 4], True),  # tall: transposed inside Newton-Schulz
    ("h.0.mlp.c_proj.weight", [4, 6], True),  # wide
    ("h.0.ln_1.weight", [4], False),
    ("lm_head.weight", [7, 4], False),  # the output projection: AdamW
]
NS = (3.4445, -4.7750, 2.0315)


def rate(step):
    """Our `constant` schedule with a warm-up (src/engine/optim/schedule.ts)."""
    w = OPTIMIZER["schedule"]["warmup"]
    return OPTIMIZER["lr"] * step / w if step <= w else OPTIMIZER["lr"]


def newton_schulz(u):
    a, b, c = NS
    x = u / (u.norm() + 1e-7)
    tall = u.shape[0] > u.shape[1]
    if tall:
        x = x.T
    for _ in range(5):
        A = x @ x.T
        B = b * A + c * (A @ A)
        x = a * x + B @ x
    return x.T if tall else x


def main():
    torch.manual_seed(29)
    torch.set_num_threads(1)
    params = {n: torch.nn.Parameter(torch.randn(s) * 0.5) for n, s, _ in SEGMENTS}
    grads = [{n: torch.randn(s) for n, s, _ in SEGMENTS} for _ in range(STEPS)]
    out = {f"param.{n}": p.detach().numpy().copy() for n, p in params.items()}
    hidden = [n for n, _, h in SEGMENTS if h]
    rest = [n for n, _, h in SEGMENTS if not h]
    wd, beta = OPTIMIZER["weightDecay"], OPTIMIZER["muonMomentum"]
    adamw = torch.optim.AdamW(
        [
            {"params": [params[n] for n in rest if params[n].dim() >= 2], "weight_decay": wd},
            {"params": [params[n] for n in rest if params[n].dim() < 2], "weight_decay": 0.0},
        ],
        lr=OPTIMIZER["lr"],
        betas=(OPTIMIZER["beta1"], OPTIMIZER["beta2"]),
        eps=OPTIMIZER["eps"],
        foreach=False,
    )
    bufs = {n: torch.zeros_like(params[n]) for n in hidden}
    lrs = []
    for step in range(1, STEPS + 1):
        lr = rate(step)
        lrs.append(lr)
        for n in params:
            params[n].grad = grads[step - 1][n].clone()
            out[f"grad.{step}.{n}"] = grads[step - 1][n].numpy().copy()
        for g in adamw.param_groups:
            g["lr"] = lr
        adamw.step()
        lr_m = OPTIMIZER["muonLr"] * lr / OPTIMIZER["lr"]
        with torch.no_grad():
            for n in hidden:
                p, g, buf = params[n], params[n].grad, bufs[n]
                buf.mul_(beta).add_(g, alpha=1 - beta)
                u = (1 - beta) * g + beta * buf
                x = newton_schulz(u)
                rows, cols = p.shape
                p.mul_(1 - lr_m * wd)
                p.add_(x, alpha=-lr_m * max(1.0, rows / cols) ** 0.5)
        for n, p in params.items():
            out[f"after.{step}.{n}"] = p.detach().numpy().copy()
    meta = {
        "format": "attention-lab-golden",
        "name": "muon",
        "torch": torch.__version__,
        "optimizer": json.dumps(OPTIMIZER),
        "segments": json.dumps([{"name": n, "shape": s, "hidden": h, "decay": len(s) >= 2} for n, s, h in SEGMENTS]),
        "lrs": json.dumps(lrs),
    }
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "test", "golden", "muon.safetensors")
    write_safetensors(os.path.normpath(path), {k: np.asarray(v, dtype=np.float32) for k, v in out.items()}, meta)
    # How orthogonal the last update direction of each matrix is (singular values of NS5(u)).
    for n in hidden:
        s = torch.linalg.svdvals(newton_schulz((1 - beta) * grads[-1][n] + beta * bufs[n]))
        print(f"{n}: singular values of NS5(u) in [{float(s.min()):.3f}, {float(s.max()):.3f}]")
    print(f"wrote {os.path.normpath(path)}: {len(out)} tensors, rates {lrs}")


if __name__ == "__main__":
    main()
