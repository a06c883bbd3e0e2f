/**
 * A GPU device lost in the middle of a WebGPU run (Dawn on whatever adapter opens here, SwiftShader
 * in the tests: `GPUDevice.destroy()` fires `device.lost` as a driver reset would): the run stops at
 * once with one line saying what was lost, which checkpoint is kept and the command that resumes on
 * WebAssembly; the checkpoint on disk is byte for byte the last good one (nothing read from the lost
 * device is written), run.json says stopped; and that command, run as printed, continues the run on
 * WebAssembly to its end. Skips, naming why, only when no adapter opens.
 *
 * Leaves out: the editor's "Resume on WebAssembly" action (src/extension/training/trainCommand.ts calls
 * the same resume with backend wasm).
 */

import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { NODE_FS } from '../../../../src/lab/files/fs.node';
import { openNodeGpu } from '../../../../src/lab/platform/webgpu.node';
import { readMetrics, readRunJson } from '../../../../src/lab/runs/runFolder';
import { runSession } from '../../../../src/lab/training/session';
import { SessionControl } from '../../../../src/lab/training/sessionControl';
import type { TrainSpec } from '../../../../src/protocol/data';
import type { FromTrainingWorker } from '../../../../src/protocol/trainingWorker';
import { cli, tempDir } from '../../cli/cliHarness';
import { sessionRequest } from '../tinyRuns';

const probe = await openNodeGpu();
if (probe.ok) probe.device.destroy();
const tmp = tempDir('al-gpu-lost-');
afterAll(tmp.cleanup);

const SPEC: TrainSpec = {
  model: { kind: 'decoder-only', preset: 'tiny', overrides: { dModel: 32, dFF: 64 } },
  tokenizer: { type: 'char', vocabSize: 1000 },
  data: { kind: 'task', task: 'induction' },
  training: {
    steps: 10,
    batchSize: 4,
    seqLen: 16,
    evalEvery: 0,
    checkpointEvery: 4,
    snapshotEvery: 0,
    seed: 7,
    optimizer: 'adamw',
    lr: 3e-3,
    warmup: 0,
  },
  backend: 'webgpu',
};

const CHECKPOINT = ['model.safetensors', 'optimizer.safetensors'];

describe.skipIf(!probe.ok)(
  probe.ok ? `a GPU lost mid-run on ${probe.adapter.name}` : `a GPU lost mid-run (skipped: ${probe.reason})`,
  () => {
    it('stops with one line, keeps the last good checkpoint, says stopped, and resumes on WebAssembly', async () => {
      const dir = path.join(tmp.dir, 'run');
      const opened = await openNodeGpu();
      if (!opened.ok) throw new Error(opened.reason);
      const events: FromTrainingWorker[] = [];
      /** The checkpoint's bytes as each save left them, by step. */
      const saved = new Map<number, Buffer[]>();
      await runSession({
        platform: { fs: NODE_FS, threads: () => null, gpu: () => Promise.resolve(opened) },
        request: sessionRequest(dir, SPEC),
        control: new SessionControl(),
        emit: (m) => {
          events.push(m);
          if (m.type === 'train/didSaveCheckpoint')
            saved.set(
              m.step,
              CHECKPOINT.map((f) => fs.readFileSync(path.join(dir, f))),
            );
          // The device goes away after step 6, two steps past the checkpoint of step 4.
          if (m.type === 'train/didStep' && m.step === 6) opened.device.destroy();
        },
      });
      expect([...saved.keys()]).toEqual([4]);
      expect(events.filter((e) => e.type === 'train/didStep').map((e) => e.step)).toEqual([1, 2, 3, 4, 5, 6]);
      const last = events.at(-1);
      if (last?.type !== 'train/didFail') throw new Error(`the run did not stop: ${JSON.stringify(last)}`);
      const command = `attention-lab train --resume ${dir} --backend wasm`;
      expect(last.step).toBe(6);
      expect(last.error.code).toBe('gpu/lost');
      expect(last.error.message).toMatch(/^The GPU device was lost \([^)\n]+\) after step 6; training stopped and /);
      expect(last.error.message).toContain(`the checkpoint of step 4 is kept — resume on WebAssembly: ${command}`);
      expect(last.error.message).not.toContain('\n');
      // Nothing from the lost device was written: the checkpoint is the one of step 4, byte for byte.
      CHECKPOINT.forEach((f, i) =>
        expect(fs.readFileSync(path.join(dir, f)).equals(saved.get(4)?.[i] as Buffer), f).toBe(true),
      );
      const run = await readRunJson(NODE_FS, dir);
      expect(run.status).toBe('stopped');
      expect(run.step).toBe(4);
      expect(run.error).toEqual(last.error);

      // The command the line gives, as a user would type it, continues on WebAssembly from step 4 to the end.
      const [, ...args] = command.split(' ');
      const r = cli(args, tmp.dir, 300_000);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toContain('Resumed at step 4.');
      const resumed = await readRunJson(NODE_FS, dir);
      expect(resumed).toMatchObject({ status: 'completed', step: 10, error: null });
      expect(resumed.spec.backend).toBe('wasm');
      expect(resumed.backendUsed).not.toMatch(/webgpu/);
      expect((await readMetrics(NODE_FS, dir)).steps.map((m) => m.step)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    }, 300_000);
  },
);
