/**
 * Bad input: every case exits 2 with one line that says what is wrong and what to do, no
 * stack trace, and never changes an existing run folder.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FAST, cli, snapshotTree, tempDir } from './cliHarness';

const tmp = tempDir();
const run = path.join(tmp.dir, 'good-run');
let before: Map<string, string>;

beforeAll(() => {
  const r = cli(['train', '--task', 'copy', '--steps', '4', '--out', run, '--json', ...FAST], tmp.dir);
  if (r.code !== 0) throw new Error(`setup run failed: ${r.stderr}`);
  before = snapshotTree(run);
});
afterAll(tmp.cleanup);

/** A copy of the good run with one file replaced by `mutate`. */
function damaged(name: string, file: string, mutate: (b: Buffer) => Buffer | string): string {
  const dir = path.join(tmp.dir, name);
  fs.cpSync(run, dir, { recursive: true });
  const p = path.join(dir, file);
  fs.writeFileSync(p, mutate(fs.readFileSync(p)));
  return dir;
}

function expectUserError(args: string[], pattern: RegExp): void {
  const r = cli(args, tmp.dir);
  expect(r.code, r.stderr).toBe(2);
  const lines = r.stderr.trim().split('\n');
  expect(lines.length, r.stderr).toBe(1);
  expect(lines[0]).toMatch(/^attention-lab: /);
  expect(lines[0]).toMatch(pattern);
  expect(r.stderr).not.toMatch(/\n\s+at /); // no stack trace
}

describe('attention-lab: bad input', () => {
  it.each<[string, string[], RegExp]>([
    ['unknown command', ['trian'], /unknown command "trian"; commands are train/],
    ['unknown flag', ['train', '--stepz', '3'], /unknown flag '--stepz'/],
    ['invalid number', ['train', '--steps', 'many'], /--steps must be a whole number/],
    ['invalid choice', ['train', '--task', 'juggle'], /--task must be one of copy, reverse, sort, addition, dates/],
    ['two data sources', ['train', '--task', 'copy', '--pairs', 'x.tsv'], /Use one data source/],
    [
      'preset of the other kind',
      ['train', '--task', 'copy', '--preset', 'gpt'],
      /--preset must be one of tiny, small, base for encoder-decoder models, got "gpt"/,
    ],
    ['unknown backend', ['train', '--backend', 'gpu'], /--backend must be one of auto, wasm, reference, webgpu/],
    ['bad --set', ['train', '--set', 'dModel'], /--set needs KEY=VALUE/],
    [
      'unknown config field',
      ['train', '--steps', '2', '--set', 'dmodel=64', ...FAST.slice(0, 2)],
      /Unknown config field "dmodel"; valid fields are/,
    ],
    [
      'heads do not divide',
      ['train', '--steps', '2', '--backend', 'reference', '--set', 'dModel=30', '--set', 'nHeads=4'],
      /dModel 30 is not divisible by nHeads 4/,
    ],
    ['no files match', ['train', '--data', 'nothing-here/**/*.md'], /No files match/],
    ['missing pairs file', ['train', '--pairs', 'missing.tsv'], /missing\.tsv/],
    ['decode without --run', ['decode', '--prompt', 'x'], /needs --run DIR/],
    ['not a run folder', ['eval', '--run', '.'], /is not a run folder/],
  ])('%s', (_name, args, pattern) => expectUserError(args, pattern));

  it('rejects a pairs file with mismatched line counts, naming both counts', () => {
    fs.writeFileSync(path.join(tmp.dir, 'a.src'), 'one\ntwo\nthree\n');
    fs.writeFileSync(path.join(tmp.dir, 'a.tgt'), 'uno\ndos\n');
    expectUserError(['train', '--pairs', 'a.src', 'a.tgt', '--steps', '2', ...FAST], /3.*2|2.*3/);
  });

  it('rejects a corpus with no text', () => {
    fs.mkdirSync(path.join(tmp.dir, 'empty-docs'));
    fs.writeFileSync(path.join(tmp.dir, 'empty-docs', 'a.txt'), '   \n');
    expectUserError(['train', '--data', 'empty-docs', '--steps', '2'], /empty|no text|skipped/i);
  });

  it.each<[string, string, (b: Buffer) => Buffer | string, RegExp]>([
    [
      'truncated model',
      'model.safetensors',
      (b) => b.subarray(0, Math.floor(b.length / 2)),
      /truncated|cut off|bytes/i,
    ],
    [
      'bad header length',
      'model.safetensors',
      (b) => Buffer.concat([Buffer.from([255, 255, 255, 255, 0, 0, 0, 0]), b.subarray(8)]),
      /header/i,
    ],
    [
      'bad header JSON',
      'model.safetensors',
      (b) => Buffer.concat([b.subarray(0, 8), Buffer.from('x', 'utf8'), b.subarray(9)]),
      /header must start with/,
    ],
    [
      'offsets out of range',
      'model.safetensors',
      (b) =>
        Buffer.from(
          b
            .toString('latin1')
            .replace(
              /"data_offsets":\[(\d+),(\d+)\]/,
              (_m, a: string, e: string) => `"data_offsets":[${a},${'9'.repeat(e.length)}]`,
            ),
          'latin1',
        ),
      /offset|range|bytes/i,
    ],
    [
      'wrong shape',
      'model.safetensors',
      (b) =>
        Buffer.from(
          b.toString('latin1').replace(/"shape":\[(\d+),(\d+)\]/, (_m, a: string, c: string) => `"shape":[${c},${a}]`),
          'latin1',
        ),
      /shape/i,
    ],
    [
      'wrong dtype',
      'model.safetensors',
      (b) => Buffer.from(b.toString('latin1').replace('"F32"', '"I32"'), 'latin1'),
      /I32 but F32|dtype/,
    ],
    [
      'tokenizer from another version',
      'tokenizer.json',
      (b) => b.toString().replace('"version":1', '"version":99'),
      /version/,
    ],
    [
      'run.json from another version',
      'run.json',
      (b) => b.toString().replace('"version": 1', '"version": 2'),
      /different version/,
    ],
    ['run.json not JSON', 'run.json', () => '{ not json', /not valid JSON/],
  ])('%s: eval exits 2 and says what to do', (name, file, mutate, pattern) => {
    const dir = damaged(name.replace(/\W+/g, '-'), file, mutate);
    expectUserError(['eval', '--run', dir], pattern);
  });

  it.each<[string, string[], RegExp]>([
    [
      '--steps not beyond the step',
      ['--steps', '3'],
      /good-run is already at step 4; pass --steps greater than 4 to train it longer\.$/,
    ],
    [
      'a complete run without --steps',
      [],
      /good-run is complete \(step 4 of 4\); pass --steps N with N greater than 4 to train it longer\.$/,
    ],
    ['--until already passed', ['--steps', '8', '--until', '4'], /already at step 4; pass --until greater than 4/],
    [
      '--seq',
      ['--steps', '8', '--seq', '32'],
      /the context length is fixed by the model \(built for 16 tokens\), so drop --seq\. Only --steps N/,
    ],
    [
      'flags that change the run',
      ['--lr', '0.1', '--task', 'sort'],
      /--resume continues good-run as it was configured: drop --task, --lr\./,
    ],
    [
      'data arguments',
      ['notes.md'],
      /unexpected argument "notes\.md"; --resume continues the run folder it names and takes no data\./,
    ],
  ])('resume refuses %s with one line', (_name, args, pattern) =>
    expectUserError(['train', '--resume', run, ...args], pattern),
  );

  it('never changed the good run folder', () => {
    expectUserError(['train', '--out', run, '--task', 'copy', '--steps', '2', ...FAST], /already holds a run/);
    expect(snapshotTree(run)).toEqual(before);
  });
});
