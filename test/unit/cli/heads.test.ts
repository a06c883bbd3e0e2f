/**
 * `attention-lab heads`, and `train --task induction` choosing the decoder-only model,
 * through the built binary. (The induction learning test is inductionLearning.test.ts.)
 */
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseCsv } from '../../../src/common/csv';
import { cli, tempDir } from './cliHarness';

const tmp = tempDir();
afterAll(tmp.cleanup);

describe('attention-lab heads', () => {
  it('prints every head of a --task induction run (decoder-only), 1-based, as JSON and as a table', () => {
    const out = path.join(tmp.dir, 'ind');
    const r = cli(
      [
        'train',
        '--task',
        'induction',
        '--steps',
        '4',
        '--snapshot-every',
        '2',
        '--backend',
        'reference',
        '--out',
        out,
        '--json',
      ],
      tmp.dir,
    );
    expect(r.code, r.stderr).toBe(0);
    const h = cli(['heads', '--run', out, '--step', '2', '--json'], tmp.dir);
    expect(h.code, h.stderr).toBe(0);
    const j = JSON.parse(h.stdout) as {
      step: number;
      heads: { stack: string; layer: number; head: number; scores: Record<string, number> }[];
    };
    expect(j.step).toBe(2);
    expect(j.heads.map((x) => `${x.stack} ${x.layer}.${x.head}`)).toEqual(
      [1, 2].flatMap((l) => [1, 2, 3, 4].map((n) => `decoder.self ${l}.${n}`)),
    );
    expect(Object.keys(j.heads[0]?.scores ?? {})).toEqual([
      'previousToken',
      'firstToken',
      'diagonal',
      'induction',
      'entropy',
    ]);
    const table = cli(['heads', '--run', out], tmp.dir);
    expect(table.stdout).toMatch(/Head scores at step 4/);
    expect(table.stdout).toMatch(/decoder\.self\s+2\s+4\s/);
  });

  it('names the key/value head each head reads in a grouped-query run (kvGroup, kv column)', () => {
    const out = path.join(tmp.dir, 'gqa');
    const r = cli(
      [
        'train',
        '--task',
        'induction',
        '--steps',
        '2',
        '--snapshot-every',
        '2',
        '--set',
        'nKvHeads=2',
        '--set',
        'positional=rope',
        '--backend',
        'reference',
        '--out',
        out,
        '--json',
      ],
      tmp.dir,
    );
    expect(r.code, r.stderr).toBe(0);
    const h = cli(['heads', '--run', out, '--json'], tmp.dir);
    expect(h.code, h.stderr).toBe(0);
    const j = JSON.parse(h.stdout) as { heads: { layer: number; head: number; kvGroup?: number }[] };
    expect(j.heads.filter((x) => x.layer === 1).map((x) => x.kvGroup)).toEqual([1, 1, 2, 2]);
    const table = cli(['heads', '--run', out, '--text', 'abcabc'], tmp.dir);
    expect(table.stdout).toMatch(/layer {2}head {2}kv/);
    expect(table.stdout).toMatch(/decoder\.self\s+2\s+4\s+2\s/);
  });

  it("--ablate adds each head's Δ validation loss to its scores, and the loss with every head on", () => {
    const out = path.join(tmp.dir, 'ind');
    const h = cli(['heads', '--run', out, '--ablate', '--json', '--backend', 'reference'], tmp.dir);
    expect(h.code, h.stderr).toBe(0);
    const j = JSON.parse(h.stdout) as {
      step: number;
      baseLoss: number;
      heads: { stack: string; layer: number; head: number; scores: Record<string, number>; deltaLoss: number }[];
    };
    expect(j.step).toBe(4);
    expect(Number.isFinite(j.baseLoss)).toBe(true);
    expect(j.heads).toHaveLength(8);
    for (const x of j.heads) {
      expect(Object.keys(x.scores)).toContain('induction');
      expect(Number.isFinite(x.deltaLoss)).toBe(true);
    }
    const table = cli(['heads', '--run', out, '--ablate', '--backend', 'reference'], tmp.dir);
    expect(table.stdout).toMatch(/validation loss with every head on \d+\.\d{4}/);
    expect(table.stdout).toMatch(/induction\s+entropy\s+Δloss/);
  });

  it("--csv prints the same heads as a CSV table (1-based, the dashboard's columns), with Δloss under --ablate", () => {
    const out = path.join(tmp.dir, 'ind');
    const j = JSON.parse(cli(['heads', '--run', out, '--json'], tmp.dir).stdout) as {
      step: number;
      heads: { layer: number; head: number; scores: Record<string, number> }[];
    };
    const r = cli(['heads', '--run', out, '--csv'], tmp.dir);
    expect(r.code, r.stderr).toBe(0);
    const rows = parseCsv(r.stdout);
    expect(rows[0]).toEqual([
      'step',
      'stack',
      'layer',
      'head',
      'previousToken',
      'firstToken',
      'diagonal',
      'antiDiagonal',
      'induction',
      'entropy',
    ]);
    expect(rows).toHaveLength(1 + j.heads.length);
    const first = j.heads[0] as { layer: number; head: number; scores: Record<string, number> };
    expect(rows[1]).toEqual([
      String(j.step),
      'decoder.self',
      String(first.layer),
      String(first.head),
      String(first.scores.previousToken),
      String(first.scores.firstToken),
      String(first.scores.diagonal),
      '',
      String(first.scores.induction),
      String(first.scores.entropy),
    ]);
    const ab = cli(['heads', '--run', out, '--csv', '--ablate', '--backend', 'reference'], tmp.dir);
    expect(ab.code, ab.stderr).toBe(0);
    const abRows = parseCsv(ab.stdout);
    expect(abRows[0]?.[10]).toBe('deltaLoss');
    expect(abRows.slice(1).every((x) => Number.isFinite(Number(x[10])) && x[10] !== '')).toBe(true);
    const both = cli(['heads', '--run', out, '--csv', '--json'], tmp.dir);
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/either --json or --csv/);
  });

  it('exits 2 with a one-line fix for a missing step, a missing --run, and a task with the wrong model', () => {
    const out = path.join(tmp.dir, 'ind');
    const bad = cli(['heads', '--run', out, '--step', '3'], tmp.dir);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/no snapshot at step 3; pick --step from 0, 2, 4/);
    expect(cli(['heads'], tmp.dir).code).toBe(2);
    const wrong = cli(
      ['train', '--task', 'induction', '--model', 'encoder-decoder', '--out', path.join(tmp.dir, 'x')],
      tmp.dir,
    );
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toMatch(/trains a decoder-only model/);
  });
});
