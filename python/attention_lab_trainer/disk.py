"""What a full disk does to a PyTorch run: what it does to ours (src/lab/training/stopReasons.ts
and session.ts), so a run reads the same whichever engine trained it.

Rank 0's writes go through a RunWriter, which keeps the first DiskFull (files.py: the
old file intact, no temporary file left) and skips every write after it, so nothing is saved
out of order. The trainer then stops every process at the next step boundary, with no final
checkpoint, and the run is marked as ours marks it: run.json stopped, its error the one line
that says what was being saved, at which step, in which folder, which checkpoint is kept and
what to do, its step the kept checkpoint's (where a resume starts). The line also goes to
standard error, and the trainer exits 2.

Left out: the writes themselves (files.py) and the loop (train.py).
"""

import json
import os
import struct

from .files import DiskFull, update_run_json


def checkpoint_step(run_dir):
    """The step of the run's model.safetensors (the checkpoint a resume starts from), or None."""
    try:
        with open(os.path.join(run_dir, "model.safetensors"), "rb") as f:
            (n,) = struct.unpack("<Q", f.read(8))
            meta = json.loads(f.read(n).decode("utf-8")).get("__metadata__") or {}
        return int(meta["step"])
    except (OSError, ValueError, KeyError, struct.error):
        return None


def _writing_what(run_dir, file, step):
    rel, name = os.path.relpath(file, run_dir), os.path.basename(file)
    if name in ("model.safetensors", "optimizer.safetensors"):
        return f"saving the checkpoint at step {step}"
    if name == "metrics.jsonl":
        return f"logging the metrics of step {step}"
    if rel.startswith("snapshots"):  # the weights the lab draws the snapshot from
        return f"saving the attention snapshot of step {step}"
    if name == "run.json":
        return f"updating run.json at step {step}"
    return f"writing {rel}"


def disk_full_message(run_dir, file, step, kept):
    """stopReasons.ts diskFullMessage: the one line a full disk stops a run with."""
    what = f"Disk full while {_writing_what(run_dir, file, step)} in {run_dir}"
    if kept is None:
        return f"{what}; nothing was kept — free space and train again."
    return f"{what}; the checkpoint of step {kept} is kept — free space and `train --resume {run_dir}`."


class RunWriter:
    """Rank 0's writes to the run folder (`enabled` on rank 0 only): the first full disk is kept
    with the step being saved, and every write after it is skipped."""

    def __init__(self, run_dir, enabled):
        self.dir, self.enabled, self.full = run_dir, enabled, None

    def __call__(self, *call, **kwargs):
        """(step, write, *args, **kwargs): runs write(*args, **kwargs) for `step`, unless this is not
        rank 0 or the disk filled before (positional, so `kwargs` may hold a `step` of its own)."""
        step, write, *args = call
        if self.enabled and self.full is None:
            try:
                write(*args, **kwargs)
            except DiskFull as e:
                self.full = (e.file, step)

    def stopped(self):
        """Marks the run stopped by the full disk (as far as there is room) and returns the one line."""
        file, step = self.full
        kept = checkpoint_step(self.dir)
        message = disk_full_message(self.dir, file, step, kept)
        try:
            update_run_json(
                self.dir,
                status="stopped",
                error={"code": "disk/full", "message": message},
                **({"step": kept} if kept is not None else {}),
            )
        except (OSError, ValueError, DiskFull):
            pass  # no room even for run.json: it still says training at its last checkpoint, which resumes
        return message
