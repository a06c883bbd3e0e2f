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

Run: /tmp/hf/bin/python scripts/pytorch/make_patching_golden.py  (or /usr/bin/python3; torch ≥ 1.13)
"""

import json
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from reference import GPT, complete_config, kv_heads  # noqa: E402
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


if __name__ == "__main__":
    os.makedirs(os.path.join(GOLDEN, "patching"), exist_ok=True)
    for c in CASES:
        make(c)
