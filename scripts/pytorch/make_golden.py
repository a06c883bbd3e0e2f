"""Writes test/golden/<name>.safetensors: the PyTorch answers our TypeScript engine must match.

For each of five tiny configs of 2017 and 2019 (CONFIGS): the initial parameters, the inputs,
the logits, the loss and its gradient for every parameter, and the parameters after 5 optimizer
steps on the same batch (Adam + the paper's warm-up schedule for encoder-decoder, AdamW +
clipping as in nanoGPT for decoder-only; see training.py). For each option of today's
transformers alone, each modern preset's architecture, a few Hugging Face-shaped decoders and
one modern encoder-decoder (MODERN, in modern/): the same but the 51 losses of 50 optimizer
steps instead of the final parameters. Deterministic (fixed seeds, float32, single-threaded
CPU: two runs write identical bytes). Runs the self-checks in checks.py on every model, then a
float64 replay of every file that measures the float32 rounding floor and finds the elements
whose gradient is zero in exact arithmetic (both stored in the metadata). The configs that a
Hugging Face class computes too (hf_check.HF_CLASSES) are checked against it, their logits to
1e-5, and the metadata says by which class and version (or that transformers was not there).

Run: `npm run golden` (= /usr/bin/python3 scripts/pytorch/make_golden.py). Needs torch only;
with HF_PYTHON=<a Python with torch 2 and transformers> it also runs the cross-check.
Left out: dropout (0 in every golden config: the engine's dropout masks cannot match torch's RNG).
"""

import copy
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch

sys.dont_write_bytecode = True  # keep __pycache__ out of the repository
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import run_self_checks  # noqa: E402
from hf_check import HF_CLASSES  # noqa: E402
from reference import BOS, EOS, PAD, LayerNorm, RMSNorm, build_model, complete_config  # noqa: E402
from safetensors_io import read_safetensors, write_safetensors  # noqa: E402
from training import ADAMW_META, forward_loss, optimizer_meta, train  # noqa: E402

OUT_DIR = os.environ.get("GOLDEN_OUT") or os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "..", "test", "golden"
)
GOLDEN_VERSION = "1"
N_STEPS = 5
# Seeds of parameters (seed) and inputs (seed + 1). Each is one whose float32 rounding floor
# stays under FLOAT32_BUDGET, so the TS tests can compare at 1e-4 (see float32_error).
SEEDS = {"encdec-paper": 1003, "encdec-pre": 1010, "gpt": 1020, "gpt-post": 1031, "gpt2": 1040}
FLOAT32_BUDGET = 3e-5

_ENCDEC = dict(
    kind="encoder-decoder",
    srcVocabSize=11,
    vocabSize=13,
    dModel=16,
    nHeads=2,
    dFF=32,
    nEncoderLayers=2,
    nDecoderLayers=2,
    maxLen=16,
    dropout=0.0,
    layerNormEps=1e-5,
)
_GPT = dict(
    kind="decoder-only",
    srcVocabSize=0,
    vocabSize=17,
    dModel=16,
    nHeads=2,
    dFF=64,
    nEncoderLayers=0,
    nDecoderLayers=2,
    maxLen=16,
    dropout=0.0,
    layerNormEps=1e-5,
)
CONFIGS = {
    "encdec-paper": dict(
        _ENCDEC,
        norm="post",
        positional="sinusoidal",
        activation="relu",
        tieEmbeddings=False,
        bias=True,
        embedScale=True,
        labelSmoothing=0.1,
    ),
    "encdec-pre": dict(
        _ENCDEC,
        norm="pre",
        positional="learned",
        activation="gelu",
        tieEmbeddings=True,
        bias=False,
        embedScale=True,
        labelSmoothing=0.1,
    ),
    "gpt": dict(
        _GPT,
        norm="pre",
        positional="learned",
        activation="gelu",
        tieEmbeddings=True,
        bias=True,
        embedScale=False,
        labelSmoothing=0.0,
    ),
    "gpt-post": dict(
        _GPT,
        norm="post",
        positional="sinusoidal",
        activation="relu",
        tieEmbeddings=False,
        bias=False,
        embedScale=False,
        labelSmoothing=0.0,
    ),
    # GPT-2's own architecture: nanoGPT's with the tanh GELU (gelu_new) it was trained with.
    "gpt2": dict(
        _GPT,
        norm="pre",
        positional="learned",
        activation="geluTanh",
        tieEmbeddings=True,
        bias=True,
        embedScale=False,
        labelSmoothing=0.0,
    ),
}
FIELD_ORDER = [
    "kind",
    "srcVocabSize",
    "vocabSize",
    "dModel",
    "nHeads",
    "dFF",
    "nEncoderLayers",
    "nDecoderLayers",
    "maxLen",
    "dropout",
    "norm",
    "positional",
    "activation",
    "tieEmbeddings",
    "bias",
    "layerNormEps",
    "embedScale",
    "labelSmoothing",
]
# The modern files' config holds every field, in config.ts's order.
MODERN_FIELD_ORDER = [
    "kind",
    "srcVocabSize",
    "vocabSize",
    "dModel",
    "nHeads",
    "dFF",
    "nEncoderLayers",
    "nDecoderLayers",
    "maxLen",
    "dropout",
    "norm",
    "positional",
    "ropeTheta",
    "rotaryFraction",
    "activation",
    "tieEmbeddings",
    "bias",
    "qkvBias",
    "attnOutBias",
    "mlpBias",
    "layerNormEps",
    "normType",
    "normScale",
    "qkNorm",
    "nKvHeads",
    "attnSoftCap",
    "logitSoftCap",
    "slidingWindow",
    "parallelResidual",
    "embedNorm",
    "headDim",
    "attnScale",
    "postNorms",
    "globalEvery",
    "ropeLocalTheta",
    "embedScale",
    "labelSmoothing",
]

# ----------------------------------------------------------------------------- modern configs
MODERN_STEPS = 50
MODERN_DIR = "modern"
HF_LOGITS_TOLERANCE = 1e-5  # max |ours − HF| / max(1, max |HF|)
_BASE = complete_config(CONFIGS["gpt"])  # nanoGPT's architecture on the tiny golden shape
_NO_BIAS = dict(bias=False, qkvBias=False, attnOutBias=False, mlpBias=False)
# Each option of issue 29 alone, on the decoder-only golden shape (nanoGPT's architecture).
OPTIONS = {
    "opt-rope": dict(positional="rope"),
    "opt-rope-partial": dict(positional="rope", rotaryFraction=0.5, ropeTheta=1000),
    # 6 heads: ALiBi's slopes for a head count that is not a power of two (4 + 2 extra).
    "opt-alibi": dict(positional="alibi", dModel=24, nHeads=6),
    "opt-none": dict(positional="none"),
    "opt-rmsnorm": dict(normType="rmsnorm"),
    "opt-rmsnorm-noscale": dict(normType="rmsnorm", normScale=False),
    "opt-qknorm": dict(qkNorm=True),
    "opt-swiglu": dict(activation="swiglu"),
    "opt-geglu": dict(activation="geglu"),
    "opt-relu2": dict(activation="relu2"),
    "opt-silu": dict(activation="silu"),
    "opt-gqa": dict(nHeads=4, nKvHeads=2),
    "opt-qkv-bias": dict(_NO_BIAS, qkvBias=True),
    "opt-attn-out-bias": dict(_NO_BIAS, attnOutBias=True),
    "opt-mlp-bias": dict(_NO_BIAS, mlpBias=True),
    "opt-attn-softcap": dict(attnSoftCap=2.0),
    "opt-logit-softcap": dict(logitSoftCap=3.0),
    "opt-sliding-window": dict(slidingWindow=3),
    "opt-parallel-residual": dict(parallelResidual=True),
    "opt-embed-norm": dict(embedNorm=True),
}
# config.ts's LLAMA and NANOCHAT architectures (MODERN_PRESETS) at the golden size.
_LLAMA = dict(
    _BASE,
    **_NO_BIAS,
    positional="rope",
    normType="rmsnorm",
    activation="swiglu",
    tieEmbeddings=False,
    nHeads=4,
    nKvHeads=2,
    dFF=40,
)
PRESETS = {
    "preset-llama": _LLAMA,
    "preset-nanochat": dict(
        _LLAMA,
        nHeads=2,
        nKvHeads=0,
        dFF=64,
        activation="relu2",
        normScale=False,
        qkNorm=True,
        logitSoftCap=15,
        embedNorm=True,
    ),
}
# Decoders that a Hugging Face class computes too (hf_check.HF_CLASSES).
HF_SHAPED = {
    "hf-qwen2": dict(_LLAMA, qkvBias=True),
    "hf-qwen3": dict(_LLAMA, qkNorm=True),
    "hf-mistral": dict(_LLAMA, slidingWindow=4),
    # Pythia: LayerNorm with biases, a quarter of each head rotated, parallel residual, exact GELU.
    "hf-gptneox": dict(_BASE, positional="rope", rotaryFraction=0.25, parallelResidual=True, tieEmbeddings=False),
    # BLOOM: ALiBi (6 heads: slopes of a head count that is not a power of two), a LayerNorm after
    # the embeddings, the tanh GELU, an MLP 4·C wide.
    "hf-bloom": dict(_BASE, positional="alibi", embedNorm=True, activation="geluTanh", dModel=12, nHeads=6, dFF=48),
}
ENCDEC_MODERN = {
    "encdec-modern": dict(
        complete_config(CONFIGS["encdec-pre"]),
        positional="rope",
        normType="rmsnorm",
        activation="swiglu",
        qkNorm=True,
        nHeads=4,
        nKvHeads=2,
        embedScale=False,
    ),
}
# Issue 30: heads set apart from dModel / nHeads (headDim) and a softmax scale apart from 1/√D
# (attnScale). Last in MODERN, so the seeds of the files before them stay what they were.
HEAD_DIM = {
    # 2 heads of 6 (not 8), scale 0.3: checked through Gemma 2's attention function with its `scaling`.
    "opt-head-dim-scale": dict(_BASE, headDim=6, attnScale=0.3, positional="rope"),
    # Qwen3's shape: 4 heads of 12 over hidden 16 (q 48 wide, o_proj [16, 48]), 2 kv heads, QK-norm.
    "hf-qwen3-head-dim": dict(_LLAMA, qkNorm=True, headDim=12),
    # Heads of 6 over dModel 16 / 4 heads in both attentions; one encoder layer keeps the file under 120 kB.
    "encdec-head-dim": dict(ENCDEC_MODERN["encdec-modern"], headDim=6, attnScale=0.2, nEncoderLayers=1),
}
# Issue 30: Gemma 3's layers — sandwich norms (postNorms), local and global layers (globalEvery) with
# their own RoPE θ (ropeLocalTheta). Last in MODERN, after HEAD_DIM, for the same reason.
GEMMA_LAYERS = {
    # Gemma 3's architecture on the llama golden shape: GeGLU, QK-norm, heads of 6 scaled by 0.25, √C
    # embeddings, a window of 3 (active on the 8 tokens) in layer 0 (θ 100) and layer 1 global (θ 10000).
    "gemma3-layers": dict(
        _LLAMA,
        activation="geglu",
        qkNorm=True,
        headDim=6,
        attnScale=0.25,
        embedScale=True,
        tieEmbeddings=True,
        postNorms=True,
        slidingWindow=3,
        globalEvery=2,
        ropeLocalTheta=100,
    ),
    # postNorms on every sublayer of the encoder-decoder (three per decoder layer), with one global
    # decoder layer of two.
    "encdec-post-norms": dict(
        ENCDEC_MODERN["encdec-modern"], postNorms=True, slidingWindow=2, globalEvery=2, nEncoderLayers=1
    ),
}
MODERN = {
    **{k: dict(_BASE, **v) for k, v in OPTIONS.items()},
    **PRESETS,
    **HF_SHAPED,
    **ENCDEC_MODERN,
    **HEAD_DIM,
    **GEMMA_LAYERS,
}
# Seeds of parameters (seed) and inputs (seed + 1), as SEEDS.
MODERN_SEEDS = {name: 2000 + 10 * i for i, name in enumerate(MODERN)}
MODERN_SEEDS["encdec-modern"] = 2266  # 2260: gradients' float32 floor 2.5e-6, 2266: 5.6e-7
MODERN_SEEDS["opt-none"] = 2033  # 2030 (and 2034, 2036): float32 and float64 part by 1e-3 to 0.2 in 50 steps


def init_params(model, seed):
    """Random but not tiny, so every parameter matters: weights and embeddings N(0, 0.3²),
    biases N(0, 0.1²), norm weights 1 + N(0, 0.1²). Embedding rows at padding_idx stay 0,
    as nn.Embedding(padding_idx=0) initialises them."""
    gen = torch.Generator().manual_seed(seed)
    ln_params = {id(p) for m in model.modules() if isinstance(m, (LayerNorm, RMSNorm)) for p in m.parameters()}
    with torch.no_grad():
        for name, p in model.named_parameters():
            noise = torch.randn(p.shape, generator=gen)
            if id(p) in ln_params:
                p.copy_(1.0 + 0.1 * noise if name.endswith("weight") else 0.1 * noise)
            else:
                p.copy_(0.3 * noise if p.dim() >= 2 else 0.1 * noise)
        for m in model.modules():
            if isinstance(m, torch.nn.Embedding) and m.padding_idx is not None:
                m.weight[m.padding_idx].zero_()


def make_batch(cfg, seed):
    """Encoder-decoder: src (3, 7) lengths 7/5/3 ending in EOS; tgt_in (3, 6) = BOS + tokens
    (lengths 6/4/2); tgt_out = tgt_in shifted left, EOS closing each sequence, PAD after.
    Decoder-only: idx (3, 8) and its next tokens, the last 3 targets of row 2 PAD."""
    gen = torch.Generator().manual_seed(seed)
    if cfg["kind"] == "encoder-decoder":
        src = torch.full((3, 7), PAD, dtype=torch.int32)
        for b, n in enumerate([7, 5, 3]):
            src[b, : n - 1] = torch.randint(4, cfg["srcVocabSize"], (n - 1,), generator=gen)
            src[b, n - 1] = EOS
        tgt_in = torch.full((3, 6), PAD, dtype=torch.int32)
        tgt_out = torch.full((3, 6), PAD, dtype=torch.int32)
        for b, n in enumerate([6, 4, 2]):
            words = torch.randint(4, cfg["vocabSize"], (n - 1,), generator=gen, dtype=torch.int32)
            tgt_in[b, :n] = torch.cat([torch.tensor([BOS], dtype=torch.int32), words])
            tgt_out[b, :n] = torch.cat([words, torch.tensor([EOS], dtype=torch.int32)])
        return {"src": src, "tgt_in": tgt_in, "tgt_out": tgt_out}
    seq = torch.randint(4, cfg["vocabSize"], (3, 9), generator=gen, dtype=torch.int32)
    idx, targets = seq[:, :-1].clone(), seq[:, 1:].clone()
    targets[2, -3:] = PAD
    return {"idx": idx, "targets": targets}


def recipe(cfg, n_steps):
    """The optimizer of a golden run: its kind's (training.py) for the files of CONFIGS; AdamW +
    clipping for every MODERN file, since 50 steps of the paper's warm-up (a peak rate of 0.125
    at dModel 16) make the encoder-decoder's losses part from a float64 replay by up to 1e-2."""
    return optimizer_meta(cfg) if n_steps == N_STEPS else ADAMW_META


def golden_run(name, cfg, seed, n_steps=N_STEPS, fields=FIELD_ORDER):
    """Everything one golden file holds, as float32 / int32 numpy arrays plus metadata. With
    n_steps = N_STEPS (the files of CONFIGS) it holds the parameters after the steps; with more
    (MODERN) only the losses."""
    torch.manual_seed(seed)
    model = build_model(cfg)
    init_params(model, seed)
    batch = make_batch(cfg, seed + 1)
    named = dict(model.named_parameters())  # tied weights appear once, under the embedding name
    tensors = {f"param.{k}": p.detach().numpy().copy() for k, p in named.items()}
    if cfg["positional"] == "sinusoidal":
        pe = model.positional_encoding.pe if cfg["kind"] == "encoder-decoder" else model.transformer.wpe.pe
        tensors["buffer.pe"] = pe.numpy().copy()
    if cfg["positional"] == "rope":
        tensors["buffer.rope_cos"] = model.positions.rope_cos.numpy().copy()
        tensors["buffer.rope_sin"] = model.positions.rope_sin.numpy().copy()
        if hasattr(model.positions, "rope_local_cos"):
            tensors["buffer.rope_local_cos"] = model.positions.rope_local_cos.numpy().copy()
            tensors["buffer.rope_local_sin"] = model.positions.rope_local_sin.numpy().copy()
    tensors.update({f"input.{k}": v.numpy() for k, v in batch.items()})
    logits, loss = forward_loss(model, cfg, batch)
    loss.backward()
    tensors["output.logits"] = logits.detach().numpy().copy()
    tensors.update({f"grad.{k}": p.grad.numpy().copy() for k, p in named.items()})
    model.zero_grad(set_to_none=True)
    initial = copy.deepcopy(model)  # the self-checks want the untrained model
    opt_meta = recipe(cfg, n_steps)
    losses = train(model, cfg, batch, n_steps, meta=opt_meta)
    assert losses[0] == loss.item(), "the first training loss must equal the golden loss"
    if n_steps == N_STEPS:
        tensors.update({f"adam_final.{k}": p.detach().numpy().copy() for k, p in named.items()})
    meta = {
        "format": "attention-lab-golden",
        "version": GOLDEN_VERSION,
        "name": name,
        "seed": str(seed),
        "torch": torch.__version__,
        "config": json.dumps({k: cfg[k] for k in fields}),
        "loss": repr(loss.item()),
        "losses": json.dumps(losses),
        "optimizer": json.dumps(opt_meta),
    }
    return initial, batch, tensors, meta


def _ranges(flags):
    """[[begin, end), ...] of the True runs in a flat bool array."""
    ranges, start = [], None
    for i, flag in enumerate(list(flags) + [False]):
        if flag and start is None:
            start = i
        elif not flag and start is not None:
            ranges.append([start, i])
            start = None
    return ranges


def float32_error(cfg, tensors, batch, losses32, n_steps=N_STEPS):
    """Replays a golden run in float64 from the same parameters. Returns (zeroGrad, float32Error):

    zeroGrad {name: [[begin, end), ...]}: flat element ranges whose gradient is 0 in exact
    arithmetic at every step yet nonzero in float32 (the key biases: adding q·b_k to a whole row
    of scores leaves the softmax unchanged). Adam turns that rounding noise into full-size
    steps, so these adam_final values are noise, and they change no output; tests skip them.
    float32Error: the largest |float32 - float64| of logits, losses, grads and adam_final
    (zeroGrad elements left out): the rounding floor any float32 engine shares."""
    model = build_model(cfg).double()
    named = dict(model.named_parameters())
    with torch.no_grad():
        for k, p in named.items():
            p.copy_(torch.from_numpy(tensors[f"param.{k}"]).double())
        logits64 = forward_loss(model, cfg, batch)[0].numpy()
    steps = []
    losses64 = train(model, cfg, batch, n_steps, grads_out=steps, meta=recipe(cfg, n_steps))
    scales = [max(g.abs().max().item() for g in step.values()) for step in steps]
    zero, keep = {}, {}
    for k in named:
        rel = torch.stack([step[k].abs().flatten() / s for step, s in zip(steps, scales)]).amax(0)
        noisy = ((rel <= 1e-9) & (rel > 0)).numpy()
        keep[k] = ~noisy
        if noisy.any():
            zero[k] = _ranges(noisy)

    def worst(prefix, ref):
        return max(float(np.abs(tensors[f"{prefix}.{k}"].ravel() - ref[k])[keep[k]].max(initial=0.0)) for k in named)

    err = {
        "logits": float(np.abs(tensors["output.logits"] - logits64).max()),
        "losses": max(abs(a - b) for a, b in zip(losses32, losses64)),
        "grad": worst("grad", {k: g.numpy().ravel() for k, g in steps[0].items()}),
    }
    if n_steps == N_STEPS:
        err["adam_final"] = worst("adam_final", {k: p.detach().numpy().ravel() for k, p in named.items()})
    return zero, err


def hf_cross_check(name, cfg, tensors):
    """For a config in hf_check.HF_CLASSES: the HF class's logits for the golden weights and
    tokens must agree with ours to HF_LOGITS_TOLERANCE (relative to max(1, max |logit|)).
    Runs hf_check.py in HF_PYTHON. Returns the metadata string that says what checked it."""
    if name not in HF_CLASSES:
        return None
    hf_python = os.environ.get("HF_PYTHON")
    if not hf_python:
        print(f"  {name}: HF_PYTHON unset, so transformers' {HF_CLASSES[name]} did not check it")
        return json.dumps({"class": HF_CLASSES[name], "checked": False, "why": "transformers unavailable"})
    with tempfile.TemporaryDirectory() as tmp:
        src, dst = os.path.join(tmp, "in.safetensors"), os.path.join(tmp, "out.safetensors")
        keep = {k: v for k, v in tensors.items() if k.startswith("param.") or k == "input.idx"}
        write_safetensors(src, keep, {"name": name, "config": json.dumps(cfg)})
        script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "hf_check.py")
        subprocess.run([hf_python, script, src, dst], check=True)
        back, meta = read_safetensors(dst)
    want = tensors["output.logits"]
    diff = float(np.abs(back["output.logits"] - want).max() / max(1.0, float(np.abs(want).max())))
    print(f"  {name}: {meta['class']} (transformers {meta['transformers']}, torch {meta['torch']}): {diff:.1e}")
    assert diff < HF_LOGITS_TOLERANCE, f"{name}: {meta['class']} differs from the reference by {diff:.1e}"
    return json.dumps(
        {
            "class": meta["class"],
            "checked": True,
            "transformers": meta["transformers"],
            "torch": meta["torch"],
            "tolerance": HF_LOGITS_TOLERANCE,
            "maxRelDiff": float(f"{diff:.1e}"),
        }
    )


def write_golden(name, cfg, seed, n_steps=N_STEPS, fields=FIELD_ORDER, out_dir=OUT_DIR):
    """Builds, checks, writes and re-reads one golden file; returns its path and contents."""
    model, batch, tensors, meta = golden_run(name, cfg, seed, n_steps, fields)
    run_self_checks(name, cfg, model, batch)
    zero, err = float32_error(cfg, tensors, batch, json.loads(meta["losses"]), n_steps)
    meta["zeroGrad"] = json.dumps(zero)
    meta["float32Error"] = json.dumps(err)
    hf = hf_cross_check(name, {k: cfg[k] for k in fields}, tensors)
    if hf is not None:
        meta["hfCheck"] = hf
    path = os.path.join(out_dir, f"{name}.safetensors")
    write_safetensors(path, tensors, meta)
    back, back_meta = read_safetensors(path)
    assert back_meta == meta and list(back) == list(tensors), "safetensors round trip lost names or metadata"
    assert all(np.array_equal(back[k], v) and back[k].dtype == v.dtype for k, v in tensors.items())
    return path, tensors, meta, err


def report(name, path, tensors, meta, err, size_limit):
    size = os.path.getsize(path)
    losses = json.loads(meta["losses"])
    print(f"{name}: {size} bytes, {len(tensors)} tensors, loss {meta['loss']}")
    print(
        f"  losses {[round(x, 5) for x in losses[:6]]}{' ... ' + str(round(losses[-1], 5)) if len(losses) > 6 else ''}"
    )
    print(
        "  float32 vs float64: " + ", ".join(f"{k} {v:.1e}" for k, v in err.items()) + f"; zeroGrad {meta['zeroGrad']}"
    )
    assert size < size_limit, f"{path} is {size} bytes; keep golden files under {size_limit} bytes"
    assert losses[-1] < losses[0], f"{name}: training on one batch should lower the loss"
    worst = max(err.values())
    assert worst < FLOAT32_BUDGET, (
        f"{name}: float32 rounding moves a stored value by {worst:.1e} (budget {FLOAT32_BUDGET:.0e}), too close to "
        f"the TypeScript tests' tolerance; change its seed to get a better-conditioned case"
    )


def main():
    torch.set_num_threads(1)  # one summation order: the same bits on every run
    torch.use_deterministic_algorithms(True)
    only = set(sys.argv[1:])
    os.makedirs(os.path.join(OUT_DIR, MODERN_DIR), exist_ok=True)
    for name, cfg in CONFIGS.items():
        if only and name not in only:
            continue
        path, tensors, meta, err = write_golden(name, cfg, SEEDS[name])
        report(name, path, tensors, meta, err, 300_000)
    for name, cfg in MODERN.items():
        if only and name not in only:
            continue
        out = os.path.join(OUT_DIR, MODERN_DIR)
        path, tensors, meta, err = write_golden(name, cfg, MODERN_SEEDS[name], MODERN_STEPS, MODERN_FIELD_ORDER, out)
        report(name, path, tensors, meta, err, 120_000)
    print("all golden files written to", os.path.normpath(OUT_DIR))


if __name__ == "__main__":
    main()
