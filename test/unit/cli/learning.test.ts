/**
 * A real learning run through the built binary: the reverse task, a small model, a fixed
 * seed and step count; the run must actually learn (held-out exact match, not just a
 * lower loss).
 */
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cli, tempDir } from './cliHarness';

const tmp = tempDir();
afterAll(tmp.cleanup);

describe('attention-lab train learns a generated task', () => {
  it('reverse: ≥ 50% held-out exact match after 500 steps of a 32-wide model', () => {
    const out = path.join(tmp.dir, 'rev');
    const r = cli(
      [
        'train',
        '--task',
        'reverse',
        '--steps',
        '500',
        '--backend',
        'reference',
        '--set',
        'dModel=32',
        '--set',
        'dFF=64',
        '--set',
        'nHeads=4',
        '--set',
        'dropout=0',
        '--set',
        'labelSmoothing=0',
        '--batch',
        '32',
        '--seq',
        '16',
        '--eval-every',
        '0',
        '--snapshot-every',
        '0',
        '--out',
        out,
        '--json',
      ],
      tmp.dir,
      300_000,
    );
    expect(r.code, r.stderr).toBe(0);
    const j = JSON.parse(r.stdout) as { eval: { loss: number; exact_match: number } };
    expect(j.eval.loss).toBeLessThan(0.5);
    expect(j.eval.exact_match).toBeGreaterThanOrEqual(0.5);
    const ev = JSON.parse(cli(['eval', '--run', out, '--json'], tmp.dir).stdout) as { exact_match: number };
    expect(ev.exact_match).toBeGreaterThanOrEqual(0.5);
  });
});
