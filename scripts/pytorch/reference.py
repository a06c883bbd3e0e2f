"""PyTorch reference of Attention Lab's two models: the oracle for the golden files.

`Transformer` is the encoder-decoder of "Attention Is All You Need" (Vaswani et al., 2017),
with the module names of the seed notebook; `GPT` is the decoder-only model with nanoGPT's
module names (Karpathy, github.com/karpathy/nanoGPT, `model.py`). Both are built from one
config dict whose keys are the fields of `ModelConfig` (src/engine/config.ts), and the
TypeScript engine implements exactly this math, so a checkpoint moves between the two.

The options of today's transformers (RoPE, ALiBi, RMSNorm, QK-norm, gated and new
feed-forward activations, grouped-query attention, per-part biases, soft-caps, sliding
windows, parallel residuals, a norm after the embeddings) are built as issue 29 fixes them,
the order inside attention written at `project_and_attend`; a head size apart from C / H
(headDim) and a softmax scale apart from 1 / √D (attnScale) as issue 30 does. A config
that lacks their fields reads them as off (`complete_config`, as `completeConfig` in config.ts).

Shape legend: B batch, S source length, T target length, C = dModel channels, H heads,
D channels per head (headDim, or C / H), Hkv key/value heads, R = D · rotaryFraction rotated channels,
V vocabulary.

Special ids: PAD 0, BOS 1, EOS 2, UNK 3. Masks: True = may attend.

Left out: decoding (greedy / beam / sampling), key/value caches, weight init (the golden
script sets its own), training loops and data. Written for torch 1.13, float32.
"""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

PAD, BOS, EOS, UNK = 0, 1, 2, 3

# The fields of today's transformers, all off: what a config written before them means.
TODAY_OFF = dict(
    ropeTheta=10000,
    rotaryFraction=1,
    normType="layernorm",
    normScale=True,
    qkNorm=False,
    nKvHeads=0,
    attnSoftCap=0,
    logitSoftCap=0,
    slidingWindow=0,
    parallelResidual=False,
    embedNorm=False,
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
    """cfg with the fields of today's transformers filled in where it lacks them; the three
    per-part biases default to `bias` (config.ts `completeConfig`)."""
    out = dict(TODAY_OFF, **cfg)
    for k in ("qkvBias", "attnOutBias", "mlpBias"):
        out.setdefault(k, cfg["bias"])
    return out


def kv_heads(cfg):
    """Key/value heads: nKvHeads, or nHeads when it is 0."""
    return cfg["nKvHeads"] or cfg["nHeads"]


def head_size(cfg):
    """Channels of each head D: headDim, or dModel / nHeads when it is 0 (q is nHeads·D wide)."""
    return cfg["headDim"] or cfg["dModel"] // cfg["nHeads"]


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


def attn_scale(cfg):
    """The softmax scale of the scores: attnScale, or 1 / √D when it is 0."""
    return cfg["attnScale"] or 1 / math.sqrt(head_size(cfg))


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
    """y = x / sqrt(mean(x²) + eps) · w over the last dim, w only when `scale` (nanochat's has
    none); never a bias. Zhang & Sennrich, 2019."""

    def __init__(self, d, scale, eps):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(d)) if scale else None

    def forward(self, x):
        y = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)
        return y * self.weight if self.weight is not None else y


def make_norm(cfg, d=None):
    """A norm of the config's normType over d channels (default dModel): LayerNorm with a bias
    when `bias`, or RMSNorm with a weight when `normScale`."""
    d = d or cfg["dModel"]
    if cfg.get("normType", "layernorm") == "rmsnorm":
        return RMSNorm(d, cfg["normScale"], cfg["layerNormEps"])
    return LayerNorm(d, cfg["bias"], cfg["layerNormEps"])


def activation_fn(name):
    """'relu' (the paper), 'gelu' (exact erf form, as nanoGPT), 'geluTanh' (the tanh
    approximation GPT-2 was trained with: Hugging Face's gelu_new), 'relu2' (max(x, 0)²,
    nanochat), 'silu' (x·σ(x)); the gated 'swiglu' and 'geglu' gate with silu and geluTanh."""
    gelu_tanh = lambda x: F.gelu(x, approximate="tanh")
    return {
        "relu": F.relu,
        "gelu": F.gelu,
        "geluTanh": gelu_tanh,
        "relu2": lambda x: F.relu(x).square(),
        "silu": F.silu,
        "swiglu": F.silu,
        "geglu": gelu_tanh,
    }[name]


def is_gated(cfg):
    return cfg["activation"] in ("swiglu", "geglu")


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
    """Hugging Face's rotate-half RoPE on x (B, H, T, D) at positions 0..T-1; cos, sin [T, R/2].
    Channel c < R/2 pairs with c + R/2: x1' = x1·cos − x2·sin, x2' = x2·cos + x1·sin;
    channels R..D-1 pass unchanged (Pythia's partial rotary)."""
    half = cos.shape[-1]
    x1, x2, rest = x[..., :half], x[..., half : 2 * half], x[..., 2 * half :]
    return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin, rest], dim=-1)


def alibi_slopes(n_heads):
    """ALiBi's head slopes (Press et al., 2022; BLOOM's get_slopes): 2^(-8(h+1)/H) for H a power
    of two; otherwise those of the power of two n below H, then the odd-indexed slopes of 2n."""

    def power_of_two(n):
        return [2.0 ** (-8.0 * (h + 1) / n) for h in range(n)]

    n = 2 ** int(math.floor(math.log2(n_heads)))
    if n == n_heads:
        return power_of_two(n)
    extra = [2.0 ** (-8.0 * (2 * k + 1) / (2 * n)) for k in range(n_heads - n)]
    return power_of_two(n) + extra


def alibi_bias(slopes, t):
    """(1, H, T, T): slope_h · (j − i) for query i and key j (masked where j > i anyway)."""
    pos = torch.arange(t, dtype=torch.float32)
    dist = pos[None, :] - pos[:, None]  # (T, T) j - i
    return torch.tensor(slopes, dtype=torch.float32)[None, :, None, None] * dist[None, None]


def attend(q, k, v, mask, attn_dropout, soft_cap=0.0, bias=None, scale=None):
    """Scaled dot-product attention (paper §3.2.1) on split heads.
    q (B, H, T, D), k and v (B, Hkv, S, D): query head h reads key/value head h // (H / Hkv).
    Scores s = scale · q·k (scale 1 / √D unless given), then c·tanh(s/c) when soft_cap c > 0,
    then + bias (ALiBi), then the mask (broadcastable to (B, H, T, S), True = may attend): masked
    scores become -inf before the softmax; a fully masked row gives zeros, not NaN."""
    group = q.shape[1] // k.shape[1]
    if group > 1:
        k, v = k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1)
    if scale is None:
        scale = 1 / math.sqrt(q.shape[-1])
    att = (q @ k.transpose(-2, -1)) * scale  # (B, H, T, S)
    if soft_cap > 0:
        att = soft_cap * torch.tanh(att / soft_cap)
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


class Positions(nn.Module):
    """What attention needs of the positions: RoPE's tables (non-persistent buffers `rope_cos`,
    `rope_sin` [maxLen, R/2], with ropeScaling; with globalEvery and ropeLocalTheta or ropeScaling also the windowed
    layers' `rope_local_cos`, `rope_local_sin`, unscaled) and ALiBi's slopes; empty for the other positionals."""

    def __init__(self, cfg):
        super().__init__()
        self.rope = cfg["positional"] == "rope"
        self.slopes = alibi_slopes(cfg["nHeads"]) if cfg["positional"] == "alibi" else None
        if self.rope:
            rotated = round(head_size(cfg) * cfg["rotaryFraction"])
            cos, sin = rope_tables(cfg["maxLen"], rotated, cfg["ropeTheta"], cfg)
            self.register_buffer("rope_cos", cos, persistent=False)
            self.register_buffer("rope_sin", sin, persistent=False)
            if cfg["globalEvery"] > 0 and (cfg["ropeLocalTheta"] > 0 or cfg["ropeScaling"] != "none"):
                cos, sin = rope_tables(cfg["maxLen"], rotated, cfg["ropeLocalTheta"] or cfg["ropeTheta"])
                self.register_buffer("rope_local_cos", cos, persistent=False)
                self.register_buffer("rope_local_sin", sin, persistent=False)

    def tables(self, local):
        """(cos, sin) of RoPE: the local layers' tables when `local` (layer_rope_local), else ropeTheta's."""
        if local:
            return self.rope_local_cos, self.rope_local_sin
        return self.rope_cos, self.rope_sin


def add_qk_norms(module, cfg, layer=0):
    """qkNorm's RMSNorms over a head's D channels, weights `q_norm`, `k_norm` [D] (shared by the
    heads; present when normScale) on the attention module itself, and its probability dropout.
    Also the causal self-attention's window and RoPE tables in decoder layer `layer` (globalEvery)."""
    module.cfg = cfg
    module.window = layer_window(cfg, layer)
    module.local_rope = layer_rope_local(cfg, layer)
    if cfg["qkNorm"]:
        d_head = head_size(cfg)
        module.q_norm = RMSNorm(d_head, cfg["normScale"], cfg["layerNormEps"])
        module.k_norm = RMSNorm(d_head, cfg["normScale"], cfg["layerNormEps"])
    module.attn_dropout = nn.Dropout(cfg["dropout"])


def project_and_attend(module, q, k, v, mask, positions, self_attn, causal):
    """What every attention layer does after its projections, in issue 29's order: qkNorm
    (RMSNorm of each head's q and k), RoPE on q and k (self-attention only), the scores with
    grouped-query heads, soft-cap, ALiBi (causal self-attention only), the masks (the sliding
    window on causal self-attention), softmax, dropout, Σ p·v.
    q (B, H, T, D), k and v (B, Hkv, S, D) -> (B, H, T, D)."""
    cfg = module.cfg
    if cfg["qkNorm"]:
        q, k = module.q_norm(q), module.k_norm(k)
    if self_attn and positions.rope:
        cos, sin = positions.tables(module.local_rope and causal)
        q = apply_rope(q, cos[: q.shape[2]], sin[: q.shape[2]])
        k = apply_rope(k, cos[: k.shape[2]], sin[: k.shape[2]])
    bias = None
    if self_attn and causal and positions.slopes is not None:
        bias = alibi_bias(positions.slopes, q.shape[2])
    if self_attn and causal and module.window > 0:
        mask = mask & window_mask(q.shape[2], module.window, q.device)
    return attend(q, k, v, mask, module.attn_dropout, cfg["attnSoftCap"], bias, attn_scale(cfg))


def padding_mask(tokens):
    """(B, S) -> (B, 1, 1, S): True where the key is a real token."""
    return (tokens != PAD)[:, None, None, :]


def causal_mask(t, device=None):
    """(1, 1, T, T): True on and below the diagonal (query t sees keys 0..t)."""
    return torch.tril(torch.ones(t, t, dtype=torch.bool, device=device))[None, None]


def window_mask(t, window, device=None):
    """(1, 1, T, T): True where query i may see key j under a sliding window, i − j < window."""
    pos = torch.arange(t, device=device)
    return ((pos[:, None] - pos[None, :]) < window)[None, None]


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


def parallel_sublayers(x, pairs, dropout):
    """GPT-NeoX's parallel residual: x + Σ drop(fn(norm(x))), every branch reading the same x."""
    out = x
    for norm, fn in pairs:
        out = out + dropout(fn(norm(x)))
    return out


# ----------------------------------------------------------------------------- encoder-decoder


class MultiHeadAttention(nn.Module):
    """Paper §3.2.2: per projection one full Linear (the per-head W^Q_i etc. stacked): W_q has
    H·D rows, W_k and W_v Hkv·D (grouped-query attention), W_o maps H·D back to C."""

    def __init__(self, cfg, layer=0):
        super().__init__()
        d = cfg["dModel"]
        self.n_heads, self.n_kv = cfg["nHeads"], kv_heads(cfg)
        d_q, d_kv = self.n_heads * head_size(cfg), self.n_kv * head_size(cfg)
        self.W_q = nn.Linear(d, d_q, bias=cfg["qkvBias"])
        self.W_k = nn.Linear(d, d_kv, bias=cfg["qkvBias"])
        self.W_v = nn.Linear(d, d_kv, bias=cfg["qkvBias"])
        self.W_o = nn.Linear(d_q, d, bias=cfg["attnOutBias"])
        add_qk_norms(self, cfg, layer)

    def forward(self, x_q, x_kv, mask, positions=None, self_attn=False, causal=False):
        # x_q (B, T, C), x_kv (B, S, C)
        q = split_heads(self.W_q(x_q), self.n_heads)
        k = split_heads(self.W_k(x_kv), self.n_kv)
        v = split_heads(self.W_v(x_kv), self.n_kv)
        return self.W_o(merge_heads(project_and_attend(self, q, k, v, mask, positions, self_attn, causal)))


class PositionWiseFeedForward(nn.Module):
    """Paper §3.3: fc2(act(fc1(x))), C -> dFF -> C; gated: fc2(act(gate(x)) ⊙ fc1(x))."""

    def __init__(self, cfg):
        super().__init__()
        self.fc1 = nn.Linear(cfg["dModel"], cfg["dFF"], bias=cfg["mlpBias"])
        if is_gated(cfg):
            self.gate = nn.Linear(cfg["dModel"], cfg["dFF"], bias=cfg["mlpBias"])
        self.fc2 = nn.Linear(cfg["dFF"], cfg["dModel"], bias=cfg["mlpBias"])
        self.act = activation_fn(cfg["activation"])
        self.gated = is_gated(cfg)

    def forward(self, x):
        h = self.act(self.gate(x)) * self.fc1(x) if self.gated else self.act(self.fc1(x))
        return self.fc2(h)


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

    def forward(self, x, src_mask, positions):
        attn = lambda h: self.self_attn(h, h, src_mask, positions, self_attn=True)
        if self.parallel:
            return parallel_sublayers(x, [(self.norm1, attn), (self.norm2, self.feed_forward)], self.dropout)
        x = sublayer(x, self.norm1, attn, self.dropout, self.pre, post_norm(self, "norm1"))
        return sublayer(x, self.norm2, self.feed_forward, self.dropout, self.pre, post_norm(self, "norm2"))


class DecoderLayer(nn.Module):
    def __init__(self, cfg, layer=0):
        super().__init__()
        self.pre = cfg["norm"] == "pre"
        self.parallel = cfg["parallelResidual"]
        self.self_attn = MultiHeadAttention(cfg, layer)
        self.cross_attn = MultiHeadAttention(cfg)
        self.feed_forward = PositionWiseFeedForward(cfg)
        self.norm1 = make_norm(cfg)
        self.norm2 = make_norm(cfg)
        self.norm3 = make_norm(cfg)
        add_post_norms(self, cfg, ["norm1", "norm2", "norm3"])
        self.dropout = nn.Dropout(cfg["dropout"])

    def forward(self, x, memory, src_mask, tgt_mask, positions):
        self_fn = lambda h: self.self_attn(h, h, tgt_mask, positions, self_attn=True, causal=True)
        # Queries from the decoder, keys and values from the encoder output.
        cross_fn = lambda h: self.cross_attn(h, memory, src_mask)
        if self.parallel:
            pairs = [(self.norm1, self_fn), (self.norm2, cross_fn), (self.norm3, self.feed_forward)]
            return parallel_sublayers(x, pairs, self.dropout)
        x = sublayer(x, self.norm1, self_fn, self.dropout, self.pre, post_norm(self, "norm1"))
        x = sublayer(x, self.norm2, cross_fn, self.dropout, self.pre, post_norm(self, "norm2"))
        return sublayer(x, self.norm3, self.feed_forward, self.dropout, self.pre, post_norm(self, "norm3"))


def adds_positions(cfg):
    """Whether the embeddings get positions added (sinusoidal, learned); rope, alibi, none add nothing."""
    return cfg["positional"] in ("sinusoidal", "learned")


def soft_cap(x, cap):
    """cap · tanh(x / cap), or x when cap is 0."""
    return cap * torch.tanh(x / cap) if cap > 0 else x


class Transformer(nn.Module):
    """Encoder-decoder (paper §3). forward(src (B, S), tgt_in (B, T)) -> logits (B, T, V)."""

    def __init__(self, cfg):
        super().__init__()
        assert cfg["kind"] == "encoder-decoder"
        cfg = complete_config(cfg)
        self.cfg = cfg
        d = cfg["dModel"]
        self.encoder_embedding = nn.Embedding(cfg["srcVocabSize"], d, padding_idx=PAD)
        self.decoder_embedding = nn.Embedding(cfg["vocabSize"], d, padding_idx=PAD)
        if cfg["positional"] == "sinusoidal":
            self.positional_encoding = PositionalEncoding(cfg["maxLen"], d)  # shared by both stacks
        elif cfg["positional"] == "learned":
            self.encoder_positions = nn.Embedding(cfg["maxLen"], d)
            self.decoder_positions = nn.Embedding(cfg["maxLen"], d)
        if cfg["embedNorm"]:
            self.encoder_embedding_norm = make_norm(cfg)
            self.decoder_embedding_norm = make_norm(cfg)
        self.positions = Positions(cfg)
        self.encoder_layers = nn.ModuleList([EncoderLayer(cfg) for _ in range(cfg["nEncoderLayers"])])
        self.decoder_layers = nn.ModuleList([DecoderLayer(cfg, i) for i in range(cfg["nDecoderLayers"])])
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
        for layer in self.encoder_layers:
            x = layer(x, src_mask, self.positions)
        return self.encoder_norm(x) if self.cfg["norm"] == "pre" else x  # memory (B, S, C)

    def decode(self, tgt_in, memory, src_mask, tgt_mask):
        learned = self.cfg["positional"] == "learned"
        norm = self.decoder_embedding_norm if self.cfg["embedNorm"] else None
        x = self.embed(tgt_in, self.decoder_embedding, self.decoder_positions if learned else None, norm)
        for layer in self.decoder_layers:
            x = layer(x, memory, src_mask, tgt_mask, self.positions)
        if self.cfg["norm"] == "pre":
            x = self.decoder_norm(x)
        return soft_cap(self.fc(x), self.cfg["logitSoftCap"])  # (B, T, V)

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
    """nanoGPT's attention: one Linear(C, (H + 2·Hkv)·D) whose rows are W_q [H·D], W_k and
    W_v [Hkv·D each] stacked (3C rows without grouped-query attention or headDim); c_proj maps
    H·D back to C."""

    def __init__(self, cfg, layer=0):
        super().__init__()
        d = cfg["dModel"]
        self.n_heads, self.n_kv = cfg["nHeads"], kv_heads(cfg)
        self.d_q, self.d_kv = self.n_heads * head_size(cfg), self.n_kv * head_size(cfg)
        self.c_attn = nn.Linear(d, self.d_q + 2 * self.d_kv, bias=cfg["qkvBias"])
        self.c_proj = nn.Linear(self.d_q, d, bias=cfg["attnOutBias"])
        add_qk_norms(self, cfg, layer)

    def forward(self, x, positions):  # x (B, T, C)
        q, k, v = self.c_attn(x).split([self.d_q, self.d_kv, self.d_kv], dim=2)
        q = split_heads(q, self.n_heads)  # (B, H, T, D)
        k, v = split_heads(k, self.n_kv), split_heads(v, self.n_kv)  # (B, Hkv, T, D)
        y = project_and_attend(self, q, k, v, causal_mask(x.shape[1], x.device), positions, True, True)
        return self.c_proj(merge_heads(y))


class MLP(nn.Module):
    """c_proj(act(c_fc(x))); gated: c_proj(act(c_gate(x)) ⊙ c_fc(x)), c_fc the up projection."""

    def __init__(self, cfg):
        super().__init__()
        self.c_fc = nn.Linear(cfg["dModel"], cfg["dFF"], bias=cfg["mlpBias"])
        if is_gated(cfg):
            self.c_gate = nn.Linear(cfg["dModel"], cfg["dFF"], bias=cfg["mlpBias"])
        self.c_proj = nn.Linear(cfg["dFF"], cfg["dModel"], bias=cfg["mlpBias"])
        self.act = activation_fn(cfg["activation"])
        self.gated = is_gated(cfg)

    def forward(self, x):
        h = self.act(self.c_gate(x)) * self.c_fc(x) if self.gated else self.act(self.c_fc(x))
        return self.c_proj(h)


class Block(nn.Module):
    def __init__(self, cfg, layer=0):
        super().__init__()
        self.pre = cfg["norm"] == "pre"
        self.parallel = cfg["parallelResidual"]
        self.ln_1 = make_norm(cfg)
        self.attn = CausalSelfAttention(cfg, layer)
        self.ln_2 = make_norm(cfg)
        self.mlp = MLP(cfg)
        add_post_norms(self, cfg, ["ln_1", "ln_2"])
        self.dropout = nn.Dropout(cfg["dropout"])

    def forward(self, x, positions):
        attn = lambda h: self.attn(h, positions)
        if self.parallel:
            return parallel_sublayers(x, [(self.ln_1, attn), (self.ln_2, self.mlp)], self.dropout)
        x = sublayer(x, self.ln_1, attn, self.dropout, self.pre, post_norm(self, "ln_1"))
        return sublayer(x, self.ln_2, self.mlp, self.dropout, self.pre, post_norm(self, "ln_2"))


class GPT(nn.Module):
    """Decoder-only language model. forward(idx (B, T)) -> logits (B, T, V). Causal mask only."""

    def __init__(self, cfg):
        super().__init__()
        assert cfg["kind"] == "decoder-only"
        cfg = complete_config(cfg)
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
        parts["h"] = nn.ModuleList([Block(cfg, i) for i in range(cfg["nDecoderLayers"])])
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
        for block in self.transformer.h:
            x = block(x, self.positions)
        if self.cfg["norm"] == "pre":
            x = self.transformer.ln_f(x)
        return soft_cap(self.lm_head(x), self.cfg["logitSoftCap"])  # (B, T, V)


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
