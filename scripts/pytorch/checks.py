"""Self-checks of the PyTorch reference, run by make_golden.py before it writes a file: each one
would catch a mistake in reference.py that the golden files would otherwise bake in.

Checked: the sinusoidal table against its formula; RoPE's tables and rotation, ALiBi's
slopes (the paper's values for 8 and 6 heads) and the sliding window's mask by hand;
causality (a later token never changes earlier logits); source padding (PAD tokens never
change the encoder-decoder's logits); our attention against torch's own
nn.MultiheadAttention; the loss against a hand-written label-smoothed cross-entropy; a fully
masked attention row giving zeros with finite gradients; tied weights being one tensor; PAD
embedding rows getting no gradient.
Left out: speed, dropout (0 in the golden configs).
"""

import math

import torch
import torch.nn.functional as F

from reference import (
    PAD,
    alibi_slopes,
    apply_rope,
    attend,
    causal_mask,
    loss_fn,
    padding_mask,
    rope_tables,
    sinusoidal_table,
    window_mask,
)


def _logits(model, cfg, batch, **masks):
    with torch.no_grad():
        if cfg["kind"] == "encoder-decoder":
            return model(batch["src"].long(), batch["tgt_in"].long(), **masks)
        return model(batch["idx"].long())


def check_sinusoidal():
    pe = sinusoidal_table(16, 8)
    pos = torch.arange(16, dtype=torch.float32)
    assert torch.allclose(pe[:, 0], torch.sin(pos), atol=1e-6), "pe channel 0 must be sin(pos)"
    assert torch.allclose(pe[:, 1], torch.cos(pos), atol=1e-6), "pe channel 1 must be cos(pos)"
    assert torch.allclose(pe[:, 2], torch.sin(pos / 10000 ** (2 / 8)), atol=1e-6), "pe channel 2 uses 10000^(2i/d), i=1"
    assert torch.allclose(pe[:, 7], torch.cos(pos / 10000 ** (6 / 8)), atol=1e-6), "pe channel 7 uses 10000^(6/8)"


def check_positions():
    cos, sin = rope_tables(16, 4, 10000)
    assert cos.shape == (16, 2) and cos.dtype == torch.float32
    assert abs(cos[3, 1].item() - math.cos(3 * 10000 ** (-2 / 4))) < 1e-7, "rope angle p·θ^(−2i/R)"
    assert abs(sin[5, 0].item() - math.sin(5)) < 1e-7, "rope's first pair turns by the position itself"
    x = torch.randn(1, 1, 16, 6, generator=torch.Generator().manual_seed(3))
    y = apply_rope(x, cos, sin)
    assert torch.equal(y[..., 4:], x[..., 4:]), "channels R..D-1 pass unrotated"
    assert torch.allclose(y[:, :, 0], x[:, :, 0]), "position 0 is not rotated"
    pairs = lambda t: t[..., :2].square() + t[..., 2:4].square()  # the (c, c + R/2) pairs
    assert torch.allclose(pairs(y), pairs(x), atol=1e-5), "rotation keeps each pair's length"
    want = y[0, 0, 2, 0].item()
    ref = x[0, 0, 2, 0].item() * math.cos(2) - x[0, 0, 2, 2].item() * math.sin(2)
    assert abs(want - ref) < 1e-6, "x1' = x1·cos − x2·sin with x2 the channel R/2 further"
    assert alibi_slopes(8) == [2.0**-k for k in range(1, 9)], "ALiBi slopes for 8 heads: 1/2 .. 1/256"
    assert alibi_slopes(6) == [2.0**-k for k in (2, 4, 6, 8, 1, 3)], "ALiBi for 6 heads: 4 heads' slopes, then odd of 8"
    want_mask = torch.tensor([[1, 1, 0, 0], [1, 1, 1, 0], [0, 1, 1, 1], [0, 0, 1, 1]], dtype=torch.bool)
    got = window_mask(4, 2)[0, 0] & torch.ones(4, 4, dtype=torch.bool)
    assert torch.equal(got & causal_mask(4)[0, 0], want_mask & causal_mask(4)[0, 0]), "window: i − j < W"


def check_causal(model, cfg, batch):
    """Changing the token at position t leaves logits before t exactly as they were, and changes t."""
    key = "tgt_in" if cfg["kind"] == "encoder-decoder" else "idx"
    base = _logits(model, cfg, batch)
    t = 1
    changed = dict(batch)
    changed[key] = batch[key].clone()
    changed[key][:, t] = torch.where(batch[key][:, t] == 5, 6, 5).to(batch[key].dtype)
    other = _logits(model, cfg, changed)
    assert torch.allclose(base[:, :t], other[:, :t], atol=1e-6), "a later token changed earlier logits"
    assert (base[:, t] - other[:, t]).abs().max() > 1e-3, "changing a token did not change its own logits"


def check_source_padding(model, cfg, batch):
    """PAD positions of the source are invisible: replacing them by real tokens (same mask) or
    adding PAD columns leaves every logit unchanged, while changing a real token does not."""
    src = batch["src"].long()
    base = _logits(model, cfg, batch)
    filled = torch.where(src == PAD, torch.full_like(src, 7), src)
    other = _logits(model, cfg, dict(batch, src=filled), src_mask=padding_mask(src))
    assert torch.allclose(base, other, atol=1e-5), "a padded source token changed the logits"
    longer = torch.cat([src, torch.zeros(src.shape[0], 3, dtype=torch.long)], dim=1)
    other = _logits(model, cfg, dict(batch, src=longer))
    assert torch.allclose(base, other, atol=1e-5), "extra PAD columns changed the logits"
    real = src.clone()
    real[:, 0] = torch.where(src[:, 0] == 5, 6, 5)
    other = _logits(model, cfg, dict(batch, src=real))
    assert (base - other).abs().max() > 1e-3, "changing a real source token did not change the logits"


def check_against_torch_mha(model, cfg, batch):
    """Our first encoder self-attention equals nn.MultiheadAttention with the same weights
    (its in_proj stacks W_q, W_k, W_v; its key_padding_mask is True where NOT allowed)."""
    ours = model.encoder_layers[0].self_attn
    d = cfg["dModel"]
    mha = torch.nn.MultiheadAttention(d, cfg["nHeads"], bias=cfg["bias"], batch_first=True)
    with torch.no_grad():
        mha.in_proj_weight.copy_(torch.cat([ours.W_q.weight, ours.W_k.weight, ours.W_v.weight]))
        mha.out_proj.weight.copy_(ours.W_o.weight)
        if cfg["bias"]:
            mha.in_proj_bias.copy_(torch.cat([ours.W_q.bias, ours.W_k.bias, ours.W_v.bias]))
            mha.out_proj.bias.copy_(ours.W_o.bias)
        src = batch["src"].long()
        x = torch.randn(src.shape[0], src.shape[1], d, generator=torch.Generator().manual_seed(5))
        want, _ = mha(x, x, x, key_padding_mask=(src == PAD), need_weights=False)
        got = ours(x, x, padding_mask(src))
    assert torch.allclose(got, want, atol=1e-5), f"attention differs from torch MHA by {(got - want).abs().max()}"


def plain_attention(cfg):
    """Whether the config's attention is what nn.MultiheadAttention computes (no option of issue 29 inside it)."""
    return (
        not cfg["qkNorm"]
        and cfg["nKvHeads"] in (0, cfg["nHeads"])
        and cfg["qkvBias"] == cfg["attnOutBias"]
        and cfg["attnSoftCap"] == 0
    )


def check_loss(logits, targets, eps):
    """The loss equals the label-smoothed cross-entropy written out by hand."""
    V = logits.shape[-1]
    logp = F.log_softmax(logits.reshape(-1, V).double(), dim=-1)
    t = targets.reshape(-1).long()
    keep = t != PAD
    per = -(1 - eps) * logp[keep, t[keep]] - (eps / V) * logp[keep].sum(-1)
    want = per.mean()
    got = loss_fn(logits, targets, eps).double()
    assert abs(got - want) < 1e-5, f"loss {got} != hand-written {want}"


def check_fully_masked_row():
    """A query that may attend to nothing gets zeros, and gradients stay finite."""
    q = torch.randn(1, 1, 3, 4, requires_grad=True)
    mask = torch.tensor([[True, False, False], [False, False, False], [True, True, True]])[None, None]
    y = attend(q, q, q, mask, torch.nn.Identity())
    assert torch.equal(y[0, 0, 1], torch.zeros(4)), "a fully masked row must give zeros"
    y.sum().backward()
    assert torch.isfinite(q.grad).all(), "a fully masked row must not give NaN gradients"
    assert causal_mask(3).shape == (1, 1, 3, 3) and padding_mask(torch.ones(2, 5)).shape == (2, 1, 1, 5)


def check_ties_and_pad_grad(model, cfg, batch):
    """Tied output weights are the embedding tensor itself; PAD embedding rows get no gradient
    from the embedding lookup (nn.Embedding padding_idx=0)."""
    if cfg["kind"] == "encoder-decoder":
        if cfg["tieEmbeddings"]:
            assert model.fc.weight is model.decoder_embedding.weight
        model.zero_grad(set_to_none=True)
        logits = model(batch["src"].long(), batch["tgt_in"].long())
        loss_fn(logits, batch["tgt_out"], cfg["labelSmoothing"]).backward()
        assert torch.count_nonzero(model.encoder_embedding.weight.grad[PAD]) == 0, "PAD source row got a gradient"
        if not cfg["tieEmbeddings"]:
            assert torch.count_nonzero(model.decoder_embedding.weight.grad[PAD]) == 0, "PAD target row got a gradient"
        model.zero_grad(set_to_none=True)
    elif cfg["tieEmbeddings"]:
        assert model.lm_head.weight is model.transformer.wte.weight


def run_self_checks(name, cfg, model, batch):
    """All checks for one golden config; raises AssertionError naming the broken property."""
    check_sinusoidal()
    check_positions()
    check_fully_masked_row()
    check_causal(model, cfg, batch)
    if cfg["kind"] == "encoder-decoder":
        check_source_padding(model, cfg, batch)
        if plain_attention(model.cfg):
            check_against_torch_mha(model, cfg, batch)
        check_loss(_logits(model, cfg, batch), batch["tgt_out"], cfg["labelSmoothing"])
    else:
        check_loss(_logits(model, cfg, batch), batch["targets"], cfg["labelSmoothing"])
    check_ties_and_pad_grad(model, cfg, batch)
    assert math.isfinite(_logits(model, cfg, batch).abs().max().item())
    print(f"  {name}: self-checks passed")
