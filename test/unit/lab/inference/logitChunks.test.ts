/**
 * The inference jobs on a model whose logits are planned in chunks of rows (ModelShape.logitRows, what requestPlan
 * gives a long text with a large vocabulary) give the numbers of the same model holding every row's logits: score,
 * lens, ablation, patching and direct logit attribution, on one trained run opened both ways; and attribute's plan
 * counts the gradients its backward allocates.
 */

import { beforeAll, describe, expect, it } from 'vitest';
import { createReferenceBackend } from '../../../../src/engine/backends/reference';
import { createWasmBackend } from '../../../../src/engine/backends/wasm/wasmBackend';
import type { Backend } from '../../../../src/engine/backend';
import { qwen25Config } from '../../engine/models/hubShapes';
import { memoryProblem } from '../../../../src/engine/models/estimate';
import { NODE_FS } from '../../../../src/lab/files/fs.node';
import { compareHeadsOff } from '../../../../src/lab/inference/ablate';
import { attribute, attributePlan } from '../../../../src/lab/inference/attribute';
import { logitLens } from '../../../../src/lab/inference/lens';
import type { OpenRun, RunPlan } from '../../../../src/lab/inference/openRun';
import { openRun } from '../../../../src/lab/inference/openRun';
import { patchRun } from '../../../../src/lab/inference/patch';
import { scoreText } from '../../../../src/lab/inference/score';
import { tinyDocuments, tinySpec, trainTiny } from '../tinyRuns';
import { numbersIn, stringsIn, worst } from './outputValues';

const TEXT = 'the cat sat on the mat. the dog sat on the log.';
const BACKENDS: [string, () => Backend][] = [
  ['reference', () => createReferenceBackend()],
  ...(createWasmBackend() ? [['wasm', () => createWasmBackend() as Backend] as [string, () => Backend]] : []),
];

let runDir = '';
beforeAll(async () => {
  runDir = (await trainTiny(tinySpec(await tinyDocuments(), 3, 64))).runDir;
}, 120_000);

describe.each(BACKENDS)('jobs with logits in chunks of 4 rows equal the whole projection (%s)', (_b, backend) => {
  let whole: OpenRun;
  let sliced: OpenRun;
  beforeAll(async () => {
    const plan = (logitRows?: number): RunPlan => ({
      shape: { maxBatch: 4, maxLen: 64, ...(logitRows ? { logitRows } : {}) },
    });
    whole = await openRun(NODE_FS, runDir, backend(), plan());
    sliced = await openRun(NODE_FS, runDir, backend(), plan(4));
    expect(sliced.model.logitRows).toBe(4);
    expect(whole.model.logitRows).toBe(4 * 64);
  });

  it('score: every token’s log-probability', () => {
    const a = scoreText(whole, null, TEXT).output;
    const b = scoreText(sliced, null, TEXT).output;
    expect(a.logprobs.length).toBeGreaterThan(20);
    expect(worst(b.logprobs, a.logprobs)).toBeLessThanOrEqual(1e-6);
  });

  it('lens: the top tokens of every layer and position', () => {
    const a = logitLens(whole, { prompt: TEXT }, { topK: 3 });
    const b = logitLens(sliced, { prompt: TEXT }, { topK: 3 });
    expect(stringsIn(b)).toEqual(stringsIn(a));
    expect(worst(numbersIn(b), numbersIn(a))).toBeLessThanOrEqual(1e-6);
  });

  it('ablation: the loss and the next tokens with a head off', () => {
    const off = [{ stack: 'decoder.self' as const, layer: 0, head: 1 }];
    const a = compareHeadsOff(whole, { prompt: TEXT }, off, { topK: 5 });
    const b = compareHeadsOff(sliced, { prompt: TEXT }, off, { topK: 5 });
    expect(stringsIn(b)).toEqual(stringsIn(a));
    expect(worst(numbersIn(b), numbersIn(a))).toBeLessThanOrEqual(1e-6);
  });

  it('patching and direct logit attribution: the metric at the last position', () => {
    const req = {
      clean: 'the cat sat',
      corrupted: 'the dog sat',
      answer: ' ',
      wrong: 'o',
      metric: 'logit-diff' as const,
    };
    const a = patchRun(whole, { ...req, what: ['resid', 'heads'] });
    const b = patchRun(sliced, { ...req, what: ['resid', 'heads'] });
    // the metrics and the patched metrics (the normalised recovery divides float32 rounding by clean − corrupted)
    const raw = (o: typeof a): number[] => [o.clean, o.corrupted, ...numbersIn(o.maps.map((m) => m.values))];
    expect(worst(raw(b), raw(a))).toBeLessThanOrEqual(1e-6);
    const dla = {
      clean: 'the cat sat',
      corrupted: 'the cat sat',
      metric: { kind: 'logit-diff' as const, answer: ' ', wrong: 'o' },
    };
    const da = attribute(whole, { ...dla, what: 'dla' });
    const db = attribute(sliced, { ...dla, what: 'dla' });
    expect(worst(numbersIn(db), numbersIn(da))).toBeLessThanOrEqual(1e-5);
  });
});

describe('attribute plans the memory its job needs', () => {
  // Qwen2.5-0.5B: 1.84 GiB of parameters; a backward needs as much again for the gradients
  const qwen = qwen25Config();
  // in 3 GiB (of WebAssembly's 4): the parameters fit, the parameters and their gradients do not
  const problem = (plan: RunPlan): string | null =>
    memoryProblem(qwen, plan.shape, 'inference', {
      limit: 3 * 2 ** 30,
      ...(plan.gradients ? { gradients: true } : {}),
    });

  it('attribution patching (a backward) counts the gradients and the prompt’s whole logits; DLA neither', () => {
    const ap = attributePlan(qwen, 12, 'attribution', false);
    expect(ap.gradients).toBe(true);
    expect(ap.shape.logitRows).toBe(12);
    expect(problem(ap)).toMatch(/gradients 1\.84 GiB/);
    const dla = attributePlan(qwen, 12, 'dla', false);
    expect(dla.gradients).toBeUndefined();
    expect(problem(dla)).toBeNull();
    // beside full patching: the patch plan's rows, with the gradients counted
    const withPatching = attributePlan(qwen, 12, 'attribution', true);
    expect(withPatching.gradients).toBe(true);
    expect(problem(withPatching)).toMatch(/gradients 1\.84 GiB/);
  });
});
