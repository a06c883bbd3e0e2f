"""The learning rate of a 1-based step under an optimizer config of ours (the `optimizer`
JSON the lab writes into the manifest and into optimizer.safetensors): a port of
src/engine/optim/schedule.ts `learningRate`, so the PyTorch trainer steps with exactly the
rates our engine uses, segments of an extended run included.

  noam      factor · d_model^-0.5 · min(step^-0.5, step · warmup^-1.5)   (Vaswani et al. §5.3)
  cosine    linear warm-up to lr, half a cosine to minLr at maxSteps, then minLr
  constant  linear warm-up to lr, then lr
  restart   from minLr back to lr over warmup steps after `start`, then a cosine to minLr
  wsd       linear warm-up (from 0, or from minLr after `start` > 0), lr held, then a straight line
            to minLr over the last decayFraction * (maxSteps - start) steps, then minLr
  segments  each segment's schedule over its steps; past the last, the last one

Pinned against the TypeScript by test/unit/lab/pytorch/sampler.test.ts.
"""

import math


def _cosine(lr, min_lr, k, span):
    if k >= span:
        return min_lr
    return min_lr + 0.5 * (1 + math.cos(math.pi * (k / span))) * (lr - min_lr)


def _segment_rate(lr, s, step):
    t = s["type"]
    if t == "noam":
        warm = math.inf if s["warmup"] == 0 else step * s["warmup"] ** -1.5
        return s["factor"] * s["dModel"] ** -0.5 * min(step**-0.5, warm)
    if t == "cosine":
        if step <= s["warmup"]:
            return lr * step / s["warmup"]
        return _cosine(lr, s["minLr"], step - s["warmup"], s["maxSteps"] - s["warmup"])
    if t == "constant":
        return lr * step / s["warmup"] if step <= s["warmup"] else lr
    if t == "restart":
        k = step - s["start"]
        if k <= 0:
            return s["minLr"]
        if k <= s["warmup"]:
            return s["minLr"] + (lr - s["minLr"]) * k / s["warmup"]
        return _cosine(lr, s["minLr"], k - s["warmup"], s["maxSteps"] - s["start"] - s["warmup"])
    if t == "wsd":
        k = step - s["start"]
        start_lr = s["minLr"] if s["start"] > 0 else 0.0
        if k <= 0:
            return s["minLr"]
        if k <= s["warmup"]:
            return start_lr + (lr - start_lr) * k / s["warmup"]
        left = s["maxSteps"] - step
        span = s["decayFraction"] * (s["maxSteps"] - s["start"])
        if left <= 0:
            return s["minLr"]
        if left >= span:
            return lr
        return s["minLr"] + (lr - s["minLr"]) * left / span
    raise ValueError(f"unknown schedule type {t!r}")


def learning_rate(cfg, step):
    """The rate of 1-based `step` under `cfg` ({lr, schedule, ...})."""
    s = cfg["schedule"]
    if s["type"] != "segments":
        return _segment_rate(cfg["lr"], s, step)
    for seg in s["segments"]:
        if step <= seg["toStep"]:
            return _segment_rate(cfg["lr"], seg["schedule"], step)
    return _segment_rate(cfg["lr"], s["segments"][-1]["schedule"], step)
