"""Scores the example of a Hugging Face Llama export (`attention-lab export --format hf`) with
transformers' LlamaForCausalLM and writes the per-token log-probabilities as a golden file; or
checks a golden file with the minimal Llama forward of minimal_llama.py (no transformers).

    python3 make_llama_export_golden.py FOLDER --out GOLDEN.json   # needs transformers
    python3 make_llama_export_golden.py FOLDER --check GOLDEN.json  # torch and numpy only

FOLDER is the export: config.json (LlamaConfig's fields and Attention Lab's `attention_lab`
block with the example text and tokenizer), model.safetensors, attention_lab_tokenizer.json. The
text is scored as `attention-lab score` scores it: BOS, then the text's ids, no EOS, one window (the
text must fit max_position_embeddings). logprobs[i] = log p(ids[i + 1] | ids[..i]), computed
as log_softmax in float64 of the float32 logits.

Writing also runs the minimal forward and refuses to write when it differs from transformers
by more than 1e-5, so the two stay the same model. --check exits 1 when any log-probability
differs from the golden file by more than 1e-4 (the tolerance of test/golden).

The fixture, test/golden/llama-export/: `node scripts/makeLlamaExportFixture.mjs`.
"""

import argparse
import json
import os
import sys

import torch
import torch.nn.functional as F

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lab_tokenizers import load_export_tokenizer  # noqa: E402
from minimal_llama import llama_logits  # noqa: E402
from safetensors_io import read_safetensors  # noqa: E402

FORMAT = "attention-lab-llama-golden"
TOLERANCE = 1e-4


def read_folder(folder):
    """(config.json, the example's ids) of an export folder."""
    with open(os.path.join(folder, "config.json"), encoding="utf-8") as f:
        cfg = json.load(f)
    lab = cfg["attention_lab"]
    tok = load_export_tokenizer(folder, lab["tokenizer"])
    ids = [cfg["bos_token_id"]] + tok.encode(lab["example"]["text"])
    if "ids" in lab["example"] and lab["example"]["ids"] != ids:
        raise SystemExit(f"the example tokenizes to {ids} here but to {lab['example']['ids']} at export")
    if len(ids) - 1 > cfg["max_position_embeddings"]:
        raise SystemExit(f"the example has {len(ids) - 1} tokens, more than the context; export a shorter --text")
    return cfg, ids


def token_logprobs(logits, ids):
    """logprobs[i] = log p(ids[i + 1]) from float32 logits [T, V]."""
    logp = F.log_softmax(logits.double(), -1)
    return [logp[t, ids[t + 1]].item() for t in range(len(ids) - 1)]


# ----------------------------------------------------------------------------- minimal Llama


def minimal_logprobs(folder):
    cfg, ids = read_folder(folder)
    tensors, _ = read_safetensors(os.path.join(folder, "model.safetensors"))
    t = {k: torch.from_numpy(v.copy()) for k, v in tensors.items()}
    with torch.no_grad():
        return ids, token_logprobs(llama_logits(cfg, t, torch.tensor([ids], dtype=torch.int64))[0], ids)


# ----------------------------------------------------------------------------- transformers


def transformers_logprobs(folder):
    import transformers
    from transformers import LlamaForCausalLM

    cfg, ids = read_folder(folder)
    model = LlamaForCausalLM.from_pretrained(folder, torch_dtype=torch.float32).eval()
    with torch.no_grad():
        logits = model(torch.tensor([ids])).logits[0]
    return ids, token_logprobs(logits, ids), transformers.__version__


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folder")
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--out", help="write the golden file (transformers)")
    mode.add_argument("--check", help="compare the minimal forward with this golden file")
    args = ap.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(1)
    if args.check:
        with open(args.check, encoding="utf-8") as f:
            golden = json.load(f)
        assert golden["format"] == FORMAT, golden.get("format")
        ids, mine = minimal_logprobs(args.folder)
        if ids != golden["ids"]:
            raise SystemExit(f"the example tokenizes to {ids}, the golden file has {golden['ids']}")
        diff = max(abs(a - b) for a, b in zip(mine, golden["logprobs"]))
        print(f"{len(mine)} tokens, total log p {sum(mine):.6f} nats, largest difference from the golden {diff:.2e}")
        sys.exit(0 if diff <= TOLERANCE else 1)
    ids, hf, version = transformers_logprobs(args.folder)
    _, mine = minimal_logprobs(args.folder)
    diff = max(abs(a - b) for a, b in zip(mine, hf))
    if diff > 1e-5:
        raise SystemExit(f"the minimal forward differs from transformers by {diff:.2e}; not writing")
    golden = {
        "format": FORMAT,
        "version": 1,
        "transformers": version,
        "torch": torch.__version__,
        "text": json.load(open(os.path.join(args.folder, "config.json"), encoding="utf-8"))["attention_lab"]["example"][
            "text"
        ],
        "ids": ids,
        "logprobs": hf,
        "logprob_sum": sum(hf),
        "minimal_forward_difference": diff,
    }
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(golden, f, indent=1)
        f.write("\n")
    print(f"wrote {args.out}: {len(hf)} tokens, total log p {sum(hf):.6f} (transformers {version}; minimal {diff:.1e})")


if __name__ == "__main__":
    main()
