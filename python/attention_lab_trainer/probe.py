"""What this Python offers the PyTorch engine, as one JSON line on stdout (read by
src/lab/pytorch/probe.node.ts before anything is prepared or launched):

  {"python": "3.11.2", "executable": ..., "torch": "1.13.0a0" | null, "error": why torch did
   not import, "cuda": bool, "devices": [GPU names], "bf16": bool, "gloo": bool, "nccl": bool,
   "launcherDefaults": bool}

`launcherDefaults` is False where torchrun's default stream redirection cannot be parsed:
torch 1.13's `Std.from_str("0")` looks the value up by iterating the IntFlag, and Python 3.11
no longer yields the zero member NONE, so torchrun crashes in elastic's `to_map`
('NoneType' object has no attribute 'get'). The lab then passes explicit, parseable values.
Never fails: a Python without torch, or with one too old to answer, still prints a line.
"""

import json
import sys


def probe():
    out = {"python": sys.version.split()[0], "executable": sys.executable, "torch": None}
    try:
        import torch
    except Exception as e:  # noqa: BLE001 -- any import failure means "no usable torch"
        out["error"] = f"{type(e).__name__}: {e}"
        return out
    out["torch"] = str(getattr(torch, "__version__", "unknown"))
    try:
        out.update(capabilities(torch))
    except Exception as e:  # noqa: BLE001 -- a torch too old or too broken to ask: the version says why
        out["error"] = f"{type(e).__name__}: {e}"
    return out


def capabilities(torch):
    out = {}
    cuda = bool(torch.cuda.is_available())
    out["cuda"] = cuda
    out["devices"] = [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())] if cuda else []
    out["bf16"] = bool(cuda and torch.cuda.is_bf16_supported())
    dist = torch.distributed
    out["gloo"] = bool(dist.is_available() and dist.is_gloo_available())
    out["nccl"] = bool(dist.is_available() and dist.is_nccl_available())
    try:
        from torch.distributed.elastic.multiprocessing.api import Std

        out["launcherDefaults"] = Std.from_str("0") is not None
    except Exception:  # noqa: BLE001 -- a launcher without this API takes its defaults
        out["launcherDefaults"] = True
    return out


if __name__ == "__main__":
    print(json.dumps(probe()))
