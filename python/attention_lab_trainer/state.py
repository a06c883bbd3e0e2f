"""The optimizer and the checkpoints of a PyTorch training session, in our formats: Adam or
AdamW as our engine configures it (decoupled decay on tensors of dimension >= 2, the run's
betas and epsilon; the learning rate is set each step from our schedule), its moments loaded
from and saved to optimizer.safetensors as two flat vectors in our parameter order, the model
under our names in model.safetensors — the pair written together, atomically — and the
weights of a snapshot step, which the lab turns into an attention snapshot.

Left out: run.json and metrics (files.py), the loop (train.py).
"""

import json
import os

import torch

from .files import UserError, checkpoint_meta, encode_safetensors, read_checkpoint, write_files_atomic


class RunState:
    """The optimizer and checkpoint files of one run folder, for the model and parameter map given."""

    def __init__(self, run_dir, model, pmap, manifest):
        self.dir, self.model, self.pmap, self.m = run_dir, model, pmap, manifest
        self.opt = None

    def optimizer(self, step):
        """(optimizer, its step count) at the run's checkpoint `step`: fresh moments at step 0 without a file
        (exact)."""
        o = self.m["optimizer"]
        params = list(self.model.parameters())
        betas = (o["beta1"], o["beta2"])
        if o["type"] == "adamw":
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
        if saved != step:
            raise UserError(
                f"optimizer.safetensors is from step {saved} but model.safetensors from step {step}; resume "
                "would not be exact — start a new run from this model."
            )
        like = {p: p for p in params}
        m, v = self.pmap.unflat(tensors["adam.m"], like), self.pmap.unflat(tensors["adam.v"], like)
        opt_step = int(meta.get("optimizerStep", saved))
        for p in params:
            self.opt.state[p] = {"step": torch.tensor(float(opt_step)), "exp_avg": m[p], "exp_avg_sq": v[p]}
        return self.opt, opt_step

    def model_tensors(self):
        return self.pmap.ours({p: p for p in self.model.parameters()})

    def save_checkpoint(self, step, opt_step):
        """optimizer.safetensors and model.safetensors of `step` as one pair (checkpoint.ts saveCheckpoint)."""
        st = self.opt.state
        params = list(self.model.parameters())
        m = self.pmap.flat({p: st[p]["exp_avg"] if p in st else torch.zeros_like(p) for p in params})
        v = self.pmap.flat({p: st[p]["exp_avg_sq"] if p in st else torch.zeros_like(p) for p in params})
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
