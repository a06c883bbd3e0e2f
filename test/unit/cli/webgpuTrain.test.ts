/**
 * `attention-lab train --backend webgpu` as users run it, on whatever adapter Dawn opens (here
 * SwiftShader, found by test/setupWebGpu.ts): a decoder-only and an encoder-decoder run each match
 * the same run on `--backend wasm` step by step (loss within 1e-4, evaluations too), with snapshots
 * and checkpoints written at their cadence, and the start line names the adapter; Muon matches too;
 * decode, score and lens on the GPU match WebAssembly's. Skips, naming why, only when no adapter opens.
 */

import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openNodeGpu } from '../../../src/lab/platform/webgpu.node';
import { cli, metricLines, tempDir } from './cliHarness';

const gpu = await openNodeGpu();
if (gpu.ok) gpu.device.destroy();
const tmp = tempDir();
afterAll(tmp.cleanup);

/** The float32 data of a safetensors file (every tensor, after the header), as one array. */
function tensorBytes(file: string): Float32Array {
  const a = fs.readFileSync(file);
  const head = 8 + Number(a.readBigUInt64LE(0));
  return new Float32Array(a.buffer.slice(a.byteOffset + head, a.byteOffset + a.length));
}

const SMALL = ['--preset', 'tiny', '--steps', '8', '--batch', '4', '--seq', '16', '--eval-every', '4'];

describe.skipIf(!gpu.ok)(
  gpu.ok ? `train --backend webgpu on ${gpu.adapter.name}` : `train --backend webgpu (skipped: ${gpu.reason})`,
  () => {
    it.each([
      ['decoder-only', ['--task', 'induction']],
      ['encoder-decoder', ['--task', 'reverse']],
    ])('%s: every step and evaluation within 1e-4 of --backend wasm', (kind, data) => {
      const run = (backend: string): { dir: string; stderr: string } => {
        const dir = path.join(tmp.dir, `${kind}-${backend}`);
        const extra = ['--snapshot-every', '4', '--checkpoint-every', '4', '--backend', backend, '--out', dir];
        const r = cli(['train', ...data, ...SMALL, ...extra], tmp.dir, 300_000);
        expect(r.code, r.stderr).toBe(0);
        return { dir, stderr: r.stderr };
      };
      const cpu = run('wasm');
      const onGpu = run('webgpu');
      if (!gpu.ok) return;
      expect(onGpu.stderr).toContain(`Training ${kind} · `);
      expect(onGpu.stderr).toContain(`· WebGPU (${gpu.adapter.name}) · `);
      for (const type of ['step', 'eval'] as const) {
        const want = metricLines(cpu.dir, type);
        const got = metricLines(onGpu.dir, type);
        expect(got.map((m) => m.step)).toEqual(want.map((m) => m.step));
        expect(got.length).toBe(type === 'step' ? 8 : 2);
        got.forEach((m, i) =>
          expect(Math.abs(m.loss - (want[i]?.loss as number)), `${type} ${m.step}`).toBeLessThan(1e-4),
        );
      }
      const runJson = JSON.parse(fs.readFileSync(path.join(onGpu.dir, 'run.json'), 'utf8')) as Record<string, unknown>;
      expect(runJson.status).toBe('completed');
      expect(runJson.backendUsed).toBe(`webgpu (${gpu.adapter.name})`);
      expect(fs.readdirSync(path.join(onGpu.dir, 'snapshots')).sort()).toEqual(
        fs.readdirSync(path.join(cpu.dir, 'snapshots')).sort(),
      );
      // The checkpoint holds the GPU's weights and Adam's moments (downloaded), not the host's stale copies
      // (the moments are zeros there): within float noise of wasm's on average (Adam's first steps amplify
      // a few gradients near zero to 1e-4-sized differences).
      for (const file of ['model.safetensors', 'optimizer.safetensors']) {
        const fa = tensorBytes(path.join(onGpu.dir, file));
        const fb = tensorBytes(path.join(cpu.dir, file));
        expect(fa.length, file).toBe(fb.length);
        let worst = 0;
        let sum = 0;
        fa.forEach((v, i) => {
          const d = Math.abs(v - (fb[i] as number));
          worst = Math.max(worst, d);
          sum += d;
        });
        expect(worst, file).toBeLessThan(1e-3);
        expect(sum / fa.length, file).toBeLessThan(1e-5);
      }
    });

    it('decode, score and lens --backend webgpu give --backend wasm’s tokens and numbers; eval refuses it', () => {
      const dir = path.join(tmp.dir, 'infer');
      const trained = cli(['train', '--task', 'induction', ...SMALL, '--backend', 'wasm', '--out', dir], tmp.dir);
      expect(trained.code, trained.stderr).toBe(0);
      const json = (args: string[], backend: string): Record<string, unknown> => {
        const r = cli([...args, '--run', dir, '--json', '--backend', backend], tmp.dir, 300_000);
        expect(r.code, r.stderr).toBe(0);
        return JSON.parse(r.stdout) as Record<string, unknown>;
      };
      // 40 tokens past the context of 16: the sliding window re-primes the stepper on the device too.
      const decode = ['decode', '--prompt', 'ab', '--max-tokens', '40'];
      expect(json(decode, 'webgpu').tokens).toEqual(json(decode, 'wasm').tokens);
      const beam = ['decode', '--prompt', 'ab', '--max-tokens', '6', '--strategy', 'beam', '--beam', '3'];
      const beams = (backend: string): { text: string; score: number }[] =>
        json(beam, backend).beams as { text: string; score: number }[];
      const [gotBeams, wantBeams] = [beams('webgpu'), beams('wasm')];
      expect(gotBeams.map((b) => b.text)).toEqual(wantBeams.map((b) => b.text));
      gotBeams.forEach((b, i) => expect(Math.abs(b.score - (wantBeams[i]?.score as number))).toBeLessThan(1e-5));
      const score = ['score', '--text', 'abcabc'];
      const got = json(score, 'webgpu').logprobs as number[];
      const want = json(score, 'wasm').logprobs as number[];
      expect(got.length).toBe(want.length);
      got.forEach((x, i) => expect(Math.abs(x - (want[i] as number))).toBeLessThan(1e-5));
      const lens = ['lens', '--prompt', 'abcab', '--top-k', '3'];
      expect(JSON.stringify(json(lens, 'webgpu').layers).replace(/[\d.e-]+/g, '#')).toBe(
        JSON.stringify(json(lens, 'wasm').layers).replace(/[\d.e-]+/g, '#'),
      );
      const evaluated = cli(['eval', '--run', dir, '--backend', 'webgpu'], tmp.dir);
      expect(evaluated.code).toBe(2);
      expect(evaluated.stderr).toMatch(
        /--backend webgpu runs train, decode, score and lens; .*use --backend auto or wasm\.\n$/,
      );
    });

    it('Muon trains on WebGPU: every step within 1e-4 of --backend wasm', () => {
      const run = (backend: string): string => {
        const dir = path.join(tmp.dir, `muon-${backend}`);
        const args = ['train', '--task', 'copy', ...SMALL, '--optimizer', 'muon', '--backend', backend, '--out', dir];
        const r = cli(args, tmp.dir, 300_000);
        expect(r.code, r.stderr).toBe(0);
        return dir;
      };
      const want = metricLines(run('wasm'), 'step');
      const got = metricLines(run('webgpu'), 'step');
      expect(got.length).toBe(8);
      got.forEach((m, i) => expect(Math.abs(m.loss - (want[i]?.loss as number)), `step ${m.step}`).toBeLessThan(1e-4));
    });
  },
);
