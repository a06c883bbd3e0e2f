"""PyTorch side of `attention-lab bench` (src/bench/bench.ts runs it in the same invocation).

The same five configs as our benchmark, built from reference.py (the PyTorch version of our
two models, with the options of today's transformers), trained the way the tutorials and
nanoGPT do on CPU: the paper's Adam for the encoder-decoders, AdamW for the decoders, dropout
as configured, random token batches.
Measured per thread count (torch.set_num_threads):

  train_tokens_per_s   target positions per optimizer step / seconds per step, per timed
                       step after warm-up; median, min and max over the timed steps
  decode_ms_per_token  greedy decoding at batch 1 WITHOUT a key/value cache, as the
                       tutorials' loops do: the whole prefix is re-run for every new token
  matmul_gflops        2·n³ / seconds for square float32 products (torch.mm)

Prints one JSON object on stdout. Usage:
  /usr/bin/python3 scripts/pytorch/bench.py [--threads 1,2] [--configs a,b|none] [--steps N] [--quick] [--no-matmul]
"""

import argparse
import json
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from reference import build_model, loss_fn  # noqa: E402

CONFIGS = {
    "tiny-decoder": dict(kind="decoder-only", vocab=256, d=64, heads=4, layers=(0, 2), dff=256, seq=64, batch=32),
    "small-decoder": dict(kind="decoder-only", vocab=65, d=128, heads=4, layers=(0, 4), dff=512, seq=64, batch=12),
    # The llama-tiny preset (config.ts MODERN_PRESETS): RoPE, RMSNorm, SwiGLU, 2 key/value heads,
    # no biases, untied.
    "tiny-modern": dict(
        kind="decoder-only",
        vocab=256,
        d=64,
        heads=4,
        layers=(0, 2),
        dff=176,
        seq=64,
        batch=32,
        arch=dict(
            positional="rope",
            normType="rmsnorm",
            activation="swiglu",
            nKvHeads=2,
            tieEmbeddings=False,
            bias=False,
            qkvBias=False,
            attnOutBias=False,
            mlpBias=False,
        ),
    ),
    "tiny-encdec": dict(kind="encoder-decoder", vocab=256, d=64, heads=4, layers=(2, 2), dff=256, seq=64, batch=32),
    "base-encdec": dict(kind="encoder-decoder", vocab=5000, d=512, heads=8, layers=(6, 6), dff=2048, seq=100, batch=8),
}


def model_config(c):
    """Our ModelConfig fields: nanoGPT's architecture for decoders, the paper's for
    encoder-decoders, then the config's own `arch` fields over them."""
    dec = c["kind"] == "decoder-only"
    base = dict(
        kind=c["kind"],
        srcVocabSize=0 if dec else c["vocab"],
        vocabSize=c["vocab"],
        dModel=c["d"],
        nHeads=c["heads"],
        dFF=c["dff"],
        nEncoderLayers=c["layers"][0],
        nDecoderLayers=c["layers"][1],
        maxLen=c["seq"] if dec else max(64, c["seq"]),
        dropout=0.0 if dec else 0.1,
        norm="pre" if dec else "post",
        positional="learned" if dec else "sinusoidal",
        activation="gelu" if dec else "relu",
        tieEmbeddings=dec,
        bias=True,
        layerNormEps=1e-5,
        embedScale=not dec,
        labelSmoothing=0.0 if dec else 0.1,
    )
    return {**base, **c.get("arch", {})}


def blas_library():
    """The BLAS shared library this process loaded (OpenBLAS, MKL or the slow reference BLAS), or None."""
    torch.mm(torch.ones(64, 64), torch.ones(64, 64))
    try:
        with open("/proc/self/maps") as f:
            libs = {line.split()[-1] for line in f if "blas" in line.lower() or "mkl" in line.lower()}
        return sorted(libs)[0] if libs else None
    except OSError:
        return None


def stats(values):
    return {"median": statistics.median(values), "min": min(values), "max": max(values), "n": len(values)}


def random_batch(c, gen):
    ids = lambda: torch.randint(4, c["vocab"], (c["batch"], c["seq"]), generator=gen)  # noqa: E731
    if c["kind"] == "decoder-only":
        return {"idx": ids(), "targets": ids()}
    return {"src": ids(), "tgt_in": ids(), "tgt_out": ids()}


def train_speed(name, steps, warmup):
    c = CONFIGS[name]
    cfg = model_config(c)
    torch.manual_seed(0)
    model = build_model(cfg)
    model.train()
    if c["kind"] == "decoder-only":
        opt = torch.optim.AdamW(model.parameters(), lr=1e-3, betas=(0.9, 0.99), weight_decay=0.1)
    else:
        opt = torch.optim.Adam(model.parameters(), lr=1e-4, betas=(0.9, 0.98), eps=1e-9)
    batch = random_batch(c, torch.Generator().manual_seed(1))
    tokens = c["batch"] * c["seq"]
    rates = []
    for step in range(warmup + steps):
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        if c["kind"] == "decoder-only":
            logits = model(batch["idx"])
            loss = loss_fn(logits, batch["targets"], cfg["labelSmoothing"])
        else:
            logits = model(batch["src"], batch["tgt_in"])
            loss = loss_fn(logits, batch["tgt_out"], cfg["labelSmoothing"])
        loss.backward()
        if c["kind"] == "decoder-only":
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        dt = time.perf_counter() - t0
        if step >= warmup:
            rates.append(tokens / dt)
    return stats(rates)


@torch.no_grad()
def decode_speed(name, repeats):
    """Greedy decoding at batch 1 without a cache: every step re-runs the whole prefix."""
    c = CONFIGS[name]
    cfg = model_config(c)
    torch.manual_seed(0)
    model = build_model(cfg)
    model.eval()
    n_new = c["seq"] - 1
    gen = torch.Generator().manual_seed(2)
    per_token = []
    for _ in range(repeats):
        if c["kind"] == "decoder-only":
            idx = torch.randint(4, c["vocab"], (1, 1), generator=gen)
            t0 = time.perf_counter()
            for _ in range(n_new):
                nxt = model(idx)[:, -1, :].argmax(-1, keepdim=True)
                idx = torch.cat([idx, nxt], dim=1)
        else:
            src = torch.randint(4, c["vocab"], (1, c["seq"]), generator=gen)
            tgt = torch.ones((1, 1), dtype=torch.long)  # BOS
            t0 = time.perf_counter()
            for _ in range(n_new):
                nxt = model(src, tgt)[:, -1, :].argmax(-1, keepdim=True)
                tgt = torch.cat([tgt, nxt], dim=1)
        per_token.append((time.perf_counter() - t0) * 1000 / n_new)
    return stats(per_token)


def matmul_speed(n, seconds=0.4):
    a = torch.randn(n, n)
    b = torch.randn(n, n)
    c = torch.empty(n, n)
    flop = 2.0 * n**3
    reps = max(1, int(2e8 / flop))
    for _ in range(reps):
        torch.mm(a, b, out=c)
    rates = []
    deadline = time.perf_counter() + seconds
    while len(rates) < 5 or (time.perf_counter() < deadline and len(rates) < 50):
        t0 = time.perf_counter()
        for _ in range(reps):
            torch.mm(a, b, out=c)
        rates.append(flop * reps / (time.perf_counter() - t0) / 1e9)
    return stats(rates)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--configs", default=",".join(CONFIGS))
    ap.add_argument("--steps", type=int, default=0, help="timed training steps (default: per config)")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--no-matmul", action="store_true", help="skip the matmul measurements")
    args = ap.parse_args()
    names = [n for n in args.configs.split(",") if n and n != "none"]
    for n in names:
        if n not in CONFIGS:
            sys.exit(f"unknown config {n}; choose from {', '.join(CONFIGS)}")
    out = {"torch_version": torch.__version__, "blas": blas_library(), "configs": {}, "matmul_gflops": {}}
    for threads in [int(t) for t in args.threads.split(",")]:
        torch.set_num_threads(threads)
        key = str(threads)
        for name in names:
            big = name == "base-encdec"
            steps = args.steps or (3 if args.quick else (5 if big else 20))
            warmup = 1 if args.quick else (1 if big else 3)
            entry = out["configs"].setdefault(name, {"train_tokens_per_s": {}, "decode_ms_per_token": {}})
            entry["train_tokens_per_s"][key] = train_speed(name, steps, warmup)
            entry["decode_ms_per_token"][key] = decode_speed(name, 1 if (big or args.quick) else 3)
        if not args.no_matmul:
            out["matmul_gflops"][key] = {str(n): matmul_speed(n) for n in (64, 128, 256, 512, 1024)}
    json.dump(out, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
