"""The PyTorch engine's models: what `attention-lab train --engine pytorch` trains.

`Transformer` is the encoder-decoder of "Attention Is All You Need" (Vaswani et al., 2017),
with the module names of the seed notebook; `GPT` is the decoder-only model with nanoGPT's
module names (Karpathy, github.com/karpathy/nanoGPT, `model.py`). Both are built from one
config dict whose keys are the fields of `ModelConfig` (src/engine/config.ts), and the
TypeScript engine implements exactly this math, so a checkpoint moves between the two.

Shape legend: B batch, S source length, T target length, C = dModel channels, H heads,
D = C / H channels per head, V vocabulary.

Special ids: PAD 0, BOS 1, EOS 2, UNK 3. Masks: True = may attend.

This is the product's copy. The golden files the TypeScript tests compare against come from a
separate file, scripts/pytorch/reference.py (the oracle), so an edit here never changes what
the tests expect, and the PyTorch engine's tests (test/unit/lab/pytorch/) compare this model's
training against our engine's. Both keep the same state-dict names (files.py's ParamMap).

Left out: decoding (greedy / beam / sampling), key/value caches, weight init (the golden
script sets its own), training loops and data. Written for torch 1.13, float32.
"""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

PAD, BOS, EOS, UNK = 0, 1, 2, 3


# ----------------------------------------------------------------------------- building blocks


class LayerNorm(nn.Module):
    """LayerNorm over the last dim with biased variance; the bias is optional
    (torch 1.13's nn.LayerNorm cannot drop it). Ba et al., 2016."""

    def __init__(self, d, bias, eps):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(d))
        self.bias = nn.Parameter(torch.zeros(d)) if bias else None

    def forward(self, x):
        return F.layer_norm(x, (x.shape[-1],), self.weight, self.bias, self.eps)


def activation_fn(name):
    """'relu' (the paper), 'gelu' (exact erf form, as nanoGPT) or 'geluTanh' (the tanh
    approximation GPT-2 was trained with: Hugging Face's gelu_new)."""
    return {"relu": F.relu, "gelu": F.gelu, "geluTanh": lambda x: F.gelu(x, approximate="tanh")}[name]


def sinusoidal_table(max_len, d):
    """The paper's §3.5 table: pe[pos, 2i] = sin(pos / 10000^(2i/d)), pe[pos, 2i+1] = cos(same).
    Computed in float64 and rounded once to float32."""
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]  # (maxLen, 1)
    two_i = torch.arange(0, d, 2, dtype=torch.float64)  # (d/2,)  the even channel index 2i
    angle = pos / torch.pow(10000.0, two_i / d)  # (maxLen, d/2)
    pe = torch.zeros(max_len, d, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(angle)
    pe[:, 1::2] = torch.cos(angle)
    return pe.float()


class PositionalEncoding(nn.Module):
    """Fixed sinusoidal positions as a buffer `pe` [maxLen, C] (not a parameter)."""

    def __init__(self, max_len, d):
        super().__init__()
        self.register_buffer("pe", sinusoidal_table(max_len, d))

    def forward(self, x):  # x (B, T, C)
        return x + self.pe[: x.shape[1]]


def attend(q, k, v, mask, attn_dropout):
    """Scaled dot-product attention (paper §3.2.1) on split heads.
    q (B, H, T, D), k and v (B, H, S, D), mask broadcastable to (B, H, T, S), True = may attend.
    Masked scores become -inf before the softmax; a fully masked row gives zeros, not NaN."""
    att = (q @ k.transpose(-2, -1)) / math.sqrt(q.shape[-1])  # (B, H, T, S)
    if mask is not None:
        att = att.masked_fill(~mask, float("-inf"))
    att = F.softmax(att, dim=-1)
    if mask is not None:
        att = att.masked_fill(~mask, 0.0)  # only changes fully masked rows (NaN -> 0)
    att = attn_dropout(att)
    return att @ v  # (B, H, T, D)


def split_heads(x, n_heads):
    """(B, T, C) -> (B, H, T, D); head h takes channels h*D .. (h+1)*D."""
    B, T, C = x.shape
    return x.view(B, T, n_heads, C // n_heads).transpose(1, 2)


def merge_heads(y):
    """(B, H, T, D) -> (B, T, C), the inverse of split_heads."""
    B, H, T, D = y.shape
    return y.transpose(1, 2).contiguous().view(B, T, H * D)


# ----------------------------------------------------------------------------- encoder-decoder


class MultiHeadAttention(nn.Module):
    """Paper §3.2.2: per projection one full Linear(C, C) (the per-head W^Q_i etc. stacked)."""

    def __init__(self, cfg):
        super().__init__()
        d, bias = cfg["dModel"], cfg["bias"]
        self.n_heads = cfg["nHeads"]
        self.W_q = nn.Linear(d, d, bias=bias)
        self.W_k = nn.Linear(d, d, bias=bias)
        self.W_v = nn.Linear(d, d, bias=bias)
        self.W_o = nn.Linear(d, d, bias=bias)
        self.attn_dropout = nn.Dropout(cfg["dropout"])

    def forward(self, x_q, x_kv, mask):  # x_q (B, T, C), x_kv (B, S, C)
        q = split_heads(self.W_q(x_q), self.n_heads)
        k = split_heads(self.W_k(x_kv), self.n_heads)
        v = split_heads(self.W_v(x_kv), self.n_heads)
        return self.W_o(merge_heads(attend(q, k, v, mask, self.attn_dropout)))


class PositionWiseFeedForward(nn.Module):
    """Paper §3.3: fc2(act(fc1(x))), C -> dFF -> C."""

    def __init__(self, cfg):
        super().__init__()
        self.fc1 = nn.Linear(cfg["dModel"], cfg["dFF"], bias=cfg["bias"])
        self.fc2 = nn.Linear(cfg["dFF"], cfg["dModel"], bias=cfg["bias"])
        self.act = activation_fn(cfg["activation"])

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


def sublayer(x, norm, fn, dropout, pre):
    """'post' (paper §3.1, §5.4): LN(x + drop(fn(x))); 'pre' (GPT-2): x + drop(fn(LN(x)))."""
    return x + dropout(fn(norm(x))) if pre else norm(x + dropout(fn(x)))


def make_norm(cfg):
    return LayerNorm(cfg["dModel"], cfg["bias"], cfg["layerNormEps"])


class EncoderLayer(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.pre = cfg["norm"] == "pre"
        self.self_attn = MultiHeadAttention(cfg)
        self.feed_forward = PositionWiseFeedForward(cfg)
        self.norm1 = make_norm(cfg)
        self.norm2 = make_norm(cfg)
        self.dropout = nn.Dropout(cfg["dropout"])

    def forward(self, x, src_mask):
        x = sublayer(x, self.norm1, lambda h: self.self_attn(h, h, src_mask), self.dropout, self.pre)
        return sublayer(x, self.norm2, self.feed_forward, self.dropout, self.pre)


class DecoderLayer(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.pre = cfg["norm"] == "pre"
        self.self_attn = MultiHeadAttention(cfg)
        self.cross_attn = MultiHeadAttention(cfg)
        self.feed_forward = PositionWiseFeedForward(cfg)
        self.norm1 = make_norm(cfg)
        self.norm2 = make_norm(cfg)
        self.norm3 = make_norm(cfg)
        self.dropout = nn.Dropout(cfg["dropout"])

    def forward(self, x, memory, src_mask, tgt_mask):
        x = sublayer(x, self.norm1, lambda h: self.self_attn(h, h, tgt_mask), self.dropout, self.pre)
        # Queries from the decoder, keys and values from the encoder output.
        x = sublayer(x, self.norm2, lambda h: self.cross_attn(h, memory, src_mask), self.dropout, self.pre)
        return sublayer(x, self.norm3, self.feed_forward, self.dropout, self.pre)


def padding_mask(tokens):
    """(B, S) -> (B, 1, 1, S): True where the key is a real token."""
    return (tokens != PAD)[:, None, None, :]


def causal_mask(t, device=None):
    """(1, 1, T, T): True on and below the diagonal (query t sees keys 0..t)."""
    return torch.tril(torch.ones(t, t, dtype=torch.bool, device=device))[None, None]


class Transformer(nn.Module):
    """Encoder-decoder (paper §3). forward(src (B, S), tgt_in (B, T)) -> logits (B, T, V)."""

    def __init__(self, cfg):
        super().__init__()
        assert cfg["kind"] == "encoder-decoder"
        self.cfg = cfg
        d = cfg["dModel"]
        self.encoder_embedding = nn.Embedding(cfg["srcVocabSize"], d, padding_idx=PAD)
        self.decoder_embedding = nn.Embedding(cfg["vocabSize"], d, padding_idx=PAD)
        if cfg["positional"] == "sinusoidal":
            self.positional_encoding = PositionalEncoding(cfg["maxLen"], d)  # shared by both stacks
        else:
            self.encoder_positions = nn.Embedding(cfg["maxLen"], d)
            self.decoder_positions = nn.Embedding(cfg["maxLen"], d)
        self.encoder_layers = nn.ModuleList([EncoderLayer(cfg) for _ in range(cfg["nEncoderLayers"])])
        self.decoder_layers = nn.ModuleList([DecoderLayer(cfg) for _ in range(cfg["nDecoderLayers"])])
        if cfg["norm"] == "pre":
            self.encoder_norm = make_norm(cfg)
            self.decoder_norm = make_norm(cfg)
        self.fc = nn.Linear(d, cfg["vocabSize"], bias=cfg["bias"])
        if cfg["tieEmbeddings"]:
            # One tensor; named_parameters() lists it once, as decoder_embedding.weight.
            self.fc.weight = self.decoder_embedding.weight
        self.dropout = nn.Dropout(cfg["dropout"])

    def embed(self, tokens, table, positions):
        x = table(tokens)  # (B, T, C)
        if self.cfg["embedScale"]:
            x = x * math.sqrt(self.cfg["dModel"])  # paper §3.4
        if positions is None:
            x = self.positional_encoding(x)
        else:
            x = x + positions(torch.arange(tokens.shape[1], device=tokens.device))
        return self.dropout(x)

    def encode(self, src, src_mask):
        learned = self.cfg["positional"] == "learned"
        x = self.embed(src, self.encoder_embedding, self.encoder_positions if learned else None)
        for layer in self.encoder_layers:
            x = layer(x, src_mask)
        return self.encoder_norm(x) if self.cfg["norm"] == "pre" else x  # memory (B, S, C)

    def decode(self, tgt_in, memory, src_mask, tgt_mask):
        learned = self.cfg["positional"] == "learned"
        x = self.embed(tgt_in, self.decoder_embedding, self.decoder_positions if learned else None)
        for layer in self.decoder_layers:
            x = layer(x, memory, src_mask, tgt_mask)
        if self.cfg["norm"] == "pre":
            x = self.decoder_norm(x)
        return self.fc(x)  # (B, T, V)

    def forward(self, src, tgt_in, src_mask=None, tgt_mask=None):
        S, T = src.shape[1], tgt_in.shape[1]
        assert max(S, T) <= self.cfg["maxLen"], f"length {max(S, T)} exceeds maxLen {self.cfg['maxLen']}"
        if src_mask is None:
            src_mask = padding_mask(src)  # (B, 1, 1, S): encoder self-attn and cross-attn
        if tgt_mask is None:
            tgt_mask = padding_mask(tgt_in) & causal_mask(T, tgt_in.device)  # (B, 1, T, T)
        return self.decode(tgt_in, self.encode(src, src_mask), src_mask, tgt_mask)


# ----------------------------------------------------------------------------- decoder-only


class CausalSelfAttention(nn.Module):
    """nanoGPT's attention: one Linear(C, 3C) whose rows are W_q, W_k, W_v stacked."""

    def __init__(self, cfg):
        super().__init__()
        d = cfg["dModel"]
        self.n_heads = cfg["nHeads"]
        self.c_attn = nn.Linear(d, 3 * d, bias=cfg["bias"])
        self.c_proj = nn.Linear(d, d, bias=cfg["bias"])
        self.attn_dropout = nn.Dropout(cfg["dropout"])

    def forward(self, x):  # x (B, T, C)
        q, k, v = self.c_attn(x).split(x.shape[-1], dim=2)
        q, k, v = (split_heads(t, self.n_heads) for t in (q, k, v))  # (B, H, T, D)
        y = attend(q, k, v, causal_mask(x.shape[1], x.device), self.attn_dropout)
        return self.c_proj(merge_heads(y))


class MLP(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.c_fc = nn.Linear(cfg["dModel"], cfg["dFF"], bias=cfg["bias"])
        self.c_proj = nn.Linear(cfg["dFF"], cfg["dModel"], bias=cfg["bias"])
        self.act = activation_fn(cfg["activation"])

    def forward(self, x):
        return self.c_proj(self.act(self.c_fc(x)))


class Block(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.pre = cfg["norm"] == "pre"
        self.ln_1 = make_norm(cfg)
        self.attn = CausalSelfAttention(cfg)
        self.ln_2 = make_norm(cfg)
        self.mlp = MLP(cfg)
        self.dropout = nn.Dropout(cfg["dropout"])

    def forward(self, x):
        x = sublayer(x, self.ln_1, self.attn, self.dropout, self.pre)
        return sublayer(x, self.ln_2, self.mlp, self.dropout, self.pre)


class GPT(nn.Module):
    """Decoder-only language model. forward(idx (B, T)) -> logits (B, T, V). Causal mask only."""

    def __init__(self, cfg):
        super().__init__()
        assert cfg["kind"] == "decoder-only"
        self.cfg = cfg
        d = cfg["dModel"]
        parts = dict(wte=nn.Embedding(cfg["vocabSize"], d))
        parts["wpe"] = (
            nn.Embedding(cfg["maxLen"], d) if cfg["positional"] == "learned" else PositionalEncoding(cfg["maxLen"], d)
        )
        parts["drop"] = nn.Dropout(cfg["dropout"])
        parts["h"] = nn.ModuleList([Block(cfg) for _ in range(cfg["nDecoderLayers"])])
        if cfg["norm"] == "pre":
            parts["ln_f"] = make_norm(cfg)
        self.transformer = nn.ModuleDict(parts)
        self.lm_head = nn.Linear(d, cfg["vocabSize"], bias=False)
        if cfg["tieEmbeddings"]:
            self.lm_head.weight = self.transformer.wte.weight  # listed once, as transformer.wte.weight

    def forward(self, idx):
        T = idx.shape[1]
        assert T <= self.cfg["maxLen"], f"length {T} exceeds maxLen {self.cfg['maxLen']}"
        x = self.transformer.wte(idx)  # (B, T, C)
        if self.cfg["embedScale"]:
            x = x * math.sqrt(self.cfg["dModel"])
        if self.cfg["positional"] == "learned":
            x = x + self.transformer.wpe(torch.arange(T, device=idx.device))
        else:
            x = self.transformer.wpe(x)
        x = self.transformer.drop(x)
        for block in self.transformer.h:
            x = block(x)
        if self.cfg["norm"] == "pre":
            x = self.transformer.ln_f(x)
        return self.lm_head(x)  # (B, T, V)


# ----------------------------------------------------------------------------- shared


def build_model(cfg):
    """The model for `cfg['kind']`."""
    return Transformer(cfg) if cfg["kind"] == "encoder-decoder" else GPT(cfg)


def loss_fn(logits, targets, label_smoothing):
    """Mean cross-entropy over non-PAD targets. With label smoothing ε, PyTorch's rule:
    per target, (1-ε)·(-log p_y) + (ε/V)·Σ_c (-log p_c) over all V classes (PAD included)."""
    V = logits.shape[-1]
    return F.cross_entropy(
        logits.reshape(-1, V), targets.reshape(-1).long(), ignore_index=PAD, label_smoothing=label_smoothing
    )
