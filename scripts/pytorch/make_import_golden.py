"""Writes test/golden/import/<name>/: checkpoints as other projects save them, for `import`.

Each folder holds `model.safetensors` (the state_dict, as its own project names and shapes
it), `config.json` (that project's config fields) and `expected.safetensors` (`input.idx`
[2, 12] I32 and `output.logits` [2, 12, V] F32: what the model computes on that input).
The models are defined here, by hand, after the projects' own code, so the files need no
nanoGPT or transformers install:

- `nanogpt-bias`:    nanoGPT's GPT (model.py): nn.Linear [out, in], exact GELU, LayerNorm
                     with bias, lm_head tied to wte (saved once, as safetensors requires).
- `nanogpt-nobias`:  GPTConfig(bias=False): no Linear or LayerNorm biases; an untied lm_head;
                     every name under torch.compile's `_orig_mod.` prefix.
- `hf-gpt2`:         Hugging Face GPT2Model: Conv1D weights [in, out], `gelu_new` (tanh),
                     names without a prefix, the `attn.bias` / `attn.masked_bias` buffers
                     older transformers versions saved; GPT-2 style vocab.json + merges.txt
                     (256 bytes, 13 merges, <|endoftext|>: 270 ids, the model's vocabulary).
- `hf-gpt2-f16`:     GPT2LMHeadModel saved in float16: `transformer.` prefix, lm_head.weight
                     a copy of wte. Its logits are computed from the float16-rounded weights
                     (in float32), so the same 1e-4 tolerance applies.

Every model: vocabulary 270, d_model 32, 4 heads, 2 layers, d_ff 128, context 16, LayerNorm
ε 1e-5, random weights (LayerNorm weights and biases too, so a mix-up shows). The input
includes id 0, which is a real token in these vocabularies.

Run: /usr/bin/python3 scripts/pytorch/make_import_golden.py   (needs torch and numpy only)
"""

import json
import math
import os
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from safetensors_io import write_safetensors  # noqa: E402

OUT_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "test", "golden", "import")
V, C, H, L, P = 270, 32, 4, 2, 16


# ----------------------------------------------------------------------------- nanoGPT


class NanoLayerNorm(nn.Module):
    """nanoGPT's LayerNorm: PyTorch's, but with an optional bias."""

    def __init__(self, ndim, bias):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(ndim))
        self.bias = nn.Parameter(torch.zeros(ndim)) if bias else None

    def forward(self, x):
        return F.layer_norm(x, self.weight.shape, self.weight, self.bias, 1e-5)


class NanoAttention(nn.Module):
    def __init__(self, bias):
        super().__init__()
        self.c_attn = nn.Linear(C, 3 * C, bias=bias)
        self.c_proj = nn.Linear(C, C, bias=bias)

    def forward(self, x):
        B, T, _ = x.shape
        q, k, v = self.c_attn(x).split(C, dim=2)
        q, k, v = (t.view(B, T, H, C // H).transpose(1, 2) for t in (q, k, v))
        att = (q @ k.transpose(-2, -1)) / math.sqrt(C // H)
        att = att.masked_fill(torch.ones(T, T, dtype=torch.bool).tril().logical_not(), float("-inf"))
        y = F.softmax(att, dim=-1) @ v
        return self.c_proj(y.transpose(1, 2).contiguous().view(B, T, C))


class NanoMLP(nn.Module):
    def __init__(self, bias):
        super().__init__()
        self.c_fc = nn.Linear(C, 4 * C, bias=bias)
        self.gelu = nn.GELU()
        self.c_proj = nn.Linear(4 * C, C, bias=bias)

    def forward(self, x):
        return self.c_proj(self.gelu(self.c_fc(x)))


class NanoBlock(nn.Module):
    def __init__(self, bias):
        super().__init__()
        self.ln_1 = NanoLayerNorm(C, bias)
        self.attn = NanoAttention(bias)
        self.ln_2 = NanoLayerNorm(C, bias)
        self.mlp = NanoMLP(bias)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class NanoGPT(nn.Module):
    def __init__(self, bias, tied):
        super().__init__()
        self.transformer = nn.ModuleDict(
            dict(
                wte=nn.Embedding(V, C),
                wpe=nn.Embedding(P, C),
                drop=nn.Dropout(0.0),
                h=nn.ModuleList([NanoBlock(bias) for _ in range(L)]),
                ln_f=NanoLayerNorm(C, bias),
            )
        )
        self.lm_head = nn.Linear(C, V, bias=False)
        if tied:
            self.transformer.wte.weight = self.lm_head.weight

    def forward(self, idx):
        pos = torch.arange(idx.shape[1])
        x = self.transformer.drop(self.transformer.wte(idx) + self.transformer.wpe(pos))
        for block in self.transformer.h:
            x = block(x)
        return self.lm_head(self.transformer.ln_f(x))


# ----------------------------------------------------------------------------- Hugging Face GPT-2


class Conv1D(nn.Module):
    """transformers' Conv1D: a linear layer whose weight is stored [in, out]."""

    def __init__(self, nf, nx):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(nx, nf))
        self.bias = nn.Parameter(torch.zeros(nf))

    def forward(self, x):
        return torch.addmm(self.bias, x.reshape(-1, x.shape[-1]), self.weight).view(*x.shape[:-1], -1)


def gelu_new(x):
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


class HfAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("bias", torch.tril(torch.ones(P, P, dtype=torch.uint8)).view(1, 1, P, P).float())
        self.register_buffer("masked_bias", torch.tensor(-1e4))
        self.c_attn = Conv1D(3 * C, C)
        self.c_proj = Conv1D(C, C)

    def forward(self, x):
        B, T, _ = x.shape
        q, k, v = self.c_attn(x).split(C, dim=2)
        q, k, v = (t.view(B, T, H, C // H).permute(0, 2, 1, 3) for t in (q, k, v))
        w = (q @ k.transpose(-1, -2)) / math.sqrt(C // H)
        w = torch.where(self.bias[:, :, :T, :T].bool(), w, torch.tensor(torch.finfo(w.dtype).min))
        y = F.softmax(w, dim=-1) @ v
        return self.c_proj(y.permute(0, 2, 1, 3).contiguous().view(B, T, C))


class HfMLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.c_fc = Conv1D(4 * C, C)
        self.c_proj = Conv1D(C, 4 * C)

    def forward(self, x):
        return self.c_proj(gelu_new(self.c_fc(x)))


class HfBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln_1 = nn.LayerNorm(C, eps=1e-5)
        self.attn = HfAttention()
        self.ln_2 = nn.LayerNorm(C, eps=1e-5)
        self.mlp = HfMLP()

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT2Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.wte = nn.Embedding(V, C)
        self.wpe = nn.Embedding(P, C)
        self.h = nn.ModuleList([HfBlock() for _ in range(L)])
        self.ln_f = nn.LayerNorm(C, eps=1e-5)

    def forward(self, idx):
        x = self.wte(idx) + self.wpe(torch.arange(idx.shape[1]))
        for block in self.h:
            x = block(x)
        return self.ln_f(x) @ self.wte.weight.T  # GPT2LMHeadModel's lm_head, tied


class GPT2LMHeadModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.transformer = GPT2Model()

    def forward(self, idx):
        return self.transformer(idx)

    def state_dict_with_head(self):
        sd = dict(self.state_dict())
        sd["lm_head.weight"] = self.transformer.wte.weight.detach().clone()
        return sd


# ----------------------------------------------------------------------------- files


def randomize(model, seed):
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.dim() == 1 and name.endswith("weight"):  # LayerNorm gains around 1
                p.copy_(1 + 0.1 * torch.randn(p.shape, generator=g))
            else:
                p.copy_(0.1 * torch.randn(p.shape, generator=g))


def bytes_to_unicode():
    """GPT-2's map from bytes to printable characters (openai/gpt-2 encoder.py)."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, (chr(c) for c in cs)))


MERGES = [
    ("Ġ", "t"),
    ("h", "e"),
    ("Ġt", "he"),
    ("i", "n"),
    ("a", "n"),
    ("e", "r"),
    ("o", "n"),
    ("Ġ", "a"),
    ("r", "e"),
    ("a", "t"),
    ("s", "t"),
    ("e", "n"),
    ("o", "r"),
]


def write_gpt2_tokenizer(folder):
    """vocab.json + merges.txt in GPT-2's format: byte tokens in bytes_to_unicode order, merges, <|endoftext|>."""
    vocab = {ch: i for i, ch in enumerate(bytes_to_unicode().values())}
    for a, b in MERGES:
        vocab[a + b] = len(vocab)
    vocab["<|endoftext|>"] = len(vocab)
    assert len(vocab) == V, len(vocab)
    with open(os.path.join(folder, "vocab.json"), "w", encoding="utf-8") as f:
        json.dump(vocab, f, ensure_ascii=False)
    with open(os.path.join(folder, "merges.txt"), "w", encoding="utf-8") as f:
        f.write("#version: 0.2\n" + "".join(f"{a} {b}\n" for a, b in MERGES))


def save(name, state, config, model, idx, dtype=np.float32):
    folder = os.path.join(OUT_DIR, name)
    os.makedirs(folder, exist_ok=True)
    tensors = {k: v.detach().numpy().astype(dtype) for k, v in state.items()}
    write_safetensors(os.path.join(folder, "model.safetensors"), tensors, {"format": "pt"})
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
        f.write("\n")
    with torch.no_grad():
        logits = model(idx)
    write_safetensors(
        os.path.join(folder, "expected.safetensors"),
        {"input.idx": idx.numpy().astype(np.int32), "output.logits": logits.numpy().astype(np.float32)},
        {"format": "attention-lab-import-golden", "torch": torch.__version__},
    )
    print(f"{name}: {len(tensors)} tensors, logits {tuple(logits.shape)}, |logits| max {logits.abs().max().item():.3f}")
    return folder


def main():
    torch.manual_seed(0)
    torch.set_num_threads(1)
    idx = torch.tensor([[0, 5, 17, 0, 200, 3, 99, 1, 2, 269, 42, 0], [7, 7, 7, 1, 0, 150, 268, 33, 4, 8, 16, 64]])
    nano_cfg = dict(block_size=P, vocab_size=V, n_layer=L, n_head=H, n_embd=C, dropout=0.0)

    m = NanoGPT(bias=True, tied=True)
    randomize(m, 1)
    sd = {k: v for k, v in m.state_dict().items() if k != "lm_head.weight"}  # tied: saved once, as wte
    save("nanogpt-bias", sd, dict(nano_cfg, bias=True), m.eval(), idx)

    m = NanoGPT(bias=False, tied=False)
    randomize(m, 2)
    sd = {f"_orig_mod.{k}": v for k, v in m.state_dict().items()}
    save("nanogpt-nobias", sd, dict(nano_cfg, bias=False), m.eval(), idx)

    hf_cfg = dict(
        model_type="gpt2",
        architectures=["GPT2LMHeadModel"],
        vocab_size=V,
        n_positions=P,
        n_ctx=P,
        n_embd=C,
        n_layer=L,
        n_head=H,
        activation_function="gelu_new",
        layer_norm_epsilon=1e-5,
    )
    m = GPT2Model()
    randomize(m, 3)
    folder = save("hf-gpt2", m.state_dict(), hf_cfg, m.eval(), idx)
    write_gpt2_tokenizer(folder)

    m = GPT2LMHeadModel()
    randomize(m, 4)
    with torch.no_grad():  # the logits of the weights the file holds: rounded to float16
        for p in m.parameters():
            p.copy_(p.half().float())
    save("hf-gpt2-f16", m.state_dict_with_head(), hf_cfg, m.eval(), idx, dtype=np.float16)


if __name__ == "__main__":
    main()
