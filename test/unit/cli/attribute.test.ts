/**
 * `attention-lab attribute` through the built binary on a tiny trained run: the text tables,
 * --csv (one value a row, agreeing with --json), the run as a positional argument or --run,
 * bad input exiting 2 with one line, and an encoder-decoder's sources under --target (its
 * cross-attention and encoder grids, full patching's cells found by their rows). The numbers themselves are tested against PyTorch
 * (test/unit/engine/analysis/attributionParity.test.ts) and the job's identities in
 * test/unit/lab/inference/attribute.test.ts.
 */
import * as os from 'node:os';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseCsv } from '../../../src/common/csv';
import type { OpenRun } from '../../../src/lab/inference/openRun';
import type { AttributionOutputData } from '../../../src/protocol/attribution';
import { tinyDocuments, tinySpec, trainTiny } from '../lab/tinyRuns';
import { cli } from './cliHarness';

let lm: OpenRun;
let mt: OpenRun;
beforeAll(async () => {
  lm = await trainTiny(tinySpec(await tinyDocuments(), 4));
  const spec = tinySpec({ kind: 'task', task: 'reverse' }, 2, 24);
  mt = await trainTiny({ ...spec, model: { ...spec.model, overrides: { ...spec.model.overrides, norm: 'pre' } } });
}, 120_000);

const cwd = os.tmpdir();
const PROMPTS = ['--clean', 'the cat sat', '--corrupted', 'the dog sat', '--answer', ' ', '--wrong', 'e'];

describe('attention-lab attribute', () => {
  it('DLA as a table at the last position, each head named from L1H1, the clean-scale note last', () => {
    const r = cli(['attribute', lm.runDir, ...PROMPTS], cwd);
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines[0]).toMatch(
      /^Direct logit attribution of logit\[" "\] − logit\["e"\] after "t" \(layers and heads from 1\):/,
    );
    expect(lines.some((l) => /^L2H4\s+-?\d+\.\d{3}$/.test(l))).toBe(true);
    expect(lines.some((l) => /^L1 mlp\s/.test(l))).toBe(true);
    expect(lines.at(-1)).toMatch(/clean run's scale/);
  });

  it('--csv holds every number of --json, one a row; --run works as the positional does', () => {
    const args = ['attribute', '--run', lm.runDir, ...PROMPTS, '--what', 'attribution'];
    const json = JSON.parse(cli([...args, '--json'], cwd).stdout) as Extract<
      AttributionOutputData,
      { what: 'attribution' }
    >;
    const r = cli([...args, '--csv'], cwd);
    expect(r.code, r.stderr).toBe(0);
    const [header, ...rows] = parseCsv(r.stdout);
    expect(header).toEqual(['what', 'kind', 'layer', 'head', 'position', 'token', 'value', 'patched']);
    const { nDecoderLayers: L, nHeads: H } = lm.model.config;
    const T = json.tokens.length;
    expect(rows).toHaveLength(3 * L * T + L * H + L * H * T);
    const cell = (kind: string, layer: number, head: string, pos: string): number =>
      Number(rows.find((x) => x[1] === kind && x[2] === String(layer) && x[3] === head && x[4] === pos)?.[6]);
    expect(cell('resid_pre', 1, '', String(T - 1))).toBe(json.resid[1]?.[T - 1]);
    expect(cell('head', 1, '2', '')).toBe(json.head[1]?.[2]);
    expect(cell('head_pos', 0, '1', '7')).toBe(json.headPos[0]?.[1]?.[7]);
  });

  it('attribution patching as grids of layer × position', () => {
    const r = cli(['attribute', lm.runDir, ...PROMPTS, '--what', 'attribution'], cwd);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^Attribution patching: metric logit-diff clean -?\d/);
    expect(r.stdout).toMatch(/\nheads \(every position\)\nlayer\s+H1\s+H2\s+H3\s+H4\n/);
    expect(r.stdout).toMatch(/\nresid_pre\nlayer\s+0:"<bos>"\s+1:"t"/);
  });

  it('--with-patching: full patching beside each estimate, the same sweeps as `patch` computes', () => {
    const args = ['attribute', lm.runDir, ...PROMPTS, '--what', 'attribution', '--with-patching'];
    const json = JSON.parse(cli([...args, '--json'], cwd).stdout) as Extract<
      AttributionOutputData,
      { what: 'attribution' }
    >;
    expect(json.patching?.maps.map((m) => m.what)).toEqual(['resid', 'attn', 'mlp', 'heads', 'heads-pos']);
    expect(json.patching?.clean).toBeCloseTo(json.clean, 5);
    // Patching resid_pre of layer 1 at every changed position at once is the clean run: recovery 1; per position it
    // is what the estimate approximates, and both are 0 where the prompts agree.
    const resid = json.patching?.maps[0]?.normalised ?? [];
    const T = json.tokens.length;
    for (let p = 0; p < 5; p++) expect(resid[T + p]).toBeCloseTo(0, 9);
    const text = cli(args, cwd);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/Each cell: estimate\/full patching/);
    expect(text.stdout).toMatch(/\nL1\s+-?\d\.\d{3}\/-?\d\.\d{3}\s/);
    const csv = parseCsv(cli([...args, '--csv'], cwd).stdout);
    const head = csv.find((x) => x[1] === 'head' && x[2] === '1' && x[3] === '0');
    expect(Number(head?.[7])).toBe(json.patching?.maps[3]?.normalised[lm.model.config.nHeads]);
  });

  it('an encoder-decoder: DLA names cross heads; attribution adds the cross and encoder grids, beside full patching', () => {
    const src = ['--clean', 'abcd', '--corrupted', 'abxd', '--target', 'd', '--answer', 'c', '--wrong', 'x'];
    const dla = cli(['attribute', mt.runDir, ...src], cwd);
    expect(dla.code, dla.stderr).toBe(0);
    expect(dla.stdout).toMatch(/after "d"/);
    expect(dla.stdout).toMatch(/\nL2H1 cross\s+-?\d+\.\d{3}\n/);
    const args = ['attribute', mt.runDir, ...src, '--what', 'attribution', '--with-patching'];
    const text = cli(args, cwd);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/\ncross-attention heads \(every position\)\nlayer\s+H1/);
    expect(text.stdout).toMatch(
      /\nenc_resid_pre \(source positions\)\nlayer\s+0:"a"\s+1:"b"\s+2:"c"\s+3:"d"\s+4:"<eos>"\n/,
    );
    expect(text.stdout).toMatch(/\ndec L1 cross\s+-?\d\.\d{3}\/-?\d\.\d{3}\s/);
    const json = JSON.parse(cli([...args, '--json'], cwd).stdout) as Extract<
      AttributionOutputData,
      { what: 'attribution' }
    >;
    const rows = parseCsv(cli([...args, '--csv'], cwd).stdout).slice(1);
    const { nEncoderLayers: Le, nDecoderLayers: L, nHeads: H } = mt.model.config;
    const S = 5;
    const T = 2;
    expect(rows).toHaveLength(4 * L * T + 3 * Le * S + (2 * L + Le) * H + (2 * L * T + Le * S) * H);
    const at = (kind: string, layer: number, head: string, pos: string): string[] | undefined =>
      rows.find((x) => x[1] === kind && x[2] === String(layer) && x[3] === head && x[4] === pos);
    // an encoder cell: its source token, its estimate, and full patching's "enc L1" row at that position
    const enc = at('enc_resid_pre', 0, '', '2');
    expect(enc?.[5]).toBe('c');
    expect(Number(enc?.[6])).toBe(json.encoder?.resid[0]?.[2]);
    const encMap = json.patching?.maps.find((m) => m.what === 'resid' && m.stack === 'encoder');
    expect(Number(enc?.[7])).toBe(encMap?.normalised[2]);
    // a cross-attention head: full patching's "dec L2 cross" row of the one heads map
    const cross = at('cross_head', 1, '1', '');
    const heads = json.patching?.maps.find((m) => m.what === 'heads');
    const row = heads?.rows.indexOf('dec L2 cross') ?? -1;
    expect(row).toBe(Le + 3);
    expect(Number(cross?.[6])).toBe(json.cross?.head[1]?.[1]);
    expect(Number(cross?.[7])).toBe(heads?.normalised[row * H + 1]);
  });

  it.each([
    [['attribute', ...PROMPTS], /needs a run folder/],
    [['attribute', 'RUN', '--answer', 'a', '--wrong', 'b'], /needs --clean TEXT and --answer TEXT/],
    [['attribute', 'RUN', '--clean', 'ab', '--answer', 'a'], /needs --wrong TEXT/],
    [['attribute', 'RUN', '--clean', 'ab', '--answer', 'a', '--what', 'attribution', '--wrong', 'b'], /--corrupted/],
    [
      ['attribute', 'RUN', '--clean', 'ab', '--answer', 'a', '--metric', 'logprob'],
      /logprob is for --what attribution/,
    ],
    [['attribute', 'RUN', ...PROMPTS, '--what', 'attribution', '--corrupted', 'a dog sat'], /same token length/],
    [['attribute', 'RUN', '--clean', 'ab', '--answer', 'xy', '--wrong', 'b'], /"xy" is 2 tokens/],
    [['attribute', 'RUN', ...PROMPTS, '--what', 'paths'], /--what must be one of/],
    [['attribute', 'RUN', ...PROMPTS, '--json', '--csv'], /either --json or --csv/],
    [['attribute', 'RUN', ...PROMPTS, '--with-patching'], /add --what attribution/],
  ])('bad input %j exits 2 with one line', (args, message) => {
    const r = cli(
      args.map((a) => (a === 'RUN' ? lm.runDir : a)),
      cwd,
    );
    expect(r.stderr).toMatch(message);
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n').length).toBe(1);
    expect(r.stdout).toBe('');
  });
});
