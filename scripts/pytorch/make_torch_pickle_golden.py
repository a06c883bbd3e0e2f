"""Writes test/golden/torch-pickle/: PyTorch's own checkpoint files, for the restricted reader.

- `state-torch<M>.pt` (torch.save's zip) and `state-torch<M>-legacy.pt` (the pre-1.6 format,
  `_use_new_zipfile_serialization=False`), M = this torch's major version: a nanoGPT-style
  checkpoint {'model': state_dict, 'model_args': {...}, 'iter_num', 'best_val_loss' (a 0-d
  tensor), 'betas' (a tuple), 'big' (2**40), 'neg', 'none', 'lst'} whose state dict holds
  float32, float16 and bfloat16 tensors, a transposed view and a slice sharing one storage,
  an nn.Parameter, an expanded (stride 0) view and an int64 buffer; `state-torch<M>.expected.safetensors`
  holds every float tensor's values as F32 (row-major, after widening).
- `hf-gpt2-bin/pytorch_model.bin`: test/golden/import/hf-gpt2's weights as GPT2LMHeadModel's
  state dict (`transformer.` names, `lm_head.weight` sharing wte's storage, c_attn a
  non-contiguous view) with its config.json; its logits are hf-gpt2's expected.safetensors.
- `nanogpt-ckpt/ckpt.pt`: test/golden/import/nanogpt-nobias's weights as nanoGPT's train.py
  saves them (`_orig_mod.` names under 'model', 'model_args', an optimizer state, 'config'),
  with no config.json: the heads come from model_args.
- `hostile.bin`: a torch.save-shaped zip whose data.pkl holds a real tensor and then an object
  whose __reduce__ is os.system("touch hostile-bin-ran.marker"); `hostile-legacy.pt`: a bare
  pickle calling builtins.eval likewise. They are built by pickle.dumps (which only records the
  reduction) and checked with pickletools.dis (which only lists opcodes): NEVER unpickle them.

Run with each torch: /usr/bin/python3 scripts/pytorch/make_torch_pickle_golden.py  (torch 1.13)
                 and /tmp/hf/bin/python scripts/pytorch/make_torch_pickle_golden.py  (torch 2.x)
"""

import collections
import io
import os
import pickle
import pickletools
import shutil
import sys
import zipfile

import numpy as np
import torch

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from safetensors_io import read_safetensors, write_safetensors  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "..", "test", "golden", "torch-pickle")
IMPORT = os.path.join(HERE, "..", "..", "test", "golden", "import")
MARKER = "hostile-bin-ran.marker"


def state_checkpoint():
    g = torch.Generator().manual_seed(30)
    base = torch.randn(4, 6, generator=g)
    sd = collections.OrderedDict()
    sd["f32"] = torch.randn(3, 5, generator=g)
    sd["f16"] = torch.randn(2, 7, generator=g).half()
    sd["bf16"] = torch.randn(6, generator=g).bfloat16()
    sd["transposed"] = base.t()  # stride (1, 6)
    sd["slice"] = base[1:3, 2:5]  # offset 8, stride (6, 1), same storage
    sd["expanded"] = torch.randn(3, generator=g).expand(2, 3)  # stride (0, 1)
    sd["param"] = torch.nn.Parameter(torch.randn(2, 2, generator=g))
    sd["scalar"] = torch.tensor(0.25)
    sd["buffer"] = torch.arange(5)  # int64
    ckpt = {
        "model": sd,
        "model_args": {"n_layer": 2, "n_head": 4, "bias": True, "dropout": 0.0, "name": "x"},
        "iter_num": 5,
        "best_val_loss": torch.tensor(1.5),
        "betas": (0.9, 0.95),
        "big": 2**40,
        "neg": -3,
        "none": None,
        "lst": [1, 2.5],
    }
    expected = {k: v.detach().float().numpy().copy() for k, v in sd.items() if v.is_floating_point()}
    return ckpt, expected


def write_state():
    major = torch.__version__.split(".")[0]
    ckpt, expected = state_checkpoint()
    torch.save(ckpt, os.path.join(OUT, f"state-torch{major}.pt"))
    torch.save(ckpt, os.path.join(OUT, f"state-torch{major}-legacy.pt"), _use_new_zipfile_serialization=False)
    write_safetensors(
        os.path.join(OUT, f"state-torch{major}.expected.safetensors"), expected, {"torch": torch.__version__}
    )


def write_hf_gpt2_bin():
    src = os.path.join(IMPORT, "hf-gpt2")
    weights, _ = read_safetensors(os.path.join(src, "model.safetensors"))
    sd = collections.OrderedDict()
    for name, arr in weights.items():
        t = torch.from_numpy(arr.copy())
        if name.endswith("attn.c_attn.weight"):
            t = t.t().contiguous().t()  # same values, column-major storage
        sd["transformer." + name] = t
    sd["lm_head.weight"] = sd["transformer.wte.weight"]  # tied: one storage, as GPT2LMHeadModel saves it
    out = os.path.join(OUT, "hf-gpt2-bin")
    os.makedirs(out, exist_ok=True)
    torch.save(sd, os.path.join(out, "pytorch_model.bin"))
    shutil.copy(os.path.join(src, "config.json"), out)


def write_nanogpt_ckpt():
    weights, _ = read_safetensors(os.path.join(IMPORT, "nanogpt-nobias", "model.safetensors"))
    sd = collections.OrderedDict((k, torch.from_numpy(v.copy())) for k, v in weights.items())
    first = next(iter(sd.values()))
    ckpt = {
        "model": sd,
        "optimizer": {
            "state": {0: {"step": torch.tensor(3.0), "exp_avg": torch.zeros_like(first)}},
            "param_groups": [{"lr": 6e-4, "betas": (0.9, 0.95), "weight_decay": 0.1, "params": [0]}],
        },
        "model_args": {"n_layer": 2, "n_head": 4, "n_embd": 32, "block_size": 16, "bias": False, "vocab_size": 270},
        "iter_num": 100,
        "best_val_loss": torch.tensor(2.5),
        "config": {"dataset": "shakespeare_char", "compile": True, "dtype": "float32"},
    }
    out = os.path.join(OUT, "nanogpt-ckpt")
    os.makedirs(out, exist_ok=True)
    torch.save(ckpt, os.path.join(out, "ckpt.pt"))


class FakeStorage:
    """Stands for a float storage: the pickler below writes it as torch.save's persistent id."""


class FakeTensor:
    def __init__(self, storage):
        self.storage = storage

    def __reduce__(self):
        return (torch._utils._rebuild_tensor_v2, (self.storage, 0, (4,), (1,), False, collections.OrderedDict()))


class Evil:
    def __reduce__(self):
        return (os.system, (f"touch {MARKER}",))


class EvilEval:
    def __reduce__(self):
        return (eval, (f"__import__('os').system('touch {MARKER}')",))


class TorchLikePickler(pickle.Pickler):
    def persistent_id(self, obj):
        return ("storage", torch.FloatStorage, "0", "cpu", 4) if isinstance(obj, FakeStorage) else None


def write_hostile():
    buf = io.BytesIO()
    sd = collections.OrderedDict([("wte.weight", FakeTensor(FakeStorage())), ("h.0.attn.bias", Evil())])
    TorchLikePickler(buf, protocol=2).dump(sd)
    pkl = buf.getvalue()
    listing = io.StringIO()
    pickletools.dis(pkl, out=listing)  # lists the opcodes; runs nothing
    assert "system" in listing.getvalue() and "_rebuild_tensor_v2" in listing.getvalue()
    with zipfile.ZipFile(os.path.join(OUT, "hostile.bin"), "w", zipfile.ZIP_STORED) as z:
        z.writestr("hostile/data.pkl", pkl)
        z.writestr("hostile/byteorder", "little")
        z.writestr("hostile/data/0", np.arange(4, dtype="<f4").tobytes())
        z.writestr("hostile/version", "3\n")
    raw = pickle.dumps(EvilEval(), protocol=2)
    pickletools.dis(raw, out=io.StringIO())
    with open(os.path.join(OUT, "hostile-legacy.pt"), "wb") as f:
        f.write(raw)


def main():
    os.makedirs(OUT, exist_ok=True)
    write_state()
    if torch.__version__.startswith("1."):
        write_hf_gpt2_bin()
        write_nanogpt_ckpt()
        write_hostile()
    print("wrote", os.path.normpath(OUT), "with torch", torch.__version__)


if __name__ == "__main__":
    main()
