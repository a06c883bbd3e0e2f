/**
 * Inference on the WebGPU backend against the WebAssembly backend, on tiny trained runs opened
 * on each (the weights uploaded once by openRun): the key/value-cache decoder gives the same
 * tokens (greedy with its attention maps, beam search, whose rows move on the device) and
 * scoring the same log-probabilities, for a decoder-only run, an encoder-decoder run and a
 * llama-tiny run (RMSNorm, RoPE, SwiGLU, grouped-query attention); a prefill hands out every
 * layer's attention within 1e-5 of WebAssembly's, read back once at the end; the attention of a
 * text, the logit lens and the ablation comparison give WebAssembly's numbers, also with their logits read 4
 * positions at a time (ModelShape.logitRows; a short last chunk gathered on the device); the model worker
 * runs decode, score and attention of a run trained on WebGPU on the platform's GPU. Runs on whatever
 * adapter Dawn opens — here SwiftShader — and skips, naming why, only when none opens.
 */

import { readFile, writeFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Backend, FloatArray } from '../../../../src/engine/backend';
import { createWasmBackend } from '../../../../src/engine/backends/wasm/wasmBackend';
import { createWebGpuBackend } from '../../../../src/engine/backends/webgpu/webgpuBackend';
import { greedyDecode } from '../../../../src/engine/decode/greedy';
import type { AttentionStack } from '../../../../src/engine/models/heads';
import { createStepper } from '../../../../src/engine/models/stepper';
import { NODE_FS } from '../../../../src/lab/files/fs.node';
import { attendText, attendTextAsync } from '../../../../src/lab/inference/attend';
import { compareHeadsOff, compareHeadsOffAsync } from '../../../../src/lab/inference/ablate';
import type { LensInput } from '../../../../src/lab/inference/lens';
import { logitLens, logitLensAsync } from '../../../../src/lab/inference/lens';
import { decodeText, decodeTextAsync } from '../../../../src/lab/inference/decode';
import type { OpenRun } from '../../../../src/lab/inference/openRun';
import { openRun } from '../../../../src/lab/inference/openRun';
import { scoreText, scoreTextAsync } from '../../../../src/lab/inference/score';
import type { LabPlatform } from '../../../../src/lab/platform/platform';
import { openNodeGpu } from '../../../../src/lab/platform/webgpu.node';
import { serveModelRequests } from '../../../../src/lab/workers/modelService';
import type { DecodeParams } from '../../../../src/protocol/model';
import { tinyDocuments, tinySpec, trainTiny } from '../tinyRuns';
import { startModelWorker } from './frontDoors';
import { finiteIn } from './outputValues';

const gpu = await openNodeGpu();

/** The largest |a − b| / max(1, |b|) over two arrays of one length. */
function worstRelative(a: ArrayLike<number>, b: ArrayLike<number>): number {
  expect(a.length).toBe(b.length);
  let worst = 0;
  for (let i = 0; i < a.length; i++)
    worst = Math.max(worst, Math.abs((a[i] as number) - (b[i] as number)) / Math.max(1, Math.abs(b[i] as number)));
  return worst;
}

/** Every finite number in a JSON-like value, in order (NaN and ±∞ are compared by their count). */
/** A tiny trained run whose run.json says it trained on `backend` (and, with `backendUsed`, on what it last ran). */
async function runTrainedAs(backend: string, backendUsed?: string): Promise<{ runDir: string }> {
  const trained = await trainTiny(tinySpec(await tinyDocuments(), 3, 24));
  const file = NODE_FS.join(trained.runDir, 'run.json');
  const json = JSON.parse(await readFile(file, 'utf8')) as { spec: { backend: string }; backendUsed?: string };
  json.spec.backend = backend;
  if (backendUsed !== undefined) json.backendUsed = backendUsed;
  await writeFile(file, JSON.stringify(json));
  return trained;
}

/** A model worker's handlers serving on `platform` in this process; each request resolves to its answer or failure. */
function servedOn(
  platform: LabPlatform,
): (msg: Record<string, unknown> & { id: number }) => Promise<{ type: string; output?: unknown }> {
  const posted: { type: string; id?: number; output?: unknown }[] = [];
  let listener: ((msg: unknown) => void) | null = null;
  serveModelRequests(platform, {
    post: (msg) => posted.push(msg as (typeof posted)[number]),
    onMessage: (l) => (listener = l),
  });
  return async (msg) => {
    (listener as unknown as (m: unknown) => void)(msg);
    for (let i = 0; i < 600; i++) {
      const got = posted.find((m) => m.id === msg.id && m.type !== 'model/didToken' && m.type !== 'model/didProgress');
      if (got) return got;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`no answer to ${String(msg.type)}`);
  };
}

const greedy = (input: string, maxTokens: number): DecodeParams => ({
  input,
  strategy: 'greedy',
  beam: 1,
  lengthPenalty: 0.6,
  temperature: 1,
  topK: 0,
  topP: 1,
  maxTokens,
  seed: 1,
});

describe.skipIf(!gpu.ok)(
  gpu.ok ? `WebGPU inference on ${gpu.adapter.name}` : `WebGPU inference (skipped: ${gpu.reason})`,
  () => {
    /** Each run opened on WebAssembly and on WebGPU. */
    const runs = new Map<string, { wasm: OpenRun; webgpu: OpenRun }>();

    beforeAll(async () => {
      if (!gpu.ok) return;
      const docs = await tinyDocuments();
      const llama = tinySpec(docs, 3, 24);
      const specs = {
        'decoder-only': tinySpec(docs, 3, 24),
        'encoder-decoder': tinySpec({ kind: 'task', task: 'reverse' }, 3, 24),
        'llama-tiny': { ...llama, model: { kind: 'decoder-only', preset: 'llama-tiny', overrides: {} } } as const,
      };
      for (const [name, spec] of Object.entries(specs)) {
        const trained = await trainTiny(spec);
        const wasm = createWasmBackend({ fma: false });
        expect(wasm, 'the WebAssembly backend loads').not.toBeNull();
        runs.set(name, {
          wasm: await openRun(NODE_FS, trained.runDir, wasm as Backend, 2),
          webgpu: await openRun(NODE_FS, trained.runDir, createWebGpuBackend(gpu.device), 2),
        });
      }
    });
    afterAll(() => {
      if (gpu.ok) gpu.device.destroy();
    });

    const names = ['decoder-only', 'encoder-decoder', 'llama-tiny'] as const;
    const inputOf = (name: string): string => (name === 'encoder-decoder' ? 'abcde' : 'the cat');

    it.each(names)('%s: greedy decode gives WebAssembly’s tokens, log-probabilities and attention', async (name) => {
      const { wasm, webgpu } = runs.get(name) as { wasm: OpenRun; webgpu: OpenRun };
      const params = greedy(inputOf(name), 16);
      const want = decodeText(wasm, params, { attention: true }).output;
      const got = (await decodeTextAsync(webgpu, params, { attention: true })).output;
      expect(got.ids).toEqual(want.ids);
      expect(got.ids.length).toBeGreaterThan(0);
      expect(worstRelative(got.logprobs, want.logprobs)).toBeLessThan(1e-5);
      const a = got.attention;
      const b = want.attention;
      expect(a && b).toBeTruthy();
      if (!a || !b) return;
      expect(a.self.length).toBe(b.self.length);
      a.self.forEach((m, l) => expect(worstRelative(m, b.self[l] as Float32Array)).toBeLessThan(1e-5));
      expect(a.cross.length).toBe(name === 'encoder-decoder' ? b.self.length : 0);
      a.cross.forEach((m, l) => expect(worstRelative(m, b.cross[l] as Float32Array)).toBeLessThan(1e-5));
    });

    it.each(names)('%s: beam search (its rows reordered on the device) gives WebAssembly’s beams', async (name) => {
      const { wasm, webgpu } = runs.get(name) as { wasm: OpenRun; webgpu: OpenRun };
      const params: DecodeParams = { ...greedy(inputOf(name), 8), strategy: 'beam', beam: 3 };
      const want = decodeText(wasm, params).output;
      const got = (await decodeTextAsync(webgpu, params)).output;
      expect(got.ids).toEqual(want.ids);
      expect(got.beams.map((x) => x.text)).toEqual(want.beams.map((x) => x.text));
      expect(
        worstRelative(
          got.beams.map((x) => x.score),
          want.beams.map((x) => x.score),
        ),
      ).toBeLessThan(1e-5);
    });

    it.each(names)('%s: scoring gives WebAssembly’s log-probabilities within 1e-5', async (name) => {
      const { wasm, webgpu } = runs.get(name) as { wasm: OpenRun; webgpu: OpenRun };
      const source = name === 'encoder-decoder' ? 'abcde' : null;
      const text = name === 'encoder-decoder' ? 'edcba' : 'the dog sat on the mat';
      const want = scoreText(wasm, source, text).output;
      const got = (await scoreTextAsync(webgpu, source, text)).output;
      expect(got.tokens).toEqual(want.tokens);
      expect(worstRelative(got.logprobs, want.logprobs)).toBeLessThan(1e-5);
    });

    it.each(names)('%s: a prefill hands out every layer’s attention within 1e-5, after settle', async (name) => {
      const { wasm, webgpu } = runs.get(name) as { wasm: OpenRun; webgpu: OpenRun };
      const src = name === 'encoder-decoder' ? wasm.tok.encode('abcdef', { eos: true }) : undefined;
      const tokens = Int32Array.from(wasm.tok.encode(name === 'encoder-decoder' ? 'fedc' : 'the cat sat'));
      const maps = async (r: OpenRun): Promise<Map<string, Float32Array>> => {
        const out = new Map<string, Float32Array>();
        const stepper = createStepper(r.model, r.model.backendOrThrow(), {
          maxRows: 1,
          positions: tokens.length,
          ...(src ? { src } : {}),
        });
        const sink = (stack: AttentionStack, layer: number, probs: FloatArray, shape: readonly number[]): void => {
          out.set(`${stack}.${layer}`, Float32Array.from(probs.subarray(0, shape[0]! * shape[1]! * shape[2]!)));
        };
        stepper.prefill(tokens, false, sink);
        // On the device nothing is handed out before settle: the maps are read back then, together.
        if (stepper.deferred) expect(out.size).toBe(0);
        await stepper.settle();
        return out;
      };
      const want = await maps(wasm);
      const got = await maps(webgpu);
      expect([...got.keys()]).toEqual([...want.keys()]);
      expect(want.size).toBe(
        name === 'encoder-decoder' ? 3 * wasm.model.config.nDecoderLayers : wasm.model.config.nDecoderLayers,
      );
      for (const [key, map] of want) expect(worstRelative(got.get(key) as Float32Array, map)).toBeLessThan(1e-5);
    });

    it.each(names)('%s: the attention of a text: WebAssembly’s head scores within 1e-5 and its maps', async (name) => {
      const { wasm, webgpu } = runs.get(name) as { wasm: OpenRun; webgpu: OpenRun };
      const text = name === 'encoder-decoder' ? 'abcdef' : 'the cat sat on the mat';
      const want = attendText(wasm, text);
      const got = await attendTextAsync(webgpu, text);
      expect(got.snapshot.tgtTokens).toEqual(want.snapshot.tgtTokens); // an encoder-decoder's greedy target too
      expect((got.snapshot.headScores ?? []).map((h) => `${h.stack}.${h.layer}.${h.head}`)).toEqual(
        (want.snapshot.headScores ?? []).map((h) => `${h.stack}.${h.layer}.${h.head}`),
      );
      const scores = finiteIn(got.snapshot.headScores);
      expect(scores.length).toBeGreaterThan(0);
      expect(worstRelative(scores, finiteIn(want.snapshot.headScores))).toBeLessThan(1e-5);
      expect(got.full.map((m) => m.shape)).toEqual(want.full.map((m) => m.shape));
      // The maps are kept as 8-bit codes: a probability within 1e-5 may round to the next code, never further.
      got.full.forEach((m, i) => expect(worstRelative(m.data, (want.full[i] as typeof m).data)).toBeLessThanOrEqual(1));
    });

    it.each(names)('%s: the logit lens and the ablation comparison give WebAssembly’s numbers', async (name) => {
      const { wasm, webgpu } = runs.get(name) as { wasm: OpenRun; webgpu: OpenRun };
      // An encoder-decoder without a target decodes its own first (on the device too).
      const input: LensInput = name === 'encoder-decoder' ? { src: 'abcdef' } : { prompt: 'the cat sat' };
      const want = logitLens(wasm, input, { topK: 3 });
      const got = await logitLensAsync(webgpu, input, { topK: 3 });
      expect(got.tokens).toEqual(want.tokens);
      expect(got.layers.length).toBe(wasm.model.config.nDecoderLayers + 1);
      const tops = (l: typeof got): string[][] =>
        l.layers.flatMap((x) => x.positions.map((p) => p.top.map((t) => t.token)));
      expect(tops(got)).toEqual(tops(want));
      expect(worstRelative(finiteIn(got.layers), finiteIn(want.layers))).toBeLessThan(1e-5);
      const off = [{ stack: 'decoder.self', layer: 0, head: 1 }] as const;
      const wantOff = compareHeadsOff(wasm, input, off, { topK: 3 });
      const gotOff = await compareHeadsOffAsync(webgpu, input, off, { topK: 3 });
      expect(gotOff.compare.map((c) => c.token)).toEqual(wantOff.compare.map((c) => c.token));
      // The loss: the device's from its logits on the host, WebAssembly's from its kernel.
      expect(gotOff.ablated.loss).not.toBe(gotOff.base.loss);
      expect(worstRelative(finiteIn(gotOff), finiteIn(wantOff))).toBeLessThan(1e-5);
    });

    it.each(['decoder-only', 'encoder-decoder'] as const)(
      '%s: logits read 4 positions at a time (a short last chunk padded on the device) give WebAssembly’s numbers',
      async (name) => {
        const { wasm: w } = runs.get(name) as { wasm: OpenRun; webgpu: OpenRun };
        // logitRows 4: the lens, scoring and the ablation read their logits in chunks; a last chunk of fewer than 4
        // positions is gathered (copied row by row) into the model's scratch, on the device on WebGPU.
        const plan = { shape: { maxBatch: 1, logitRows: 4 } };
        const wasm = await openRun(NODE_FS, w.runDir, createWasmBackend({ fma: false }) as Backend, plan);
        const webgpu = await openRun(
          NODE_FS,
          w.runDir,
          createWebGpuBackend(gpu.ok ? gpu.device : (null as never)),
          plan,
        );
        expect(webgpu.model.logitRows).toBe(4);
        const input: LensInput = name === 'encoder-decoder' ? { src: 'abcdef', tgt: 'fedcb' } : { prompt: 'the cat s' };
        const want = logitLens(wasm, input, { topK: 3 });
        const got = await logitLensAsync(webgpu, input, { topK: 3 });
        expect(got.tokens.length % 4, 'the last chunk is short').not.toBe(0);
        expect(got.tokens).toEqual(want.tokens);
        expect(worstRelative(finiteIn(got.layers), finiteIn(want.layers))).toBeLessThan(1e-5);
        const off = [{ stack: 'decoder.self', layer: 0, head: 1 }] as const;
        const wantOff = compareHeadsOff(wasm, input, off, { topK: 3 });
        const gotOff = await compareHeadsOffAsync(webgpu, input, off, { topK: 3 });
        expect(gotOff.compare.map((c) => c.token)).toEqual(wantOff.compare.map((c) => c.token));
        expect(worstRelative(finiteIn(gotOff), finiteIn(wantOff))).toBeLessThan(1e-5);
        const source = name === 'encoder-decoder' ? 'abcde' : null;
        const text = name === 'encoder-decoder' ? 'edcb' : 'the dog sat on';
        const wantScore = scoreText(wasm, source, text).output;
        const gotScore = (await scoreTextAsync(webgpu, source, text)).output;
        expect(gotScore.logprobs.length % 4, 'the last chunk is short').not.toBe(0);
        expect(worstRelative(gotScore.logprobs, wantScore.logprobs)).toBeLessThan(1e-5);
      },
    );

    it('the model worker decodes, scores and attends with a run trained on WebGPU on the platform’s GPU', async () => {
      if (!gpu.ok) return;
      const trained = await runTrainedAs('webgpu');
      let opened = 0;
      const ask = servedOn({ fs: NODE_FS, threads: () => null, gpu: async () => (opened++, gpu) });
      const answer = async (msg: Record<string, unknown> & { id: number }, type: string): Promise<unknown> => {
        const got = await ask(msg);
        expect(got.type, JSON.stringify(got)).toBe(type);
        return got.output;
      };
      const params = greedy('the cat', 12);
      const decoded = (await answer(
        { type: 'model/decode', id: 1, runDir: trained.runDir, params },
        'model/didDecode',
      )) as {
        ids: number[];
      };
      const scored = (await answer(
        { type: 'model/score', id: 2, runDir: trained.runDir, source: null, text: 'the dog' },
        'model/didScore',
      )) as { logprobs: number[] };
      const attended = (await answer(
        { type: 'model/attend', id: 3, runDir: trained.runDir, text: 'the cat' },
        'model/didAttend',
      )) as { headScores: unknown[] };
      expect(opened).toBe(1); // one device for the worker's life, every job on it
      const wasm = await openRun(NODE_FS, trained.runDir, createWasmBackend({ fma: false }) as Backend, 2);
      expect(decoded.ids).toEqual(decodeText(wasm, params).output.ids);
      expect(worstRelative(scored.logprobs, scoreText(wasm, null, 'the dog').output.logprobs)).toBeLessThan(1e-5);
      const wantScores = finiteIn(attendText(wasm, 'the cat').snapshot.headScores);
      expect(worstRelative(finiteIn(attended.headScores), wantScores)).toBeLessThan(1e-5);
    });

    it('the built model worker (a worker thread of its own) decodes a run trained on WebGPU on the GPU', async () => {
      if (!gpu.ok) return;
      const trained = await runTrainedAs('webgpu');
      const door = await startModelWorker();
      try {
        const params = greedy('the cat', 10);
        const replies = await door.request({ type: 'model/decode', runDir: trained.runDir, params });
        const last = replies[replies.length - 1] as { type: string; output?: { ids: number[] } };
        expect(last.type, JSON.stringify(last)).toBe('model/didDecode');
        const wasm = await openRun(NODE_FS, trained.runDir, createWasmBackend({ fma: false }) as Backend, 2);
        expect(last.output?.ids).toEqual(decodeText(wasm, params).output.ids);
        expect(replies.filter((m) => m.type === 'model/didToken')).toHaveLength(10); // streamed as it went
      } finally {
        await door.close();
      }
    });

    it('a decode written for the host refuses a stepper on the device instead of reading stale logits', () => {
      const { webgpu } = runs.get('decoder-only') as { webgpu: OpenRun };
      const stepper = createStepper(webgpu.model, webgpu.model.backendOrThrow(), { maxRows: 1, positions: 8 });
      expect(() => greedyDecode(stepper, Int32Array.of(1, 2), { maxTokens: 2, eos: -1 })).toThrow(/runStepsAsync/);
      expect(() => decodeText(webgpu, greedy('the', 2))).toThrow(/runStepsAsync/);
      expect(() => scoreText(webgpu, null, 'the')).toThrow(/runReadsAsync/);
    });
  },
);

describe('the model worker where the platform gives no adapter', () => {
  it('answers a run trained on WebGPU on its CPU backend instead of refusing it', async () => {
    const trained = await runTrainedAs('webgpu');
    let asked = 0;
    const ask = servedOn({
      fs: NODE_FS,
      threads: () => null,
      gpu: async () => (asked++, { ok: false, reason: 'This browser gave no WebGPU adapter.' }),
    });
    const params = greedy('the cat', 8);
    const got = await ask({ type: 'model/decode', id: 1, runDir: trained.runDir, params });
    expect(got.type, JSON.stringify(got)).toBe('model/didDecode');
    expect(asked).toBe(1);
    const wasm = await openRun(NODE_FS, trained.runDir, createWasmBackend({ fma: false }) as Backend, 2);
    expect((got.output as { ids: number[] }).ids).toEqual(decodeText(wasm, params).output.ids);
  });
});

describe('the model worker and a run that `auto` trained on the GPU', () => {
  it('opens it on the platform’s GPU, as a run named webgpu', async () => {
    const asked: string[] = [];
    for (const used of ['wasm', 'webgpu (NVIDIA H100 · Vulkan)']) {
      const trained = await runTrainedAs('auto', used);
      const ask = servedOn({
        fs: NODE_FS,
        threads: () => null,
        gpu: async () => (asked.push(used), { ok: false, reason: 'none in this test' }),
      });
      const got = await ask({ type: 'model/score', id: 1, runDir: trained.runDir, source: null, text: 'the dog' });
      expect(got.type, JSON.stringify(got)).toBe('model/didScore');
    }
    // Asked for a device only for the run whose last session trained on WebGPU.
    expect(asked).toEqual(['webgpu (NVIDIA H100 · Vulkan)']);
  });
});
