/**
 * The CLI's reproductions of unbounded work: each is now refused at once with one line
 * (exit 2) before anything loops or allocates. Before: `--set nDecoderLayers=1e6` ran the
 * training worker out of memory after a minute; a run.json with dModel 1e15 and 7 heads
 * hung every command that opened it; `decode --max-tokens 1e9` ran a billion model steps;
 * `--out` under /proc looped forever in Node's recursive mkdir.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FAST, cli, tempDir } from './cliHarness';

const tmp = tempDir();
const run = path.join(tmp.dir, 'good-run');

beforeAll(() => {
  const r = cli(['train', '--task', 'copy', '--steps', '2', '--out', run, '--json', ...FAST], tmp.dir);
  if (r.code !== 0) throw new Error(`setup run failed: ${r.stderr}`);
});
afterAll(tmp.cleanup);

function expectOneLine(args: string[], pattern: RegExp): void {
  const r = cli(args, tmp.dir, 60_000);
  expect(r.code, r.stderr).toBe(2);
  const lines = r.stderr.trim().split('\n');
  expect(lines.length, r.stderr).toBe(1);
  expect(lines[0]).toMatch(pattern);
}

describe('attention-lab: bounded work', () => {
  it('refuses --set nDecoderLayers=1e6 before the worker plans a layer', () => {
    expectOneLine(
      [
        'train',
        '--task',
        'copy',
        '--steps',
        '2',
        '--out',
        path.join(tmp.dir, 'deep'),
        ...FAST,
        '--set',
        'nDecoderLayers=1e6',
      ],
      /nDecoderLayers 1000000 is larger than the 1024 Attention Lab allows/,
    );
    expect(fs.existsSync(path.join(tmp.dir, 'deep', 'model.safetensors'))).toBe(false);
  });

  it('refuses a run.json whose config has dModel 1e15 and 7 heads, naming the file', () => {
    const dir = path.join(tmp.dir, 'hostile-run');
    fs.cpSync(run, dir, { recursive: true });
    const file = path.join(dir, 'run.json');
    const json = JSON.parse(fs.readFileSync(file, 'utf8')) as { config: Record<string, unknown> };
    json.config = { ...json.config, dModel: 1e15, nHeads: 7 };
    fs.writeFileSync(file, JSON.stringify(json));
    expectOneLine(
      ['decode', '--run', dir, '--src', 'abc'],
      /run\.json: has an invalid model config: dModel 1000000000000000 is larger than the 65536/,
    );
  });

  it('refuses decode --max-tokens 1e9', () => {
    expectOneLine(
      ['decode', '--run', run, '--src', 'abc', '--max-tokens', '1e9'],
      /--max-tokens must be a whole number from 1 to 4096, got "1e9"/,
    );
  });

  it.runIf(fs.existsSync('/proc/self'))('refuses --out under /proc', () => {
    expectOneLine(
      ['train', '--task', 'copy', '--steps', '2', '--out', '/proc/attention-lab-run', ...FAST],
      /Cannot create \/proc\/attention-lab-run.*takes no new folders/,
    );
  });
});
