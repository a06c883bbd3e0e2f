/**
 * `attention-lab patch` on an encoder-decoder run through the built binary (a tiny trained
 * `reverse` run): two sources under --target, the tables naming each stack and its positions,
 * path patching through a cross-attention's keys named as `cross:L2H1`, the CSV's rows naming
 * their stack, and the refusals in one line (a target on a decoder-only run, sources of different
 * lengths, a receiver past the encoder). The numbers are tested against PyTorch in
 * test/unit/lab/inference/patchGolden.test.ts.
 */
import * as os from 'node:os';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseCsv } from '../../../src/common/csv';
import type { OpenRun } from '../../../src/lab/inference/openRun';
import { tinyDocuments, tinySpec, trainTiny } from '../lab/tinyRuns';
import { cli } from './cliHarness';

let mt: OpenRun;
let lm: OpenRun;
beforeAll(async () => {
  mt = await trainTiny(tinySpec({ kind: 'task', task: 'reverse' }, 2, 24));
  lm = await trainTiny(tinySpec(await tinyDocuments(), 2));
}, 120_000);

const cwd = os.tmpdir();
const ARGS = ['--clean', 'abcd', '--corrupted', 'abxd', '--target', 'd', '--answer', 'c', '--wrong', 'x'];

describe('attention-lab patch on an encoder-decoder', () => {
  it('prints each stack apart, and path patching through cross-attention keys', () => {
    const what = ['--what', 'resid,path', '--receivers', 'cross:L2H1', '--input', 'k'];
    const r = cli(['patch', mt.runDir, ...ARGS, ...what], cwd);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/\nresid: .*\[encoder; columns: source positions\]; recovery/);
    expect(r.stdout).toMatch(/\n\s+0 a\s+1 b\s+2 c\s+3 d\s+4 <eos>\nenc L1\s/);
    expect(r.stdout).toMatch(/\nresid: .*\[decoder; columns: target positions\]; recovery/);
    expect(r.stdout).toMatch(/\npath: .* → cross:L2H1 \(k\); recovery/);
    expect(r.stdout).toMatch(/\ndec L1 cross\s+-?\d\.\d\d/);
    const csv = parseCsv(cli(['patch', mt.runDir, ...ARGS, ...what, '--csv'], cwd).stdout);
    expect(csv[0]).toEqual(['what', 'row', 'col', 'value', 'normalised']);
    expect(csv.some((x) => x[0] === 'resid' && x[1] === 'enc L1' && x[2] === '4 <eos>')).toBe(true);
    expect(csv.some((x) => x[0] === 'resid' && x[1] === 'dec L1' && x[2] === '1 d')).toBe(true);
    expect(csv.some((x) => x[0] === 'path' && x[1] === 'dec L2 self' && x[2] === 'H1')).toBe(true);
  });

  it.each([
    [
      () => [lm.runDir, '--clean', 'ab', '--corrupted', 'ax', '--target', 'd', '--answer', 'a', '--wrong', 'b'],
      /A target prefix is for an encoder-decoder run/,
    ],
    [
      () => [mt.runDir, ...ARGS.slice(0, 2), '--corrupted', 'abxxd', ...ARGS.slice(4)],
      /clean source is 5 tokens and the corrupted 6/,
    ],
    [() => [mt.runDir, ...ARGS, '--what', 'path', '--receivers', 'enc:L9H1'], /No receiver head enc L9 H1/],
    [() => [mt.runDir, ...ARGS, '--what', 'path', '--receivers', 'kv:L2H1'], /enc:L1H2 or cross:L2H1/],
  ])('refuses in one line %#', (args, message) => {
    const r = cli(['patch', ...args()], cwd);
    expect(r.stderr).toMatch(message);
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
  });
});
