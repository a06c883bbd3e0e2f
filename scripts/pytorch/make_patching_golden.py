"""Golden files for activation and path patching (src/lab/inference/patch.ts), from PyTorch
forward hooks on reference.py's GPT: test/golden/patching/<name>.safetensors.

Each case takes the weights (`param.*`) and config of an existing golden file — `gpt` (a small
GPT-2-shaped model: LayerNorm, learned positions, GELU, tied) and `modern/preset-llama` (RoPE,
RMSNorm, SwiGLU, 4 heads sharing 2 key/value heads) — so only the results are stored here. For a
clean and a corrupted token sequence of the same length and an answer and a wrong token, it runs
every patched forward one at a time, in float64, with hooks where our engine has its hook points
(engine/models/hooks.ts):
  resid_pre ℓ   a forward pre-hook on block ℓ (its input x)
  z ℓ           a forward pre-hook on block ℓ's attention c_proj (the heads concatenated, before W_o)
  attn_out ℓ    a forward hook on block ℓ's attention (after W_o and its bias)
  mlp_out ℓ     a forward hook on block ℓ's MLP
  q, k, v ℓ     a forward hook on block ℓ's c_attn (its output split into q [H·D], k, v [Hkv·D])
and writes, denoising (the corrupted run with the clean activation patched in), the metric of
each patched run: `resid` [L, T], `attn` [L, T], `mlp` [L, T], `heads` [L, H] (a head's z at
every position), `heads_pos` [L·H, T], and `path` [layers before the last receiver, H]: path
patching of each sender head through the receivers' `input` (q, k or v) as the file comment of
patch.ts defines it (1: the sender's z clean, every other head's z frozen at the corrupted run,
keep the receivers' input; 2: the corrupted run with the receivers' input replaced by what 1
kept; a k or v receiver's key/value head is its group's). Metadata: the source file, the ids,
the metric, the receivers, and the clean and corrupted metrics.

The encoder-decoder cases (`encdec`: encdec-pre's weights, LayerNorm, learned positions, GELU;
`encdec-modern`: RMSNorm, RoPE, SwiGLU, qk-norm, 4 heads sharing 2 key/value heads) patch two
sources of the same length under one target prefix (the metric at the decoder's last position),
with hooks on reference.py's Transformer:
  enc_resid_pre ℓ  a forward pre-hook on encoder layer ℓ; ℓ = L_enc on the encoder's final norm
  enc_z, enc_attn_out, enc_mlp_out ℓ   its self-attention's W_o input, its self-attention's and
                   feed-forward's outputs
  resid_pre, z, attn_out, mlp_out ℓ    the same on decoder layer ℓ (its self-attention)
  cross_z, cross_out ℓ   the decoder layer's cross-attention's W_o input and output
and writes, as patch.ts lays out its maps: `resid_enc` [L_enc, S], `resid_dec` [L, T], `attn_enc`
[L_enc, S], `attn_dec` [2L, T] (rows: layer 1 self, layer 1 cross, …), `mlp_enc`, `mlp_dec`,
`heads` [L_enc + 2L, H] (encoder layers, then each decoder layer's self and cross), `heads_pos_enc`
[L_enc·H, S], `heads_pos_dec` [2L·H, T], and `path` [attentions before the last receiver's, H]:
path patching over every attention in the forward's order (encoder layers, then each decoder
layer's self and cross), every head's z (enc_z, z, cross_z) frozen at the corrupted run but the
sender's, through the receivers' input (hooks on W_q, W_k, W_v: enc_q.., q.., cross_q..; a cross-
attention's k and v read the encoder output). Inputs `input.clean`, `input.corrupted` (sources),
`input.target`.

Run: /tmp/hf/bin/python scripts/pytorch/make_patching_golden.py [NAME …]  (or /usr/bin/python3; torch ≥ 1.13);
names choose cases (default: all).
"""

import json
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from reference import GPT, Transformer, complete_config, head_size, kv_heads  # noqa: E402
from safetensors_io import read_safetensors, write_safetensors  # noqa: E402

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
GOLDEN = os.path.join(ROOT, "test", "golden")

CASES = [
    dict(
        name="gpt",
        source="gpt.safetensors",
        clean=[1, 5, 9, 4, 12, 7, 5, 9, 4, 12],
        corrupted=[1, 5, 9, 4, 12, 7, 8, 14, 4, 6],
        answer=7,
        wrong=15,
        metric="logit-diff",
        receivers=[[1, 0], [1, 1]],
        input="q",
    ),
    dict(
        name="llama",
        source="modern/preset-llama.safetensors",
        clean=[1, 6, 11, 3, 10, 16, 6, 11, 3],
        corrupted=[1, 6, 11, 3, 10, 16, 13, 4, 8],
        answer=10,
        wrong=5,
        metric="logprob",
        receivers=[[1, 1], [1, 2]],
        input="k",
    ),
]

ENCDEC_CASES = [
    dict(
        name="encdec",
        source="encdec-pre.safetensors",
        clean=[6, 4, 10, 10, 8, 9, 2],
        corrupted=[6, 7, 10, 5, 8, 9, 2],
        target=[1, 10, 6, 4],
        answer=5,
        wrong=6,
        metric="logit-diff",
        receivers=[["self", 1, 0], ["self", 1, 1]],
        input="v",
    ),
    dict(
        name="encdec-modern",
        source="modern/encdec-modern.safetensors",
        clean=[5, 4, 7, 9, 10, 2],
        corrupted=[5, 8, 7, 6, 10, 2],
        target=[1, 9, 5],
        answer=11,
        wrong=4,
        metric="logprob",
        receivers=[["cross", 1, 1], ["cross", 1, 2]],
        input="k",
    ),
]


def metric_of(logits, case):
    last = logits[0, -1]
    if case["metric"] == "logit-diff":
        return float(last[case["answer"]] - last[case["wrong"]])
    return float(torch.log_softmax(last, dim=-1)[case["answer"]])


class Hooks:
    """Forward hooks at every hook point of `model`; `patch(point, layer, fn)` replaces an
    activation a by fn(a) ([1, T, width]); `keep` collects every activation of the run."""

    def __init__(self, model):
        self.model, self.patches, self.keep, self.handles = model, {}, {}, []
        cfg = model.cfg
        C, H = cfg["dModel"], cfg["nHeads"]
        self.d_kv = C // H * kv_heads(cfg)
        for i, blk in enumerate(model.transformer.h):
            self.handles.append(blk.register_forward_pre_hook(self.pre("resid_pre", i)))
            self.handles.append(blk.attn.c_proj.register_forward_pre_hook(self.pre("z", i)))
            self.handles.append(blk.attn.register_forward_hook(self.post("attn_out", i)))
            self.handles.append(blk.mlp.register_forward_hook(self.post("mlp_out", i)))
            self.handles.append(blk.attn.c_attn.register_forward_hook(self.qkv(i, C)))
        L = len(model.transformer.h)
        final = model.transformer.ln_f if "ln_f" in model.transformer else None
        if final is not None:
            self.handles.append(final.register_forward_pre_hook(self.pre("resid_pre", L)))

    def apply(self, point, layer, a):
        fn = self.patches.get((point, layer))
        if fn is not None:
            a = fn(a.clone())
        self.keep[(point, layer)] = a.detach().clone()
        return a

    def pre(self, point, layer):
        return lambda mod, args: (self.apply(point, layer, args[0]),) + tuple(args[1:])

    def post(self, point, layer):
        return lambda mod, args, out: self.apply(point, layer, out)

    def qkv(self, layer, C):
        def hook(mod, args, out):
            q, k, v = out.split([C, self.d_kv, self.d_kv], dim=2)
            q, k, v = (self.apply(p, layer, a) for p, a in (("q", q), ("k", k), ("v", v)))
            return torch.cat([q, k, v], dim=2)

        return hook

    def run(self, idx, patches=None):
        self.patches, self.keep = patches or {}, {}
        with torch.no_grad():
            logits = self.model(idx)
        return logits, dict(self.keep)


def slice_patch(src, head=None, width=None, pos=None):
    """fn(a): a with src's values at head `head` (channels head·width..) and position `pos` (None: all)."""

    def fn(a):
        t = slice(None) if pos is None else slice(pos, pos + 1)
        c = slice(None) if head is None else slice(head * width, (head + 1) * width)
        a[:, t, c] = src[:, t, c]
        return a

    return fn


def make(case):
    tensors, meta = read_safetensors(os.path.join(GOLDEN, case["source"]))
    cfg = complete_config(json.loads(meta["config"]))
    torch.manual_seed(0)
    model = GPT(cfg)
    state = {k[len("param.") :]: torch.from_numpy(np.array(v)) for k, v in tensors.items() if k.startswith("param.")}
    missing = model.load_state_dict(state, strict=False)
    assert not missing.unexpected_keys, missing
    assert all(k == "lm_head.weight" for k in missing.missing_keys), missing  # tied
    model = model.double().eval()
    hooks = Hooks(model)
    clean_idx = torch.tensor([case["clean"]])
    corrupt_idx = torch.tensor([case["corrupted"]])
    L, H, T = cfg["nDecoderLayers"], cfg["nHeads"], clean_idx.shape[1]
    D = cfg["dModel"] // H
    group = H // kv_heads(cfg)
    logits, clean = hooks.run(clean_idx)
    m_clean = metric_of(logits, case)
    logits, corrupt = hooks.run(corrupt_idx)
    m_corrupt = metric_of(logits, case)

    def patched(patches):
        return metric_of(hooks.run(corrupt_idx, patches)[0], case)

    out = {
        "input.clean": np.array(case["clean"], dtype=np.int32),
        "input.corrupted": np.array(case["corrupted"], dtype=np.int32),
    }
    for name, point in (("resid", "resid_pre"), ("attn", "attn_out"), ("mlp", "mlp_out")):
        out[name] = np.array(
            [[patched({(point, i): slice_patch(clean[(point, i)], pos=p)}) for p in range(T)] for i in range(L)]
        )
    out["heads"] = np.array(
        [[patched({("z", i): slice_patch(clean[("z", i)], h, D)}) for h in range(H)] for i in range(L)]
    )
    out["heads_pos"] = np.array(
        [
            [patched({("z", i): slice_patch(clean[("z", i)], h, D, p)}) for p in range(T)]
            for i in range(L)
            for h in range(H)
        ]
    )
    receivers, inp = case["receivers"], case["input"]
    senders = max(r[0] for r in receivers)
    path = []
    for sl in range(senders):
        row = []
        for sh in range(H):
            # 1: sender clean, every other head frozen at the corrupted run; keep the receivers' input
            def freeze(layer, sl=sl, sh=sh):
                def frozen(a):
                    a = corrupt[("z", layer)].clone()
                    if layer == sl:
                        a[:, :, sh * D : (sh + 1) * D] = clean[("z", layer)][:, :, sh * D : (sh + 1) * D]
                    return a

                return frozen

            _, kept = hooks.run(corrupt_idx, {("z", i): freeze(i) for i in range(L)})
            # 2: the receivers' input replaced by what 1 kept
            patches = {}
            for rl, rh in receivers:
                head = rh if inp == "q" else rh // group
                prev = patches.get((inp, rl))
                fn = slice_patch(kept[(inp, rl)], head, D)
                patches[(inp, rl)] = fn if prev is None else (lambda a, f=fn, g=prev: f(g(a)))
            row.append(patched(patches))
        path.append(row)
    out["path"] = np.array(path)
    for k in ("resid", "attn", "mlp", "heads", "heads_pos", "path"):
        out[k] = out[k].astype(np.float64)
    meta_out = {
        "source": case["source"],
        "answer": str(case["answer"]),
        "wrong": str(case["wrong"]),
        "metric": case["metric"],
        "receivers": json.dumps(receivers),
        "input": inp,
        "clean": repr(m_clean),
        "corrupted": repr(m_corrupt),
        "torch": torch.__version__,
    }
    path_out = os.path.join(GOLDEN, "patching", case["name"] + ".safetensors")
    write_safetensors(path_out, out, meta_out)
    print(case["name"], "clean", m_clean, "corrupted", m_corrupt, "heads", out["heads"].round(4).tolist())


class EncDecHooks:
    """Forward hooks at an encoder-decoder's hook points (see the file comment); as Hooks."""

    def __init__(self, model):
        self.model, self.patches, self.keep = model, {}, {}
        D = head_size(model.cfg)
        self.d_q, self.d_kv = model.cfg["nHeads"] * D, kv_heads(model.cfg) * D
        for i, lay in enumerate(model.encoder_layers):
            self.qkv(lay.self_attn, "enc_", i)
        for i, lay in enumerate(model.decoder_layers):
            self.qkv(lay.self_attn, "", i)
            self.qkv(lay.cross_attn, "cross_", i)
        for i, lay in enumerate(model.encoder_layers):
            lay.register_forward_pre_hook(self.pre("enc_resid_pre", i))
            lay.self_attn.W_o.register_forward_pre_hook(self.pre("enc_z", i))
            lay.self_attn.register_forward_hook(self.post("enc_attn_out", i))
            lay.feed_forward.register_forward_hook(self.post("enc_mlp_out", i))
        model.encoder_norm.register_forward_pre_hook(self.pre("enc_resid_pre", len(model.encoder_layers)))
        for i, lay in enumerate(model.decoder_layers):
            lay.register_forward_pre_hook(self.pre("resid_pre", i))
            lay.self_attn.W_o.register_forward_pre_hook(self.pre("z", i))
            lay.self_attn.register_forward_hook(self.post("attn_out", i))
            lay.cross_attn.W_o.register_forward_pre_hook(self.pre("cross_z", i))
            lay.cross_attn.register_forward_hook(self.post("cross_out", i))
            lay.feed_forward.register_forward_hook(self.post("mlp_out", i))
        model.decoder_norm.register_forward_pre_hook(self.pre("resid_pre", len(model.decoder_layers)))

    apply, pre, post = Hooks.apply, Hooks.pre, Hooks.post

    def qkv(self, attn, prefix, layer):
        for name, lin in (("q", attn.W_q), ("k", attn.W_k), ("v", attn.W_v)):
            lin.register_forward_hook(self.post(prefix + name, layer))

    def run(self, src, tgt, patches=None):
        self.patches, self.keep = patches or {}, {}
        with torch.no_grad():
            logits = self.model(src, tgt)
        return logits, dict(self.keep)


def make_encdec(case):
    tensors, meta = read_safetensors(os.path.join(GOLDEN, case["source"]))
    cfg = complete_config(json.loads(meta["config"]))
    assert cfg["norm"] == "pre"
    torch.manual_seed(0)
    model = Transformer(cfg)
    state = {k[len("param.") :]: torch.from_numpy(np.array(v)) for k, v in tensors.items() if k.startswith("param.")}
    missing = model.load_state_dict(state, strict=False)
    assert not missing.unexpected_keys, missing
    assert all(k == "fc.weight" for k in missing.missing_keys), missing  # tied
    model = model.double().eval()
    hooks = EncDecHooks(model)
    src_clean = torch.tensor([case["clean"]])
    src_corrupt = torch.tensor([case["corrupted"]])
    tgt = torch.tensor([case["target"]])
    Le, L, H = cfg["nEncoderLayers"], cfg["nDecoderLayers"], cfg["nHeads"]
    S, T, D = src_clean.shape[1], tgt.shape[1], head_size(cfg)
    logits, clean = hooks.run(src_clean, tgt)
    m_clean = metric_of(logits, case)
    logits, corrupt = hooks.run(src_corrupt, tgt)
    m_corrupt = metric_of(logits, case)

    def patched(point, layer, head=None, pos=None):
        fn = slice_patch(clean[(point, layer)], head, D, pos)
        return metric_of(hooks.run(src_corrupt, tgt, {(point, layer): fn})[0], case)

    def per_pos(rows, n):
        return np.array([[patched(point, layer, pos=p) for p in range(n)] for point, layer in rows])

    enc = lambda point: [(point, i) for i in range(Le)]  # noqa: E731
    dec = lambda *points: [(pt, i) for i in range(L) for pt in points]  # noqa: E731
    out = {
        "input.clean": np.array(case["clean"], dtype=np.int32),
        "input.corrupted": np.array(case["corrupted"], dtype=np.int32),
        "input.target": np.array(case["target"], dtype=np.int32),
        "resid_enc": per_pos(enc("enc_resid_pre"), S),
        "resid_dec": per_pos(dec("resid_pre"), T),
        "attn_enc": per_pos(enc("enc_attn_out"), S),
        "attn_dec": per_pos(dec("attn_out", "cross_out"), T),
        "mlp_enc": per_pos(enc("enc_mlp_out"), S),
        "mlp_dec": per_pos(dec("mlp_out"), T),
    }
    head_rows = enc("enc_z") + dec("z", "cross_z")
    out["heads"] = np.array([[patched(point, layer, h) for h in range(H)] for point, layer in head_rows])
    for name, rows, n in (("heads_pos_enc", enc("enc_z"), S), ("heads_pos_dec", dec("z", "cross_z"), T)):
        out[name] = np.array(
            [[patched(point, layer, h, p) for p in range(n)] for point, layer in rows for h in range(H)]
        )
    # path patching over every attention in the forward's order
    attentions = [("encoder", i) for i in range(Le)] + [(a, i) for i in range(L) for a in ("self", "cross")]
    order = lambda a, i: i if a == "encoder" else Le + 2 * i + (1 if a == "cross" else 0)  # noqa: E731
    z_of = {"encoder": "enc_z", "self": "z", "cross": "cross_z"}
    in_of = lambda a, X: ("enc_" if a == "encoder" else "cross_" if a == "cross" else "") + X  # noqa: E731
    receivers, inp = case["receivers"], case["input"]
    last = max(order(a, i) for a, i, _ in receivers)
    group = H // kv_heads(cfg)
    path = []
    for sa, sl in [x for x in attentions if order(*x) < last]:
        row = []
        for sh in range(H):
            patches = {}
            for a, i in attentions:

                def frozen(t, a=a, i=i, sa=sa, sl=sl, sh=sh):
                    t = corrupt[(z_of[a], i)].clone()
                    if (a, i) == (sa, sl):
                        t[:, :, sh * D : (sh + 1) * D] = clean[(z_of[a], i)][:, :, sh * D : (sh + 1) * D]
                    return t

                patches[(z_of[a], i)] = frozen
            _, kept = hooks.run(src_corrupt, tgt, patches)
            patches = {}
            for a, i, h in receivers:
                key = (in_of(a, inp), i)
                head = h if inp == "q" else h // group
                prev = patches.get(key)
                fn = slice_patch(kept[key], head, D)
                patches[key] = fn if prev is None else (lambda t, f=fn, g=prev: f(g(t)))
            row.append(metric_of(hooks.run(src_corrupt, tgt, patches)[0], case))
        path.append(row)
    out["path"] = np.array(path)
    for k in list(out):
        if not k.startswith("input."):
            out[k] = out[k].astype(np.float64)
    meta_out = {
        "source": case["source"],
        "answer": str(case["answer"]),
        "wrong": str(case["wrong"]),
        "metric": case["metric"],
        "receivers": json.dumps(receivers),
        "input": inp,
        "clean": repr(m_clean),
        "corrupted": repr(m_corrupt),
        "torch": torch.__version__,
    }
    write_safetensors(os.path.join(GOLDEN, "patching", case["name"] + ".safetensors"), out, meta_out)
    print(case["name"], "clean", m_clean, "corrupted", m_corrupt, "heads", out["heads"].round(4).tolist())


if __name__ == "__main__":
    os.makedirs(os.path.join(GOLDEN, "patching"), exist_ok=True)
    chosen = set(sys.argv[1:])
    for c in CASES:
        if not chosen or c["name"] in chosen:
            make(c)
    for c in ENCDEC_CASES:
        if not chosen or c["name"] in chosen:
            make_encdec(c)
