/**
 * The import of Hugging Face folders of today's families (engine/models/hfFamilies.ts) against
 * transformers itself: test/golden/hf-families (scripts/pytorch/make_hf_family_golden.py) holds,
 * per case, the config.json (and shard index) transformers saved for a model of a real
 * checkpoint's shapes (2 layers, vocabulary 1024), the list of the tensors it saved, and its
 * logits and 32-token greedy decode. The weights are a hash of (name, index) the script and
 * {@link weights} compute alike, so the test rebuilds the folder tensor for tensor (the script
 * checked its recomputation against the saved files) and imports it:
 *
 * - logits within 1e-4 of transformers (bf16 and fp16 cases: of the rounded weights in float32,
 *   which the import widens exactly), the greedy decode identical, through the decode cache;
 * - SmolLM2 sharded (3 shards and an index), Qwen2.5 in bf16, Pythia in fp16, Mistral with its
 *   window active, imported from its .safetensors file with config.json beside it;
 *   Gemma 3 in bf16 (one local, one global layer; norms read as 1 + w); Llama 3.2 (llama3 rope scaling),
 *   TinyLlama, and Gemma 3's linear scaling of its global layers (4B and up), each also shown to be far off with
 *   the scaling left out;
 * - run.json keeps the model's own name, architecture and family; the header shows them;
 * - config.json values not built are refused in one line naming the key and value.
 */

import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createReferenceBackend } from '../../../../src/engine/backends/reference';
import { decodeSafetensors, encodeSafetensors } from '../../../../src/engine/io/safetensors';
import type { SafetensorsDtype } from '../../../../src/engine/io/safetensors';
import { hfModelName, splitRows } from '../../../../src/engine/models/hfFamilies';
import { planImport } from '../../../../src/engine/models/importLayouts';
import { createStepper } from '../../../../src/engine/models/stepper';
import { Transformer } from '../../../../src/engine/models/transformer';
import { NODE_FS } from '../../../../src/lab/files/fs.node';
import { openRun } from '../../../../src/lab/inference/openRun';
import { importCheckpoint } from '../../../../src/lab/interop/importCheckpoint';
import { readRunJson } from '../../../../src/lab/runs/runFolder';
import { runSummary } from '../../../../src/lab/runs/runState';
import { ShardedReader } from '../../../../src/lab/interop/shardedCheckpoint';
import { cli } from '../../cli/cliHarness';
import { nodeTestFs } from '../files/fileSystems';

const GOLDEN = path.resolve(__dirname, '../../../golden/hf-families');
const TOL = 1e-4;

interface Manifest {
  readonly file: string;
  readonly metadata: Record<string, string> | null;
  readonly tensors: {
    name: string;
    seed: string;
    dtype: SafetensorsDtype;
    shape: number[];
    scale: number;
    offset: number;
  }[];
}

interface Expected {
  readonly architecture: string;
  readonly dtype: string;
  readonly ids: number[];
  readonly greedy: number[];
}

function fnv1a(s: string): number {
  let h = 0x811c9dc5;
  for (const b of new TextEncoder().encode(s)) h = Math.imul(h ^ b, 0x01000193) >>> 0;
  return h;
}

/** make_hf_family_golden.py's weights(): offset + scale · u, u in [-1, 1) from a hash of (name, index), float32. */
function weights(name: string, n: number, scale: number, offset: number): Float32Array {
  const seed = fnv1a(name);
  const s = Math.fround(scale);
  const o = Math.fround(offset);
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    let h = (seed + Math.imul(i, 0x9e3779b9)) >>> 0;
    h ^= h >>> 16;
    h = Math.imul(h, 0x85ebca6b) >>> 0;
    h ^= h >>> 13;
    h = Math.imul(h, 0xc2b2ae35) >>> 0;
    h ^= h >>> 16;
    const u = (h >>> 8) / 2 ** 23 - 1;
    out[i] = Math.fround(Math.fround(u * s) + o);
  }
  return out;
}

const t = nodeTestFs();

/** The case's Hugging Face folder, rebuilt under `dir/<case>` (named as the model, as people keep them). */
async function folder(name: string, as = name): Promise<string> {
  const src = path.join(GOLDEN, name);
  const dir = path.join(await t.dir(), as);
  fs.mkdirSync(dir);
  for (const f of ['config.json', 'model.safetensors.index.json'])
    if (fs.existsSync(path.join(src, f))) fs.copyFileSync(path.join(src, f), path.join(dir, f));
  fs.copyFileSync(path.join(GOLDEN, 'tokenizer.json'), path.join(dir, 'tokenizer.json'));
  const manifest = JSON.parse(fs.readFileSync(path.join(src, 'tensors.json'), 'utf8')) as Manifest[];
  for (const m of manifest) {
    const tensors = m.tensors.map((x) => ({
      name: x.name,
      dtype: x.dtype,
      shape: x.shape,
      data: weights(
        x.seed,
        x.shape.reduce((a, b) => a * b, 1),
        x.scale,
        x.offset,
      ),
    }));
    fs.writeFileSync(path.join(dir, m.file), encodeSafetensors(tensors, m.metadata ?? undefined));
  }
  return dir;
}

function expected(name: string): { exp: Expected; logits: Float32Array; V: number } {
  const exp = JSON.parse(fs.readFileSync(path.join(GOLDEN, name, 'expected.json'), 'utf8')) as Expected;
  const f = decodeSafetensors(new Uint8Array(fs.readFileSync(path.join(GOLDEN, name, 'logits.safetensors'))));
  const l = f.tensors.get('logits');
  if (!l) throw new Error('golden lacks logits');
  return { exp, logits: l.data as Float32Array, V: l.shape[1] as number };
}

/** Imports `from`, then checks the logits of the golden's input and its greedy decode; returns the run. */
async function checkCase(name: string, from: string): Promise<{ run: Awaited<ReturnType<typeof openRun>> }> {
  const { exp, logits, V } = expected(name);
  const out = path.join(await t.dir(), 'run');
  await importCheckpoint(NODE_FS, { from, out });
  const T = exp.ids.length;
  const backend = createReferenceBackend();
  const r = await openRun(NODE_FS, out, backend, { shape: { maxBatch: 1, maxLen: T + exp.greedy.length } });
  const input = Int32Array.from(exp.ids);
  r.model.forward({ B: 1, T, input, targets: new Int32Array(T) }, { train: false });
  const ours = r.model.logits();
  let diff = 0;
  for (let i = 0; i < T * V; i++) diff = Math.max(diff, Math.abs((ours[i] as number) - (logits[i] as number)));
  expect(diff).toBeLessThan(TOL);
  // A model that says something: its logits are far from flat.
  expect(Math.max(...logits.subarray(0, V)) - Math.min(...logits.subarray(0, V))).toBeGreaterThan(1);
  // Greedy through the key/value cache (as decode runs), one step per token: a prefill plans its buffers for the
  // whole context ([H, P, P]: 60 GB at Qwen2.5's 32768), which is the scale work's to lower.
  const stepper = createStepper(r.model, backend, { maxRows: 1 });
  let last: Float32Array = new Float32Array(0);
  for (const id of exp.ids) last = stepper.step(Int32Array.of(id), false).logits;
  const greedy: number[] = [];
  for (let i = 0; i < exp.greedy.length; i++) {
    let best = 0;
    for (let v = 1; v < V; v++) if ((last[v] as number) > (last[best] as number)) best = v;
    greedy.push(best);
    if (i + 1 < exp.greedy.length) last = stepper.step(Int32Array.of(best), false).logits;
  }
  expect(greedy).toEqual(exp.greedy);
  return { run: r };
}

describe("Hugging Face families: transformers' logits and greedy decodes", () => {
  it('SmolLM2-135M shapes (Llama, GQA 9/3, tied), sharded in 3 files with an index: 1e-4, same greedy', async () => {
    const dir = await folder('smollm2', 'SmolLM2-135M');
    expect(fs.readdirSync(dir).filter((f) => /^model-\d+-of-\d+\.safetensors$/.test(f))).toHaveLength(3);
    const { run } = await checkCase('smollm2', dir);
    expect(run.run.source).toEqual({ name: 'SmolLM2-135M', architecture: 'LlamaForCausalLM', family: 'llama' });
    expect(run.run.imported?.layout).toBe('hf-llama');
    expect(run.model.config).toMatchObject({ nHeads: 9, nKvHeads: 3, ropeTheta: 100000, tieEmbeddings: true });
    // The header names the model and its architecture where the import's description shows.
    expect(runSummary(NODE_FS, run.runDir, run.run).imported?.layout).toBe('SmolLM2-135M, Llama architecture');
  });

  it('Qwen2.5-0.5B shapes (q/k/v biases, 14/2 heads, θ 1e6, tied) in bf16: 1e-4 of the rounded weights', async () => {
    const { run } = await checkCase('qwen2.5', await folder('qwen2.5', 'Qwen2.5-0.5B'));
    expect(expected('qwen2.5').exp.dtype).toBe('bfloat16');
    expect(run.model.config).toMatchObject({ qkvBias: true, attnOutBias: false, mlpBias: false, nKvHeads: 2 });
    expect(run.run.source?.family).toBe('qwen2');
  });

  it('Pythia-70m shapes (GPT-NeoX: fused per-head qkv, rotary 0.25, parallel residual, untied) in fp16', async () => {
    const { run } = await checkCase('pythia', await folder('pythia', 'pythia-70m'));
    expect(run.model.config).toMatchObject({
      rotaryFraction: 0.25,
      parallelResidual: true,
      normType: 'layernorm',
      activation: 'gelu',
      tieEmbeddings: false,
    });
    expect(run.run.source).toEqual({ name: 'pythia-70m', architecture: 'GPTNeoXForCausalLM', family: 'gpt_neox' });
  });

  it('Mistral with its sliding window of 8 active over 16 + 32 positions, from the .safetensors file itself', async () => {
    const dir = await folder('mistral', 'Mistral-shaped');
    const { run } = await checkCase('mistral', path.join(dir, 'model.safetensors'));
    expect(run.model.config.slidingWindow).toBe(8);
  });

  it('Qwen3-0.6B shapes (QK-norm, 16 heads of 128 over d 1024): 1e-4, same greedy', async () => {
    const { run } = await checkCase('qwen3', await folder('qwen3', 'Qwen3-0.6B'));
    expect(run.model.config).toMatchObject({ qkNorm: true, headDim: 128 });
  });

  it('Gemma-3-270M shapes (sandwich norms as 1 + w, a local and a global layer, window 8) in bf16', async () => {
    const { run } = await checkCase('gemma3', await folder('gemma3', 'gemma-3-270m'));
    expect(run.model.config).toMatchObject({
      activation: 'geglu',
      qkNorm: true,
      postNorms: true,
      headDim: 256,
      attnScale: 0, // query_pre_attn_scalar 256 = head_dim: 1/√256
      embedScale: true,
      slidingWindow: 8,
      globalEvery: 2,
      ropeTheta: 1e6,
      ropeLocalTheta: 1e4,
      nKvHeads: 1,
      tieEmbeddings: true,
    });
    expect(run.run.source).toEqual({ name: 'gemma-3-270m', architecture: 'Gemma3ForCausalLM', family: 'gemma3_text' });
    expect(run.run.imported?.layout).toBe('hf-gemma3');
  });

  it('Llama-3.2-1B shapes (32/8 heads of 64, d_ff 8192, θ 500000, llama3 rope scaling ×32) in bf16', async () => {
    const { run } = await checkCase('llama3.2', await folder('llama3.2', 'Llama-3.2-1B'));
    expect(run.model.config).toMatchObject({
      ropeTheta: 500000,
      ropeScaling: 'llama3',
      ropeScalingFactor: 32,
      ropeLowFreqFactor: 1,
      ropeHighFreqFactor: 4,
      ropeOriginalMaxLen: 8192,
      nKvHeads: 8,
    });
    // The scaling matters at these 16 positions: without it the logits are far outside the tolerance.
    expect(await offWithout(run.runDir, 'llama3.2')).toBeGreaterThan(100 * TOL);
  });

  it('TinyLlama-1.1B shapes (32/4 heads, groups of 8, d_ff 5632, untied) in bf16: 1e-4, same greedy', async () => {
    const { run } = await checkCase('tinyllama', await folder('tinyllama', 'TinyLlama-1.1B'));
    expect(run.model.config).toMatchObject({ nHeads: 32, nKvHeads: 4, ropeScaling: 'none', tieEmbeddings: false });
  });

  it("Gemma 3's linear RoPE scaling ×8 of its global layers (4B and up), on 270M's shapes, in bf16", async () => {
    const { run } = await checkCase('gemma3-linear', await folder('gemma3-linear', 'gemma-3-linear'));
    expect(run.model.config).toMatchObject({
      globalEvery: 2,
      ropeTheta: 1e6,
      ropeLocalTheta: 1e4,
      ropeScaling: 'linear',
      ropeScalingFactor: 8,
    });
    expect(await offWithout(run.runDir, 'gemma3-linear')).toBeGreaterThan(100 * TOL);
  });
});

/** How far the golden's logits are from those of the imported model's weights with its RoPE scaling turned off. */
async function offWithout(runDir: string, name: string): Promise<number> {
  const { exp, logits, V } = expected(name);
  const T = exp.ids.length;
  const backend = createReferenceBackend();
  const r = await openRun(NODE_FS, runDir, backend, { shape: { maxBatch: 1, maxLen: T } });
  const off = new Transformer({ ...r.model.config, ropeScaling: 'none' }, { maxBatch: 1, maxLen: T }).bind(backend);
  off.params.set(r.model.params);
  off.forward({ B: 1, T, input: Int32Array.from(exp.ids), targets: new Int32Array(T) }, { train: false });
  const ours = off.logits();
  let diff = 0;
  for (let i = 0; i < T * V; i++) diff = Math.max(diff, Math.abs((ours[i] as number) - (logits[i] as number)));
  return diff;
}

/** The tensors (names and shapes) of a case, for planning without weights. */
function shapesOf(name: string): { name: string; shape: number[] }[] {
  const m = JSON.parse(fs.readFileSync(path.join(GOLDEN, name, 'tensors.json'), 'utf8')) as Manifest[];
  return m.flatMap((f) => f.tensors.map((x) => ({ name: x.name, shape: x.shape })));
}

function configOf(name: string, edit: (c: Record<string, unknown>) => void = () => {}): Record<string, unknown> {
  const c = JSON.parse(fs.readFileSync(path.join(GOLDEN, name, 'config.json'), 'utf8')) as Record<string, unknown>;
  edit(c);
  return c;
}

function refusal(name: string, edit: (c: Record<string, unknown>) => void): string {
  try {
    planImport(shapesOf(name), {}, configOf(name, edit));
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error('not refused');
}

describe('Hugging Face families: config.json read as the Hub writes it, and refusals in one line', () => {
  it('reads the older keys (rope_theta, rotary_pct, rotary_emb_base) as rope_parameters', () => {
    const llama = planImport(
      shapesOf('smollm2'),
      {},
      configOf('smollm2', (c) => {
        delete c['rope_parameters'];
        c['rope_theta'] = 100000;
        c['rope_scaling'] = null;
      }),
    );
    expect(llama.config.ropeTheta).toBe(100000);
    const neox = planImport(
      shapesOf('pythia'),
      {},
      configOf('pythia', (c) => {
        delete c['rope_parameters'];
        c['rotary_pct'] = 0.25;
        c['rotary_emb_base'] = 10000;
      }),
    );
    expect(neox.config).toMatchObject({ rotaryFraction: 0.25, ropeTheta: 10000 });
    expect(neox.tensors.filter((x) => x.split)).toHaveLength(2 * 2 * 3); // q/k/v weight and bias of 2 layers
  });

  it('reads rope_scaling as the Hub writes it (Llama 3.2, Gemma 3 4B) as rope_parameters', () => {
    const golden = planImport(shapesOf('llama3.2'), {}, configOf('llama3.2')).config;
    const hub = planImport(
      shapesOf('llama3.2'),
      {},
      configOf('llama3.2', (c) => {
        delete c['rope_parameters'];
        c['rope_theta'] = 500000;
        c['rope_scaling'] = {
          factor: 32,
          high_freq_factor: 4,
          low_freq_factor: 1,
          original_max_position_embeddings: 8192,
          rope_type: 'llama3',
        };
      }),
    ).config;
    expect(hub).toEqual(golden);
    const gemma = planImport(shapesOf('gemma3-linear'), {}, configOf('gemma3-linear')).config;
    const gemmaHub = planImport(
      shapesOf('gemma3-linear'),
      {},
      configOf('gemma3-linear', (c) => {
        delete c['rope_parameters'];
        c['rope_theta'] = 1e6;
        c['rope_local_base_freq'] = 1e4;
        c['rope_scaling'] = { factor: 8, rope_type: 'linear' };
      }),
    ).config;
    expect(gemmaHub).toEqual(gemma);
    // Two layers of the real pattern (6) are both local: the global layers' scaling is nowhere.
    const local = planImport(
      shapesOf('gemma3-linear'),
      {},
      configOf('gemma3-linear', (c) => {
        delete c['layer_types'];
        c['sliding_window_pattern'] = 6;
      }),
    ).config;
    expect(local).toMatchObject({ globalEvery: 0, ropeScaling: 'none', ropeTheta: 1e4 });
  });

  it("reads Gemma 3's Hub keys (rope_theta, rope_local_base_freq, sliding_window_pattern) and adds 1 to its norms", () => {
    const hub = (pattern: number): ReturnType<typeof planImport> =>
      planImport(
        shapesOf('gemma3'),
        {},
        configOf('gemma3', (c) => {
          delete c['rope_parameters'];
          delete c['layer_types'];
          c['rope_theta'] = 1e6;
          c['rope_local_base_freq'] = 1e4;
          c['rope_scaling'] = null;
          c['sliding_window_pattern'] = pattern;
          c['query_pre_attn_scalar'] = 144;
          c['final_logit_softcapping'] = 30;
        }),
      );
    expect(hub(2).config).toMatchObject({ globalEvery: 2, ropeTheta: 1e6, ropeLocalTheta: 1e4, slidingWindow: 8 });
    expect(hub(2).config.attnScale).toBeCloseTo(1 / 12, 12);
    expect(hub(2).config.logitSoftCap).toBe(30);
    // Two layers of the real pattern (6): both local, so every layer is windowed with the local θ.
    expect(hub(6).config).toMatchObject({ globalEvery: 0, ropeTheta: 1e4, slidingWindow: 8 });
    const plan = hub(2);
    const norms = plan.tensors.filter((x) => /norm\.weight$/.test(x.source));
    expect(norms).toHaveLength(2 * 6 + 1); // q/k norms and four sandwich norms per layer, the final norm
    expect(norms.every((x) => x.add === 1)).toBe(true);
    expect(plan.tensors.filter((x) => x.add !== undefined)).toHaveLength(norms.length);
    expect(plan.tensors.find((x) => x.source === 'model.layers.1.post_feedforward_layernorm.weight')?.target.name).toBe(
      'transformer.h.1.ln_2_post.weight',
    );
  });

  it('refuses what is not built, naming the key and value', () => {
    const cases: [string, (c: Record<string, unknown>) => void, RegExp][] = [
      ['smollm2', (c) => (c['model_type'] = 'phi3'), /model_type is "phi3", not a family Attention Lab imports/],
      ['smollm2', (c) => (c['model_type'] = 'gemma3'), /model_type is "gemma3": Gemma 3's image-and-text model/],
      ['smollm2', (c) => (c['model_type'] = 'gemma2'), /model_type is "gemma2": Gemma 2 is not one of the families/],
      [
        'gemma3',
        (c) => (c['layer_types'] = ['full_attention', 'sliding_attention']),
        /layer_types is \["full_attention","sliding_attention"\]; .*every n-th layer full_attention/,
      ],
      ['gemma3', (c) => (c['hidden_activation'] = 'gelu'), /hidden_activation is "gelu"; Gemma 3 takes/],
      [
        'gemma3',
        (c) => (c['rope_parameters'] = { full_attention: { rope_type: 'yarn', factor: 8 } }),
        /rope_parameters\.full_attention\.rope_type is "yarn"; .*default, linear and llama3/,
      ],
      [
        'gemma3',
        (c) => (c['rope_parameters'] = { sliding_attention: { rope_type: 'linear', factor: 8 } }),
        /rope_parameters\.sliding_attention scales RoPE \(linear\); .*global layers only/,
      ],
      ['gemma3', (c) => (c['use_bidirectional_attention'] = true), /use_bidirectional_attention is true/],
      [
        'smollm2',
        (c) => (c['rope_parameters'] = { rope_type: 'llama3', rope_theta: 500000, factor: 32 }),
        /rope_parameters\.low_freq_factor is missing; "llama3" RoPE scaling needs it as a number/,
      ],
      [
        'smollm2',
        (c) => {
          delete c['rope_parameters'];
          c['rope_scaling'] = { type: 'dynamic', factor: 2 };
        },
        /rope_scaling\.type is "dynamic"; Attention Lab builds default, linear and llama3 RoPE/,
      ],
      [
        'smollm2',
        (c) => (c['rope_parameters'] = { rope_type: 'linear', rope_theta: 10000, factor: 0.5 }),
        /ropeScalingFactor must be ≥ 1/,
      ],
      ['qwen2.5', (c) => (c['use_sliding_window'] = true), /use_sliding_window is true/],
      ['smollm2', (c) => (c['hidden_act'] = 'gelu'), /hidden_act is "gelu"; a Llama takes silu/],
      ['pythia', (c) => (c['hidden_size'] = 640), /expected shape \[1024, 640\]/],
    ];
    for (const [name, edit, re] of cases) {
      const msg = refusal(name, edit);
      expect(msg).toMatch(re);
      expect(msg).not.toContain('\n');
    }
  });

  it('splits GPT-NeoX query_key_value per head: rows [H, 3, D], part p of each head', () => {
    // H 2, D 2, 1 column: rows q0 q0 k0 k0 v0 v0 q1 q1 k1 k1 v1 v1.
    const fused = Float32Array.from([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
    expect([...splitRows(fused, { groups: 2, parts: 3, part: 0 }, 1)]).toEqual([1, 2, 7, 8]);
    expect([...splitRows(fused, { groups: 2, parts: 3, part: 2 }, 1)]).toEqual([5, 6, 11, 12]);
  });

  it("names the model from a Hub id, a cache snapshot's repository or the folder", () => {
    expect(hfModelName(['x', 'ckpt'], { _name_or_path: 'HuggingFaceTB/SmolLM2-135M' }, 'llama')).toBe('SmolLM2-135M');
    const snap = ['h', 'models--EleutherAI--pythia-70m', 'snapshots', 'a'.repeat(40)];
    expect(hfModelName(snap, {}, 'gpt_neox')).toBe('pythia-70m');
    expect(hfModelName(['m', 'TinyLlama-1.1B'], { _name_or_path: '/tmp/out' }, 'llama')).toBe('TinyLlama-1.1B');
  });
});

describe('Hugging Face families: shards and run.json', () => {
  it('refuses an index whose shard is missing, or that does not list what a shard holds, in one line', async () => {
    const dir = await t.dir();
    const shard = (names: string[]): Uint8Array =>
      encodeSafetensors(names.map((name) => ({ name, dtype: 'F32' as const, shape: [1], data: [1] })));
    fs.writeFileSync(path.join(dir, 'a.safetensors'), shard(['x', 'y']));
    const index = (map: Record<string, string>): string => {
      const f = path.join(dir, 'model.safetensors.index.json');
      fs.writeFileSync(f, JSON.stringify({ metadata: {}, weight_map: map }));
      return f;
    };
    const msg = async (map: Record<string, string>): Promise<string> =>
      ShardedReader.open(NODE_FS, index(map)).then(
        () => 'opened',
        (e: Error) => e.message,
      );
    expect(await msg({ x: 'a.safetensors', y: 'b.safetensors' })).toMatch(
      /names the shard b\.safetensors, which is not/,
    );
    expect(await msg({ x: 'a.safetensors' })).toMatch(/a\.safetensors holds y, which .* does not list there/);
    expect(await msg({ x: 'a.safetensors', y: 'a.safetensors', z: 'a.safetensors' })).toMatch(
      /says z is in a\.safetensors, but that shard has no such tensor/,
    );
    expect(await msg({ x: '../a.safetensors', y: 'a.safetensors' })).toMatch(/not a \.safetensors file in the same/);
    const ok = await ShardedReader.open(NODE_FS, index({ x: 'a.safetensors', y: 'a.safetensors' }));
    expect([...(await ok.readF32('y'))]).toEqual([1]);
  });

  it("run.json's source must be {name, architecture, family}: anything else is refused naming the file", async () => {
    const out = path.join(await t.dir(), 'run');
    await importCheckpoint(NODE_FS, { from: await folder('mistral'), out });
    const file = path.join(out, 'run.json');
    const run = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>;
    expect(run['source']).toEqual({ name: 'mistral', architecture: 'MistralForCausalLM', family: 'mistral' });
    fs.writeFileSync(file, JSON.stringify({ ...run, source: { name: 'x', architecture: 'y', family: 'gpt9' } }));
    await expect(readRunJson(NODE_FS, out)).rejects.toThrow(/run\.json: has a "source" entry that is not \{name/);
  });
});

describe('Hugging Face families: the CLI', () => {
  it('import says the model by its name and architecture; decode runs on the imported Mistral', async () => {
    const from = await folder('mistral', 'Mistral-7B-cut');
    const out = path.join(await t.dir(), 'run');
    const imp = cli(['import', '--from', from, '--out', out], path.dirname(out));
    expect(imp.code, imp.stderr).toBe(0); // stderr holds the progress line
    expect(imp.stdout).toMatch(/^Imported Mistral-7B-cut \(MistralForCausalLM\): /);
    expect(imp.stdout).toContain('Mistral: 2 layers, 8 heads (2 key/value), d_model 512');
    expect(imp.stdout).toContain('sliding window 8 from config.json');
    const dec = cli(
      ['decode', '--run', out, '--max-tokens', '12', '--json', '--prompt', 'the station'],
      path.dirname(out),
    );
    expect(dec.code, dec.stderr).toBe(0);
    expect((JSON.parse(dec.stdout) as { tokens: string[] }).tokens.length).toBeGreaterThan(0);
  });
});
