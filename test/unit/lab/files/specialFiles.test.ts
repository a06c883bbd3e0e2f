/**
 * Special files and oversized files where the lab reads its own files. A FIFO blocked the
 * read (and the thread) forever; a link to /dev/zero or /dev/urandom read without end;
 * `--out` under /proc looped in Node's recursive mkdir. Now each read takes only a regular
 * file (after following links) of at most its kind's size (lab/files/fileCaps.ts), and each
 * refusal is one EngineError naming the file.
 */
import { execFileSync } from 'node:child_process';
import * as nodeFs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FileError } from '../../../../src/lab/files/fileErrors';
import { EngineError } from '../../../../src/engine/errors';
import { encodeSafetensors } from '../../../../src/engine/io/safetensors';
import type { Optimizer } from '../../../../src/engine/optim/optimizer';
import { readPairs } from '../../../../src/lab/data/pairs';
import { FILE_CAPS, readCapped } from '../../../../src/lab/files/fileCaps';
import { NODE_FS } from '../../../../src/lab/files/fs.node';
import { openCheckpoint } from '../../../../src/lab/interop/importCheckpoint';
import { loadImportTokenizer } from '../../../../src/lab/interop/importTokenizer';
import { loadOptimizerCheckpoint, readCheckpointConfig } from '../../../../src/lab/runs/checkpoint';
import { readMetrics, readRunJson } from '../../../../src/lab/runs/runFolder';
import { readTokenizer } from '../../../../src/lab/runs/tokenizerFile';
import { readSnapshot } from '../../../../src/lab/runs/snapshotFiles';
import { readEvaluations } from '../../../../src/lab/runs/evaluations';

const root = nodeFs.mkdtempSync(path.join(os.tmpdir(), 'attention-lab-special-'));
afterAll(() => nodeFs.rmSync(root, { recursive: true, force: true }));
const posix = process.platform !== 'win32';
let n = 0;

type Special = 'fifo' | '/dev/zero' | '/dev/urandom';

/** A fresh folder; `name` in it (folders below created) is the special file. */
function withSpecial(special: Special, name: string): { dir: string; file: string } {
  const dir = path.join(root, `case-${n++}`);
  const file = path.join(dir, name);
  nodeFs.mkdirSync(path.dirname(file), { recursive: true });
  if (special === 'fifo') execFileSync('mkfifo', [file]);
  else nodeFs.symlinkSync(special, file);
  return { dir, file };
}

/** A tiny valid safetensors file (one tensor), for the readers that open the checkpoint before config.json. */
function validCheckpoint(file: string): void {
  nodeFs.writeFileSync(
    file,
    encodeSafetensors([{ name: 'x', dtype: 'F32', shape: [1], data: new Float32Array(1) }], { format: 'pt' }),
  );
}

async function refusal(f: () => Promise<unknown>): Promise<string> {
  try {
    await f();
  } catch (e) {
    if (!EngineError.is(e) && !FileError.is(e))
      throw new Error(`expected an EngineError or a FileError, got ${String(e)}`);
    expect(e.message).not.toMatch(/\n/);
    return e.message;
  }
  throw new Error('expected a refusal');
}

const READERS: readonly [string, string, (dir: string, file: string) => Promise<unknown>][] = [
  ['run.json', 'run.json', (dir) => readRunJson(NODE_FS, dir)],
  ['metrics', 'metrics.jsonl', (dir) => readMetrics(NODE_FS, dir)],
  ['evaluations', 'evaluations.jsonl', (dir) => readEvaluations(NODE_FS, dir)],
  ['tokenizer.json of a run', 'tokenizer.json', (dir) => readTokenizer(NODE_FS, dir)],
  ['model checkpoint', 'model.safetensors', (dir) => readCheckpointConfig(NODE_FS, dir)],
  ['optimizer state', 'optimizer.safetensors', (dir) => loadOptimizerCheckpoint(NODE_FS, dir, {} as Optimizer, 3)],
  ['snapshot', 'snapshots/step-5.safetensors', (dir) => readSnapshot(NODE_FS, dir, 5)],
  ['pairs file', 'pairs.tsv', (_dir, file) => readPairs(NODE_FS, file, null)],
  ['imported checkpoint', 'model.safetensors', (dir) => openCheckpoint(NODE_FS, dir)],
  [
    'config.json',
    'config.json',
    (dir) => {
      validCheckpoint(path.join(dir, 'model.safetensors'));
      return openCheckpoint(NODE_FS, dir);
    },
  ],
  [
    'tokenizer.json to import',
    'tokenizer.json',
    (dir, file) => loadImportTokenizer(NODE_FS, path.join(dir, 'model.safetensors'), file),
  ],
  [
    'vocab.json',
    'vocab.json',
    (dir, file) => {
      nodeFs.writeFileSync(path.join(dir, 'merges.txt'), '#version: 0.2\n');
      return loadImportTokenizer(NODE_FS, path.join(dir, 'model.safetensors'), file);
    },
  ],
  [
    'merges.txt',
    'merges.txt',
    (dir) => {
      nodeFs.writeFileSync(path.join(dir, 'vocab.json'), '{}');
      return loadImportTokenizer(NODE_FS, path.join(dir, 'model.safetensors'), path.join(dir, 'vocab.json'));
    },
  ],
];

describe.runIf(posix)('special files are refused before they are read', () => {
  const cases = READERS.flatMap(([what, name, read]) =>
    (['fifo', '/dev/zero', '/dev/urandom'] as const).map((s) => [what, s, name, read] as const),
  );
  it.each(cases)('%s as %s', async (_what, special, name, read) => {
    const { dir, file } = withSpecial(special, name);
    const msg = await refusal(() => read(dir, file));
    expect(msg).toContain(path.basename(file));
    expect(msg).toMatch(
      special === 'fifo' ? /is a FIFO \(named pipe\), not a regular file/ : /is a device, not a regular file/,
    );
  });
});

describe('size caps per kind of file', () => {
  it('refuses a run.json past its cap from its size, naming the file, the kind and the cap', async () => {
    const dir = path.join(root, `big-${n++}`);
    nodeFs.mkdirSync(dir);
    const file = path.join(dir, 'run.json');
    nodeFs.writeFileSync(file, '');
    nodeFs.truncateSync(file, FILE_CAPS['run.json'].bytes + 1); // sparse: no bytes written
    const msg = await refusal(() => readRunJson(NODE_FS, dir));
    expect(msg).toMatch(/run\.json is 16\.0 MB, more than the 16\.0 MB a run\.json may hold; the file is damaged/);
  });

  it('refuses a metrics log and a config.json past theirs', async () => {
    const dir = path.join(root, `big-${n++}`);
    nodeFs.mkdirSync(dir);
    nodeFs.writeFileSync(path.join(dir, 'metrics.jsonl'), '');
    nodeFs.truncateSync(path.join(dir, 'metrics.jsonl'), FILE_CAPS['metrics log'].bytes + 1);
    expect(await refusal(() => readMetrics(NODE_FS, dir))).toMatch(
      /metrics\.jsonl is .* a metrics log may hold; move it aside/,
    );
    nodeFs.writeFileSync(path.join(dir, 'config.json'), ' '.repeat(FILE_CAPS['config.json'].bytes + 1));
    expect(await refusal(() => readCapped(NODE_FS, path.join(dir, 'config.json'), 'config.json'))).toMatch(
      /config\.json is 4\.0 MB, more than the 4\.0 MB a config\.json may hold/,
    );
  });
});

describe.runIf(nodeFs.existsSync('/proc/self'))('folders that cannot be created', () => {
  it('refuses --out under /proc in one line instead of looping in mkdir', async () => {
    const msg = await refusal(() => NODE_FS.mkdir('/proc/attention-lab-out/run'));
    expect(msg).toBe(
      'Cannot create /proc/attention-lab-out/run: /proc takes no new folders (a virtual file system such as /proc or /sys); choose a folder on a disk.',
    );
    expect(await refusal(() => NODE_FS.writeFiles([{ path: '/proc/attention-lab-out/run.json', data: '{}' }]))).toMatch(
      /^Cannot create \/proc\/attention-lab-out: \/proc takes no new folders/,
    );
  });

  it('refuses a folder below a file', async () => {
    const file = path.join(root, `plain-${n++}`);
    nodeFs.writeFileSync(file, 'x');
    expect(await refusal(() => NODE_FS.mkdir(path.join(file, 'a', 'b')))).toMatch(
      /: part of that path is a file where a folder must be/,
    );
  });
});
