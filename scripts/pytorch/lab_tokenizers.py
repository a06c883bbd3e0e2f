"""Attention Lab's tokenizers in plain Python, to tokenize text for an exported model.

- CharTokenizer: tokenizer.json of a `char` run. Ids: 0..3 specials, byte b at 4 + b, the
  learned characters from 260 on; a character outside them is its UTF-8 bytes.
- Gpt2Bpe: GPT-2's byte-level BPE (Radford et al. 2019) from `vocab.json` + `merges.txt`, as
  GPT-2's encoder.py does it: split text with GPT-2's pattern, write each chunk's UTF-8
  bytes through bytes_to_unicode, merge the lowest-ranked pair (all its occurrences, left to
  right) until none is left, look the pieces up in vocab.json. It reads both an Attention Lab
  export's files and GPT-2's own, with the files' ids.

GPT-2's pattern  's|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+
needs the third-party `regex` module for \\p{L}; `pretokenize` below matches it by hand with
unicodedata categories and JavaScript's \\s (what Attention Lab's engine uses), so it needs
nothing but the standard library. Leaves out: lone surrogates (not in Python text read
from UTF-8).
"""

import json
import unicodedata

# JavaScript's \s: what the engine's pre-tokenizer (src/engine/tokenizers/pretokenize.ts) means by it.
JS_SPACE = set("\t\n\v\f\r \u00a0\u1680\u2028\u2029\u202f\u205f\u3000\ufeff") | {chr(c) for c in range(0x2000, 0x200B)}
CONTRACTIONS = ("s", "t", "re", "ve", "m", "ll", "d")


def _is_letter(c):
    return unicodedata.category(c).startswith("L")


def _is_number(c):
    return unicodedata.category(c).startswith("N")


def _run(text, i, pred):
    """End of the run of characters from i that satisfy pred."""
    while i < len(text) and pred(text[i]):
        i += 1
    return i


def pretokenize(text):
    """GPT-2's chunks of `text`, in order; they join back to `text`."""
    out, i, n = [], 0, len(text)
    while i < n:
        end = None
        if text[i] == "'":
            for c in CONTRACTIONS:
                if text.startswith(c, i + 1):
                    end = i + 1 + len(c)
                    break
        if end is None:
            j = i + 1 if text[i] == " " and i + 1 < n else i
            c = text[j]
            if j < n and _is_letter(c):
                end = _run(text, j, _is_letter)
            elif j < n and _is_number(c):
                end = _run(text, j, _is_number)
            elif j < n and c not in JS_SPACE:
                end = _run(text, j, lambda ch: ch not in JS_SPACE and not _is_letter(ch) and not _is_number(ch))
            else:  # whitespace: \s+(?!\S), else \s+ (a run before a word leaves its last space to the word)
                k = _run(text, i, lambda ch: ch in JS_SPACE)
                end = k if k == n or k - 1 == i else k - 1
        out.append(text[i:end])
        i = end
    return out


def bytes_to_unicode():
    """GPT-2's table: the printable character that stands for each byte in its files."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs, n = bs[:], 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {b: chr(c) for b, c in zip(bs, cs)}


class Gpt2Bpe:
    """GPT-2's byte-level BPE from vocab.json + merges.txt (see the module comment)."""

    def __init__(self, vocab_path, merges_path):
        with open(vocab_path, encoding="utf-8") as f:
            self.encoder = json.load(f)
        with open(merges_path, encoding="utf-8") as f:
            lines = f.read().split("\n")
        if lines and lines[0].startswith("#version"):
            lines = lines[1:]
        merges = [tuple(line.split(" ")) for line in lines if line]
        self.ranks = {m: i for i, m in enumerate(merges)}
        self.byte_encoder = bytes_to_unicode()
        self.cache = {}

    def bpe(self, token):
        if token in self.cache:
            return self.cache[token]
        word = list(token)
        while len(word) > 1:
            pairs = {(word[i], word[i + 1]) for i in range(len(word) - 1)}
            best = min(pairs, key=lambda p: self.ranks.get(p, float("inf")))
            if best not in self.ranks:
                break
            merged, i = [], 0
            while i < len(word):
                if i < len(word) - 1 and (word[i], word[i + 1]) == best:
                    merged.append(word[i] + word[i + 1])
                    i += 2
                else:
                    merged.append(word[i])
                    i += 1
            word = merged
        self.cache[token] = word
        return word

    def encode(self, text):
        ids = []
        for chunk in pretokenize(text):
            token = "".join(self.byte_encoder[b] for b in chunk.encode("utf-8"))
            ids.extend(self.encoder[piece] for piece in self.bpe(token))
        return ids


class CharTokenizer:
    """Attention Lab's character tokenizer from its tokenizer.json."""

    def __init__(self, tokenizer_json):
        assert tokenizer_json["type"] == "char", tokenizer_json["type"]
        self.ids = {c: 260 + i for i, c in enumerate(tokenizer_json["chars"])}

    def encode(self, text):
        ids = []
        for c in text:
            if c in self.ids:
                ids.append(self.ids[c])
            else:
                ids.extend(4 + b for b in c.encode("utf-8"))
        return ids


class HfTokenizer:
    """An imported model's Hugging Face tokenizer.json, through Python's `tokenizers` (pip)."""

    def __init__(self, path):
        from tokenizers import Tokenizer

        self.tokenizer = Tokenizer.from_file(path)

    def encode(self, text):
        return self.tokenizer.encode(text, add_special_tokens=False).ids


def load_export_tokenizer(folder, info):
    """The tokenizer of an export folder, from config.json's attention_lab.tokenizer block `info`."""
    import os

    if info.get("huggingface"):
        return HfTokenizer(os.path.join(folder, info["file"]))
    if info["type"] == "char":
        with open(os.path.join(folder, info["file"]), encoding="utf-8") as f:
            return CharTokenizer(json.load(f))
    if "vocab" not in info:
        raise SystemExit("this export has no vocab.json / merges.txt (see README.md); its BPE cannot be read here")
    return Gpt2Bpe(os.path.join(folder, info["vocab"]), os.path.join(folder, info["merges"]))
