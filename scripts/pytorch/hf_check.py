"""Cross-checks the reference's Llama-shaped configs against Hugging Face transformers' own
modules: builds the HF model a golden config matches (`HF_CLASSES`), with the golden file's
random weights moved over from our names, and returns its logits for the same tokens.

make_golden.py uses it for the configs named in HF_CLASSES. Debian's torch 1.13 has no
transformers that installs beside it, so make_golden.py runs this file as a subprocess in
another Python (`HF_PYTHON`, e.g. a venv with torch 2.x and transformers 5.x):
`$HF_PYTHON hf_check.py IN OUT` reads IN (param.*, input.idx and the config in the metadata,
written by safetensors_io) and writes OUT (output.logits, and the HF class and versions in the
metadata). transformers is never a test dependency: only the golden script uses it.

Left out: the encoder-decoder (no HF class shares the seed notebook's layout), the logit
soft-cap (Gemma 2 has it, but also norms after each sublayer and a (1 + w) norm scale, which our
model lacks; its attention soft-cap is checked through Gemma 2's attention function alone),
nanochat's weightless RMSNorm, ReLU² and rope → norm order (no HF class).
"""

import json
import os
import sys

import numpy as np
import torch

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from safetensors_io import read_safetensors, write_safetensors  # noqa: E402

# Golden file name -> the HF causal LM class that computes the same function.
HF_CLASSES = {
    "preset-llama": "LlamaForCausalLM",
    "hf-qwen2": "Qwen2ForCausalLM",
    "hf-qwen3": "Qwen3ForCausalLM",
    "hf-qwen3-head-dim": "Qwen3ForCausalLM",
    "hf-mistral": "MistralForCausalLM",
    "hf-gptneox": "GPTNeoXForCausalLM",
    "hf-bloom": "BloomForCausalLM",
    # No HF class has our soft-capped model (Gemma 2 adds norms after each sublayer and scales its
    # norms by 1 + w), so the reference runs with Gemma 2's own attention function in place of ours.
    "opt-attn-softcap": "gemma2.eager_attention_forward",
    # attnScale is Gemma's `scaling` (query_pre_attn_scalar^−½), so the same stand-in checks it.
    "opt-head-dim-scale": "gemma2.eager_attention_forward",
}


def _head_size(cfg):
    """D: headDim, or dModel / nHeads when it is 0 (or absent)."""
    return cfg.get("headDim") or cfg["dModel"] // cfg["nHeads"]


def _split_qkv(w, cfg):
    """Our fused c_attn rows [H·D | Hkv·D | Hkv·D] -> (q, k, v)."""
    d = _head_size(cfg) * cfg["nHeads"]
    d_kv = _head_size(cfg) * (cfg["nKvHeads"] or cfg["nHeads"])
    return w[:d], w[d : d + d_kv], w[d + d_kv :]


def _llama_family(cls_name, cfg, params):
    """Llama, Qwen2, Qwen3, Mistral: one layout (model.layers.i.self_attn.q_proj, ...)."""
    import transformers

    H, C = cfg["nHeads"], cfg["dModel"]
    kw = dict(
        vocab_size=cfg["vocabSize"],
        hidden_size=C,
        intermediate_size=cfg["dFF"],
        num_hidden_layers=cfg["nDecoderLayers"],
        num_attention_heads=H,
        num_key_value_heads=cfg["nKvHeads"] or H,
        head_dim=_head_size(cfg),
        hidden_act="silu",
        max_position_embeddings=cfg["maxLen"],
        rms_norm_eps=cfg["layerNormEps"],
        tie_word_embeddings=cfg["tieEmbeddings"],
        rope_parameters={"rope_type": "default", "rope_theta": float(cfg["ropeTheta"])},
        attention_dropout=0.0,
    )
    if cls_name == "LlamaForCausalLM":
        kw.update(attention_bias=False, mlp_bias=False)
    if cls_name == "MistralForCausalLM":
        kw.update(sliding_window=cfg["slidingWindow"] or None)
    config_cls = getattr(transformers, cls_name.replace("ForCausalLM", "Config"))
    hf = getattr(transformers, cls_name)(config_cls(**kw, attn_implementation="eager"))
    sd = {
        "model.embed_tokens.weight": params["transformer.wte.weight"],
        "model.norm.weight": params["transformer.ln_f.weight"],
    }
    sd["lm_head.weight"] = params["transformer.wte.weight" if cfg["tieEmbeddings"] else "lm_head.weight"]
    for i in range(cfg["nDecoderLayers"]):
        p, h = f"transformer.h.{i}", f"model.layers.{i}"
        sd[f"{h}.input_layernorm.weight"] = params[f"{p}.ln_1.weight"]
        sd[f"{h}.post_attention_layernorm.weight"] = params[f"{p}.ln_2.weight"]
        for kind in ("weight", "bias"):
            if f"{p}.attn.c_attn.{kind}" in params:
                q, k, v = _split_qkv(params[f"{p}.attn.c_attn.{kind}"], cfg)
                sd.update({f"{h}.self_attn.q_proj.{kind}": q, f"{h}.self_attn.k_proj.{kind}": k})
                sd[f"{h}.self_attn.v_proj.{kind}"] = v
        sd[f"{h}.self_attn.o_proj.weight"] = params[f"{p}.attn.c_proj.weight"]
        if cfg["qkNorm"]:
            sd[f"{h}.self_attn.q_norm.weight"] = params[f"{p}.attn.q_norm.weight"]
            sd[f"{h}.self_attn.k_norm.weight"] = params[f"{p}.attn.k_norm.weight"]
        sd[f"{h}.mlp.gate_proj.weight"] = params[f"{p}.mlp.c_gate.weight"]
        sd[f"{h}.mlp.up_proj.weight"] = params[f"{p}.mlp.c_fc.weight"]
        sd[f"{h}.mlp.down_proj.weight"] = params[f"{p}.mlp.c_proj.weight"]
    return hf, sd


def _gpt_neox(cfg, params):
    """GPT-NeoX (Pythia): LayerNorms with biases, partial rotary, parallel residual, exact GELU;
    its fused query_key_value interleaves the heads: rows [q_h, k_h, v_h] for each head h."""
    import transformers

    H, C = cfg["nHeads"], cfg["dModel"]
    config = transformers.GPTNeoXConfig(
        vocab_size=cfg["vocabSize"],
        hidden_size=C,
        intermediate_size=cfg["dFF"],
        num_hidden_layers=cfg["nDecoderLayers"],
        num_attention_heads=H,
        hidden_act="gelu",
        max_position_embeddings=cfg["maxLen"],
        layer_norm_eps=cfg["layerNormEps"],
        use_parallel_residual=cfg["parallelResidual"],
        tie_word_embeddings=cfg["tieEmbeddings"],
        attention_bias=True,
        rope_parameters={
            "rope_type": "default",
            "rope_theta": float(cfg["ropeTheta"]),
            "partial_rotary_factor": cfg["rotaryFraction"],
        },
        attention_dropout=0.0,
        hidden_dropout=0.0,
        attn_implementation="eager",
    )
    hf = transformers.GPTNeoXForCausalLM(config)
    sd = {"gpt_neox.embed_in.weight": params["transformer.wte.weight"]}
    head = "lm_head.weight" if "lm_head.weight" in hf.state_dict() else "embed_out.weight"  # renamed in transformers 5
    sd[head] = params["transformer.wte.weight" if cfg["tieEmbeddings"] else "lm_head.weight"]
    for kind in ("weight", "bias"):
        sd[f"gpt_neox.final_layer_norm.{kind}"] = params[f"transformer.ln_f.{kind}"]
    for i in range(cfg["nDecoderLayers"]):
        p, h = f"transformer.h.{i}", f"gpt_neox.layers.{i}"
        for kind in ("weight", "bias"):
            sd[f"{h}.input_layernorm.{kind}"] = params[f"{p}.ln_1.{kind}"]
            sd[f"{h}.post_attention_layernorm.{kind}"] = params[f"{p}.ln_2.{kind}"]
            sd[f"{h}.attention.query_key_value.{kind}"] = _interleave_heads(params[f"{p}.attn.c_attn.{kind}"], cfg)
            sd[f"{h}.attention.dense.{kind}"] = params[f"{p}.attn.c_proj.{kind}"]
            sd[f"{h}.mlp.dense_h_to_4h.{kind}"] = params[f"{p}.mlp.c_fc.{kind}"]
            sd[f"{h}.mlp.dense_4h_to_h.{kind}"] = params[f"{p}.mlp.c_proj.{kind}"]
    return hf, sd


def _interleave_heads(w, cfg):
    """Our fused c_attn [q | k | v] (rows) -> GPT-NeoX's and BLOOM's per-head [q_h, k_h, v_h]."""
    H = cfg["nHeads"]
    D = cfg["dModel"] // H
    q, k, v = _split_qkv(w, cfg)
    per_head = [t.reshape(H, D, *t.shape[1:]) for t in (q, k, v)]
    return np.stack(per_head, axis=1).reshape(3 * cfg["dModel"], *q.shape[1:])


def _bloom(cfg, params):
    """BLOOM: ALiBi, a LayerNorm after the embeddings, LayerNorms and biases everywhere, the tanh
    GELU, an MLP of 4·C, tied embeddings; fused query_key_value per head as GPT-NeoX's."""
    import transformers

    assert cfg["dFF"] == 4 * cfg["dModel"], "BLOOM's MLP is 4·hidden wide"
    config = transformers.BloomConfig(
        vocab_size=cfg["vocabSize"],
        hidden_size=cfg["dModel"],
        n_layer=cfg["nDecoderLayers"],
        n_head=cfg["nHeads"],
        layer_norm_epsilon=cfg["layerNormEps"],
        hidden_dropout=0.0,
        attention_dropout=0.0,
        apply_residual_connection_post_layernorm=False,
        tie_word_embeddings=cfg["tieEmbeddings"],
        pretraining_tp=1,
        slow_but_exact=False,
        attn_implementation="eager",
    )
    hf = transformers.BloomForCausalLM(config)
    sd = {"transformer.word_embeddings.weight": params["transformer.wte.weight"]}
    sd["lm_head.weight"] = params["transformer.wte.weight" if cfg["tieEmbeddings"] else "lm_head.weight"]
    for kind in ("weight", "bias"):
        sd[f"transformer.word_embeddings_layernorm.{kind}"] = params[f"transformer.ln_e.{kind}"]
        sd[f"transformer.ln_f.{kind}"] = params[f"transformer.ln_f.{kind}"]
    for i in range(cfg["nDecoderLayers"]):
        p, h = f"transformer.h.{i}", f"transformer.h.{i}"
        for kind in ("weight", "bias"):
            sd[f"{h}.input_layernorm.{kind}"] = params[f"{p}.ln_1.{kind}"]
            sd[f"{h}.post_attention_layernorm.{kind}"] = params[f"{p}.ln_2.{kind}"]
            sd[f"{h}.self_attention.query_key_value.{kind}"] = _interleave_heads(params[f"{p}.attn.c_attn.{kind}"], cfg)
            sd[f"{h}.self_attention.dense.{kind}"] = params[f"{p}.attn.c_proj.{kind}"]
            sd[f"{h}.mlp.dense_h_to_4h.{kind}"] = params[f"{p}.mlp.c_fc.{kind}"]
            sd[f"{h}.mlp.dense_4h_to_h.{kind}"] = params[f"{p}.mlp.c_proj.{kind}"]
    return hf, sd


def _with_gemma2_attention(cfg, params, idx):
    """The reference model's logits with Gemma 2's eager_attention_forward (soft-cap, grouped heads,
    additive mask) computing every attention in place of reference.attend."""
    from types import SimpleNamespace

    from transformers.models.gemma2 import modeling_gemma2

    import reference

    def gemma2_attend(q, k, v, mask, attn_dropout, soft_cap=0.0, bias=None, scale=None):
        module = SimpleNamespace(num_key_value_groups=q.shape[1] // k.shape[1], training=False, head_dim=q.shape[-1])
        additive = torch.zeros(mask.shape).masked_fill(~mask, float("-inf"))
        if bias is not None:
            additive = additive + bias
        out, _ = modeling_gemma2.eager_attention_forward(
            module, q, k, v, additive, dropout=0.0, scaling=scale or q.shape[-1] ** -0.5, softcap=soft_cap or None
        )
        return out.transpose(1, 2)  # (B, T, H, D) -> (B, H, T, D)

    model = reference.build_model(cfg)
    named = dict(model.named_parameters())
    assert set(named) == set(params), "the golden file's parameters are the reference model's"
    with torch.no_grad():
        for k, p in named.items():
            p.copy_(torch.from_numpy(np.array(params[k])))
        reference.attend, ours = gemma2_attend, reference.attend
        try:
            return model(torch.from_numpy(np.array(idx)).long()).numpy()
        finally:
            reference.attend = ours


def hf_logits(name, cfg, params, idx):
    """(HF class name, logits (B, T, V) as float32 numpy) of golden config `name`."""
    cls_name = HF_CLASSES[name]
    if cls_name == "gemma2.eager_attention_forward":
        return cls_name, _with_gemma2_attention(cfg, params, idx)
    if cls_name == "GPTNeoXForCausalLM":
        hf, sd = _gpt_neox(cfg, params)
    elif cls_name == "BloomForCausalLM":
        hf, sd = _bloom(cfg, params)
    else:
        hf, sd = _llama_family(cls_name, cfg, params)
    own = hf.state_dict()
    missing = [k for k in own if k not in sd and not k.endswith(("inv_freq", "masked_bias", "attention.bias"))]
    extra = [k for k in sd if k not in own]
    assert not missing and not extra, f"{cls_name}: weights not mapped {missing}, names it lacks {extra}"
    hf.load_state_dict({k: torch.from_numpy(np.array(v)) for k, v in sd.items()}, strict=False)
    hf.eval()
    with torch.no_grad():
        out = hf(
            input_ids=torch.from_numpy(np.array(idx)).long(), attention_mask=torch.ones(idx.shape, dtype=torch.long)
        )
    return cls_name, out.logits.float().numpy()


def main():
    torch.set_num_threads(1)
    import transformers

    src, dst = sys.argv[1], sys.argv[2]
    tensors, meta = read_safetensors(src)
    params = {k[len("param.") :]: v for k, v in tensors.items() if k.startswith("param.")}
    cls_name, logits = hf_logits(meta["name"], json.loads(meta["config"]), params, tensors["input.idx"])
    write_safetensors(
        dst,
        {"output.logits": logits.astype(np.float32)},
        {"class": cls_name, "transformers": transformers.__version__, "torch": torch.__version__},
    )


if __name__ == "__main__":
    main()
