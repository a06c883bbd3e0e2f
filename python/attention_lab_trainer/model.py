"""The PyTorch engine's models: what `attention-lab train --engine pytorch` trains.

`Transformer` is the encoder-decoder of "Attention Is All You Need" (Vaswani et al., 2017),
with the module names of the seed notebook; `GPT` is the decoder-only model with nanoGPT's
module names (Karpathy, github.com/karpathy/nanoGPT, `model.py`). Both are built from one
config dict whose keys are the fields of `ModelConfig` (src/engine/config.ts), and the
TypeScript engine implements exactly this math, so a checkpoint moves between the two.

The options of today's transformers are built as docs/ARCHITECTURE.md and issue 29's decisions
state them: RoPE (rotate-half, `ropeTheta`, `rotaryFraction`), ALiBi or no positions; RMSNorm
with or without a scale (`normType`, `normScale`) for every norm, QK-norm; ReLU², SiLU, SwiGLU,
GeGLU; grouped-query attention (`nKvHeads`); biases per part (`qkvBias`, `attnOutBias`,
`mlpBias`); soft-capped attention scores and logits; a sliding window; the parallel residual;
a norm after the embeddings. A config without those fields (an older run.json) reads with each
off, as `completeConfig` does.

Shape legend: B batch, S source length, T target length, C = dModel channels, H heads,
Hkv key/value heads, D = C / H channels per head, R rotated channels, F = dFF, V vocabulary.

Special ids: PAD 0, BOS 1, EOS 2, UNK 3. Masks: True = may attend.

This is the product's copy. The golden files the TypeScript tests compare against come from a
separate file, scripts/pytorch/reference.py (the oracle), so an edit here never changes what
the tests expect, and the PyTorch engine's tests (test/unit/lab/pytorch/) compare this model's
training and logits against our engine's. Both keep the same state-dict names (files.py's
ParamMap).

Left out: decoding (greedy / beam / sampling), key/value caches, weight init (the lab writes
the step-0 weights), training loops and data. Written for torch 1.13 (no fused attention
kernel there: attention is written out), float32.
"""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

PAD, BOS, EOS, UNK = 0, 1, 2, 3

# The fields of today's transformers with the values that keep a model what it was
# (src/engine/config.ts TODAY_OFF; the per-part biases default to `bias`, nKvHeads 0 = nHeads).
TODAY_OFF = dict(
    ropeTheta=10000,
    rotaryFraction=1,
    normType="layernorm",
    normScale=True,
    qkNorm=False,
    attnSoftCap=0,
    logitSoftCap=0,
    slidingWindow=0,
    parallelResidual=False,
    embedNorm=False,
    nKvHeads=0,
    headDim=0,
    attnScale=0,
    postNorms=False,
    globalEvery=0,
    ropeLocalTheta=0,
    ropeScaling="none",
    ropeScalingFactor=1,
    ropeLowFreqFactor=1,
    ropeHighFreqFactor=4,
    ropeOriginalMaxLen=8192,
)


def complete_config(cfg):
    """A config of any version with every field: what config.ts `completeConfig` returns."""
    out = {**TODAY_OFF, **cfg}
    for k in ("qkvBias", "attnOutBias", "mlpBias"):
        if k not in out:
            out[k] = cfg["bias"]
    return out


def kv_heads(cfg):
    """nKvHeads, or nHeads when it is 0."""
    return cfg["nKvHeads"] if cfg["nKvHeads"] > 0 else cfg["nHeads"]


def layer_window(cfg, i):
    """The sliding window of decoder layer i (0-based): slidingWindow, except every globalEvery-th
    layer (Gemma 3's global layers), which sees the whole context (0) — config.ts `layerWindow`."""
    if cfg["slidingWindow"] == 0:
        return 0
    return 0 if cfg["globalEvery"] > 0 and (i + 1) % cfg["globalEvery"] == 0 else cfg["slidingWindow"]


def layer_rope_local(cfg, i):
    """Whether decoder layer i reads the local RoPE tables: a windowed layer of a model with globalEvery whose
    local layers differ from the global ones (ropeLocalTheta, or ropeScaling that only the global layers have)."""
    differ = cfg["ropeLocalTheta"] > 0 or cfg["ropeScaling"] != "none"
    return cfg["globalEvery"] > 0 and differ and layer_window(cfg, i) > 0


def head_size(cfg):
    """Channels of each head D: headDim, or dModel / nHeads when it is 0 (config.ts `headSize`)."""
    return cfg["headDim"] if cfg["headDim"] > 0 else cfg["dModel"] // cfg["nHeads"]


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


class RMSNorm(nn.Module):
    """y = x / sqrt(mean(x²) + eps) · w over the last dim (Zhang & Sennrich, 2019); no weight
    when `scale` is False (nanochat), never a bias. Computed in float32 under autocast."""

    def __init__(self, d, scale, eps):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(d)) if scale else None

    def forward(self, x):
        x32 = x.float()
        y = x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + self.eps)
        if self.weight is not None:
            y = y * self.weight.float()
        return y.to(x.dtype)


def make_norm(cfg, d=None):
    """A norm of the config's normType over `d` channels (dModel when None)."""
    d = cfg["dModel"] if d is None else d
    if cfg["normType"] == "rmsnorm":
        return RMSNorm(d, cfg["normScale"], cfg["layerNormEps"])
    return LayerNorm(d, cfg["bias"], cfg["layerNormEps"])


def gelu_tanh(x):
    return F.gelu(x, approximate="tanh")


def activation_fn(name):
    """'relu' (the paper), 'gelu' (exact erf form, as nanoGPT), 'geluTanh' (the tanh
    approximation GPT-2 was trained with: Hugging Face's gelu_new), 'relu2' (max(x, 0)², Primer,
    nanochat), 'silu' (x·σ(x)); the gated 'swiglu' and 'geglu' apply silu and geluTanh to the gate."""
    return {
        "relu": F.relu,
        "gelu": F.gelu,
        "geluTanh": gelu_tanh,
        "relu2": lambda x: F.relu(x).square(),
        "silu": F.silu,
        "swiglu": F.silu,
        "geglu": gelu_tanh,
    }[name]


GATED_ACTIVATIONS = ("swiglu", "geglu")


def softcap(x, cap):
    """cap·tanh(x/cap) (Gemma 2); `cap` 0 leaves x."""
    return cap * torch.tanh(x / cap) if cap > 0 else x


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


def rope_inv_freq(rotated, theta, cfg=None):
    """RoPE's R/2 frequencies theta^(−2i/R) in float64, scaled as cfg's ropeScaling states ('linear': all divided
    by ropeScalingFactor; 'llama3': Hugging Face's _compute_llama3_parameters, the low frequencies divided, the
    high kept, the band between blended) — ops/rope.ts `ropeInvFreq`."""
    i = torch.arange(rotated // 2, dtype=torch.float64)
    inv = torch.pow(torch.tensor(float(theta), dtype=torch.float64), -2.0 * i / rotated)  # (R/2,)
    kind = "none" if cfg is None else cfg["ropeScaling"]
    if kind == "linear":
        return inv / cfg["ropeScalingFactor"]
    if kind == "llama3":
        factor, lo, hi, old = (
            cfg["ropeScalingFactor"],
            cfg["ropeLowFreqFactor"],
            cfg["ropeHighFreqFactor"],
            cfg["ropeOriginalMaxLen"],
        )
        wavelen = 2 * math.pi / inv
        s = (old / wavelen - lo) / (hi - lo)
        blended = (1 - s) * inv / factor + s * inv
        return torch.where(wavelen < old / hi, inv, torch.where(wavelen > old / lo, inv / factor, blended))
    return inv


def rope_tables(max_len, rotated, theta, cfg=None):
    """RoPE's cos and sin [maxLen, R/2]: angle(p, i) = p · θ_i, θ_i from rope_inv_freq (theta^(−2i/R), scaled
    when cfg is given and has ropeScaling), in float64, rounded once to float32 (Su et al., 2021; the engine
    computes them with Math.pow, cos, sin)."""
    inv = rope_inv_freq(rotated, theta, cfg)  # (R/2,)
    angle = torch.arange(max_len, dtype=torch.float64)[:, None] * inv  # (maxLen, R/2)
    return torch.cos(angle).float(), torch.sin(angle).float()


def apply_rope(x, cos, sin):
    """Hugging Face's rotate-half on the first R channels of each head of x (B, heads, T, D);
    cos and sin (T, R/2); channels R..D−1 pass unchanged (Pythia's partial rotary)."""
    half = cos.shape[-1]
    cos, sin = cos.to(x.dtype), sin.to(x.dtype)
    x1, x2, rest = x[..., :half], x[..., half : 2 * half], x[..., 2 * half :]
    return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin, rest], dim=-1)


def alibi_slopes(n_heads):
    """ALiBi's head slopes (Press et al., 2022; BLOOM's get_slopes): 2^(−8(h+1)/H) for H a power of
    two; otherwise those of the power of two n below H, then the odd-indexed slopes of 2n."""

    def power_of_two(n):
        return [2.0 ** (-8.0 * (h + 1) / n) for h in range(n)]

    n = 2 ** int(math.floor(math.log2(n_heads)))
    if n == n_heads:
        return power_of_two(n)
    return power_of_two(n) + [2.0 ** (-8.0 * (2 * k + 1) / (2 * n)) for k in range(n_heads - n)]


class Positions(nn.Module):
    """What the attention layers need of the positions: RoPE's tables (buffers `rope_cos`,
    `rope_sin`, not saved, with ropeScaling; with globalEvery and ropeLocalTheta or ropeScaling also the windowed
    layers' `rope_local_cos`, `rope_local_sin`, unscaled) or ALiBi's bias. One per model, shared by every layer."""

    def __init__(self, cfg):
        super().__init__()
        self.kind = cfg["positional"]
        if self.kind == "rope":
            R = int(round(head_size(cfg) * cfg["rotaryFraction"]))
            cos, sin = rope_tables(cfg["maxLen"], R, cfg["ropeTheta"], cfg)
            self.register_buffer("rope_cos", cos, persistent=False)
            self.register_buffer("rope_sin", sin, persistent=False)
            if cfg["globalEvery"] > 0 and (cfg["ropeLocalTheta"] > 0 or cfg["ropeScaling"] != "none"):
                cos, sin = rope_tables(cfg["maxLen"], R, cfg["ropeLocalTheta"] or cfg["ropeTheta"])
                self.register_buffer("rope_local_cos", cos, persistent=False)
                self.register_buffer("rope_local_sin", sin, persistent=False)
        if self.kind == "alibi":
            self.register_buffer("slopes", torch.tensor(alibi_slopes(cfg["nHeads"])), persistent=False)

    def rope(self, T, local=False):
        """(cos, sin) of positions 0..T−1, the local layers' when `local` (layer_rope_local), or None without RoPE."""
        if self.kind != "rope":
            return None
        if local:
            return (self.rope_local_cos[:T], self.rope_local_sin[:T])
        return (self.rope_cos[:T], self.rope_sin[:T])

    def alibi(self, T, S):
        """(1, H, T, S) bias slope_h·(j − i), or None without ALiBi."""
        if self.kind != "alibi":
            return None
        i = torch.arange(T, device=self.slopes.device, dtype=torch.float32)[:, None]
        j = torch.arange(S, device=self.slopes.device, dtype=torch.float32)[None, :]
        return (self.slopes[:, None, None] * (j - i))[None]


def attend(q, k, v, mask, attn_dropout, soft_cap=0.0, bias=None, scale=None):
    """Scaled dot-product attention (paper §3.2.1) on split heads.
    q (B, H, T, D), k and v (B, Hkv, S, D): query head h reads key/value head floor(h / (H/Hkv));
    mask broadcastable to (B, H, T, S), True = may attend. The scores, scaled by `scale` (1/√D
    when None), are soft-capped
    (`soft_cap` > 0), then `bias` (ALiBi, broadcastable to (B, H, T, S)) is added, then masked
    scores become -inf before the softmax; a fully masked row gives zeros, not NaN."""
    group = q.shape[1] // k.shape[1]
    if group > 1:
        k, v = k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1)
    if scale is None:
        scale = 1 / math.sqrt(q.shape[-1])
    att = (q @ k.transpose(-2, -1)) * scale  # (B, H, T, S)
    att = softcap(att, soft_cap)
    if bias is not None:
        att = att + bias
    if mask is not None:
        att = att.masked_fill(~mask, float("-inf"))
    att = F.softmax(att, dim=-1)
    if mask is not None:
        att = att.masked_fill(~mask, 0.0)  # only changes fully masked rows (NaN -> 0)
    att = attn_dropout(att)
    return att @ v  # (B, H, T, D)


def split_heads(x, n_heads):
    """(B, T, n·D) -> (B, n, T, D); head h takes channels h*D .. (h+1)*D."""
    B, T, C = x.shape
    return x.view(B, T, n_heads, C // n_heads).transpose(1, 2)


def merge_heads(y):
    """(B, H, T, D) -> (B, T, C), the inverse of split_heads."""
    B, H, T, D = y.shape
    return y.transpose(1, 2).contiguous().view(B, T, H * D)


class AttentionCore(nn.Module):
    """What every attention layer does after its projections: QK-norm (RMSNorm of each head's D
    channels, weight [D] shared by the heads: `q_norm`, `k_norm`), RoPE on self-attention,
    the scores with soft-cap, ALiBi and the mask, the weighted values."""

    def __init__(self, cfg):
        super().__init__()
        self.n_heads, self.n_kv = cfg["nHeads"], kv_heads(cfg)
        self.soft_cap = cfg["attnSoftCap"]
        D = head_size(cfg)
        self.scale = cfg["attnScale"] if cfg["attnScale"] > 0 else 1 / math.sqrt(D)
        if cfg["qkNorm"]:
            self.q_norm = RMSNorm(D, cfg["normScale"], cfg["layerNormEps"])
            self.k_norm = RMSNorm(D, cfg["normScale"], cfg["layerNormEps"])
        else:
            self.q_norm = self.k_norm = None
        self.attn_dropout = nn.Dropout(cfg["dropout"])

    def attend(self, q, k, v, mask, rope=None, bias=None):
        """q (B, T, H·D), k and v (B, S, Hkv·D) -> (B, T, H·D)."""
        q, k, v = split_heads(q, self.n_heads), split_heads(k, self.n_kv), split_heads(v, self.n_kv)
        if self.q_norm is not None:
            q, k = self.q_norm(q), self.k_norm(k)
        if rope is not None:
            q, k = apply_rope(q, *rope), apply_rope(k, *rope)
        return merge_heads(attend(q, k, v, mask, self.attn_dropout, self.soft_cap, bias, self.scale))


# ----------------------------------------------------------------------------- encoder-decoder


class MultiHeadAttention(AttentionCore):
    """Paper §3.2.2: per projection one Linear (the per-head W^Q_i etc. stacked); W_q has H·D
    rows, W_k and W_v Hkv·D, W_o maps H·D back to C."""

    def __init__(self, cfg):
        super().__init__(cfg)
        d, D = cfg["dModel"], head_size(cfg)
        self.W_q = nn.Linear(d, self.n_heads * D, bias=cfg["qkvBias"])
        self.W_k = nn.Linear(d, self.n_kv * D, bias=cfg["qkvBias"])
        self.W_v = nn.Linear(d, self.n_kv * D, bias=cfg["qkvBias"])
        self.W_o = nn.Linear(self.n_heads * D, d, bias=cfg["attnOutBias"])

    def forward(self, x_q, x_kv, mask, rope=None, bias=None):  # x_q (B, T, C), x_kv (B, S, C)
        return self.W_o(self.attend(self.W_q(x_q), self.W_k(x_kv), self.W_v(x_kv), mask, rope, bias))


class PositionWiseFeedForward(nn.Module):
    """Paper §3.3: fc2(act(fc1(x))), C -> dFF -> C; gated (swiglu, geglu): fc2(act(gate(x)) ⊙ fc1(x))."""

    def __init__(self, cfg):
        super().__init__()
        d, f, bias = cfg["dModel"], cfg["dFF"], cfg["mlpBias"]
        self.fc1 = nn.Linear(d, f, bias=bias)
        self.gate = nn.Linear(d, f, bias=bias) if cfg["activation"] in GATED_ACTIVATIONS else None
        self.fc2 = nn.Linear(f, d, bias=bias)
        self.act = activation_fn(cfg["activation"])

    def forward(self, x):
        h = self.act(self.gate(x)) * self.fc1(x) if self.gate is not None else self.act(self.fc1(x))
        return self.fc2(h)


def sublayer(x, norm, fn, dropout, pre, post=None):
    """'post' (paper §3.1, §5.4): LN(x + drop(fn(x))); 'pre' (GPT-2): x + drop(fn(LN(x))); 'pre'
    with postNorms (Gemma 2 and 3's sandwich): x + drop(LN'(fn(LN(x)))), LN' the `<norm>_post`."""
    if not pre:
        return norm(x + dropout(fn(x)))
    y = fn(norm(x))
    return x + dropout(post(y) if post is not None else y)


def add_post_norms(module, cfg, names):
    """postNorms: a norm `<name>_post` after each sublayer (pre-norm only), beside its `<name>`."""
    module.post_norms = cfg["postNorms"] and cfg["norm"] == "pre"
    for name in names:
        if module.post_norms:
            setattr(module, f"{name}_post", make_norm(cfg))


def post_norm(module, name):
    """The sublayer's post norm `<name>_post`, or None without postNorms."""
    return getattr(module, f"{name}_post") if module.post_norms else None


def parallel(x, parts, dropout):
    """GPT-NeoX's parallel residual: x + Σ drop(fn(norm(x))), every part reading the same x."""
    return x + sum(dropout(fn(norm(x))) for norm, fn in parts)


class EncoderLayer(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.pre = cfg["norm"] == "pre"
        self.parallel = cfg["parallelResidual"]
        self.self_attn = MultiHeadAttention(cfg)
        self.feed_forward = PositionWiseFeedForward(cfg)
        self.norm1 = make_norm(cfg)
        self.norm2 = make_norm(cfg)
        add_post_norms(self, cfg, ["norm1", "norm2"])
        self.dropout = nn.Dropout(cfg["dropout"])

    def forward(self, x, src_mask, rope=None):
        def attn(h):
            return self.self_attn(h, h, src_mask, rope)

        if self.parallel:
            return parallel(x, [(self.norm1, attn), (self.norm2, self.feed_forward)], self.dropout)
        x = sublayer(x, self.norm1, attn, self.dropout, self.pre, post_norm(self, "norm1"))
        return sublayer(x, self.norm2, self.feed_forward, self.dropout, self.pre, post_norm(self, "norm2"))


class DecoderLayer(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.pre = cfg["norm"] == "pre"
        self.parallel = cfg["parallelResidual"]
        self.self_attn = MultiHeadAttention(cfg)
        self.cross_attn = MultiHeadAttention(cfg)
        self.feed_forward = PositionWiseFeedForward(cfg)
        self.norm1 = make_norm(cfg)
        self.norm2 = make_norm(cfg)
        self.norm3 = make_norm(cfg)
        add_post_norms(self, cfg, ["norm1", "norm2", "norm3"])
        self.dropout = nn.Dropout(cfg["dropout"])

    def forward(self, x, memory, src_mask, tgt_mask, rope=None):
        def self_attn(h):
            return self.self_attn(h, h, tgt_mask, rope)

        def cross_attn(h):  # queries from the decoder, keys and values from the encoder output; no RoPE
            return self.cross_attn(h, memory, src_mask)

        if self.parallel:
            parts = [(self.norm1, self_attn), (self.norm2, cross_attn), (self.norm3, self.feed_forward)]
            return parallel(x, parts, self.dropout)
        x = sublayer(x, self.norm1, self_attn, self.dropout, self.pre, post_norm(self, "norm1"))
        x = sublayer(x, self.norm2, cross_attn, self.dropout, self.pre, post_norm(self, "norm2"))
        return sublayer(x, self.norm3, self.feed_forward, self.dropout, self.pre, post_norm(self, "norm3"))


def padding_mask(tokens):
    """(B, S) -> (B, 1, 1, S): True where the key is a real token."""
    return (tokens != PAD)[:, None, None, :]


def causal_mask(t, device=None, window=0):
    """(1, 1, T, T): True on and below the diagonal (query t sees keys 0..t); with a sliding
    `window` W > 0 only the last W of them (key j iff t − j < W, as Mistral)."""
    m = torch.tril(torch.ones(t, t, dtype=torch.bool, device=device))
    if window > 0:
        m = m & ~torch.tril(torch.ones(t, t, dtype=torch.bool, device=device), diagonal=-window)
    return m[None, None]


class Transformer(nn.Module):
    """Encoder-decoder (paper §3). forward(src (B, S), tgt_in (B, T)) -> logits (B, T, V)."""

    def __init__(self, cfg):
        super().__init__()
        cfg = complete_config(cfg)
        assert cfg["kind"] == "encoder-decoder"
        self.cfg = cfg
        d = cfg["dModel"]
        self.encoder_embedding = nn.Embedding(cfg["srcVocabSize"], d, padding_idx=PAD)
        self.decoder_embedding = nn.Embedding(cfg["vocabSize"], d, padding_idx=PAD)
        if cfg["positional"] == "sinusoidal":
            self.positional_encoding = PositionalEncoding(cfg["maxLen"], d)  # shared by both stacks
        elif cfg["positional"] == "learned":
            self.encoder_positions = nn.Embedding(cfg["maxLen"], d)
            self.decoder_positions = nn.Embedding(cfg["maxLen"], d)
        self.positions = Positions(cfg)
        if cfg["embedNorm"]:
            self.encoder_embedding_norm = make_norm(cfg)
            self.decoder_embedding_norm = make_norm(cfg)
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

    def embed(self, tokens, table, positions, norm):
        x = table(tokens)  # (B, T, C)
        if self.cfg["embedScale"]:
            x = x * math.sqrt(self.cfg["dModel"])  # paper §3.4
        if self.cfg["positional"] == "sinusoidal":
            x = self.positional_encoding(x)
        elif self.cfg["positional"] == "learned":
            x = x + positions(torch.arange(tokens.shape[1], device=tokens.device))
        if norm is not None:
            x = norm(x)
        return self.dropout(x)

    def encode(self, src, src_mask):
        learned = self.cfg["positional"] == "learned"
        norm = self.encoder_embedding_norm if self.cfg["embedNorm"] else None
        x = self.embed(src, self.encoder_embedding, self.encoder_positions if learned else None, norm)
        rope = self.positions.rope(src.shape[1])
        for layer in self.encoder_layers:
            x = layer(x, src_mask, rope)
        return self.encoder_norm(x) if self.cfg["norm"] == "pre" else x  # memory (B, S, C)

    def decode(self, tgt_in, memory, src_mask, tgt_mask):
        learned = self.cfg["positional"] == "learned"
        norm = self.decoder_embedding_norm if self.cfg["embedNorm"] else None
        x = self.embed(tgt_in, self.decoder_embedding, self.decoder_positions if learned else None, norm)
        T = tgt_in.shape[1]
        for i, layer in enumerate(self.decoder_layers):
            # Each decoder layer's window (globalEvery: the global layers have none) and RoPE θ.
            window = layer_window(self.cfg, i)
            mask = tgt_mask & causal_mask(T, tgt_in.device, window) if window > 0 else tgt_mask
            x = layer(x, memory, src_mask, mask, self.positions.rope(T, layer_rope_local(self.cfg, i)))
        if self.cfg["norm"] == "pre":
            x = self.decoder_norm(x)
        return softcap(self.fc(x), self.cfg["logitSoftCap"])  # (B, T, V)

    def forward(self, src, tgt_in, src_mask=None, tgt_mask=None):
        S, T = src.shape[1], tgt_in.shape[1]
        assert max(S, T) <= self.cfg["maxLen"], f"length {max(S, T)} exceeds maxLen {self.cfg['maxLen']}"
        if src_mask is None:
            src_mask = padding_mask(src)  # (B, 1, 1, S): encoder self-attn and cross-attn
        if tgt_mask is None:
            # (B, 1, T, T); decode() adds each layer's sliding window
            tgt_mask = padding_mask(tgt_in) & causal_mask(T, tgt_in.device)
        return self.decode(tgt_in, self.encode(src, src_mask), src_mask, tgt_mask)


# ----------------------------------------------------------------------------- decoder-only


class CausalSelfAttention(AttentionCore):
    """nanoGPT's attention: one Linear(C, (H + 2·Hkv)·D) whose rows are W_q, W_k, W_v stacked
    (files.py's ParamMap splits it into our c_attn_q/k/v)."""

    def __init__(self, cfg):
        super().__init__(cfg)
        d, D = cfg["dModel"], head_size(cfg)
        self.split = (self.n_heads * D, self.n_kv * D, self.n_kv * D)
        self.c_attn = nn.Linear(d, sum(self.split), bias=cfg["qkvBias"])
        self.c_proj = nn.Linear(self.n_heads * D, d, bias=cfg["attnOutBias"])

    def forward(self, x, mask, rope=None, bias=None):  # x (B, T, C)
        q, k, v = self.c_attn(x).split(self.split, dim=2)
        return self.c_proj(self.attend(q, k, v, mask, rope, bias))


class MLP(nn.Module):
    """c_proj(act(c_fc(x))); gated: c_proj(act(c_gate(x)) ⊙ c_fc(x)), c_fc the up projection."""

    def __init__(self, cfg):
        super().__init__()
        d, f, bias = cfg["dModel"], cfg["dFF"], cfg["mlpBias"]
        self.c_fc = nn.Linear(d, f, bias=bias)
        self.c_gate = nn.Linear(d, f, bias=bias) if cfg["activation"] in GATED_ACTIVATIONS else None
        self.c_proj = nn.Linear(f, d, bias=bias)
        self.act = activation_fn(cfg["activation"])

    def forward(self, x):
        h = self.act(self.c_gate(x)) * self.c_fc(x) if self.c_gate is not None else self.act(self.c_fc(x))
        return self.c_proj(h)


class Block(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.pre = cfg["norm"] == "pre"
        self.parallel = cfg["parallelResidual"]
        self.ln_1 = make_norm(cfg)
        self.attn = CausalSelfAttention(cfg)
        self.ln_2 = make_norm(cfg)
        self.mlp = MLP(cfg)
        add_post_norms(self, cfg, ["ln_1", "ln_2"])
        self.dropout = nn.Dropout(cfg["dropout"])

    def forward(self, x, mask, rope=None, bias=None):
        def attn(h):
            return self.attn(h, mask, rope, bias)

        if self.parallel:
            return parallel(x, [(self.ln_1, attn), (self.ln_2, self.mlp)], self.dropout)
        x = sublayer(x, self.ln_1, attn, self.dropout, self.pre, post_norm(self, "ln_1"))
        return sublayer(x, self.ln_2, self.mlp, self.dropout, self.pre, post_norm(self, "ln_2"))


class GPT(nn.Module):
    """Decoder-only language model. forward(idx (B, T)) -> logits (B, T, V). Causal mask only
    (with the sliding window when set)."""

    def __init__(self, cfg):
        super().__init__()
        cfg = complete_config(cfg)
        assert cfg["kind"] == "decoder-only"
        self.cfg = cfg
        d = cfg["dModel"]
        parts = dict(wte=nn.Embedding(cfg["vocabSize"], d))
        if cfg["positional"] == "learned":
            parts["wpe"] = nn.Embedding(cfg["maxLen"], d)
        elif cfg["positional"] == "sinusoidal":
            parts["wpe"] = PositionalEncoding(cfg["maxLen"], d)
        if cfg["embedNorm"]:
            parts["ln_e"] = make_norm(cfg)
        parts["drop"] = nn.Dropout(cfg["dropout"])
        parts["h"] = nn.ModuleList([Block(cfg) for _ in range(cfg["nDecoderLayers"])])
        if cfg["norm"] == "pre":
            parts["ln_f"] = make_norm(cfg)
        self.transformer = nn.ModuleDict(parts)
        self.positions = Positions(cfg)
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
        elif self.cfg["positional"] == "sinusoidal":
            x = self.transformer.wpe(x)
        if self.cfg["embedNorm"]:
            x = self.transformer.ln_e(x)
        x = self.transformer.drop(x)
        bias = self.positions.alibi(T, T)
        masks = {}  # by window: each layer's (globalEvery: the global layers have none)
        for i, block in enumerate(self.transformer.h):
            window = layer_window(self.cfg, i)
            if window not in masks:
                masks[window] = causal_mask(T, idx.device, window)
            x = block(x, masks[window], self.positions.rope(T, layer_rope_local(self.cfg, i)), bias)
        if self.cfg["norm"] == "pre":
            x = self.transformer.ln_f(x)
        return softcap(self.lm_head(x), self.cfg["logitSoftCap"])  # (B, T, V)


# ----------------------------------------------------------------------------- shared


def build_model(cfg):
    """The model for `cfg['kind']` (a config of any version: see complete_config)."""
    return Transformer(cfg) if cfg["kind"] == "encoder-decoder" else GPT(cfg)


def loss_fn(logits, targets, label_smoothing):
    """Mean cross-entropy over non-PAD targets. With label smoothing ε, PyTorch's rule:
    per target, (1-ε)·(-log p_y) + (ε/V)·Σ_c (-log p_c) over all V classes (PAD included)."""
    V = logits.shape[-1]
    return F.cross_entropy(
        logits.reshape(-1, V), targets.reshape(-1).long(), ignore_index=PAD, label_smoothing=label_smoothing
    )
