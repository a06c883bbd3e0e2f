/**
 * `auto` on a real GPU, through the lab's own training session: the platform's device is Dawn's
 * (here on SwiftShader, found by test/setupWebGpu.ts) but its adapter is described as a real GPU,
 * so `auto` must train on the WebGPU kernels — each step's loss within 1e-4 of the same run on
 * WebAssembly — and say so in train/didStart's model and in run.json (backendUsed, backendChoice).
 * The same session with the adapter's own (software) description trains on WebAssembly and says
 * why. Skips, naming why, when no adapter opens.
 */

import { afterAll, describe, expect, it } from 'vitest';
import type { AdapterDescription } from '../../../../src/engine/backends/webgpu/adapter';
import type { LabPlatform, OpenedGpu } from '../../../../src/lab/platform/platform';
import { openNodeGpu } from '../../../../src/lab/platform/webgpu.node';
import { readRunJson } from '../../../../src/lab/runs/runFolder';
import { runSession } from '../../../../src/lab/training/session';
import { SessionControl } from '../../../../src/lab/training/sessionControl';
import type { TrainSpec } from '../../../../src/protocol/data';
import type { FromTrainingWorker } from '../../../../src/protocol/trainingWorker';
import { validateFromTrainingWorker } from '../../../../src/protocol/trainingWorker';
import { memoryTestFs } from '../files/fileSystems';
import { sessionRequest, tinySpec } from '../tinyRuns';

const probe = await openNodeGpu();
if (probe.ok) probe.device.destroy();
const t = memoryTestFs();
/** Every device the sessions opened, destroyed at the end. */
const devices: GPUDevice[] = [];
afterAll(() => devices.forEach((d) => d.destroy()));

/** Dawn's device, its adapter described as `as` (null: as Dawn describes it). */
const platform = (as: AdapterDescription | null): LabPlatform => ({
  fs: t.fs,
  threads: () => null,
  gpu: async (): Promise<OpenedGpu> => {
    const opened = await openNodeGpu();
    if (!opened.ok) return opened;
    devices.push(opened.device);
    return as ? { ...opened, adapter: as } : opened;
  },
});

const base = tinySpec({ kind: 'task', task: 'induction' }, 6);
const spec = (backend: TrainSpec['backend']): TrainSpec => ({
  ...base,
  model: { ...base.model, kind: 'decoder-only' },
  backend,
});

/** Trains `spec` on `p` into a new folder; its notifications (validated) and run.json. */
async function train(p: LabPlatform, s: TrainSpec, name: string) {
  const dir = t.fs.join(await t.dir(), name);
  const events: FromTrainingWorker[] = [];
  await runSession({
    platform: p,
    request: sessionRequest(dir, s),
    control: new SessionControl(),
    emit: (m) => events.push(validateFromTrainingWorker(m)),
  });
  const fail = events.find((e) => e.type === 'train/didFail');
  if (fail) throw new Error(JSON.stringify(fail));
  const start = events.find((e) => e.type === 'train/didStart');
  const losses = events.flatMap((e) => (e.type === 'train/didStep' ? [e.loss] : []));
  return { start: start?.type === 'train/didStart' ? start : null, losses, run: await readRunJson(t.fs, dir) };
}

describe.skipIf(!probe.ok)(
  probe.ok ? `auto in a training session on ${probe.adapter.name}` : `auto in a training session (skipped)`,
  () => {
    it('on an adapter described as a real GPU, auto trains on WebGPU within 1e-4 of wasm and says so', async () => {
      const gpu: AdapterDescription = { name: 'test gpu · Vulkan', software: false };
      const onGpu = await train(platform(gpu), spec('auto'), 'auto-gpu');
      const cpu = await train(platform(null), spec('wasm'), 'wasm');
      expect(onGpu.start?.model.backend).toBe('webgpu (test gpu · Vulkan)');
      expect(onGpu.start?.model.backendChoice).toBe('auto: test gpu · Vulkan is a GPU');
      expect(onGpu.run.backendUsed).toBe('webgpu (test gpu · Vulkan)');
      expect(onGpu.run.backendChoice).toBe('auto: test gpu · Vulkan is a GPU');
      expect(cpu.start?.model.backend).toBe('wasm');
      expect(cpu.start?.model.backendChoice).toBeUndefined();
      expect(onGpu.losses).toHaveLength(6);
      onGpu.losses.forEach((l, i) =>
        expect(Math.abs(l - (cpu.losses[i] as number)), `step ${i + 1}`).toBeLessThan(1e-4),
      );
    }, 300_000);

    it("on the adapter's own software description, auto trains on wasm and says why", async () => {
      const soft = await train(platform(null), spec('auto'), 'auto-soft');
      const why = `auto: ${probe.ok ? probe.adapter.name : ''} is a software adapter, slower than WebAssembly on the same cores`;
      if (!probe.ok || !probe.adapter.software) return; // a real GPU here: the first case covers it
      expect(soft.start?.model.backend).toBe('wasm');
      expect(soft.start?.model.backendChoice).toBe(why);
      expect(soft.run.backendChoice).toBe(why);
    }, 300_000);
  },
);
