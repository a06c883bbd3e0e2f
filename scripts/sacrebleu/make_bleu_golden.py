"""Writes test/golden/bleu/sacrebleu.json: sacreBLEU's corpus BLEU (every tokenizer Attention
Lab implements: 13a, zh, char, intl) and chrF (its defaults) of the shipped hypothesis and
reference files test/golden/bleu/{en,de,ja,zh}.{hyp,ref}, with sacreBLEU's signatures, and its
tokenization of a few hard lines (EDGE_LINES), for src/lab/evaluation/*'s golden tests.

Run once where sacreBLEU is installed (a virtual environment is enough):

    python3 -m venv /tmp/sb && /tmp/sb/bin/pip install sacrebleu==2.6.0
    /tmp/sb/bin/python scripts/sacrebleu/make_bleu_golden.py

It is deterministic: on the same sacreBLEU version it rewrites identical bytes, so
`git diff test/golden/bleu` after a run shows whether anything changed.

Leaves out: `ja-mecab` and `ko-mecab` (they need MeCab and its dictionaries; Attention Lab
scores Japanese with `char`), `spm`/`flores*` (SentencePiece models), TER, multiple
references and bootstrap resampling.
"""

import json
import os
import sys

import sacrebleu
from sacrebleu.metrics import BLEU, CHRF

HERE = os.path.dirname(os.path.abspath(__file__))
GOLDEN = os.path.join(HERE, "..", "..", "test", "golden", "bleu")
LANGS = ["en", "de", "ja", "zh"]
TOKENIZERS = ["13a", "zh", "char", "intl"]
# Lines whose tokenization alone is checked: whitespace Python's str.split() knows, symbols,
# punctuation next to digits, the zh ranges' edges, astral characters.
EDGE_LINES = [
    "a\tb\x0bc\x0cd\x1ce\x1df\x1eg\x1fh\x85i\xa0j\u2009k\u3000l  ",
    '"Quote" (paren) [br] {cu} <ang> a/b a|b a~b a^b a_b a`b a@b a#b a$b a%b a&b a*b a+b a=b',
    "3.14 1,000 x.y x,y .5 ,5 5. 5, 3-4 a-b -3 e.g. U.S.A. can't it's",
    "&quot;x&quot; &amp; &lt;p&gt; <skipped> line-\nbreak",
    "© ® ™ € £ ¥ ° ± × ÷ → ∑ √ ∞ ≠ ≤ ≥ ♥ ☀ ✓ 😀 👍🏽",
    "“curly” ‘single’ — – … ‰ ′ ″ • ⁂ ₂ ⅓ ①",
    "\u2000x\u2001y\u2a6dz\u2a6ew\u2f80v\u2f81u\u2fa1t\u2fa2s",
    "中文，標點。Ｆｕｌｌ　ｗｉｄｔｈ！ｶﾀｶﾅ ㄅㄆ ㈱ ㌀ ︰ ﹏ 𠀀𪛖 丽",
    "ひらがな カタカナ 漢字 ー ・ 〜 〈〉 《》 【】",
    "١٢٣ ٤.٥ ۱۲ ५६ 12¾ x²",
    "é (e + \u0301) ñ Ω Straße İstanbul ǅ",
    "",
]


def read_lines(path):
    with open(path, encoding="utf-8") as f:
        return f.read().split("\n")[:-1]  # one line per newline-terminated line


def bleu_entry(hyps, refs, tokenize):
    metric = BLEU(tokenize=tokenize)
    s = metric.corpus_score(hyps, [refs])
    return {
        "score": s.score,
        "counts": list(s.counts),
        "totals": list(s.totals),
        "precisions": list(s.precisions),
        "bp": s.bp,
        "sys_len": s.sys_len,
        "ref_len": s.ref_len,
        "signature": str(metric.get_signature()),
    }


def chrf_entry(hyps, refs):
    metric = CHRF()
    s = metric.corpus_score(hyps, [refs])
    return {"score": s.score, "signature": str(metric.get_signature())}


def tokenizations(lines):
    out = {}
    for name in TOKENIZERS:
        tok = BLEU(tokenize=name).tokenizer
        # BLEU strips trailing whitespace before tokenizing; so does the TypeScript side.
        out[name] = [tok(line.rstrip()).split() for line in lines]
    return out


def main():
    data = {
        "sacrebleu": sacrebleu.__version__,
        "python": sys.version.split()[0],
        "languages": {},
        "edge": {"lines": EDGE_LINES, "tokens": tokenizations(EDGE_LINES)},
    }
    for lang in LANGS:
        hyps = read_lines(os.path.join(GOLDEN, f"{lang}.hyp"))
        refs = read_lines(os.path.join(GOLDEN, f"{lang}.ref"))
        assert len(hyps) == len(refs), f"{lang}: {len(hyps)} hypotheses, {len(refs)} references"
        data["languages"][lang] = {
            "lines": len(hyps),
            "bleu": {name: bleu_entry(hyps, refs, name) for name in TOKENIZERS},
            "chrf": chrf_entry(hyps, refs),
        }
    out = os.path.join(GOLDEN, "sacrebleu.json")
    with open(out, "w", encoding="utf-8") as f:
        json.dump(data, f, ensure_ascii=False, indent=1, sort_keys=True)
        f.write("\n")
    for lang, d in data["languages"].items():
        scores = " ".join(f"{k} {v['score']:.2f}" for k, v in d["bleu"].items())
        print(f"{lang}: BLEU {scores} · chrF {d['chrf']['score']:.2f}")
    print(f"wrote {os.path.relpath(out)}")


if __name__ == "__main__":
    main()
