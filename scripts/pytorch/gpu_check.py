"""GPU check of Attention Lab's PyTorch engine, for a machine with torch (>= 1.13) and CUDA and
nothing else (no Node, no network): trains one run folder that `attention-lab train
--engine pytorch --print-launch` prepared elsewhere, with the folder's own copy of the trainer,
in four variants from the same step-0 weights — CUDA fp32, CUDA with bf16 autocast, CUDA fp32
under torchrun (the NCCL process group the lab starts for --nproc N, here with one process),
and the CPU — each in a copy of the folder, one process each; then continues the CUDA fp32 copy on
the CPU for a few steps (a checkpoint written on the GPU resumes anywhere). Prints, per variant,
tokens/s (median [min-max] over blocks of 10 steps after the first, from the run's own
metrics.jsonl), the first and last training loss, the last validation loss and the wall time,
and how far the curves are apart: CUDA fp32 vs the CPU (same math, other kernels) and bf16 vs
fp32 (lower precision), step by step.

    python3 scripts/pytorch/gpu_check.py RUN_DIR [--steps 200] [--cpu-steps 20]

Exit status 0 when every variant trained and the checks hold, 1 otherwise (each failure says
what). Left out: several GPUs (DDP over NCCL needs one GPU per process; run the folder's
`torchrun --nproc_per_node N` command from --print-launch for that); the torchrun variant
checks the NCCL set-up and its cost, not the all-reduce between GPUs.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

BLOCK = 10


def metrics(run):
    steps, evals = [], []
    with open(os.path.join(run, "metrics.jsonl"), encoding="utf-8") as f:
        for line in f:
            if line.strip():
                m = json.loads(line)
                (steps if m["type"] == "step" else evals).append(m)
    return steps, evals


def block_rates(steps):
    """Tokens/s of each block of BLOCK steps after the first (the rule of `attention-lab bench`)."""
    rates = []
    for end in range(2 * BLOCK, len(steps) + 1, BLOCK):
        ms = steps[end - 1]["elapsedMs"] - steps[end - BLOCK - 1]["elapsedMs"]
        if ms > 0:
            rates.append(sum(s["tokens"] for s in steps[end - BLOCK : end]) / (ms / 1000))
    return rates


def torchrun_defaults_work():
    """torch 1.x's torchrun fails on its own stream-redirection defaults under Python 3.11."""
    import torch

    return int(torch.__version__.split(".")[0]) >= 2


def train(src, dst, flags, until, torchrun=False):
    """Copies `src` to `dst` (unless it is already there) and trains it to step `until`, under
    torchrun with one process when asked; returns (seconds, stderr)."""
    if src != dst:
        shutil.copytree(src, dst, ignore=shutil.ignore_patterns("snapshots", ".*.tmp"))
    launcher = ["-m", "torch.distributed.run", "--standalone", "--nnodes", "1", "--nproc_per_node", "1"]
    if torchrun and not torchrun_defaults_work():
        launcher += ["--redirects", "1", "--tee", "2"]  # as the lab launches it (src/lab/pytorch/launch.node.ts)
    cmd = [
        sys.executable,
        *(launcher if torchrun else []),
        os.path.join(dst, "pytorch", "trainer", "attention_lab_trainer"),
        "--run-dir",
        dst,
        *flags,
        "--until",
        str(until),
    ]
    t0 = time.perf_counter()
    r = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited with {r.returncode}:\n{r.stderr[-3000:]}")
    return time.perf_counter() - t0, r.stderr


def describe(name, steps, evals, seconds):
    rates = block_rates(steps)
    rate = f"{statistics.median(rates):,.0f} [{min(rates):,.0f}-{max(rates):,.0f}]" if rates else "- (too few steps)"
    last_eval = f"{evals[-1]['loss']:.4f} @ {evals[-1]['step']}" if evals else "-"
    first, last = steps[0]["loss"], steps[-1]["loss"]
    return f"{name:<12} {len(steps):>5} {rate:>28} {first:>10.4f} {last:>10.4f} {last_eval:>16} {seconds:>8.1f}"


def gap(a, b):
    common = min(len(a), len(b))
    return max(abs(a[i]["loss"] - b[i]["loss"]) for i in range(common)), common


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("run", help="a run folder prepared with attention-lab train --engine pytorch --print-launch")
    ap.add_argument("--steps", type=int, default=200, help="steps on CUDA (each precision)")
    ap.add_argument("--cpu-steps", type=int, default=20, help="steps on the CPU (20 or more for a tokens/s figure)")
    ap.add_argument(
        "--gpu",
        default="cuda",
        help="the device standing for the GPU (cpu: a dry run of this script where there is none)",
    )
    a = ap.parse_args()
    import torch

    run = os.path.abspath(a.run)
    with open(os.path.join(run, "run.json"), encoding="utf-8") as f:
        spec = json.load(f)
    print(
        f"torch {torch.__version__}, Python {sys.version.split()[0]}, CUDA {torch.version.cuda}: "
        + (", ".join(torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())) or "no GPU")
        + f"; bf16 {'yes' if torch.cuda.is_available() and torch.cuda.is_bf16_supported() else 'no'}"
    )
    cfg, t = spec["config"], spec["spec"]["training"]
    print(
        f"run {run}: {cfg['kind']} d={cfg['dModel']} layers={cfg['nEncoderLayers']}+{cfg['nDecoderLayers']} "
        f"heads={cfg['nHeads']}, batch {t['batchSize']}, context {t['seqLen']}, {t['steps']} steps planned, "
        f"at step {spec['step']}"
    )
    if spec["step"] != 0 or a.steps + 5 > t["steps"]:
        sys.exit(
            f"the folder must be at step 0 with at least --steps + 5 = {a.steps + 5} steps planned; prepare it "
            "again (attention-lab train … --steps N --engine pytorch --print-launch)."
        )
    # Dropout draws its masks from each device's own generator: curves then part by chance,
    # so the 1e-3 checks below hold only for a folder prepared with dropout 0.
    exact = cfg.get("dropout", 0) == 0
    if not exact:
        print(f"dropout {cfg['dropout']}: the devices draw different masks, so the gaps below are shown, not checked")
    problems, results = [], {}
    with tempfile.TemporaryDirectory(prefix="attention-lab-gpu-check-") as tmp:
        fp32 = f"{a.gpu} fp32"
        variants = [
            (fp32, ["--device", a.gpu], a.steps, False),
            *([("cuda bf16", ["--device", "cuda", "--bf16"], a.steps, False)] if a.gpu == "cuda" else []),
            (f"{a.gpu} torchrun", ["--device", a.gpu], a.steps, True),
            ("cpu", ["--device", "cpu"], a.cpu_steps, False),
        ]
        print(
            f"\n{'variant':<12} {'steps':>5} {'tokens/s median [min-max]':>28} {'first loss':>10} "
            f"{'last loss':>10} {'last val loss':>16} {'wall s':>8}"
        )
        for name, flags, until, torchrun in variants:
            dst = os.path.join(tmp, name.replace(" ", "-"))
            try:
                seconds, _ = train(run, dst, flags, until, torchrun)
            except RuntimeError as e:
                problems.append(f"{name}: {e}")
                print(f"{name:<12} FAILED (below)")
                continue
            steps, evals = metrics(dst)
            results[name] = (dst, steps)
            print(describe(name, steps, evals, seconds))
            if len(steps) != until or not all(isinstance(s["loss"], float) for s in steps):
                problems.append(f"{name}: expected {until} finite step lines, got {len(steps)}")
        if fp32 in results and "cpu" in results:
            g, n = gap(results[fp32][1], results["cpu"][1])
            print(f"\n{fp32} vs cpu, first {n} steps: max |Δ loss| {g:.2e}" + ("" if g < 1e-3 else "  <- above 1e-3"))
            if g >= 1e-3 and exact:
                problems.append(f"{fp32} and cpu losses differ by {g:.2e} (want < 1e-3)")
        if fp32 in results and f"{a.gpu} torchrun" in results:
            g, n = gap(results[fp32][1], results[f"{a.gpu} torchrun"][1])
            print(
                f"{a.gpu} torchrun vs fp32, {n} steps: max |Δ loss| {g:.2e}" + ("" if g < 1e-3 else "  <- above 1e-3")
            )
            if g >= 1e-3 and exact:
                problems.append(f"{a.gpu} torchrun and fp32 losses differ by {g:.2e} (want < 1e-3)")
        if fp32 in results and "cuda bf16" in results:
            g, n = gap(results[fp32][1], results["cuda bf16"][1])
            print(f"cuda bf16 vs fp32, {n} steps: max |Δ loss| {g:.2e} (bf16 rounds activations; expect ~1e-2)")
        if fp32 in results:
            dst = results[fp32][0]
            try:
                train(dst, dst, ["--device", "cpu"], a.steps + 5)
                steps, _ = metrics(dst)
                print(
                    f"the {fp32} run resumed on the cpu: steps {steps[a.steps]['step']}-{steps[-1]['step']}, "
                    f"loss {steps[-1]['loss']:.4f}"
                )
            except RuntimeError as e:
                problems.append(f"resuming the cuda run on the cpu: {e}")
    for p in problems:
        print(f"\nPROBLEM {p}")
    print("\nok" if not problems else f"\n{len(problems)} problem(s)")
    return 0 if not problems else 1


if __name__ == "__main__":
    sys.exit(main())
