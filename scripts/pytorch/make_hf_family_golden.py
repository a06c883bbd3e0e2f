"""Writes test/golden/hf-families/<case>/: Hugging Face models of each family `import` opens, built
with transformers on random weights in the family's real shapes, and what transformers computes.

    /tmp/hf/bin/python scripts/pytorch/make_hf_family_golden.py [--out test/golden/hf-families]

Needs torch, transformers and tokenizers (a venv; Debian's torch is too old for transformers).

Each case is a model of a real checkpoint's shapes (hidden size, heads, key/value heads, head_dim,
intermediate size, RoPE θ, norm ε, context, tying) with its layers cut to 2 and its vocabulary cut
to 1024 (the real vocabularies make the embedding alone 28–136 M numbers; a golden that small keeps
the test quick). Mistral-7B's own sizes (d 4096, d_ff 14336) are cut too, to d 512, 8/2 heads of
64, d_ff 1792: that case is about the sliding window, 8 positions, active over the 16-token input.

The weights are not committed: they are a hash of (tensor name, element index) that the test
recomputes (`weights()` below; test/unit/lab/interop/hfFamilies.test.ts has the same function).
The script fills the model with them, saves it with `save_pretrained` (config.json, safetensors,
the index of a sharded case, bf16/fp16 for two cases), reads the saved files back and checks every
tensor equals the recomputed one (rounded to the file's dtype), then commits what the test needs to
rebuild the folder byte for byte in its tensors: `config.json` and `model.safetensors.index.json` as
transformers wrote them, `tensors.json` (each file's tensors in order: name, dtype, shape, and the
name hashed — the model's own name where save_pretrained renames it — and the scale and offset),
`expected.json` (input ids, greedy continuation, the smallest top-1 margin of the decode) and
`logits.safetensors` (`logits` [16, V] float32 of the input).

Logits are computed in float32 with eager attention. A bf16 or fp16 case's logits are those of its
rounded weights, computed in float32, so the same 1e-4 tolerance applies to its import (which
widens each weight exactly). The greedy decode is 32 tokens, one full forward per token, argmax.
"""

import argparse
import json
import os
import shutil
import sys

import numpy as np
import torch
import transformers as T
from safetensors import safe_open
from safetensors.numpy import save_file

VOCAB = 1024
LAYERS = 2
INPUT = [(i * 37 + 11) % VOCAB for i in range(16)]
NEW_TOKENS = 32

CASES = {
    # SmolLM2-135M: LlamaForCausalLM, 30 layers, d 576, 9/3 heads, d_ff 1536, θ 1e5, tied, ε 1e-5.
    "smollm2": dict(
        cls=T.LlamaConfig,
        dtype="float32",
        shard="12MB",
        cfg=dict(
            hidden_size=576,
            intermediate_size=1536,
            num_attention_heads=9,
            num_key_value_heads=3,
            rms_norm_eps=1e-5,
            rope_theta=100000.0,
            max_position_embeddings=8192,
            tie_word_embeddings=True,
        ),
    ),
    # Qwen2.5-0.5B: Qwen2ForCausalLM, 24 layers, d 896, 14/2 heads, d_ff 4864, q/k/v biases, θ 1e6, tied, ε 1e-6.
    "qwen2.5": dict(
        cls=T.Qwen2Config,
        dtype="bfloat16",
        cfg=dict(
            hidden_size=896,
            intermediate_size=4864,
            num_attention_heads=14,
            num_key_value_heads=2,
            rms_norm_eps=1e-6,
            rope_theta=1000000.0,
            max_position_embeddings=32768,
            tie_word_embeddings=True,
            use_sliding_window=False,
        ),
    ),
    # Qwen3-0.6B: Qwen3ForCausalLM, 28 layers, d 1024, 16/8 heads of 128 (wider than d/heads), QK-norm, θ 1e6, tied.
    "qwen3": dict(
        cls=T.Qwen3Config,
        dtype="float32",
        cfg=dict(
            hidden_size=1024,
            intermediate_size=3072,
            num_attention_heads=16,
            num_key_value_heads=8,
            head_dim=128,
            rms_norm_eps=1e-6,
            rope_theta=1000000.0,
            max_position_embeddings=40960,
            tie_word_embeddings=True,
            use_sliding_window=False,
        ),
    ),
    # Pythia-70m: GPTNeoXForCausalLM, 6 layers, d 512, 8 heads, d_ff 2048, rotary_pct 0.25, parallel residual,
    # exact GELU, untied embed_out; its checkpoints are float16.
    "pythia": dict(
        cls=T.GPTNeoXConfig,
        dtype="float16",
        cfg=dict(
            hidden_size=512,
            intermediate_size=2048,
            num_attention_heads=8,
            rotary_pct=0.25,
            rotary_emb_base=10000,
            use_parallel_residual=True,
            hidden_act="gelu",
            layer_norm_eps=1e-5,
            max_position_embeddings=2048,
            tie_word_embeddings=False,
        ),
    ),
    # Mistral (sizes cut, see the file comment): 8 of 16 input positions inside the window.
    "mistral": dict(
        cls=T.MistralConfig,
        dtype="float32",
        cfg=dict(
            hidden_size=512,
            intermediate_size=1792,
            num_attention_heads=8,
            num_key_value_heads=2,
            head_dim=64,
            rms_norm_eps=1e-5,
            rope_theta=10000.0,
            max_position_embeddings=4096,
            sliding_window=8,
            tie_word_embeddings=False,
        ),
    ),
    # Llama-3.2-1B: LlamaForCausalLM, 16 layers, d 2048, 32/8 heads of 64, d_ff 8192, θ 500000 with llama3 rope
    # scaling (factor 32, low 1, high 4, original context 8192: the low frequencies divided by 32), tied, ε 1e-5.
    "llama3.2": dict(
        cls=T.LlamaConfig,
        dtype="bfloat16",
        embed=0.05,
        cfg=dict(
            hidden_size=2048,
            intermediate_size=8192,
            num_attention_heads=32,
            num_key_value_heads=8,
            head_dim=64,
            rms_norm_eps=1e-5,
            max_position_embeddings=131072,
            tie_word_embeddings=True,
            rope_parameters=dict(
                rope_type="llama3",
                rope_theta=500000.0,
                factor=32.0,
                low_freq_factor=1.0,
                high_freq_factor=4.0,
                original_max_position_embeddings=8192,
            ),
        ),
    ),
    # TinyLlama-1.1B: LlamaForCausalLM, 22 layers, d 2048, 32/4 heads (groups of 8), d_ff 5632, θ 10000, untied.
    "tinyllama": dict(
        cls=T.LlamaConfig,
        dtype="bfloat16",
        cfg=dict(
            hidden_size=2048,
            intermediate_size=5632,
            num_attention_heads=32,
            num_key_value_heads=4,
            rms_norm_eps=1e-5,
            rope_theta=10000.0,
            max_position_embeddings=2048,
            tie_word_embeddings=False,
        ),
    ),
    # Gemma-3-270M: Gemma3ForCausalLM, 18 layers (5 local, then 1 global), d 640, 4/1 heads of 256, d_ff 2048,
    # query_pre_attn_scalar 256, θ 1e6 global / 1e4 local, tied, ε 1e-6, bf16; its vocabulary is 262,144 (cut to
    # 1024 as every case's). Cut to 2 layers, one local and one global (layer_types), and the window cut from 512 to
    # 8 so that it is active over the 16-token input. Norm weights near 1 make Gemma's 1 + w near 2: an import that
    # forgot the 1 would be far off. Embeddings 0.05 (not 0.5): scaled by √640 they would drown both layers' outputs
    # and the greedy decode would only repeat its last token.
    "gemma3": dict(
        cls=T.Gemma3TextConfig,
        dtype="bfloat16",
        embed=0.05,
        cfg=dict(
            hidden_size=640,
            intermediate_size=2048,
            num_attention_heads=4,
            num_key_value_heads=1,
            head_dim=256,
            query_pre_attn_scalar=256,
            rms_norm_eps=1e-6,
            rope_theta=1000000.0,
            rope_local_base_freq=10000.0,
            max_position_embeddings=32768,
            sliding_window=8,
            layer_types=["sliding_attention", "full_attention"],
            hidden_activation="gelu_pytorch_tanh",
            tie_word_embeddings=True,
        ),
    ),
    # Gemma 3 4B and up scale their global layers' RoPE linearly (factor 8); here on the 270M case's shapes (the 4B's
    # d 2560 and d_ff 10240 would make the golden's recomputed weights 190 M numbers for what is a RoPE table).
    "gemma3-linear": dict(
        cls=T.Gemma3TextConfig,
        dtype="bfloat16",
        embed=0.02,
        cfg=dict(
            hidden_size=640,
            intermediate_size=2048,
            num_attention_heads=4,
            num_key_value_heads=1,
            head_dim=256,
            query_pre_attn_scalar=256,
            rms_norm_eps=1e-6,
            max_position_embeddings=131072,
            sliding_window=8,
            layer_types=["sliding_attention", "full_attention"],
            hidden_activation="gelu_pytorch_tanh",
            tie_word_embeddings=True,
            rope_parameters=dict(
                sliding_attention=dict(rope_type="default", rope_theta=10000.0),
                full_attention=dict(rope_type="linear", factor=8.0, rope_theta=1000000.0),
            ),
        ),
    ),
}


def fnv1a(s):
    h = 0x811C9DC5
    for b in s.encode("utf-8"):
        h = ((h ^ b) * 0x01000193) & 0xFFFFFFFF
    return h


def weights(name, n, scale, offset):
    """The `n` numbers of tensor `name`: offset + scale · u, u in [-1, 1) from a hash of (name, index), float32."""
    with np.errstate(over="ignore"):
        h = (np.uint32(fnv1a(name)) + np.arange(n, dtype=np.uint32) * np.uint32(0x9E3779B9)).astype(np.uint32)
        h ^= h >> np.uint32(16)
        h = (h * np.uint32(0x85EBCA6B)).astype(np.uint32)
        h ^= h >> np.uint32(13)
        h = (h * np.uint32(0xC2B2AE35)).astype(np.uint32)
        h ^= h >> np.uint32(16)
    u = (h >> np.uint32(8)).astype(np.float32) / np.float32(2**23) - np.float32(1)
    return u * np.float32(scale) + np.float32(offset)


def scale_of(name, shape, embed=0.5):
    """(scale, offset) of a tensor: norms near 1, biases small, matrices ~ 1/√fan-in, embeddings `embed`."""
    if len(shape) == 1:
        return (0.2, 1.0) if name.endswith("norm.weight") or "layernorm.weight" in name else (0.1, 0.0)
    if "embed" in name:
        return (embed, 0.0)
    return (float(np.float32(2.0 / np.sqrt(shape[1]))), 0.0)


# Names save_pretrained writes for a module's own name (transformers 5 renames GPT-NeoX's head on loading).
SAVED_AS = {"embed_out.weight": "lm_head.weight"}

TORCH_DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}
ST_DTYPES = {"F32": torch.float32, "BF16": torch.bfloat16, "F16": torch.float16}


def build(case):
    spec = CASES[case]
    cfg = spec["cls"](vocab_size=VOCAB, num_hidden_layers=LAYERS, attn_implementation="eager", **spec["cfg"])
    torch.manual_seed(0)
    model = T.AutoModelForCausalLM.from_config(cfg, attn_implementation="eager").eval()
    scales = {}
    filled = {}
    with torch.no_grad():
        for name, p in model.state_dict(keep_vars=True).items():
            if not isinstance(p, torch.nn.Parameter):
                continue
            if id(p) in filled:  # a tied head: the embedding's values, under its name
                scales[name] = scales[filled[id(p)]]
                continue
            s, o = scale_of(name, list(p.shape), spec.get("embed", 0.5))
            scales[name] = (s, o)
            filled[id(p)] = name
            p.copy_(torch.from_numpy(weights(name, p.numel(), s, o).reshape(p.shape)))
    return model, scales


def save(case, out):
    spec = CASES[case]
    model, scales = build(case)
    dst = os.path.join(out, case)
    shutil.rmtree(dst, ignore_errors=True)
    tmp = os.path.join(out, f".{case}.hf")
    shutil.rmtree(tmp, ignore_errors=True)
    dt = TORCH_DTYPES[spec["dtype"]]
    saved = model.to(dt)  # in place
    kw = {"max_shard_size": spec["shard"]} if "shard" in spec else {}
    saved.save_pretrained(tmp, safe_serialization=True, **kw)
    # The saved (rounded) weights, computed in float32: loaded afresh, so the RoPE tables are float32 as built
    # (model.to(bfloat16) would have rounded them too).
    model = T.AutoModelForCausalLM.from_pretrained(tmp, dtype=torch.float32, attn_implementation="eager").eval()
    files = sorted(f for f in os.listdir(tmp) if f.endswith(".safetensors"))
    manifest = []
    for f in files:
        with open(os.path.join(tmp, f), "rb") as fh:
            n = int.from_bytes(fh.read(8), "little")
            header = json.loads(fh.read(n))
        names = sorted((k for k in header if k != "__metadata__"), key=lambda k: header[k]["data_offsets"][0])
        entries = []
        with safe_open(os.path.join(tmp, f), "pt") as st:
            for k in names:
                shape, dtype = header[k]["shape"], header[k]["dtype"]
                seed = SAVED_AS.get(k, k)
                s, o = scales[seed]
                want = torch.from_numpy(weights(seed, int(np.prod(shape)), s, o).reshape(shape)).to(ST_DTYPES[dtype])
                if not torch.equal(st.get_tensor(k), want):
                    sys.exit(f"{case}: {f} {k} is not the recomputed weights")
                entries.append({"name": k, "seed": seed, "dtype": dtype, "shape": shape, "scale": s, "offset": o})
        manifest.append({"file": f, "metadata": header.get("__metadata__"), "tensors": entries})
    os.makedirs(dst)
    for f in ["config.json", "model.safetensors.index.json"]:
        if os.path.exists(os.path.join(tmp, f)):
            shutil.copy(os.path.join(tmp, f), os.path.join(dst, f))
    shutil.rmtree(tmp)
    with open(os.path.join(dst, "tensors.json"), "w") as fh:
        json.dump(manifest, fh, indent=1)
    ids = torch.tensor([INPUT])
    with torch.no_grad():
        logits = model(ids).logits[0].float()
        seq = list(INPUT)
        margin = float("inf")
        for _ in range(NEW_TOKENS):
            last = model(torch.tensor([seq])).logits[0, -1].float()
            top = torch.topk(last, 2).values
            margin = min(margin, float(top[0] - top[1]))
            seq.append(int(last.argmax()))
    save_file({"logits": logits.numpy()}, os.path.join(dst, "logits.safetensors"))
    with open(os.path.join(dst, "expected.json"), "w") as fh:
        json.dump(
            {
                "case": case,
                "transformers": T.__version__,
                "architecture": model.config.architectures[0] if model.config.architectures else None,
                "dtype": spec["dtype"],
                "ids": INPUT,
                "greedy": seq[len(INPUT) :],
                "minMargin": margin,
            },
            fh,
            indent=1,
        )
    print(
        f"{case}: {len(files)} file(s), {sum(len(m['tensors']) for m in manifest)} tensors, "
        f"greedy margin ≥ {margin:.4f}"
    )
    if margin < 1e-3:
        sys.exit(f"{case}: two greedy candidates are within {margin}; the decode would not be a fair test")


def bytes_to_unicode():
    """GPT-2's map of the 256 bytes to printable characters (byte-level BPE's alphabet)."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, map(chr, cs)))


def write_tokenizer(out):
    """tokenizer.json: byte-level BPE of VOCAB ids (256 bytes, letter-pair merges, <|endoftext|>), for every case."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers

    alphabet = list(bytes_to_unicode().values())
    vocab = {c: i for i, c in enumerate(alphabet)}
    merges = []
    letters = "Ġetaoinshrdlcumwfgypbvkjxqz"
    for a in letters + "TAISWHBMCDEFGLNOPR":
        for b in letters[1:]:
            if len(vocab) == VOCAB - 1:
                break
            vocab[a + b] = len(vocab)
            merges.append((a, b))
    tok = Tokenizer(models.BPE(vocab, merges))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.add_special_tokens(["<|endoftext|>"])
    if tok.get_vocab_size() != VOCAB:
        sys.exit(f"the tokenizer has {tok.get_vocab_size()} ids, not {VOCAB}")
    tok.save(os.path.join(out, "tokenizer.json"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "../../test/golden/hf-families"))
    ap.add_argument("cases", nargs="*", default=list(CASES))
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    write_tokenizer(a.out)
    for c in a.cases:
        save(c, a.out)


if __name__ == "__main__":
    main()
