"""Where a trainer process starts: its arguments, its place among the processes (rank, device,
the process group) and the run's manifest, checked; and how a failure is recorded in run.json.

Left out: the training itself (train.py).
"""

import argparse
import json
import os

import torch
import torch.distributed as dist

from .files import DiskFull, UserError, update_run_json

MANIFEST_FORMAT, MANIFEST_VERSION = "attention-lab-pytorch", 3


def read_manifest(run_dir):
    path = os.path.join(run_dir, "pytorch", "manifest.json")
    if not os.path.exists(path):
        raise UserError(
            f"{run_dir} has no pytorch/manifest.json; prepare it with attention-lab train --engine pytorch (or "
            "--print-launch)."
        )
    with open(path, encoding="utf-8") as f:
        m = json.load(f)
    if m.get("format") != MANIFEST_FORMAT:
        raise UserError(f"{path} is not an Attention Lab trainer manifest (format {m.get('format')!r}).")
    if m.get("version") != MANIFEST_VERSION:
        raise UserError(
            f"{path} has version {m.get('version')!r}; this trainer reads version {MANIFEST_VERSION}: prepare "
            "the run again with this Attention Lab."
        )
    return m


def setup(args):
    """(rank, local_rank, world, device), with the process group started when world > 1."""
    world = int(os.environ.get("WORLD_SIZE", "1"))
    rank, local_rank = int(os.environ.get("RANK", "0")), int(os.environ.get("LOCAL_RANK", "0"))
    want = args.device if args.device != "auto" else ("cuda" if torch.cuda.is_available() else "cpu")
    if want == "cuda":
        if not torch.cuda.is_available():
            raise UserError(
                f"--device cuda, but torch {torch.__version__} sees no GPU here; use --device cpu (or auto)."
            )
        if local_rank >= torch.cuda.device_count():
            raise UserError(
                f"local rank {local_rank} needs GPU {local_rank}, but this machine has "
                f"{torch.cuda.device_count()}; use --nproc_per_node {torch.cuda.device_count()}."
            )
        torch.cuda.set_device(local_rank)
        device = torch.device("cuda", local_rank)
    else:
        device = torch.device("cpu")
    if args.bf16 and device.type != "cuda":
        raise UserError("--bf16 autocasts on CUDA only; drop --bf16 or train with --device cuda.")
    if world > 1:
        dist.init_process_group(backend="nccl" if device.type == "cuda" else "gloo")
    return rank, local_rank, world, device


def parse_args(argv):
    ap = argparse.ArgumentParser(description="Attention Lab's PyTorch engine: trains a run folder the lab prepared.")
    # Not --run: torchrun (torch >= 2) reads it as an ambiguous abbreviation of its --run-path / --run_path.
    ap.add_argument("--run-dir", dest="run", required=True, help="the run folder (with pytorch/manifest.json)")
    ap.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto")
    ap.add_argument("--bf16", action="store_true", help="bf16 autocast (CUDA)")
    ap.add_argument("--until", type=int, default=None, help="stop after this step with a checkpoint")
    ap.add_argument(
        "--accumulate", type=int, default=1, help="micro-batches per process and step (gradient accumulation)"
    )
    ap.add_argument(
        "--stop-on-stdin-eof",
        action="store_true",
        help="stop with a checkpoint when standard input closes (the lab's launches)",
    )
    return ap.parse_args(argv)


def fail_run(run_dir, code, message):
    try:
        update_run_json(run_dir, status="failed", error={"code": code, "message": message})
    except (OSError, ValueError, DiskFull):
        pass  # run.json unreadable, or no room to rewrite it: the line on standard error still says why
