"""Attention Lab's PyTorch engine: trains a run folder the lab prepared, with torchrun.

    torchrun --nproc_per_node N attention_lab_trainer --run-dir DIR [--device cpu|cuda|auto] [--bf16]
    python3 attention_lab_trainer --run-dir DIR                 (one process)

(`attention_lab_trainer` is this package's folder, run through its __main__.py.)

It reads the run folder's `pytorch/manifest.json` (written by the lab, src/lab/pytorch/
trainerInputs.ts: model config, parameter order, resolved optimizer and schedule, cadences,
data layout), builds the model from model.py, starts from the run's checkpoint (at step 0,
the weights the lab initialized, so both engines start from the same numbers), draws our
batches (data.py), steps with our optimizer recipe and schedule, and writes
metrics.jsonl, model.safetensors, optimizer.safetensors and run.json in our formats and
cadences, rank 0 only, atomically. Step lines carry the UTF-8 bytes their targets stand for
and validation lines bits per byte, counted from the manifest's token byte lengths as our
engine counts them (bitsPerByte.ts). For attention over training it drops the weights of each
snapshot step as snapshots/step-N.weights.safetensors; the lab turns them into attention
snapshots and head scores with its own model (one implementation of what a snapshot is).
A full disk stops the run as it stops ours (disk.py): nothing half-written, the last
checkpoint kept, every process stopped at the next step boundary, run.json stopped with the
one-line reason.

DDP (torch.nn.parallel.DistributedDataParallel): every process draws the whole global batch
(cheap: ids only), runs its contiguous share of the rows, and scales its summed loss by
world / (target tokens of the global batch), so DDP's gradient average is exactly the
gradient of the global batch's mean loss: N processes train the run as one, to float
rounding. NCCL on CUDA (one GPU per local rank, torch.cuda.set_device), gloo on CPU;
optional bf16 autocast on CUDA. Dropout is seeded per (seed, step, rank).

Exit codes: 0 done or stopped, 2 a problem the user fixes or a full disk (one line on stderr),
1 a failure.
Left out: validation exact match and BLEU for pairs (null here; `attention-lab eval` scores a
checkpoint), attention snapshots themselves (the lab's), gradient accumulation.
"""

import contextlib
import json
import math
import os
import sys
import time

import torch
import torch.distributed as dist
import torch.nn.functional as F

from .control import Control
from .data import read_ints, shard, train_batches, validation_batches
from .disk import RunWriter, checkpoint_step
from .files import ParamMap, UserError, append_metrics, read_checkpoint, update_run_json
from .model import build_model
from .rng import STREAMS, step_seed
from .schedule import learning_rate
from .startup import fail_run, parse_args, read_manifest, setup
from .state import RunState

LIKELY_CAUSES = (
    "Likely causes: the learning rate is too high (lower lr or factor), there is no warm-up (set schedule.warmup), "
    "or floating-point overflow (enable clipGradNorm, e.g. 1.0). Resume from the last good checkpoint after "
    "changing the config."
)


class NonFinite(Exception):
    pass


def forward(model, kind, b, device):
    if kind == "encoder-decoder":
        return model(b["src"].to(device, non_blocking=True), b["input"].to(device, non_blocking=True))
    return model(b["input"].to(device, non_blocking=True))


class Run:
    """One training session of a prepared run folder."""

    def __init__(self, args, rank, world, device):
        self.args, self.rank, self.world, self.device = args, rank, world, device
        self.dir = args.run
        self.m = read_manifest(self.dir)
        self.cfg = self.m["config"]
        self.kind = self.cfg["kind"]
        self.ignore = self.m["padId"] if self.m["padId"] >= 0 else -100
        self.model = build_model(self.cfg)
        self.model.train()
        self.pmap = ParamMap(self.model, self.m["params"])
        tensors, _, self.step = read_checkpoint(os.path.join(self.dir, "model.safetensors"), "model")
        self.start = self.step
        self.pmap.load(tensors)
        self.model.to(device)
        self.state = RunState(self.dir, self.model, self.pmap, self.m)
        self.opt, self.opt_step0 = self.state.optimizer(self.step)
        self.batches = train_batches(os.path.join(self.dir, "pytorch"), self.m)
        self.val = validation_batches(os.path.join(self.dir, "pytorch"), self.m) if rank == 0 else []
        self.net = self.model
        if world > 1:
            ids = [device.index] if device.type == "cuda" else None
            self.net = torch.nn.parallel.DistributedDataParallel(self.model, device_ids=ids)
        self.autocast = args.bf16
        self.best = self.read_best()
        self.token_bytes = self.read_token_bytes()
        self.write = RunWriter(self.dir, rank == 0)
        self.check_shares()

    def read_token_bytes(self):
        """Each id's UTF-8 byte length, 0 past the tokenizer's ids (bitsPerByte.ts ByteCounter)."""
        tb = self.m["tokenBytes"]
        ids = read_ints(os.path.join(self.dir, "pytorch", tb["file"]), "i32").to(torch.int64)
        table = torch.zeros(max(tb["count"], self.cfg["vocabSize"]), dtype=torch.int64)
        table[: ids.numel()] = ids
        return table

    def bytes(self, targets):
        """The bytes of text the scored targets stand for (the padding the loss ignores counts nothing)."""
        t = targets.reshape(-1)
        return int(self.token_bytes[t[t != self.ignore]].sum())

    def check_shares(self):
        """Every process and micro-batch gets rows: a fixed batch divides evenly, a pairs batch (at least
        `rows` rows) has enough."""
        d, parts = self.m["data"], self.world * self.args.accumulate
        rows = d.get("rows", 1)
        if self.args.accumulate < 1:
            raise UserError(f"--accumulate must be 1 or more, got {self.args.accumulate}.")
        if d["kind"] == "pairs" and parts > rows:
            raise UserError(
                f"{parts} shares (processes x --accumulate) are more than the {rows} rows a batch of this run "
                "has at least; use fewer."
            )
        if d["kind"] != "pairs" and rows % parts:
            raise UserError(
                f"the batch of {rows} rows does not divide into {parts} shares (processes x --accumulate); use "
                "a number of processes that divides it."
            )

    def read_best(self):
        with open(os.path.join(self.dir, "run.json"), encoding="utf-8") as f:
            return json.load(f).get("bestValLoss")

    # ------------------------------------------------------------------------- one step

    def loss_sum(self, b):
        """Summed label-smoothed cross-entropy of this process's rows, and how many targets it counted."""
        with torch.autocast(device_type=self.device.type, dtype=torch.bfloat16, enabled=self.autocast):
            logits = forward(self.net, self.kind, b, self.device)
        targets = b["targets"].to(self.device)
        V = logits.shape[-1]
        return F.cross_entropy(
            logits.float().reshape(-1, V),
            targets.reshape(-1),
            ignore_index=self.ignore,
            reduction="sum",
            label_smoothing=self.cfg["labelSmoothing"],
        )

    def count(self, targets):
        return int((targets != self.ignore).sum()) if self.ignore >= 0 else targets.numel()

    def train_step(self, step):
        batch = self.batches.batch(step)
        count = self.count(batch["targets"])  # target tokens of the whole global batch
        torch.manual_seed(step_seed(self.m["training"]["seed"], STREAMS["dropout"], step) * 1024 + self.rank)
        share, k = shard(batch, self.rank, self.world), self.args.accumulate
        total = torch.zeros(1, device=self.device)
        for i in range(k):
            # Gradients accumulate over this process's micro-batches; DDP averages them across
            # processes once, after the last.
            with self.net.no_sync() if self.world > 1 and i < k - 1 else contextlib.nullcontext():
                local = self.loss_sum(shard(share, i, k))
                (local * (self.world / max(1, count))).backward()
            total += local.detach()
        if self.world > 1:
            dist.all_reduce(total)
        loss = total.item() / max(1, count)
        if not math.isfinite(loss):
            raise NonFinite(
                f"The loss became {loss} at step {step}, so training stopped before updating the parameters. "
                f"{LIKELY_CAUSES}"
            )
        clip = self.m["optimizer"]["clipGradNorm"]
        norm = float(torch.nn.utils.clip_grad_norm_(self.model.parameters(), clip if clip > 0 else math.inf))
        if not math.isfinite(norm):
            raise NonFinite(
                f"Gradient is not finite at step {step} (norm {norm}). The parameters were left unchanged. "
                f"{LIKELY_CAUSES}"
            )
        lr = learning_rate(self.m["optimizer"], self.opt_step0 + step - self.start)
        for g in self.opt.param_groups:
            g["lr"] = lr
        self.opt.step()
        self.opt.zero_grad(set_to_none=True)
        return loss, lr, norm, count, self.bytes(batch["targets"])

    def evaluate(self):
        """Token-weighted mean loss over the validation batches, no dropout, no label smoothing, and bits per
        byte (evaluate.ts)."""
        self.model.eval()
        total, n, nbytes = 0.0, 0, 0
        with torch.no_grad():
            for b in self.val:
                with torch.autocast(device_type=self.device.type, dtype=torch.bfloat16, enabled=self.autocast):
                    logits = forward(self.model, self.kind, b, self.device)
                t = b["targets"].to(self.device)
                total += F.cross_entropy(
                    logits.float().reshape(-1, logits.shape[-1]),
                    t.reshape(-1),
                    ignore_index=self.ignore,
                    reduction="sum",
                ).item()
                n += self.count(b["targets"])
                nbytes += self.bytes(b["targets"])
        self.model.train()
        loss = total / n if n else math.nan
        bpb = loss * n / (nbytes * math.log(2)) if nbytes > 0 else None
        return {
            "loss": loss,
            "ppl": math.exp(loss) if math.isfinite(loss) and loss < 700 else math.inf,
            "exactMatch": None,
            "bleu": None,
            "bpb": bpb,
        }

    # ------------------------------------------------------------------------- files (rank 0)

    def save_checkpoint(self, step):
        self.state.save_checkpoint(step, self.opt_step0 + step - self.start)
        update_run_json(self.dir, step=step, bestValLoss=self.best)

    # ------------------------------------------------------------------------- the loop

    def train(self, control):
        """Steps to the planned total (or --until / the manifest's stopAt); returns 'completed', 'stopped'
        or 'disk full' (every process: rank 0 found the disk full, and self.write.stopped() says so)."""
        t = self.m["training"]
        stop_at = self.args.until if self.args.until is not None else t.get("stopAt")
        last = t["steps"] if stop_at is None else min(stop_at, t["steps"])
        reason = "stopped" if last < t["steps"] else "completed"
        ends = set(t["segmentEnds"])
        zero, write = self.rank == 0, self.write
        step = self.step
        write(step, update_run_json, self.dir, status="training", error=None, backendUsed=self.describe())
        if zero:
            print(
                f"attention-lab trainer: step {self.step} -> {last} of {t['steps']} on {self.describe()}",
                file=sys.stderr,
                flush=True,
            )
        t0 = since = time.perf_counter()
        tokens_since = 0
        while step < last:
            # A full disk on rank 0 stops every process here, at the same step (Control.poll).
            full = lambda: write.full is not None  # noqa: E731
            stop, pause = control.poll(full())
            if pause and not stop:
                stop = not control.wait_while_paused(
                    lambda at=step: write(at, update_run_json, self.dir, status="paused"),
                    lambda at=step: write(at, update_run_json, self.dir, status="training"),
                    full,
                )
                since, tokens_since = time.perf_counter(), 0
            if stop:
                control.consume_stop()
                reason = "stopped"
                break
            step += 1
            loss, lr, norm, count, nbytes = self.train_step(step)
            tokens_since += count
            now = time.perf_counter()
            write(
                step,
                append_metrics,
                self.dir,
                {
                    "type": "step",
                    "step": step,
                    "loss": loss,
                    "lr": lr,
                    "gradNorm": norm,
                    "tokens": count,
                    "tokensPerSec": tokens_since / max(1e-3, now - since),
                    "elapsedMs": (now - t0) * 1000,
                    "bytes": nbytes,
                },
            )
            if now - since > 2:
                since, tokens_since = now, 0
            if zero and ((t["evalEvery"] > 0 and step % t["evalEvery"] == 0) or step in ends):
                ev = self.evaluate()
                if self.best is None or ev["loss"] < self.best:
                    self.best = ev["loss"]
                write(step, append_metrics, self.dir, {"type": "eval", "step": step, **ev})
            if t["snapshotEvery"] > 0 and step % t["snapshotEvery"] == 0:
                write(step, self.state.save_weights, step)
            if t["checkpointEvery"] > 0 and step % t["checkpointEvery"] == 0 and step != t["steps"]:
                write(step, self.save_checkpoint, step)
        self.step = step
        write(step, self.save_checkpoint, step)  # skipped after a full disk: the last checkpoint stays the run's
        # Stopped because the lab went away (a window reload): run.json keeps saying training, at this
        # checkpoint, so the next lab shows the run interrupted there and offers Resume.
        status = "training" if reason == "stopped" and control.unwatched else reason
        write(step, update_run_json, self.dir, status=status, step=step, bestValLoss=self.best)
        return "disk full" if control.agree(write.full is not None) else reason

    def describe(self):
        where = "cuda" if self.device.type == "cuda" else "cpu"
        return f"pytorch {where}{f' ×{self.world}' if self.world > 1 else ''}{' bf16' if self.autocast else ''}"


def main(argv):
    args = parse_args(argv)
    args.run = os.path.abspath(args.run)
    rank = int(os.environ.get("RANK", "0"))
    run = None
    try:
        rank, _, world, device = setup(args)
        run = Run(args, rank, world, device)
        control = Control(os.path.join(args.run, "pytorch"), rank, world, device, args.stop_on_stdin_eof)
        if run.train(control) == "disk full":
            if rank == 0:
                print(f"attention-lab trainer: {run.write.stopped()}", file=sys.stderr, flush=True)
            code = 2
        else:
            code = 0
    except UserError as e:
        print(f"attention-lab trainer: {e}", file=sys.stderr, flush=True)
        code = 2
    except NonFinite as e:
        message = f"{e} The last good checkpoint (step {checkpoint_step(args.run) or 0}) is kept."
        if rank == 0:
            fail_run(args.run, "train/nonFinite", message)
        print(f"attention-lab trainer: {message}", file=sys.stderr, flush=True)
        code = 1
    except Exception as e:  # noqa: BLE001 -- recorded in run.json, then re-raised with its traceback
        if rank == 0 and run is not None:
            fail_run(args.run, "internal", f"Internal error in the PyTorch trainer: {type(e).__name__}: {e}")
        raise
    return code


def run(argv):
    """Trains as the command line says and leaves the process with the trainer's exit code."""
    try:  # torchrun reports a failed process's exception (not only its exit code) through this
        from torch.distributed.elastic.multiprocessing.errors import record
    except ImportError:
        record = lambda f: f  # noqa: E731
    status = record(main)(argv)
    if dist.is_available() and dist.is_initialized():
        # Leave without running destructors, every process past its last collective first:
        # torch 1.13's gloo process group can deadlock when DDP's reducer frees it at
        # interpreter exit (its worker thread waits for the GIL the joining thread holds).
        if status == 0:
            dist.barrier()
        dist.destroy_process_group()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(status)
    sys.exit(status)
