/**
 * `attention-lab patch` through the built binary on a trained induction model (`train --task
 * induction`, 2000 steps: the phase change is over by step 800 with its seed): on twelve seeded
 * prompts — filler, a segment of distinct letters, then a prefix of its repeat — whose corrupted
 * twin changes the letter after the prefix's first occurrence (answer: the clean letter, wrong: the
 * corrupted), head patching's mean recovery names the layer-2 induction heads `heads` scores
 * (what the Heads tab shows): its top head is a layer-2 head of induction ≥ 0.8 recovering > 0.2,
 * every head recovering > 0.1 scores induction ≥ 0.5, the top-scored head recovers > 0.1, and no
 * layer-1 head matters (|recovery| < 0.05). Also what the command prints (table, JSON, CSV, every sweep, path
 * patching) and what it refuses, in one line each.
 */
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PatchOutputData } from '../../../src/protocol/patching';
import { cli, tempDir } from './cliHarness';

const tmp = tempDir();
afterAll(tmp.cleanup);
const run = path.join(tmp.dir, 'induction');

interface Heads {
  heads: { stack: string; layer: number; head: number; scores: Record<string, number> }[];
}

/** Twelve seeded (clean, corrupted, answer, wrong) induction prompts. */
function prompts(): { clean: string; corrupted: string; answer: string; wrong: string }[] {
  let s = 7;
  const rnd = (n: number): number => {
    s = (s * 1103515245 + 12345) % 2147483648;
    return s % n;
  };
  return Array.from({ length: 12 }, () => {
    const pool = [...'abcdefghijklmnopqrstuvwxyz'];
    const pick = (): string => pool.splice(rnd(pool.length), 1)[0] as string;
    const filler = [pick(), pick()];
    const seg = Array.from({ length: 6 + rnd(6) }, pick);
    const k = 3 + rnd(seg.length - 4);
    const wrong = pick();
    const bad = [...seg];
    bad[k] = wrong;
    return {
      clean: [...filler, ...seg, ...seg.slice(0, k)].join(''),
      corrupted: [...filler, ...bad, ...seg.slice(0, k)].join(''),
      answer: seg[k] as string,
      wrong,
    };
  });
}

function patch(args: string[]): PatchOutputData {
  const r = cli(['patch', run, ...args, '--json'], tmp.dir);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as PatchOutputData;
}

describe('attention-lab patch', () => {
  beforeAll(() => {
    const r = cli(['train', '--task', 'induction', '--steps', '2000', '--out', run, '--json'], tmp.dir, 300_000);
    expect(r.code, r.stderr).toBe(0);
  }, 300_000);

  it("head patching singles out the layer-2 induction heads the Heads tab's induction score names", () => {
    const h = cli(['heads', '--run', run, '--json'], tmp.dir);
    expect(h.code, h.stderr).toBe(0);
    const heads = (JSON.parse(h.stdout) as Heads).heads.filter((x) => x.stack === 'decoder.self');
    const top = heads.reduce((a, b) => ((b.scores.induction ?? 0) > (a.scores.induction ?? 0) ? b : a));
    expect(top.layer).toBe(2);
    const mean = new Map<string, number>();
    const ps = prompts();
    for (const p of ps) {
      const out = patch(['--clean', p.clean, '--corrupted', p.corrupted, '--answer', p.answer, '--wrong', p.wrong]);
      expect(out.clean).toBeGreaterThan(0); // the model reads the repeat …
      expect(out.corrupted).toBeLessThan(0); // … and follows the corrupted one
      const m = out.maps.find((x) => x.what === 'heads');
      expect(m?.rows).toEqual(['L1', 'L2']);
      m?.rows.forEach((r, i) =>
        m.cols.forEach((c, j) => {
          const key = `${r}${c}`;
          mean.set(key, (mean.get(key) ?? 0) + (m.normalised[i * m.cols.length + j] as number) / ps.length);
        }),
      );
    }
    // The model grows several layer-2 induction heads (0.84–0.89 at 2000 steps, seed 1) that share the
    // work, so the top patching head need not be the top-scored one; each head that patching names is one.
    const score = (key: string): number => {
      const [, l, hd] = /^L(\d+)H(\d+)$/.exec(key) ?? [];
      return heads.find((x) => x.layer === Number(l) && x.head === Number(hd))?.scores.induction ?? NaN;
    };
    const best = [...mean.entries()].reduce((a, b) => (b[1] > a[1] ? b : a));
    expect(best[0]).toMatch(/^L2/);
    expect(best[1]).toBeGreaterThan(0.2);
    expect(score(best[0])).toBeGreaterThanOrEqual(0.8);
    for (const [k, v] of mean) if (v > 0.1) expect(score(k), k).toBeGreaterThanOrEqual(0.5);
    expect(mean.get(`L${top.layer}H${top.head}`)).toBeGreaterThan(0.1);
    for (const [k, v] of mean) if (k.startsWith('L1')) expect(Math.abs(v), k).toBeLessThan(0.05);
  }, 120_000);

  it('prints every sweep as a table, JSON and CSV; path patching names its receivers', () => {
    const p = prompts()[0] as ReturnType<typeof prompts>[number];
    const base = ['--clean', p.clean, '--corrupted', p.corrupted, '--answer', p.answer];
    const all = [
      '--what',
      'resid,attn,mlp,heads',
      '--what',
      'heads-pos,path',
      '--receivers',
      'L2H1,2.3',
      '--input',
      'k',
    ];
    const out = patch([...base, '--wrong', p.wrong, ...all]);
    const T = p.clean.length + 1;
    expect(out.tokens.clean).toHaveLength(T);
    expect(out.maps.map((m) => [m.what, m.rows.length, m.cols.length])).toEqual([
      ['resid', 2, T],
      ['attn', 2, T],
      ['mlp', 2, T],
      ['heads', 2, 4],
      ['heads-pos', 8, T],
      ['path', 1, 4],
    ]);
    const path0 = out.maps[5];
    expect(path0?.path).toEqual({
      receivers: [
        { layer: 1, head: 0 },
        { layer: 1, head: 2 },
      ],
      input: 'k',
    });
    // patching the whole stream entering layer 1 at the changed position restores the clean run
    const resid = out.maps[0] as PatchOutputData['maps'][number];
    const changed = [...p.clean].findIndex((ch, i) => ch !== p.corrupted[i]) + 1;
    expect(resid.normalised[changed]).toBeCloseTo(1, 5);
    expect(resid.normalised[changed + 1]).toBeCloseTo(0, 5);
    const lp = patch([...base, '--metric', 'logprob', '--what', 'heads']);
    expect(lp.metric).toBe('logprob');
    expect(lp.clean).toBeLessThan(0);
    expect(lp.clean).toBeGreaterThan(lp.corrupted);
    const csv = cli(['patch', run, ...base, '--wrong', p.wrong, '--what', 'heads', '--csv'], tmp.dir);
    expect(csv.code, csv.stderr).toBe(0);
    const lines = csv.stdout.trim().split(/\r?\n/);
    expect(lines[0]).toBe('what,row,col,value,normalised');
    expect(lines).toHaveLength(1 + 8);
    expect(lines[1]).toMatch(/^heads,L1,H1,-?[\d.e-]+,-?[\d.e-]+$/);
    const table = cli(['patch', '--run', run, ...base, '--wrong', p.wrong, '--what', 'heads'], tmp.dir);
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).toContain(`logit["${p.answer}"] − logit["${p.wrong}"] at the last position: clean`);
    expect(table.stdout).toMatch(/\nL2 +-?\d\.\d\d +-?\d\.\d\d +-?\d\.\d\d +-?\d\.\d\d\n/);
    // --top: each run's most likely next tokens, the clean run's led by the answer, the corrupted run's by the wrong.
    const top = patch([...base, '--wrong', p.wrong, '--what', 'heads', '--top', '3']);
    expect(top.top?.clean.map((t) => t.token)[0]).toBe(p.answer);
    expect(top.top?.corrupted.map((t) => t.token)[0]).toBe(p.wrong);
    expect(top.maps[0]?.top).toHaveLength(8);
    for (const cell of top.maps[0]?.top ?? [])
      expect(cell.map((t) => t.p).every((x, i, a) => i === 0 || x <= (a[i - 1] ?? 1))).toBe(true);
    expect(out.top).toBeUndefined();
    const topTable = cli(['patch', run, ...base, '--wrong', p.wrong, '--what', 'heads', '--top', '2'], tmp.dir);
    expect(topTable.stdout).toMatch(new RegExp(`\\nclean predicts "${p.answer}" \\d+\\.\\d%, "."`));
  }, 120_000);

  it('refuses in one line what it cannot do', () => {
    const refuse = (args: string[], message: RegExp): void => {
      const r = cli(['patch', run, ...args], tmp.dir);
      expect(r.code).toBe(2);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stderr).toMatch(message);
    };
    const ok = ['--answer', 'a', '--wrong', 'b'];
    refuse(
      ['--clean', 'abcab', '--corrupted', 'abcxyab', ...ok],
      /clean prompt is 5 tokens and the corrupted 7; they differ at 4: "a" vs "x", 5: "b" vs "y", 6: "" vs "a"/,
    );
    refuse(['--clean', 'abcab', '--corrupted', 'abdab', '--answer', 'a'], /needs --wrong/);
    refuse(['--clean', 'abcab', '--corrupted', 'abdab', '--answer', 'ab', '--wrong', 'b'], /answer "ab" is 2 tokens/);
    refuse(['--clean', 'abcab', '--corrupted', 'abdab', ...ok, '--what', 'path'], /needs --receivers/);
    refuse(['--clean', 'abcab', '--corrupted', 'abdab', ...ok, '--what', 'path', '--receivers', 'L1H1'], /layer 1/);
    refuse(['--clean', 'abcab', '--corrupted', 'abdab', ...ok, '--what', 'nope'], /--what must be among/);
    refuse(['--clean', 'abcab', '--corrupted', 'abcab', ...ok], /give the same logit-diff/);
    refuse(
      ['--clean', 'abcab', '--corrupted', 'abdab', ...ok, '--top', '11'],
      /--top must be a whole number from 0 to 10/,
    );
  }, 120_000);
});
