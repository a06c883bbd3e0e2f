/**
 * The PyTorch engine's model (python/attention_lab_trainer/model.py) checked without our
 * engine, with Debian's torch: a Llama-shaped config gives the logits of Hugging Face's
 * LlamaForCausalLM (scripts/pytorch/minimal_llama.py, written from transformers' definition) for the same
 * weights; a sliding window reaches exactly W positions back; a run.json config without the
 * fields of today's transformers builds the model it always did; and ParamMap splits a
 * grouped-query model's fused c_attn into our q, k, v (and back, for Adam's moments); every
 * option runs under bf16 autocast (`--bf16`; on the CPU here) with finite gradients.
 * modelOptions.test.ts compares every option with our engine.
 */

import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { python } from './torchRuns';

const HERE = JSON.stringify(path.resolve(__dirname, '../../../../scripts/pytorch')); // minimal_llama.py

/** A tiny config of each kind (our field names), as the manifest gives it. */
const CONFIGS = `
GPT = dict(kind="decoder-only", vocabSize=13, srcVocabSize=0, dModel=16, nHeads=4, dFF=24, nEncoderLayers=0,
    nDecoderLayers=2, maxLen=12, dropout=0.0, norm="pre", positional="learned", activation="gelu",
    tieEmbeddings=True, bias=True, layerNormEps=1e-5, embedScale=False, labelSmoothing=0.0)
LLAMA = dict(GPT, positional="rope", normType="rmsnorm", activation="swiglu", nKvHeads=2, tieEmbeddings=False,
    bias=False, qkvBias=False, attnOutBias=False, mlpBias=False, layerNormEps=1e-6, ropeTheta=500.0)
def randomize(model, seed=3):
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(p + 0.3 * torch.randn(p.shape, generator=g))
ids = torch.tensor([[5, 9, 4, 12, 7, 7, 11, 6, 10, 4]], dtype=torch.int64)
`;

function run(code: string): unknown {
  return JSON.parse(
    python(
      `import json, torch\nsys.path.insert(0, ${HERE})\nfrom attention_lab_trainer import model as M\n${CONFIGS}\n${code}`,
    ),
  );
}

describe("the trainer's model, without our engine", () => {
  it.each([
    ['grouped-query (nKvHeads 2), untied', ''],
    ['one key/value head, tied', ', nKvHeads=1, tieEmbeddings=True'],
  ])("a Llama-shaped config gives LlamaForCausalLM's logits (%s)", (_name, extra) => {
    const out = run(`
from minimal_llama import llama_logits
cfg = dict(LLAMA${extra})
m = M.build_model(cfg).eval()
randomize(m)
s = {k: v.detach() for k, v in m.state_dict().items()}
C, D, Hkv = cfg["dModel"], cfg["dModel"] // cfg["nHeads"], M.kv_heads(cfg)
hf = {"model.embed_tokens.weight": s["transformer.wte.weight"], "model.norm.weight": s["transformer.ln_f.weight"]}
if not cfg["tieEmbeddings"]:
    hf["lm_head.weight"] = s["lm_head.weight"]
for i in range(cfg["nDecoderLayers"]):
    p, q = f"transformer.h.{i}", f"model.layers.{i}"
    w = s[f"{p}.attn.c_attn.weight"]
    hf[f"{q}.self_attn.q_proj.weight"], hf[f"{q}.self_attn.k_proj.weight"], hf[f"{q}.self_attn.v_proj.weight"] = w.split([C, Hkv * D, Hkv * D])
    hf[f"{q}.self_attn.o_proj.weight"] = s[f"{p}.attn.c_proj.weight"]
    hf[f"{q}.mlp.gate_proj.weight"] = s[f"{p}.mlp.c_gate.weight"]
    hf[f"{q}.mlp.up_proj.weight"] = s[f"{p}.mlp.c_fc.weight"]
    hf[f"{q}.mlp.down_proj.weight"] = s[f"{p}.mlp.c_proj.weight"]
    hf[f"{q}.input_layernorm.weight"] = s[f"{p}.ln_1.weight"]
    hf[f"{q}.post_attention_layernorm.weight"] = s[f"{p}.ln_2.weight"]
hc = dict(hidden_size=C, num_attention_heads=cfg["nHeads"], num_key_value_heads=Hkv, rms_norm_eps=cfg["layerNormEps"],
    rope_theta=cfg["ropeTheta"], num_hidden_layers=cfg["nDecoderLayers"], tie_word_embeddings=cfg["tieEmbeddings"])
with torch.no_grad():
    ours, theirs = m(ids), llama_logits(hc, hf, ids)
print(json.dumps({"gap": (ours - theirs).abs().max().item(), "scale": ours.abs().max().item(),
    "params": sorted(s), "shape": list(s["transformer.h.0.attn.c_attn.weight"].shape)}))
`) as { gap: number; scale: number; params: string[]; shape: number[] };
    expect(out.scale).toBeGreaterThan(0.5);
    // Two float32 forwards of the same maths (summation orders differ): a clean clone measured 1.0014e-5 once.
    expect(out.gap).toBeLessThan(1e-5 * Math.max(1, out.scale));
    // Our names: no biases, no positions table, a gate beside the up projection; q, k, v fused as (H + 2·Hkv)·D rows.
    expect(out.params.filter((n) => n.endsWith('.bias') || n.includes('wpe'))).toEqual([]);
    expect(out.params).toContain('transformer.h.1.mlp.c_gate.weight');
    expect(out.shape).toEqual([extra ? 16 + 2 * 4 : 16 + 2 * 2 * 4, 16]);
  });

  it('a sliding window of W: a token changes the logits of its own and the next W − 1 positions only', () => {
    const out = run(`
rows = []
for window in (3, 0):
    cfg = dict(LLAMA, nDecoderLayers=1, slidingWindow=window)
    m = M.build_model(cfg).eval()
    randomize(m)
    other = ids.clone()
    other[0, 2] = 8
    with torch.no_grad():
        d = (m(ids) - m(other)).abs().amax(-1)[0]
    rows.append([x > 1e-6 for x in d.tolist()])
print(json.dumps(rows))
`) as boolean[][];
    const [windowed, whole] = out as [boolean[], boolean[]];
    expect(windowed).toEqual([false, false, true, true, true, false, false, false, false, false]);
    expect(whole).toEqual([false, false, true, true, true, true, true, true, true, true]);
  });

  it('a config without the fields of today (an older run.json) builds the model it always did', () => {
    const out = run(`
old = M.build_model(GPT).eval()
full = M.build_model(dict(GPT, qkvBias=True, attnOutBias=True, mlpBias=True, **M.TODAY_OFF)).eval()
randomize(old)
full.load_state_dict(old.state_dict())
with torch.no_grad():
    same = torch.equal(old(ids), full(ids))
nobias = M.build_model(dict(GPT, bias=False))
print(json.dumps({"same": same, "names": sorted(old.state_dict()) == sorted(full.state_dict()),
    "biases": [n for n, _ in nobias.named_parameters() if n.endswith(".bias")]}))
`) as { same: boolean; names: boolean; biases: string[] };
    expect(out).toEqual({ same: true, names: true, biases: [] });
  });

  it("ParamMap splits a grouped-query c_attn into our q, k, v and puts Adam's moments back", () => {
    const out = run(`
from attention_lab_trainer.files import ParamMap
cfg = dict(LLAMA, qkvBias=True)
m = M.build_model(cfg)
params = []  # our names, in model order: each fused c_attn as q [H·D] then k, v [Hkv·D]
for n, p in m.named_parameters():
    if ".attn.c_attn." not in n:
        params.append({"name": n, "shape": list(p.shape)})
        continue
    for x, r in (("q", 16), ("k", 8), ("v", 8)):
        params.append({"name": n.replace(".c_attn.", f".c_attn_{x}."), "shape": [r, *p.shape[1:]]})
pm = ParamMap(m, params)
pm.load({p["name"]: torch.full(p["shape"], float(i)) for i, p in enumerate(params)})
first = next(i for i, p in enumerate(params) if p["name"] == "transformer.h.0.attn.c_attn_q.weight")
w = dict(m.named_parameters())["transformer.h.0.attn.c_attn.weight"]
rows = [[x - first for x in w[a:b].unique().tolist()] for a, b in ((0, 16), (16, 24), (24, 32))]
flat = pm.flat({p: p for p in m.parameters()})
back = pm.unflat(flat, {p: p for p in m.parameters()})
print(json.dumps({"rows": rows, "roundtrip": all(torch.equal(back[p], p.detach()) for p in m.parameters()),
    "k": [x - first for x in pm.ours({p: p for p in m.parameters()})[first + 1][1].unique().tolist()]}))
`) as { rows: number[][]; roundtrip: boolean; k: number[] };
    expect(out.rows).toEqual([[0], [1], [2]]);
    expect(out.k).toEqual([1]);
    expect(out.roundtrip).toBe(true);
  });

  it('every option runs under bf16 autocast, near float32, with a finite gradient for every parameter', () => {
    const out = run(`
ALL = dict(LLAMA, activation="geglu", qkNorm=True, attnSoftCap=2, logitSoftCap=5, slidingWindow=5,
    parallelResidual=True, embedNorm=True, rotaryFraction=0.5, qkvBias=True)
rows = []
for cfg in (ALL, dict(ALL, positional="alibi", normScale=False, activation="swiglu", nKvHeads=1)):
    m = M.build_model(cfg)
    randomize(m)
    ref = m(ids)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        y = m(ids)
        loss = M.loss_fn(y.float(), ids, 0.0)
    loss.backward()
    finite = all(p.grad is not None and bool(torch.isfinite(p.grad).all()) for p in m.parameters())
    rows.append({"dtype": str(y.dtype), "gap": (y.float() - ref).abs().max().item(), "finite": finite})
print(json.dumps(rows))
`) as { dtype: string; gap: number; finite: boolean }[];
    expect(out).toHaveLength(2);
    for (const r of out) {
      expect(r.dtype).toBe('torch.bfloat16');
      expect(r.finite).toBe(true);
      expect(r.gap).toBeLessThan(0.25);
    }
  });
});
