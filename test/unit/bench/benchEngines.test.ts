/**
 * The engines on the same run: our engine and the PyTorch engine (Debian's torch,
 * /usr/bin/python3, on the CPU here) each train `train --task induction` and report tokens/s
 * from their own metrics, by the same rule.
 */

import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { measureEngines } from '../../../src/bench/benchEngines';

describe('measureEngines', () => {
  it('trains the same run on ours and on PyTorch (cpu here) and times both by the same rule', async () => {
    const lines: string[] = [];
    const r = await measureEngines(
      'induction',
      30,
      '/usr/bin/python3',
      path.resolve(__dirname, '../../../python'),
      (l) => lines.push(l),
    );
    expect(r.task).toBe('induction');
    expect(r.torch).toMatch(/^torch \d+\.\d+/);
    expect(r.engines.map((e) => e.engine).slice(0, 2)).toEqual(['ours (wasm)', 'pytorch cpu']);
    for (const e of r.engines) {
      expect(e.tokensPerS.n).toBe(2); // blocks 11–20 and 21–30
      expect(e.tokensPerS.min).toBeGreaterThan(0);
    }
    expect(lines).toHaveLength(r.engines.length);
  }, 300_000);
});
