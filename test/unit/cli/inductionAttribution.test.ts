/**
 * Attribution and full patching on a trained induction model (issue 32): `attention-lab train
 * --task induction` with its defaults (two layers of four heads, 3000 steps; about a minute
 * here), then `attribute --what attribution --with-patching` on repeated random letters whose
 * first copy the corrupted prompt replaces (so nothing earlier can be copied). Among all eight
 * heads, both the first-order estimate and full patching must single out a layer-2 induction
 * head as the Heads tab names them (induction score ≥ 0.5, its default threshold). Three prompt
 * pairs, their recoveries summed. Measured (seed 1): all four layer-2 heads score ≥ 0.65;
 * full patching picks the strongest (0.93), whose estimate is a quarter of its full recovery
 * (its attention moves from nowhere to the earlier copy: far from linear), so the estimate
 * picks the 0.68 one — where estimate and full patching agree within 0.01.
 */
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { AttributionOutputData } from '../../../src/protocol/attribution';
import { cli, tempDir } from './cliHarness';

const tmp = tempDir();
afterAll(tmp.cleanup);

type Attribution = Extract<AttributionOutputData, { what: 'attribution' }>;

const PAIRS = [
  // clean: a sequence, then its start again; corrupted: other letters first, the same second copy
  { clean: 'qwertyuiopqwertyu', corrupted: 'asdfghjklzqwertyu', answer: 'i', wrong: 'k' },
  { clean: 'mnbvcxzlkjmnbvcxz', corrupted: 'poiuytrewqmnbvcxz', answer: 'l', wrong: 'a' },
  { clean: 'hgfdsaqwehgfdsaqw', corrupted: 'zxcvbnmplohgfdsaqw'.slice(1), answer: 'e', wrong: 'u' },
];

describe('attribution patching on the induction model', () => {
  it('both it and full patching single out a layer-2 induction head the Heads tab names', () => {
    const run = path.join(tmp.dir, 'induction');
    const t = cli(['train', '--task', 'induction', '--out', run, '--json'], tmp.dir, 600_000);
    expect(t.code, t.stderr).toBe(0);
    const h = cli(['heads', '--run', run, '--json'], tmp.dir);
    const heads = (JSON.parse(h.stdout) as { heads: { layer: number; head: number; scores: { induction: number } }[] })
      .heads;
    // `heads` counts from 1; the Heads tab marks induction ≥ 0.5
    const named = new Set(heads.filter((x) => x.scores.induction >= 0.5).map((x) => (x.layer - 1) * 4 + x.head - 1));
    expect(
      [...named].every((i) => i >= 4),
      'induction heads are in layer 2 only',
    ).toBe(true);
    const est = new Array<number>(8).fill(0);
    const full = new Array<number>(8).fill(0);
    for (const p of PAIRS) {
      expect(p.corrupted).toHaveLength(p.clean.length);
      const args = ['attribute', run, '--clean', p.clean, '--corrupted', p.corrupted, '--answer', p.answer];
      const r = cli([...args, '--wrong', p.wrong, '--what', 'attribution', '--with-patching', '--json'], tmp.dir);
      expect(r.code, r.stderr).toBe(0);
      const a = JSON.parse(r.stdout) as Attribution;
      a.head.flat().forEach((v, i) => (est[i] = (est[i] as number) + v));
      const full1 = a.patching?.maps.find((m) => m.what === 'heads')?.normalised ?? [];
      full1.forEach((v, i) => (full[i] = (full[i] as number) + v));
    }
    const best = (xs: number[]): number => xs.indexOf(Math.max(...xs));
    const show = (xs: number[]): string => xs.map((x) => x.toFixed(3)).join(' ');
    expect(named.has(best(est)), `estimates ${show(est)}`).toBe(true);
    expect(named.has(best(full)), `full patching ${show(full)}`).toBe(true);
    // Where the estimate picks, full patching agrees with it.
    expect(Math.abs((est[best(est)] as number) - (full[best(est)] as number))).toBeLessThan(0.1);
  }, 900_000);
});
