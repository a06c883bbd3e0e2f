"""The optimizer recipes of the golden files, as our TypeScript engine implements them.

encoder-decoder: Adam (β 0.9 / 0.98, ε 1e-9, no weight decay, no clipping) with the paper's
warm-up schedule (§5.3), the rate set by hand before each 1-based step.
decoder-only: AdamW (β 0.9 / 0.95, ε 1e-8) at a constant rate 0.01 with weight decay 0.1 on
tensors of dim ≥ 2 only (nanoGPT's configure_optimizers, embeddings included) and
clip_grad_norm_(1.0) before each step (torch scales by max_norm / (norm + 1e-6) when that is < 1).

Left out: cosine decay, mixed precision, fused / foreach optimizer kernels (foreach=False keeps
the plain per-tensor update).
"""

import torch

from reference import loss_fn

ADAM_META = {
    "type": "adam",
    "beta1": 0.9,
    "beta2": 0.98,
    "eps": 1e-9,
    "weightDecay": 0,
    "clipGradNorm": 0,
    "schedule": {"type": "noam", "warmup": 4, "dModel": 16, "factor": 1},
}
ADAMW_META = {
    "type": "adamw",
    "lr": 0.01,
    "beta1": 0.9,
    "beta2": 0.95,
    "eps": 1e-8,
    "weightDecay": 0.1,
    "clipGradNorm": 1.0,
    "schedule": {"type": "constant", "warmup": 0},
}


def optimizer_meta(cfg):
    """The optimizer description stored in a golden file's metadata."""
    return ADAM_META if cfg["kind"] == "encoder-decoder" else ADAMW_META


def forward_loss(model, cfg, batch):
    """(logits (B, T, V), mean loss over non-PAD targets)."""
    if cfg["kind"] == "encoder-decoder":
        logits = model(batch["src"].long(), batch["tgt_in"].long())
        return logits, loss_fn(logits, batch["tgt_out"], cfg["labelSmoothing"])
    logits = model(batch["idx"].long())
    return logits, loss_fn(logits, batch["targets"], cfg["labelSmoothing"])


def noam_lr(step, d_model, warmup, factor):
    """Paper §5.3: lr = factor · d_model^-0.5 · min(step^-0.5, step · warmup^-1.5), step 1-based."""
    return factor * d_model**-0.5 * min(step**-0.5, step * warmup**-1.5)


def make_optimizer(model, cfg, meta=None):
    """(optimizer, metadata, lr_at(step)) for cfg's kind, or for `meta` (ADAM_META or ADAMW_META) when given."""
    params = list(model.parameters())
    m = meta or optimizer_meta(cfg)
    if m["type"] == "adam":
        opt = torch.optim.Adam(
            params, lr=0.0, betas=(m["beta1"], m["beta2"]), eps=m["eps"], weight_decay=0.0, foreach=False
        )
        sched = m["schedule"]
        return opt, m, lambda s: noam_lr(s, sched["dModel"], sched["warmup"], sched["factor"])
    groups = [
        {"params": [p for p in params if p.dim() >= 2], "weight_decay": m["weightDecay"]},
        {"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0},
    ]
    opt = torch.optim.AdamW(groups, lr=m["lr"], betas=(m["beta1"], m["beta2"]), eps=m["eps"], foreach=False)
    return opt, m, lambda s: m["lr"]


def train(model, cfg, batch, n_steps, grads_out=None, meta=None):
    """n_steps updates on one batch; returns the n_steps + 1 losses (before each update and
    after the last). If grads_out is a list, appends each step's {name: gradient} before clipping.
    `meta` picks the recipe (default: the one of cfg's kind)."""
    opt, meta, lr_at = make_optimizer(model, cfg, meta)
    losses = []
    for step in range(1, n_steps + 1):
        opt.zero_grad(set_to_none=True)
        _, loss = forward_loss(model, cfg, batch)
        loss.backward()
        losses.append(loss.item())
        if grads_out is not None:
            grads_out.append({k: p.grad.detach().clone() for k, p in model.named_parameters()})
        if meta["clipGradNorm"] > 0:
            torch.nn.utils.clip_grad_norm_(model.parameters(), meta["clipGradNorm"])
        for group in opt.param_groups:
            group["lr"] = lr_at(step)
        opt.step()
    with torch.no_grad():
        losses.append(forward_loss(model, cfg, batch)[1].item())
    return losses
