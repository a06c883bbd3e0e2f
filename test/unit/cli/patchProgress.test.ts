/**
 * `attention-lab patch` with stderr not a terminal (a log, a pipe): the sweep's progress is a
 * line every tenth of the runs, ending at all of them, so a sweep of minutes is not silent;
 * stdout keeps the result alone (--json parses).
 */
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { PatchOutputData } from '../../../src/protocol/patching';
import { cli, tempDir } from './cliHarness';

const tmp = tempDir();
afterAll(tmp.cleanup);

describe('patch progress in a log', () => {
  it('prints a line per tenth of the sweep on stderr and the result alone on stdout', () => {
    const run = path.join(tmp.dir, 'ind');
    const trained = cli(['train', '--task', 'induction', '--steps', '2', '--out', run, '--json'], tmp.dir, 120_000);
    expect(trained.code, trained.stderr).toBe(0);
    const r = cli(
      ['patch', run, '--clean', 'abcdab', '--corrupted', 'abedab', '--answer', 'c', '--wrong', 'e', '--json'],
      tmp.dir,
    );
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as PatchOutputData;
    expect(out.maps.map((m) => m.what)).toEqual(['resid', 'attn', 'mlp', 'heads']);
    const lines = r.stderr.trim().split('\n');
    const counts = lines.map((l) => /^patching: (\d+)\/(\d+) runs$/.exec(l));
    expect(
      counts.every((m) => m !== null),
      r.stderr,
    ).toBe(true);
    const total = Number(counts[0]?.[2]);
    expect(total).toBeGreaterThan(10);
    expect(lines.length).toBeGreaterThanOrEqual(2);
    expect(lines.length).toBeLessThanOrEqual(11);
    expect(lines.at(-1)).toBe(`patching: ${total}/${total} runs`);
    const done = counts.map((m) => Number(m?.[1]));
    expect(done).toEqual([...done].sort((a, b) => a - b));
  });
});
