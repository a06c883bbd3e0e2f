"""A minimal forward of Hugging Face's LlamaForCausalLM (transformers' modeling_llama.py, written
out from its definition), for tests on a machine without `transformers`: it reads a folder's
config.json (hidden_size, num_attention_heads, num_key_value_heads, intermediate_size,
rms_norm_eps, rope_theta, tie_word_embeddings, attention_bias, mlp_bias) and tensors under
Hugging Face's names (model.embed_tokens, model.layers.N.self_attn.q_proj … mlp.gate_proj,
input_layernorm, post_attention_layernorm, model.norm, lm_head).

Usage: python3 minimal_llama.py FOLDER < ids.json  prints the logits [1, T, V] of the ids as JSON.
Also imported (llama_logits) by tests that give the tensors directly.
Left out: caches, dropout, rope scaling, anything but float32.
"""

import json
import math
import os
import sys

import torch
import torch.nn.functional as F


def rms_norm(x, w, eps):
    return w * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps))


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def llama_logits(config, t, ids):
    """Logits [B, T, V] of ids [B, T] (int64) for config (config.json's dict) and tensors t."""
    C, H = config["hidden_size"], config["num_attention_heads"]
    Hkv = config.get("num_key_value_heads", H)
    D = config.get("head_dim", C // H)
    eps = config["rms_norm_eps"]
    B, T = ids.shape

    def lin(x, name):
        b = t.get(f"{name}.bias")
        return F.linear(x, t[f"{name}.weight"], b)

    # RoPE as LlamaRotaryEmbedding: inv_freq = 1 / theta^(arange(0, D, 2) / D), emb = cat(freqs, freqs).
    inv_freq = 1.0 / (config["rope_theta"] ** (torch.arange(0, D, 2, dtype=torch.int64).float() / D))
    freqs = torch.arange(T).float()[:, None] * inv_freq[None, :]
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = emb.cos(), emb.sin()
    mask = torch.tril(torch.ones(T, T, dtype=torch.bool))

    x = t["model.embed_tokens.weight"][ids]
    for i in range(config["num_hidden_layers"]):
        p = f"model.layers.{i}"
        h = rms_norm(x, t[f"{p}.input_layernorm.weight"], eps)
        q = lin(h, f"{p}.self_attn.q_proj").view(B, T, H, D).transpose(1, 2)
        k = lin(h, f"{p}.self_attn.k_proj").view(B, T, Hkv, D).transpose(1, 2)
        v = lin(h, f"{p}.self_attn.v_proj").view(B, T, Hkv, D).transpose(1, 2)
        q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
        # repeat_kv: key/value head g serves query heads g·(H/Hkv) .. (g+1)·(H/Hkv) − 1.
        k = k[:, :, None].expand(B, Hkv, H // Hkv, T, D).reshape(B, H, T, D)
        v = v[:, :, None].expand(B, Hkv, H // Hkv, T, D).reshape(B, H, T, D)
        att = (q @ k.transpose(2, 3)) / math.sqrt(D)
        att = F.softmax(att.masked_fill(~mask, float("-inf")), dim=-1)
        y = (att @ v).transpose(1, 2).reshape(B, T, H * D)
        x = x + lin(y, f"{p}.self_attn.o_proj")
        h = rms_norm(x, t[f"{p}.post_attention_layernorm.weight"], eps)
        gate, up = lin(h, f"{p}.mlp.gate_proj"), lin(h, f"{p}.mlp.up_proj")
        x = x + lin(F.silu(gate) * up, f"{p}.mlp.down_proj")
    x = rms_norm(x, t["model.norm.weight"], eps)
    head = t["model.embed_tokens.weight"] if config.get("tie_word_embeddings") else t["lm_head.weight"]
    return F.linear(x, head)


if __name__ == "__main__":
    folder = sys.argv[1]
    sys.path.insert(0, sys.argv[2])  # the trainer package's folder, for its safetensors reader
    from attention_lab_trainer.files import read_safetensors

    with open(os.path.join(folder, "config.json"), encoding="utf-8") as f:
        cfg = json.load(f)
    tensors, _ = read_safetensors(os.path.join(folder, "model.safetensors"))
    ids = torch.tensor(json.load(sys.stdin), dtype=torch.int64)
    with torch.no_grad():
        print(json.dumps(llama_logits(cfg, tensors, ids).tolist()))
