/**
 * File-system errors through the built binary: a file where a folder must be, a folder where
 * a file must be, /dev/null as a run folder, an export onto a file, names near the 255-byte
 * limit, an optimizer file past 2 GiB, an empty --python, a run.json without its data, and an
 * evaluation record the folder refuses, and a read-only disk (a tmpfs mounted read-only, where
 * the tests may mount one: root on Linux). Each error exits 2 with one line naming the file and
 * no stack trace; what can work (long names, a big optimizer file) works.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CliResult } from './cliHarness';
import { FAST, cli, tempDir } from './cliHarness';

const tmp = tempDir();
const run = path.join(tmp.dir, 'good-run');

beforeAll(() => {
  const r = cli(
    [
      'train',
      '--task',
      'copy',
      '--steps',
      '4',
      '--until',
      '2',
      '--checkpoint-every',
      '1',
      '--snapshot-every',
      '1',
      '--out',
      run,
      '--json',
      ...FAST,
    ],
    tmp.dir,
  );
  if (r.code !== 0) throw new Error(`setup run failed: ${r.stderr}`);
});
afterAll(tmp.cleanup);

/** A copy of the good run (stopped at step 2 of 4). */
function copyOfRun(name: string): string {
  const dir = path.join(tmp.dir, name);
  fs.cpSync(run, dir, { recursive: true });
  return dir;
}

/** Exit 2, one line on stderr that matches `pattern`, no stack trace, no "Internal error". */
function expectOneLine(r: CliResult, pattern: RegExp): void {
  expect(r.code, r.stderr).toBe(2);
  const lines = r.stderr.trim().split('\n');
  expect(lines.length, r.stderr).toBe(1);
  expect(lines[0]).toMatch(/^attention-lab: /);
  expect(lines[0]).toMatch(pattern);
  expect(r.stderr).not.toMatch(/\n\s+at |internal error/i);
}

/** Only the last line of stderr (training prints its progress first). */
function expectLastLine(r: CliResult, pattern: RegExp): void {
  expect(r.code, r.stderr).toBe(2);
  expect(r.stderr).not.toMatch(/\n\s+at |internal error/i);
  expect(r.stderr.trim().split('\n').at(-1)).toMatch(pattern);
}

describe('attention-lab: file-system errors', () => {
  it('export onto an existing file names it', () => {
    fs.writeFileSync(path.join(tmp.dir, 'a-file'), 'x');
    expectOneLine(
      cli(['export', '--run', run, '--out', 'a-file'], tmp.dir),
      /a-file\/good-run: part of that path is a file where a folder must be/,
    );
  });

  it('export into /dev/null names it', () => {
    expectOneLine(
      cli(['export', '--run', run, '--out', '/dev/null'], tmp.dir),
      /\/dev\/null\/good-run: part of that path is a file/,
    );
  });

  it('/dev/null as a run folder is refused in one line', () => {
    expectOneLine(
      cli(['train', '--task', 'copy', '--steps', '2', '--out', '/dev/null', ...FAST], tmp.dir),
      /\/dev\/null already exists and is not a folder/,
    );
    expectOneLine(
      cli(['train', '--task', 'copy', '--steps', '2', '--out', '/dev/null/run', ...FAST], tmp.dir),
      /\/dev\/null\/run: part of that path is a file/,
    );
  });

  it('`snapshots` as a file stops a resume in one line naming it; --json says the step kept', () => {
    const dir = copyOfRun('snapshots-file');
    fs.rmSync(path.join(dir, 'snapshots'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'snapshots'), '');
    const r = cli(['train', '--resume', dir, '--json'], tmp.dir);
    expectLastLine(r, /snapshots/);
    expect(r.stderr).toMatch(/file where a folder must be|already exists and is not a folder/);
    const out = JSON.parse(r.stdout) as { status: string; step: number; step_reached: number; error: { code: string } };
    expect(out.status).toBe('failed');
    expect(out.error.code).toBe('file/unusable');
    expect(out.step).toBe(2); // the checkpoint a resume starts from
    expect(out.step_reached).toBeGreaterThanOrEqual(2);
  });

  it('`metrics.jsonl` as a folder stops a resume in one line naming it', () => {
    const dir = copyOfRun('metrics-folder');
    fs.rmSync(path.join(dir, 'metrics.jsonl'));
    fs.mkdirSync(path.join(dir, 'metrics.jsonl'));
    expectLastLine(cli(['train', '--resume', dir], tmp.dir), /metrics\.jsonl is a folder where a file must be/);
  });

  it('eval prints its result before the record, which a folder in the way refuses in one line', () => {
    const dir = copyOfRun('evaluations-folder');
    fs.mkdirSync(path.join(dir, 'evaluations.jsonl'));
    const r = cli(['eval', '--run', dir, '--json'], tmp.dir);
    expectOneLine(r, /evaluations\.jsonl is a folder where a file must be/);
    const out = JSON.parse(r.stdout) as { step: number; loss: number };
    expect(out.step).toBe(2);
    expect(Number.isFinite(out.loss)).toBe(true);
  });

  it('a run.json without its data is refused in one line naming run.json', () => {
    const dir = copyOfRun('no-data');
    const file = path.join(dir, 'run.json');
    const json = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>;
    delete json.data;
    fs.writeFileSync(file, JSON.stringify(json));
    expectOneLine(cli(['eval', '--run', dir], tmp.dir), /run\.json: .*data/);
  });

  it('an empty --python is refused in one line', () => {
    expectOneLine(
      cli(
        ['train', '--engine', 'pytorch', '--python', '', '--task', 'copy', '--steps', '2', '--out', 'py-run'],
        tmp.dir,
      ),
      /--python is empty/,
    );
  });

  it('a run name near 255 bytes exports and imports (scratch names fit)', () => {
    // 240 bytes: ".NAME.export-XXXXXX" would pass 255. The export's folder takes the run's name, which
    // keeps at most 80 characters: these 80.
    const long = '語'.repeat(80);
    const name = long;
    const dir = path.join(tmp.dir, long);
    fs.cpSync(run, dir, { recursive: true });
    const ex = cli(['export', '--run', dir, '--out', 'long-export'], tmp.dir);
    expect(ex.code, ex.stderr).toBe(0);
    expect(fs.existsSync(path.join(tmp.dir, 'long-export', name, 'model.safetensors'))).toBe(true);
    const again = cli(['export', '--run', dir, '--out', 'long-export', '--force'], tmp.dir); // the old export set aside, then removed
    expect(again.code, again.stderr).toBe(0);
    expect(fs.readdirSync(path.join(tmp.dir, 'long-export'))).toEqual([name]);
    const im = cli(['import', '--from', path.join(tmp.dir, 'long-export', name), '--out', `${long}-2`], tmp.dir);
    expect(im.code, im.stderr).toBe(0);
    expect(fs.readdirSync(tmp.dir).filter((n) => n.includes('.importing-') || n.includes('.export-'))).toEqual([]);
  });

  it('resumes with an optimizer file past 2 GiB (read in pieces, not whole)', () => {
    const dir = copyOfRun('big-optimizer');
    padSafetensors(path.join(dir, 'optimizer.safetensors'), 2 ** 31 + 64);
    const r = cli(['train', '--resume', dir, '--json'], tmp.dir);
    expect(r.code, r.stderr).toBe(0);
    expect((JSON.parse(r.stdout) as { step: number }).step).toBe(4);
  });
});

/** A tmpfs (remounted read-only once the good run is copied in); null where mounting is not allowed. */
function tmpfs(): { readonly dir: string; readOnly(): void; unmount(): void } | null {
  if (process.platform !== 'linux' || process.getuid?.() !== 0) return null;
  const dir = path.join(tmp.dir, 'ro');
  fs.mkdirSync(dir);
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=16m', 'tmpfs', dir], { stdio: 'ignore' });
  } catch {
    return null;
  }
  return {
    dir,
    readOnly: () => execFileSync('mount', ['-o', 'remount,ro', dir], { stdio: 'ignore' }),
    unmount: () => execFileSync('umount', [dir], { stdio: 'ignore' }),
  };
}

const ro = tmpfs();
afterAll(() => ro?.unmount());

describe.skipIf(ro === null)('attention-lab on a read-only disk', () => {
  const dir = ro?.dir ?? '';
  beforeAll(() => {
    fs.cpSync(run, path.join(dir, 'run'), { recursive: true });
    // An export to import from (a run folder itself is refused: it opens as it is).
    expect(cli(['export', '--run', run, '--out', path.join(dir, 'exported')], tmp.dir).code).toBe(0);
    ro?.readOnly();
  });

  it('a new run, an export and an import into it are refused in one line', () => {
    expectOneLine(
      cli(['train', '--task', 'copy', '--steps', '2', '--out', path.join(dir, 'new'), ...FAST], tmp.dir),
      /Cannot write .*ro\/new: the disk is read-only; choose a folder on a writable disk/,
    );
    expectOneLine(
      cli(['export', '--run', run, '--out', dir], tmp.dir),
      /Cannot write .*ro\/good-run: the disk is read-only/,
    );
    const exported = path.join(dir, 'exported', fs.readdirSync(path.join(dir, 'exported'))[0] as string);
    expectOneLine(
      cli(['import', '--from', exported, '--out', path.join(dir, 'imported'), '--json'], tmp.dir),
      /Cannot write .*ro\/imported: the disk is read-only/,
    );
  });

  it('eval of a run on it prints the result, then says in one line that the record could not be written', () => {
    const r = cli(['eval', '--run', path.join(dir, 'run'), '--json'], tmp.dir);
    expectOneLine(r, /Cannot write .*ro\/run\/evaluations\.jsonl: the disk is read-only/);
    expect((JSON.parse(r.stdout) as { step: number }).step).toBe(2);
  });

  it('a resume of a run on it stops in one line', () => {
    const r = cli(['train', '--resume', path.join(dir, 'run')], tmp.dir);
    expectLastLine(r, /Cannot write .*ro\/run\/.*: the disk is read-only/);
  });
});

/**
 * Adds a U8 tensor of `bytes` zeros after the data of a safetensors file, as a sparse tail
 * (ftruncate), so the file passes 2 GiB without taking the disk space.
 */
function padSafetensors(file: string, bytes: number): void {
  const b = fs.readFileSync(file);
  const n = Number(b.readBigUInt64LE(0));
  const header = JSON.parse(b.subarray(8, 8 + n).toString('utf8')) as Record<
    string,
    { data_offsets?: [number, number] }
  >;
  const data = b.subarray(8 + n);
  const end = Math.max(...Object.values(header).map((e) => e.data_offsets?.[1] ?? 0));
  const padded = { ...header, zpad: { dtype: 'U8', shape: [bytes], data_offsets: [end, end + bytes] } };
  let text = JSON.stringify(padded);
  text += ' '.repeat((8 - (Buffer.byteLength(text) % 8)) % 8);
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(Buffer.byteLength(text)));
  fs.writeFileSync(file, Buffer.concat([len, Buffer.from(text), data.subarray(0, end)]));
  fs.truncateSync(file, 8 + Buffer.byteLength(text) + end + bytes);
}
