"""PyTorch side of `npm run bench:shakespeare`: trains the model of one of our run folders, in
PyTorch, on the same token streams and the same validation windows, with the same optimizer
recipe, and reports its validation loss and wall time.

The run must be a decoder-only run on one text file with the char tokenizer and a tail split
(the last 10% of the text held out), as `attention-lab train --data input.txt` makes it:
  - tokens: our char tokenizer's ids (tokenizer.json: char i has id 260 + i), BOS = 1 before
    the training part and EOS = 2 after the held-out part; the cut is the first whitespace at
    or after 90% of the text (src/lab/data/documentData.ts tailCut). The token counts are checked
    against the run's run.json, so the two sides cannot train on different data unnoticed;
  - model: reference.py's GPT with the run's config (nanoGPT's architecture), initialized as
    nanoGPT and our engine do (GPT-2's N(0, 0.02), residual projections scaled);
  - optimizer: nanoGPT's AdamW (β 0.9 / 0.99, ε 1e-8, weight decay 0.1 on tensors of dim ≥ 2),
    gradient clipping at 1, linear warm-up over steps/10 then cosine decay to lr/10 — what
    src/lab/runs/specModel.ts optimizerConfig gives for `--optimizer adamw`;
  - batches: `batch` random windows of `seq + 1` tokens per step;
  - validation: 8 batches of `batch` windows spread evenly over the held-out stream
    (src/lab/data/dataset.ts validationStarts), evaluated every `eval_every` steps and at the end.

Prints one JSON object: {"val_loss", "evals": [[step, loss], ...], "train_seconds", "tokens_per_s"}.
Usage: /usr/bin/python3 scripts/pytorch/recipe.py --run RUN_DIR --data input.txt [--threads 2]
"""

import argparse
import json
import math
import os
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from reference import build_model, loss_fn  # noqa: E402

BOS, EOS, BASE = 1, 2, 260


def tail_cut(text):
    at = int(len(text) * 0.9)
    for i in range(at, len(text)):
        if text[i].isspace() and not text[i - 1].isspace():
            return i
    return at


def validation_starts(length, T, n):
    fit = (length - 1) // T
    if fit <= n:
        return [i * T for i in range(max(0, fit))]
    last = length - T - 1
    return [(i * last) // (n - 1) for i in range(n)]


def lr_at(step, lr, warmup, total):
    """Our cosine schedule (src/engine/optim/schedule.ts), 1-based step."""
    if step <= warmup:
        return lr * step / warmup
    progress = min(1.0, (step - warmup) / max(1, total - warmup))
    min_lr = lr / 10
    return min_lr + 0.5 * (lr - min_lr) * (1 + math.cos(math.pi * progress))


def init_like_nanogpt(model, n_layer):
    """GPT-2's initialization, as nanoGPT's _init_weights and our engine use it: every Linear and
    Embedding N(0, 0.02), biases zero, the residual projections (c_proj) N(0, 0.02/√(2·layers)).
    PyTorch's defaults (N(0, 1) embeddings, tied to the head) train markedly worse."""
    for name, p in model.named_parameters():
        if name.endswith("c_proj.weight"):
            torch.nn.init.normal_(p, 0.0, 0.02 / math.sqrt(2 * n_layer))
        elif name.endswith(".bias"):
            torch.nn.init.zeros_(p)
        elif p.dim() >= 2:
            torch.nn.init.normal_(p, 0.0, 0.02)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--run", required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("--threads", type=int, default=2)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    run = json.load(open(os.path.join(a.run, "run.json")))
    tok = json.load(open(os.path.join(a.run, "tokenizer.json")))
    if tok["type"] != "char":
        sys.exit("recipe.py needs a char-tokenizer run")
    ids = {c: BASE + i for i, c in enumerate(tok["chars"])}
    text = open(a.data, encoding="utf-8").read().replace("\r\n", "\n")
    cut = tail_cut(text)
    train = torch.tensor([BOS] + [ids[c] for c in text[:cut]], dtype=torch.long)
    val = torch.tensor([ids.get(c, 3) for c in text[cut:]] + [EOS], dtype=torch.long)
    data = run["data"]
    if len(train) != data["trainTokens"] or len(val) != data["valTokens"]:
        sys.exit(
            f"token counts differ from the run: {len(train)}/{len(val)} vs {data['trainTokens']}/{data['valTokens']}"
        )

    cfg = run["config"]
    t = run["spec"]["training"]
    steps, B, T = t["steps"], t["batchSize"], min(t["seqLen"], cfg["maxLen"])
    lr = t["lr"] if t["lr"] > 0 else 1e-3
    warmup = t["warmup"] if t["warmup"] > 0 else max(1, min(4000, round(steps / 10)))
    torch.manual_seed(t["seed"])
    model = build_model(cfg)
    init_like_nanogpt(model, cfg["nDecoderLayers"])
    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    opt = torch.optim.AdamW(
        [{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}],
        lr=lr,
        betas=(0.9, 0.99),
        eps=1e-8,
    )
    starts = validation_starts(len(val), T, B * 8)
    val_x = torch.stack([val[s : s + T] for s in starts])
    val_y = torch.stack([val[s + 1 : s + T + 1] for s in starts])

    def evaluate():
        model.eval()
        with torch.no_grad():
            total, n = 0.0, 0
            for i in range(0, len(starts), B):
                x, y = val_x[i : i + B], val_y[i : i + B]
                total += loss_fn(model(x), y, 0).item() * y.numel()
                n += y.numel()
        model.train()
        return total / n

    evals = []
    t0 = time.perf_counter()
    for step in range(1, steps + 1):
        for g in opt.param_groups:
            g["lr"] = lr_at(step, lr, warmup, steps)
        ix = torch.randint(len(train) - T - 1, (B,))
        x = torch.stack([train[i : i + T] for i in ix])
        y = torch.stack([train[i + 1 : i + T + 1] for i in ix])
        loss = loss_fn(model(x), y, 0)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if (t["evalEvery"] > 0 and step % t["evalEvery"] == 0) or step == steps:
            evals.append([step, evaluate()])
    seconds = time.perf_counter() - t0
    print(
        json.dumps(
            {
                "val_loss": evals[-1][1],
                "evals": evals,
                "train_seconds": seconds,
                "tokens_per_s": steps * B * T / seconds,
            }
        )
    )


if __name__ == "__main__":
    main()
