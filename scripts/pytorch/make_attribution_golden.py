"""Writes test/golden/attribution/<name>.safetensors: PyTorch's direct logit attribution, accumulated
residual stream and attribution patching estimates, which src/engine/analysis/ must reproduce.

The models are two existing golden files' (no new weights): `gpt` (test/golden/gpt.safetensors:
nanoGPT's architecture, LayerNorm with biases, tied embeddings) and `llama`
(test/golden/modern/preset-llama.safetensors: RMSNorm, RoPE, SwiGLU, 4 heads sharing 2 key/value
heads). reference.py's model runs with forward hooks (TransformerLens's hook points, which do not
install here): resid_pre = each block's input and the final norm's input, z = the input of each
attention's c_proj (heads concatenated), attn_out = the attention's output, mlp_out = the MLP's.

- DLA (logit[answer] − logit[wrong], every position): each component read through the final norm
  with the clean run's statistics (LayerNorm: centre, divide by sqrt(var + eps), times the weight;
  RMSNorm: divide by sqrt(mean(x²) + eps), times the weight), onto W_U[answer] − W_U[wrong], in
  float64; the final norm's and unembedding's biases are `excluded`. Checked here: the components
  plus `excluded` equal the model's logit difference.
- Attribution patching (denoising): (A_clean − A_corrupt) · ∂metric/∂A, the gradient from autograd
  on the corrupted run (retain_grad on the hooked tensors), for the metrics logit-diff and logprob
  at the last position.

The encoder-decoder `encdec` (test/golden/encdec-pre.safetensors: LayerNorm, learned positions,
GELU, tied) reads a clean and a corrupted source of the same length under one target prefix (the
metric at the decoder's last position). Its hooks add enc_resid_pre (each encoder layer's input and
the encoder norm's), enc_z, enc_attn_out, enc_mlp_out, and each decoder layer's cross_z (the
cross-attention's W_o input) and cross_out; DLA adds the cross-attention heads (`dla.cross_heads`)
to the decoder's components, and attribution patching writes `enc_*` and `cross_*` estimates.

Run: /usr/bin/python3 scripts/pytorch/make_attribution_golden.py [NAME …] (torch only; names choose
models, default all). Deterministic.
"""

import json
import os
import sys

import numpy as np
import torch

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from reference import build_model, complete_config  # noqa: E402
from safetensors_io import read_safetensors, write_safetensors  # noqa: E402

GOLDEN = os.path.join(HERE, "..", "..", "test", "golden")
MODELS = {"gpt": "gpt.safetensors", "llama": os.path.join("modern", "preset-llama.safetensors")}
ENCDEC = {"encdec": "encdec-pre.safetensors"}
T = 8
SEED = 3200


def load(path):
    tensors, meta = read_safetensors(os.path.join(GOLDEN, path))
    cfg = complete_config(json.loads(meta["config"]))
    model = build_model(cfg)
    state = {k[len("param.") :]: torch.from_numpy(v.copy()) for k, v in tensors.items() if k.startswith("param.")}
    missing, unexpected = model.load_state_dict(state, strict=False)
    assert not unexpected and all(m in ("lm_head.weight", "fc.weight") for m in missing), (missing, unexpected)
    model.eval()
    return model, cfg, path


def prompts(cfg):
    """A clean prompt of T tokens (ids 4.. as the golden batches; 0–3 are PAD/BOS/EOS/UNK) and a
    corrupted one differing at positions 1, 3 and 5; answer and wrong token ids."""
    gen = torch.Generator().manual_seed(SEED)
    clean = torch.randint(4, cfg["vocabSize"], (1, T), generator=gen)
    corrupted = clean.clone()
    for p in (1, 3, 5):
        corrupted[0, p] = 4 + (clean[0, p] - 4 + 1 + int(torch.randint(0, 5, (1,), generator=gen))) % (
            cfg["vocabSize"] - 4
        )
    return clean, corrupted, 5, 9


def run(model, idx, grad=False):
    """logits [T, V] and the hooked activations (each [T, ·]) of one sequence."""
    acts = {}

    def keep(name):
        def fn(t):
            if grad:
                t.retain_grad()
            acts[name] = t

        return fn

    handles = []
    blocks = model.transformer.h
    for i, blk in enumerate(blocks):
        handles.append(blk.register_forward_pre_hook(lambda m, a, i=i: keep(f"resid_pre.{i}")(a[0])))
        handles.append(blk.attn.c_proj.register_forward_pre_hook(lambda m, a, i=i: keep(f"z.{i}")(a[0])))
        handles.append(blk.attn.register_forward_hook(lambda m, a, o, i=i: keep(f"attn_out.{i}")(o)))
        handles.append(blk.mlp.register_forward_hook(lambda m, a, o, i=i: keep(f"mlp_out.{i}")(o)))
    L = len(blocks)
    handles.append(model.transformer.ln_f.register_forward_pre_hook(lambda m, a: keep(f"resid_pre.{L}")(a[0])))
    try:
        logits = model(idx)
    finally:
        for h in handles:
            h.remove()
    return logits[0], acts


def dla(model, cfg, clean, answer, wrong):
    with torch.no_grad():
        logits, acts = run(model, clean)
    a = {k: v[0].double() for k, v in acts.items()}
    L, H, C = cfg["nDecoderLayers"], cfg["nHeads"], cfg["dModel"]
    D = C // H
    ln = model.transformer.ln_f
    W = model.lm_head.weight.detach().double()
    d = W[answer] - W[wrong]
    w = ln.weight.detach().double() if ln.weight is not None else torch.ones(C, dtype=torch.float64)
    top = a[f"resid_pre.{L}"]
    layernorm = cfg["normType"] != "rmsnorm"
    if layernorm:
        rstd = 1 / torch.sqrt(top.var(-1, unbiased=False) + cfg["layerNormEps"])
    else:
        rstd = 1 / torch.sqrt(top.pow(2).mean(-1) + cfg["layerNormEps"])

    def project(c):  # c [T, C] -> [T]
        if layernorm:
            c = c - c.mean(-1, keepdim=True)
        return rstd * ((c * w) @ d)

    out = {"dla.embed": project(a["resid_pre.0"])}
    heads, mlp, bias = [], [], []
    for i, blk in enumerate(model.transformer.h):
        Wo = blk.attn.c_proj.weight.detach().double()  # [C, H·D]
        z = a[f"z.{i}"]
        heads.append(torch.stack([project(z[:, h * D : (h + 1) * D] @ Wo[:, h * D : (h + 1) * D].T) for h in range(H)]))
        mlp.append(project(a[f"mlp_out.{i}"]))
        if blk.attn.c_proj.bias is not None:
            bias.append(project(blk.attn.c_proj.bias.detach().double().expand(T, C)))
    out["dla.heads"] = torch.stack(heads)
    out["dla.mlp"] = torch.stack(mlp)
    if bias:
        out["dla.attn_bias"] = torch.stack(bias)
    excluded = torch.zeros(T, dtype=torch.float64)
    if getattr(ln, "bias", None) is not None:
        excluded += ln.bias.detach().double() @ d
    if model.lm_head.bias is not None:
        excluded += float(model.lm_head.bias[answer] - model.lm_head.bias[wrong])
    out["dla.excluded"] = excluded
    out["dla.accumulated"] = torch.stack([project(a[f"resid_pre.{layer}"]) for layer in range(L + 1)])
    out["dla.logit_diff"] = (logits[:, answer] - logits[:, wrong]).double()
    total = out["dla.embed"] + out["dla.heads"].sum((0, 1)) + out["dla.mlp"].sum(0) + excluded
    if bias:
        total = total + out["dla.attn_bias"].sum(0)
    err = (total - out["dla.logit_diff"]).abs().max().item()
    assert err < 1e-4, f"DLA components do not add up to the logit difference: {err}"
    assert (out["dla.accumulated"][L] + excluded - out["dla.logit_diff"]).abs().max().item() < 1e-4
    return out


def metric(logits, kind, answer, wrong):
    last = logits[-1]
    if kind == "logit-diff":
        return last[answer] - last[wrong]
    return torch.log_softmax(last, -1)[answer]


def attribution(model, cfg, clean, corrupted, answer, wrong, kind):
    L, H, C = cfg["nDecoderLayers"], cfg["nHeads"], cfg["dModel"]
    D = C // H
    with torch.no_grad():
        cl_logits, cl = run(model, clean)
    co_logits, co = run(model, corrupted, grad=True)
    m = metric(co_logits, kind, answer, wrong)
    m.backward()
    est = lambda name: ((cl[name] - co[name]).double() * co[name].grad.double())[0]  # [T, width]
    out = {
        "clean": metric(cl_logits, kind, answer, wrong).double().reshape(1),
        "corrupted": m.detach().double().reshape(1),
        "resid": torch.stack([est(f"resid_pre.{i}").sum(-1) for i in range(L)]),
        "attn_out": torch.stack([est(f"attn_out.{i}").sum(-1) for i in range(L)]),
        "mlp_out": torch.stack([est(f"mlp_out.{i}").sum(-1) for i in range(L)]),
    }
    head_pos = torch.stack([est(f"z.{i}").reshape(T, H, D).sum(-1).T for i in range(L)])  # [L, H, T]
    out["head_pos"] = head_pos
    out["head"] = head_pos.sum(-1)
    return {f"attr.{kind}.{k}": v for k, v in out.items()}


def run_encdec(model, src, tgt, grad=False):
    """logits [T, V] and the hooked activations of an encoder-decoder (see the file comment)."""
    acts = {}

    def keep(name):
        def fn(t):
            if grad:
                t.retain_grad()
            acts[name] = t

        return fn

    handles = []
    Le, L = len(model.encoder_layers), len(model.decoder_layers)
    pre = lambda mod, name: handles.append(mod.register_forward_pre_hook(lambda m, a: keep(name)(a[0])))  # noqa: E731
    post = lambda mod, name: handles.append(mod.register_forward_hook(lambda m, a, o: keep(name)(o)))  # noqa: E731
    for i, lay in enumerate(model.encoder_layers):
        pre(lay, f"enc_resid_pre.{i}")
        pre(lay.self_attn.W_o, f"enc_z.{i}")
        post(lay.self_attn, f"enc_attn_out.{i}")
        post(lay.feed_forward, f"enc_mlp_out.{i}")
    pre(model.encoder_norm, f"enc_resid_pre.{Le}")
    for i, lay in enumerate(model.decoder_layers):
        pre(lay, f"resid_pre.{i}")
        pre(lay.self_attn.W_o, f"z.{i}")
        post(lay.self_attn, f"attn_out.{i}")
        pre(lay.cross_attn.W_o, f"cross_z.{i}")
        post(lay.cross_attn, f"cross_out.{i}")
        post(lay.feed_forward, f"mlp_out.{i}")
    pre(model.decoder_norm, f"resid_pre.{L}")
    try:
        logits = model(src, tgt)
    finally:
        for h in handles:
            h.remove()
    return logits[0], acts


def encdec_inputs():
    """Clean and corrupted sources (ids 4.. of the source vocabulary, EOS last; differing at 1 and 3), the target
    prefix (BOS + 3 tokens), the answer and the wrong token."""
    return (
        torch.tensor([[6, 4, 10, 10, 8, 9, 2]]),
        torch.tensor([[6, 7, 10, 5, 8, 9, 2]]),
        torch.tensor([[1, 10, 6, 4]]),
        5,
        6,
    )


def dla_encdec(model, cfg, src, tgt, answer, wrong):
    with torch.no_grad():
        logits, acts = run_encdec(model, src, tgt)
    a = {k: v[0].double() for k, v in acts.items()}
    L, H, C = cfg["nDecoderLayers"], cfg["nHeads"], cfg["dModel"]
    D, T = C // H, tgt.shape[1]
    ln = model.decoder_norm
    W = model.fc.weight.detach().double()
    d = W[answer] - W[wrong]
    w = ln.weight.detach().double()
    top = a[f"resid_pre.{L}"]
    rstd = 1 / torch.sqrt(top.var(-1, unbiased=False) + cfg["layerNormEps"])
    project = lambda c: rstd * (((c - c.mean(-1, keepdim=True)) * w) @ d)  # noqa: E731

    def heads(attn, z):
        Wo = attn.W_o.weight.detach().double()
        return torch.stack([project(z[:, h * D : (h + 1) * D] @ Wo[:, h * D : (h + 1) * D].T) for h in range(H)])

    lays = model.decoder_layers
    out = {
        "dla.embed": project(a["resid_pre.0"]),
        "dla.heads": torch.stack([heads(lay.self_attn, a[f"z.{i}"]) for i, lay in enumerate(lays)]),
        "dla.cross_heads": torch.stack([heads(lay.cross_attn, a[f"cross_z.{i}"]) for i, lay in enumerate(lays)]),
        "dla.mlp": torch.stack([project(a[f"mlp_out.{i}"]) for i in range(L)]),
        "dla.accumulated": torch.stack([project(a[f"resid_pre.{i}"]) for i in range(L + 1)]),
        "dla.logit_diff": (logits[:, answer] - logits[:, wrong]).double(),
    }
    assert getattr(ln, "bias", None) is None and model.fc.bias is None
    out["dla.excluded"] = torch.zeros(T, dtype=torch.float64)
    total = out["dla.embed"] + out["dla.heads"].sum((0, 1)) + out["dla.cross_heads"].sum((0, 1)) + out["dla.mlp"].sum(0)
    err = (total - out["dla.logit_diff"]).abs().max().item()
    assert err < 1e-4, f"DLA components do not add up to the logit difference: {err}"
    return out


def attribution_encdec(model, cfg, clean, corrupted, tgt, answer, wrong, kind):
    Le, L, H, C = cfg["nEncoderLayers"], cfg["nDecoderLayers"], cfg["nHeads"], cfg["dModel"]
    D, S, T = C // H, clean.shape[1], tgt.shape[1]
    with torch.no_grad():
        cl_logits, cl = run_encdec(model, clean, tgt)
    co_logits, co = run_encdec(model, corrupted, tgt, grad=True)
    m = metric(co_logits, kind, answer, wrong)
    m.backward()
    est = lambda name: ((cl[name] - co[name]).double() * co[name].grad.double())[0]  # noqa: E731
    per_pos = lambda point, n: torch.stack([est(f"{point}.{i}").sum(-1) for i in range(n)])  # noqa: E731
    head_pos = lambda point, n, rows: torch.stack(  # noqa: E731
        [est(f"{point}.{i}").reshape(rows, H, D).sum(-1).T for i in range(n)]
    )
    out = {
        "clean": metric(cl_logits, kind, answer, wrong).double().reshape(1),
        "corrupted": m.detach().double().reshape(1),
        "resid": per_pos("resid_pre", L),
        "attn_out": per_pos("attn_out", L),
        "mlp_out": per_pos("mlp_out", L),
        "head_pos": head_pos("z", L, T),
        "cross_out": per_pos("cross_out", L),
        "cross_head_pos": head_pos("cross_z", L, T),
        "enc_resid": per_pos("enc_resid_pre", Le),
        "enc_attn_out": per_pos("enc_attn_out", Le),
        "enc_mlp_out": per_pos("enc_mlp_out", Le),
        "enc_head_pos": head_pos("enc_z", Le, S),
    }
    return {f"attr.{kind}.{k}": v for k, v in out.items()}


def main():
    torch.manual_seed(0)
    torch.set_num_threads(1)
    out_dir = os.path.join(GOLDEN, "attribution")
    os.makedirs(out_dir, exist_ok=True)
    chosen = set(sys.argv[1:])
    for name, path in ENCDEC.items():
        if chosen and name not in chosen:
            continue
        model, cfg, source = load(path)
        clean, corrupted, tgt, answer, wrong = encdec_inputs()
        tensors = {
            "input.clean": clean.int().numpy(),
            "input.corrupted": corrupted.int().numpy(),
            "input.target": tgt.int().numpy(),
        }
        res = dla_encdec(model, cfg, clean, tgt, answer, wrong)
        for kind in ("logit-diff", "logprob"):
            res.update(attribution_encdec(model, cfg, clean, corrupted, tgt, answer, wrong, kind))
        tensors.update({k: v.detach().numpy().astype(np.float64) for k, v in res.items()})
        meta = {
            "format": "attention-lab attribution golden",
            "version": "1",
            "model": source.replace(os.sep, "/"),
            "answer": str(answer),
            "wrong": str(wrong),
            "torch": torch.__version__,
        }
        write_safetensors(os.path.join(out_dir, f"{name}.safetensors"), tensors, meta)
        print(name, {k: list(v.shape) for k, v in tensors.items()})
    for name, path in MODELS.items():
        if chosen and name not in chosen:
            continue
        model, cfg, source = load(path)
        clean, corrupted, answer, wrong = prompts(cfg)
        tensors = {"input.clean": clean.int().numpy(), "input.corrupted": corrupted.int().numpy()}
        res = dla(model, cfg, clean, answer, wrong)
        for kind in ("logit-diff", "logprob"):
            res.update(attribution(model, cfg, clean, corrupted, answer, wrong, kind))
        tensors.update({k: v.detach().numpy().astype(np.float64) for k, v in res.items()})
        meta = {
            "format": "attention-lab attribution golden",
            "version": "1",
            "model": source.replace(os.sep, "/"),
            "answer": str(answer),
            "wrong": str(wrong),
            "torch": torch.__version__,
        }
        write_safetensors(os.path.join(out_dir, f"{name}.safetensors"), tensors, meta)
        print(name, {k: list(v.shape) for k, v in tensors.items()})


if __name__ == "__main__":
    main()
