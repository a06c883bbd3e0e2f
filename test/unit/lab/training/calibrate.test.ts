import { describe, expect, it } from 'vitest';
import { estimateModel } from '../../../../src/engine/models/estimate';
import { calibrate, timeStep, timeStepAsync } from '../../../../src/lab/training/calibrate';
import { openNodeGpu } from '../../../../src/lab/platform/webgpu.node';
import { resolveConfig } from '../../../../src/lab/runs/specModel';
import { createWasmThreads } from '../../../../src/lab/platform/threads.node';
import type { TrainSpec } from '../../../../src/protocol/data';
import { tinySpec } from '../tinyRuns';

/** A clock that advances `dt` ms each time it is read. */
const clock = (dt: number): (() => number) => {
  let t = 0;
  return () => (t += dt);
};

/** A step that costs `costs[i]` ms of the returned clock on its i-th run (the last cost after that). */
function fakeSteps(costs: readonly number[]): { step: () => void; now: () => number; runs: () => number } {
  let t = 0;
  let i = 0;
  return { step: () => void (t += costs[Math.min(i++, costs.length - 1)] as number), now: () => t, runs: () => i };
}

describe('timeStep: the time of a step without what is paid once', () => {
  it('a fresh web worker: three 5.5 s steps (compiling, tiering up, helpers starting), then 0.25 s — the estimate is 0.25 s, not 5.5 s', () => {
    const s = fakeSteps([5500, 5500, 5500, 250]);
    expect(timeStep(s.step, s.now, 250)).toBe(0.25);
  });

  it('one slow first step, or a slow step among the timed ones, does not move it', () => {
    const first = fakeSteps([5500, 250]);
    expect(timeStep(first.step, first.now, 1000)).toBe(0.25);
    const noisy = fakeSteps([250, 250, 250, 9000, 250, 250, 250]);
    expect(timeStep(noisy.step, noisy.now, 1000)).toBe(0.25);
  });

  it('stops warming up after at most ten steps when the times never settle, and times at least three steps', () => {
    const s = fakeSteps([1, 10, 1, 10, 1, 10, 1, 10, 1, 10, 1, 10, 1, 10]);
    expect(timeStep(s.step, s.now, 0)).toBe(0.001); // the median of 1, 10, 1
    expect(s.runs()).toBe(13);
  });
});

describe('calibrate', () => {
  it('times real steps and scales the FLOP rate to the full batch', async () => {
    const spec: TrainSpec = {
      ...tinySpec({ kind: 'task', task: 'reverse' }, 100, 24),
      training: { ...tinySpec({ kind: 'task', task: 'reverse' }).training, batchSize: 16, seqLen: 24 },
    };
    // Every step reads the clock twice, 100 ms apart: two warm-up steps agree, then three timed steps of 100 ms.
    const c = await calibrate(spec, 300, clock(100), () => null, 250);
    const cfg = resolveConfig(spec, 300);
    const probe = estimateModel(cfg, { maxBatch: 4, maxLen: 24 }).trainFlopsPerToken * 4 * 24;
    const full = estimateModel(cfg, { maxBatch: 16, maxLen: 24 }).trainFlopsPerToken * 16 * 24;
    const seconds = 0.1;
    expect(c.flopsPerSec).toBeCloseTo(probe / seconds, 3);
    expect(c.secondsPerStep).toBeCloseTo((full / probe) * seconds, 9);
    expect(c.backend).toBe('reference');
    expect(c.threads).toBe(1);
  });

  it('waits for the helper threads training would get, and says how many ran', async () => {
    const spec: TrainSpec = { ...tinySpec({ kind: 'task', task: 'reverse' }, 100, 24), backend: 'wasm' };
    const c = await calibrate(
      spec,
      300,
      () => performance.now(),
      () => createWasmThreads(1),
      50,
    );
    expect(c.backend).toBe('wasm');
    expect(c.threads).toBe(2);
    expect(c.secondsPerStep).toBeGreaterThan(0);
    expect(
      (
        await calibrate(
          spec,
          300,
          () => performance.now(),
          () => null,
          50,
        )
      ).threads,
    ).toBe(1);
  });

  it('measures a model too large to allocate at its kind’s small preset', async () => {
    const base = tinySpec({ kind: 'documents', files: [], root: '' }, 10, 64);
    const spec: TrainSpec = { ...base, model: { ...base.model, preset: 'gpt', overrides: {} } };
    const t0 = Date.now();
    const c = await calibrate(spec, 1000, clock(300), () => null, 250);
    // Five steps of the small preset (two to warm up, three timed); GPT-2's own would take minutes on the reference backend.
    expect(Date.now() - t0).toBeLessThan(30_000);
    const full = estimateModel(resolveConfig(spec, 1000), { maxBatch: 4, maxLen: 64 }).trainFlopsPerToken * 4 * 64;
    expect(c.secondsPerStep).toBeCloseTo(full / c.flopsPerSec, 9);
    expect(c.secondsPerStep).toBeGreaterThan(0);
  });
});

describe('calibrate on WebGPU', () => {
  const spec: TrainSpec = { ...tinySpec({ kind: 'task', task: 'reverse' }, 100, 24), backend: 'webgpu' };

  it('times awaited steps as the synchronous timing does', async () => {
    let t = 0;
    const now = (): number => t;
    const seconds = await timeStepAsync(
      async () => {
        await Promise.resolve();
        t += 40;
      },
      now,
      100,
    );
    expect(seconds).toBeCloseTo(0.04, 9);
  });

  it('times the steps on the device the platform opens, and names its adapter', async () => {
    const opened = await openNodeGpu();
    if (!opened.ok) return; // no adapter here: the refusal below still runs
    opened.device.destroy();
    const c = await calibrate(
      spec,
      300,
      () => performance.now(),
      () => null,
      50,
      openNodeGpu,
    );
    expect(c.backend).toBe(`webgpu (${opened.adapter.name})`);
    expect(c.threads).toBe(1);
    expect(c.secondsPerStep).toBeGreaterThan(0);
    expect(Number.isFinite(c.flopsPerSec)).toBe(true);
  });

  it('times Muon on the device too (its Newton–Schulz steps run there)', async () => {
    const opened = await openNodeGpu();
    if (!opened.ok) return;
    opened.device.destroy();
    const muon: TrainSpec = { ...spec, training: { ...spec.training, optimizer: 'muon' } };
    const c = await calibrate(
      muon,
      300,
      () => performance.now(),
      () => null,
      50,
      openNodeGpu,
    );
    expect(c.backend).toBe(`webgpu (${opened.adapter.name})`);
    expect(c.secondsPerStep).toBeGreaterThan(0);
  });

  it('refuses in one line where no device opens, or the platform offers none', async () => {
    await expect(
      calibrate(
        spec,
        300,
        clock(100),
        () => null,
        50,
        () => Promise.resolve({ ok: false, reason: 'No adapter; use wasm.' }),
      ),
    ).rejects.toThrow('No adapter; use wasm.');
    await expect(calibrate(spec, 300, clock(100), () => null, 50)).rejects.toThrow(
      'WebGPU is not offered where this runs yet; use backend wasm or auto.',
    );
  });
});
