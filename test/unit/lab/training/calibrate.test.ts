import { describe, expect, it } from 'vitest';
import { estimateModel } from '../../../../src/engine/models/estimate';
import { calibrate } from '../../../../src/lab/training/calibrate';
import { resolveConfig } from '../../../../src/lab/training/prepare';
import { createWasmThreads } from '../../../../src/lab/workers/wasmThreads';
import type { TrainSpec } from '../../../../src/protocol/data';
import { tinySpec } from '../tinyRuns';

/** A clock that advances `dt` ms each time it is read. */
const clock = (dt: number): (() => number) => {
  let t = 0;
  return () => (t += dt);
};

describe('calibrate', () => {
  it('times real steps and scales the FLOP rate to the full batch', async () => {
    const spec: TrainSpec = { ...tinySpec({ kind: 'task', task: 'reverse' }, 100, 24), training: { ...tinySpec({ kind: 'task', task: 'reverse' }).training, batchSize: 16, seqLen: 24 } };
    // Reads: t0 = 100; after step 1: 200 (< 100 + 250), step 2: 300, step 3: 400 → stop; final read 500.
    const c = await calibrate(spec, 300, clock(100), () => null, 250);
    const cfg = resolveConfig(spec, 300);
    const probe = estimateModel(cfg, { maxBatch: 4, maxLen: 24 }).trainFlopsPerToken * 4 * 24;
    const full = estimateModel(cfg, { maxBatch: 16, maxLen: 24 }).trainFlopsPerToken * 16 * 24;
    const seconds = 0.4 / 3;
    expect(c.flopsPerSec).toBeCloseTo(probe / seconds, 3);
    expect(c.secondsPerStep).toBeCloseTo((full / probe) * seconds, 9);
    expect(c.backend).toBe('reference');
    expect(c.threads).toBe(1);
  });

  it('waits for the helper threads training would get, and says how many ran', async () => {
    const spec: TrainSpec = { ...tinySpec({ kind: 'task', task: 'reverse' }, 100, 24), backend: 'wasm' };
    const c = await calibrate(spec, 300, () => performance.now(), () => createWasmThreads(1), 50);
    expect(c.backend).toBe('wasm');
    expect(c.threads).toBe(2);
    expect(c.secondsPerStep).toBeGreaterThan(0);
    expect((await calibrate(spec, 300, () => performance.now(), () => null, 50)).threads).toBe(1);
  });

  it('measures a model too large to allocate at its kind’s small preset', async () => {
    const base = tinySpec({ kind: 'documents', files: [], root: '' }, 10, 64);
    const spec: TrainSpec = { ...base, model: { ...base.model, preset: 'gpt', overrides: {} } };
    const t0 = Date.now();
    const c = await calibrate(spec, 1000, clock(300), () => null, 250);
    expect(Date.now() - t0).toBeLessThan(5000);
    const full = estimateModel(resolveConfig(spec, 1000), { maxBatch: 4, maxLen: 64 }).trainFlopsPerToken * 4 * 64;
    expect(c.secondsPerStep).toBeCloseTo(full / c.flopsPerSec, 9);
    expect(c.secondsPerStep).toBeGreaterThan(0);
  });
});
