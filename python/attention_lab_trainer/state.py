"""The optimizer and the checkpoints of a PyTorch training session, in our formats: Adam or
AdamW as our engine configures it (decoupled decay on tensors of dimension >= 2, the run's
betas and epsilon; the learning rate is set each step from our schedule), or Muon for the
parameters the manifest marks hidden with that AdamW for the rest (muon.py), its moments loaded
from and saved to optimizer.safetensors as two flat vectors in our parameter order (Muon's
momentum where Adam's first moments go, zeros for its second), the model
under our names in model.safetensors — the pair written together, atomically — and the
weights of a snapshot step, which the lab turns into an attention snapshot.

Left out: run.json and metrics (files.py), the loop (train.py).
"""

import json
import os

import torch

from .files import UserError, checkpoint_meta, encode_safetensors, read_checkpoint, write_files_atomic
from .muon import build_muon_adamw

_NAMES = {"adam": ("Adam", "paper"), "adamw": ("AdamW", "adamw"), "muon": ("Muon", "muon")}


def check_optimizer_kind(saved_config, kind):
    """Refuses Muon's state for an Adam(W) run and the reverse (checkpoint.ts checkOptimizerKind, the
    same line): `saved_config` is optimizer.safetensors' `optimizer` metadata (absent: Adam's)."""
    try:
        saved = json.loads(saved_config)["type"] if saved_config is not None else "adamw"
    except (ValueError, KeyError, TypeError):
        raise UserError("optimizer.safetensors has an unreadable optimizer config in its metadata; retrain.") from None
    if (saved == "muon") == (kind == "muon"):
        return
    was, was_preset = _NAMES.get(saved, (saved, saved))
    now, now_preset = _NAMES.get(kind, (kind, kind))
    raise UserError(
        f"optimizer.safetensors holds {was}'s optimizer state but this run now trains with {now}; resume it "
        f"with optimizer {was_preset} (training.optimizer in run.json), or start a new run to train with "
        f"{now_preset}."
    )


class RunState:
    """The optimizer and checkpoint files of one run folder, for the model and parameter map given."""

    def __init__(self, run_dir, model, pmap, manifest):
        self.dir, self.model, self.pmap, self.m = run_dir, model, pmap, manifest
        self.opt = self.muon = None

    def optimizer(self, step):
        """(optimizer, its step count) at the run's checkpoint `step`: fresh moments at step 0 without a file
        (exact)."""
        o = self.m["optimizer"]
        params = list(self.model.parameters())
        betas = (o["beta1"], o["beta2"])
        self.muon = None
        if o["type"] == "muon":
            self.opt = build_muon_adamw(o, params, self.hidden_rows())
            self.muon = self.opt.muon
        elif o["type"] == "adamw":
            groups = [
                {"params": [p for p in params if p.dim() >= 2], "weight_decay": o["weightDecay"]},
                {"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0},
            ]
            self.opt = torch.optim.AdamW(groups, lr=o["lr"], betas=betas, eps=o["eps"])
        else:
            self.opt = torch.optim.Adam(params, lr=o["lr"], betas=betas, eps=o["eps"], weight_decay=0.0)
        path = os.path.join(self.dir, "optimizer.safetensors")
        if step == 0 and not os.path.exists(path):
            return self.opt, 0
        tensors, meta, saved = read_checkpoint(path, "optimizer")
        check_optimizer_kind(meta.get("optimizer"), o["type"])
        if saved != step:
            raise UserError(
                f"optimizer.safetensors is from step {saved} but model.safetensors from step {step}; resume "
                "would not be exact — start a new run from this model."
            )
        like = {p: p for p in params}
        m, v = self.pmap.unflat(tensors["adam.m"], like), self.pmap.unflat(tensors["adam.v"], like)
        opt_step = int(meta.get("optimizerStep", saved))
        for p in params:
            if self.muon is not None and p in self.muon.views:
                self.muon.state[p] = {"momentum_buffer": m[p]}
            else:
                self.adam().state[p] = {"step": torch.tensor(float(opt_step)), "exp_avg": m[p], "exp_avg_sq": v[p]}
        return self.opt, opt_step

    def adam(self):
        """The torch Adam(W) of the run (the AdamW part of Muon's)."""
        return self.opt.adamw if self.muon is not None else self.opt

    def hidden_rows(self):
        """{model tensor: its hidden matrices as row ranges}, from the manifest's `hidden` marks (our
        engine's, never re-derived): a fused c_attn holds three, q's H·D rows then k's and v's Hkv·D
        (ParamMap's row ranges)."""
        rows = {}
        for (_, param, part_rows, shape), entry in zip(self.pmap.entries, self.m["params"]):
            if not entry.get("hidden"):
                continue
            rows.setdefault(param, []).append((0, shape[0]) if part_rows is None else part_rows)
        return rows

    def moments(self, p):
        """(first moment or Muon's momentum, second moment) of tensor p, zeros before its first step."""
        if self.muon is not None and p in self.muon.views:
            st = self.muon.state.get(p, {})
            return st.get("momentum_buffer", torch.zeros_like(p)), torch.zeros_like(p)
        st = self.adam().state.get(p, {})
        return st.get("exp_avg", torch.zeros_like(p)), st.get("exp_avg_sq", torch.zeros_like(p))

    def model_tensors(self):
        return self.pmap.ours({p: p for p in self.model.parameters()})

    def save_checkpoint(self, step, opt_step):
        """optimizer.safetensors and model.safetensors of `step` as one pair (checkpoint.ts saveCheckpoint)."""
        params = list(self.model.parameters())
        moments = {p: self.moments(p) for p in params}
        m = self.pmap.flat({p: mv[0] for p, mv in moments.items()})
        v = self.pmap.flat({p: mv[1] for p, mv in moments.items()})
        opt_meta = {
            **checkpoint_meta(step, self.m["config"], "optimizer"),
            "optimizerStep": str(opt_step),
            "optimizer": json.dumps(self.m["optimizer"], separators=(",", ":")),
        }
        del opt_meta["config"]
        write_files_atomic(
            [
                (
                    os.path.join(self.dir, "optimizer.safetensors"),
                    encode_safetensors([("adam.m", m), ("adam.v", v)], opt_meta),
                ),
                (
                    os.path.join(self.dir, "model.safetensors"),
                    encode_safetensors(self.model_tensors(), checkpoint_meta(step, self.m["config"], "model")),
                ),
            ]
        )

    def save_weights(self, step):
        """snapshots/step-N.weights.safetensors: the model at a snapshot step, for the lab to draw."""
        os.makedirs(os.path.join(self.dir, "snapshots"), exist_ok=True)
        path = os.path.join(self.dir, "snapshots", f"step-{step:07d}.weights.safetensors")
        write_files_atomic(
            [(path, encode_safetensors(self.model_tensors(), checkpoint_meta(step, self.m["config"], "model")))]
        )
