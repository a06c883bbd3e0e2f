"""Scores a text with a model exported by `attention-lab export`, in PyTorch, by the rule of
`attention-lab score` (src/lab/inference/score.ts), and prints the total log-probability.

    python3 scripts/pytorch/score_export.py EXPORT_DIR                     # the README's example
    python3 scripts/pytorch/score_export.py EXPORT_DIR --text "some text"   # decoder-only
    python3 scripts/pytorch/score_export.py EXPORT_DIR --src "a b" --text "b a"   # encoder-decoder

The rule: decoder-only, BOS + the text's tokens, no EOS; encoder-decoder, source = tokens + EOS
and target = BOS + tokens + EOS (EOS scored). Longer than the context L: the first window
scores its L tokens, each next one ends ⌊L/2⌋ tokens later and scores only those. The model
is reference.py's, built from config.json's `attention_lab.config`; the tokenizer is
tokenizer.json (char runs) or vocab.json + merges.txt (BPE runs), see lab_tokenizers.py.
With no --text, it scores the example stored at export time and compares with its number.
"""

import argparse
import json
import math
import os
import sys

import torch
import torch.nn.functional as F

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lab_tokenizers import load_export_tokenizer  # noqa: E402
from reference import build_model  # noqa: E402
from safetensors_io import read_safetensors  # noqa: E402


def load_export(folder):
    """(model, attention_lab block, tokenizer) of an export folder."""
    with open(os.path.join(folder, "config.json"), encoding="utf-8") as f:
        lab = json.load(f)["attention_lab"]
    model = build_model(lab["config"]).eval()
    tensors, _ = read_safetensors(os.path.join(folder, "model.safetensors"))
    state = {
        k: torch.from_numpy(v.copy()) for k, v in tensors.items() if not k.endswith(".pe")
    }  # sinusoidal tables are rebuilt
    missing, unexpected = model.load_state_dict(state, strict=False)
    assert not unexpected, f"tensors the model does not have: {unexpected}"
    assert all(k.endswith(".pe") for k in missing), f"tensors missing from model.safetensors: {missing}"
    return model, lab, load_export_tokenizer(folder, lab["tokenizer"])


def window_logprobs(model, ids, s, e, src=None):
    """log p of targets ids[s+1..e+1) from one forward pass over ids[s..e)."""
    x = torch.tensor([ids[s:e]])
    with torch.no_grad():
        logits = model(torch.tensor([src]), x) if src is not None else model(x)
    logp = F.log_softmax(logits[0].double(), -1)
    return [logp[t, ids[s + t + 1]].item() for t in range(e - s)]


def sliding_logprobs(model, ids, max_len, src=None):
    """logprobs[i] = log p(ids[i + 1] | ids[..i]) with score.ts's sliding windows."""
    n, stride, out = len(ids) - 1, max(1, max_len // 2), []
    while len(out) < n:
        end = min(n, max_len if not out else len(out) + stride)
        start = max(0, end - max_len)
        out.extend(window_logprobs(model, ids, start, end, src)[len(out) - start :])
    return out


def score(folder, text, source=None):
    """(tokens scored, Σ log p) of `text` (and `source`, for an encoder-decoder)."""
    model, lab, tok = load_export(folder)
    special = lab["tokenizer"]["special_ids"]
    cfg = lab["config"]
    if cfg["kind"] == "encoder-decoder":
        src = tok.encode(source) + [special["eos"]]
        ids = [special["bos"]] + tok.encode(text) + [special["eos"]]
    else:
        src, ids = None, [special["bos"]] + tok.encode(text)
    logprobs = sliding_logprobs(model, ids, cfg["maxLen"], src)
    return len(logprobs), sum(logprobs)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folder")
    ap.add_argument("--text")
    ap.add_argument("--src", help="the source text (encoder-decoder)")
    args = ap.parse_args()
    torch.set_num_threads(1)
    with open(os.path.join(args.folder, "config.json"), encoding="utf-8") as f:
        example = json.load(f)["attention_lab"].get("example")
    text = args.text if args.text is not None else (example or {}).get("text")
    if text is None:
        raise SystemExit("this export stores no example; pass --text TEXT")
    source = args.src if args.src is not None else (example or {}).get("source")
    n, total = score(args.folder, text, source)
    mean = -total / max(1, n)
    print(f"{n} tokens, total log p {total:.6f} nats, loss {mean:.6f} nats/token, perplexity {math.exp(mean):.4f}")
    if args.text is None and example is not None:
        diff = abs(total - example["logprob_sum"])
        print(
            f"attention-lab score at export: {example['logprob_sum']:.6f} nats over {example['tokens']} tokens; "
            f"difference {diff:.2e}"
        )


if __name__ == "__main__":
    main()
