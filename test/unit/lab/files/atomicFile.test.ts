import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { FileIo } from '../../../../src/lab/files/atomicFile.node';
import {
  DiskFullError,
  NODE_IO,
  appendLine,
  completeLines,
  isNoSpace,
  writeFileAtomic,
  writeFilesAtomic,
} from '../../../../src/lab/files/atomicFile.node';
import { failingIo, tempFilesUnder } from '../fullDisk';

describe('writeFilesAtomic', () => {
  it('replaces a pair of files together, and leaves both old ones when writing the second fails', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'al-atomic-'));
    const a = path.join(dir, 'optimizer.safetensors');
    const b = path.join(dir, 'model.safetensors');
    writeFilesAtomic([
      { file: a, data: 'opt@40' },
      { file: b, data: 'model@40' },
    ]);
    expect([fs.readFileSync(a, 'utf8'), fs.readFileSync(b, 'utf8')]).toEqual(['opt@40', 'model@40']);
    // The second write fails (its folder is gone), as a killed writer would stop: the first
    // file must not have been replaced yet — the pair stays from one step.
    expect(() =>
      writeFilesAtomic([
        { file: a, data: 'opt@60' },
        { file: path.join(dir, 'gone', 'model.safetensors'), data: 'model@60' },
      ]),
    ).toThrow();
    expect(fs.readFileSync(a, 'utf8')).toBe('opt@40');
    writeFilesAtomic([
      { file: a, data: 'opt@60' },
      { file: b, data: 'model@60' },
    ]);
    expect([fs.readFileSync(a, 'utf8'), fs.readFileSync(b, 'utf8')]).toEqual(['opt@60', 'model@60']);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  // `eval --out /dev/null` as root renamed a regular file over the device. A FIFO stands in for
  // it here (replacing a device in a test would break the machine if the check ever went).
  it.runIf(process.platform !== 'win32')(
    'never writes over a FIFO or a device, nor appends to one: one line naming it',
    () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'al-atomic-'));
      const fifo = path.join(dir, 'hyps.txt');
      execFileSync('mkfifo', [fifo]);
      const line = `${fifo} is not a regular file (a device, a FIFO or a socket); Attention Lab writes only regular files — choose another path.`;
      expect(() => writeFileAtomic(fifo, 'x')).toThrow(line);
      expect(() => appendLine(fifo, 'x\n')).toThrow(line);
      expect(fs.lstatSync(fifo).isFIFO()).toBe(true);
      expect(fs.readdirSync(dir)).toEqual(['hyps.txt']); // no temporary file either
      const folder = path.join(dir, 'metrics.jsonl');
      fs.mkdirSync(folder);
      expect(() => appendLine(folder, 'x\n')).toThrow(`${folder} is a folder where a file must be`);
      fs.rmSync(dir, { recursive: true, force: true });
    },
  );
});

describe('writes on a full disk', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'al-atomic-full-'));

  it('finishes a file after short writes (a write call may take fewer bytes than asked)', () => {
    const oneByte: FileIo = { ...NODE_IO, writeSync: (fd, data, offset) => NODE_IO.writeSync(fd, data, offset, 1) };
    const file = path.join(dir, 'short.bin');
    const data = Uint8Array.from({ length: 1000 }, (_, i) => i % 251);
    writeFileAtomic(file, data, oneByte);
    expect(new Uint8Array(fs.readFileSync(file))).toEqual(data);
  });

  it('leaves the old file and no temporary file when the disk fills, and says which file', () => {
    const file = path.join(dir, 'model.safetensors');
    writeFileAtomic(file, 'old checkpoint');
    const io = failingIo((f) => f.includes('model.safetensors'), 1);
    let thrown: unknown;
    try {
      writeFileAtomic(file, 'x'.repeat(10_000), io);
    } catch (e) {
      thrown = e;
    }
    expect(DiskFullError.is(thrown)).toBe(true);
    expect((thrown as DiskFullError).file).toBe(file);
    expect((thrown as DiskFullError).message).toBe(
      `Disk full while writing ${file}; nothing was half-written — free space and try again.`,
    );
    expect(fs.readFileSync(file, 'utf8')).toBe('old checkpoint');
    expect(tempFilesUnder(dir)).toEqual([]);
  });

  it('leaves both old files of a pair when the second fills the disk', () => {
    const a = path.join(dir, 'optimizer.safetensors');
    const b = path.join(dir, 'model.safetensors');
    writeFilesAtomic([
      { file: a, data: 'opt@1' },
      { file: b, data: 'model@1' },
    ]);
    expect(() =>
      writeFilesAtomic(
        [
          { file: a, data: 'opt@2' },
          { file: b, data: 'model@2' },
        ],
        failingIo((f) => f.includes('.model.'), 1),
      ),
    ).toThrow(/Disk full while writing .*model\.safetensors/);
    expect([fs.readFileSync(a, 'utf8'), fs.readFileSync(b, 'utf8')]).toEqual(['opt@1', 'model@1']);
    expect(tempFilesUnder(dir)).toEqual([]);
  });

  it('cuts a log back to where it was when an append fails, so no line is torn', () => {
    const log = path.join(dir, 'metrics.jsonl');
    appendLine(log, '{"step":1}\n');
    expect(() =>
      appendLine(
        log,
        `{"step":2,"pad":"${'x'.repeat(100)}"}\n`,
        failingIo((f) => f === log, 1),
      ),
    ).toThrow(DiskFullError);
    expect(fs.readFileSync(log, 'utf8')).toBe('{"step":1}\n');
    appendLine(log, '{"step":2}\n');
    expect(fs.readFileSync(log, 'utf8')).toBe('{"step":1}\n{"step":2}\n');
  });

  it('starts a new line after a torn last line, which readers ignore', () => {
    const log = path.join(dir, 'torn.jsonl');
    fs.writeFileSync(log, '{"a":1}\n{"a":2,"b"');
    expect(completeLines(fs.readFileSync(log, 'utf8'))).toEqual(['{"a":1}']);
    appendLine(log, '{"a":3}\n');
    expect(fs.readFileSync(log, 'utf8')).toBe('{"a":1}\n{"a":2,"b"\n{"a":3}\n');
    expect(completeLines(fs.readFileSync(log, 'utf8'))).toEqual(['{"a":1}', '{"a":2,"b"', '{"a":3}']);
    expect(completeLines('')).toEqual([]);
    expect(completeLines('{"only":"torn"')).toEqual([]);
  });

  it('turns ENOSPC and EDQUOT into a DiskFullError and other file errors into a FileError naming the file', () => {
    expect(isNoSpace(Object.assign(new Error('x'), { code: 'EDQUOT' }))).toBe(true);
    expect(isNoSpace(Object.assign(new Error('x'), { code: 'EACCES' }))).toBe(false);
    expect(() => writeFileAtomic(path.join(dir, 'missing', 'f'), 'x')).toThrow(/missing\/f does not exist/);
  });
});
