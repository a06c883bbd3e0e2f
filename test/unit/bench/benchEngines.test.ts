/**
 * The engines on the same run: our engine and the PyTorch engine (Debian's torch,
 * /usr/bin/python3, on the CPU here) each train `train --task induction` and report tokens/s
 * from their own metrics, by the same rule. Our engine on WebGPU: the adapter test/setupWebGpu.ts
 * gives (SwiftShader here, a software one: a few steps), or one line where none opens.
 */

import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { SOFTWARE_STEPS, measureEngines, measureWebGpu } from '../../../src/bench/benchEngines';
import { openNodeGpu } from '../../../src/lab/platform/webgpu.node';

const probe = await openNodeGpu();
if (probe.ok) probe.device.destroy();

describe('measureEngines', () => {
  it('trains the same run on ours and on PyTorch (cpu here) and times both by the same rule', async () => {
    const lines: string[] = [];
    const r = await measureEngines(
      'induction',
      30,
      '/usr/bin/python3',
      path.resolve(__dirname, '../../../python'),
      (l) => lines.push(l),
      null, // WebGPU: its own test below
    );
    expect(r.task).toBe('induction');
    expect(r.torch).toMatch(/^torch \d+\.\d+/);
    expect(r.engines.map((e) => e.engine).slice(0, 2)).toEqual(['ours (wasm)', 'pytorch cpu']);
    for (const e of r.engines) {
      expect(e.tokensPerS.n).toBe(2); // blocks 11–20 and 21–30
      expect(e.tokensPerS.min).toBeGreaterThan(0);
    }
    expect(lines).toHaveLength(r.engines.length);
    expect(r.webgpu).toEqual({ skipped: 'disabled' });
  }, 300_000);
});

describe('measureWebGpu', () => {
  it('without an adapter, says why in one line and trains nothing', async () => {
    const reason = 'No WebGPU adapter: Dawn found no GPU driver; use --backend wasm.';
    expect(await measureWebGpu('induction', 30, () => Promise.resolve({ ok: false, reason }))).toEqual({
      skipped: reason,
    });
  });

  it.skipIf(!probe.ok || !probe.adapter.software)(
    probe.ok ? `trains a few steps on the software adapter ${probe.adapter.name}` : 'software adapter (none)',
    async () => {
      const r = await measureWebGpu('induction', 120, openNodeGpu);
      if ('skipped' in r) throw new Error(r.skipped);
      expect(r.software).toBe(true);
      expect(r.steps).toBe(SOFTWARE_STEPS);
      expect(r.engine).toBe(`ours (webgpu) on ${r.adapter}`);
      expect(r.tokensPerS.n).toBe(SOFTWARE_STEPS - 1); // each step after the first
      expect(r.tokensPerS.min).toBeGreaterThan(0);
    },
    300_000,
  );
});
