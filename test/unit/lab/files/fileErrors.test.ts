/**
 * File-system errors told in one line: every code (Node's and VS Code's, and the code kept in
 * the message of an error that crossed a thread) becomes a line naming the file and what to
 * do; names beside a long name fit 255 bytes; and Node's file system and a training session
 * on a disk that refuses writes (EROFS, EACCES: faults injected, since tests run as root)
 * report it in that line instead of "Internal error".
 */

import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  DiskFullError,
  FileError,
  MAX_NAME_BYTES,
  diskError,
  fileErrorData,
  fitName,
  folderError,
} from '../../../../src/lab/files/fileErrors';
import { writeFile } from '../../../../src/lab/files/labFs';
import { NodeFs } from '../../../../src/lab/files/fs.node';
import type { FileIo } from '../../../../src/lab/files/atomicFile.node';
import { NODE_IO } from '../../../../src/lab/files/atomicFile.node';
import { runSession } from '../../../../src/lab/training/session';
import { SessionControl } from '../../../../src/lab/training/sessionControl';
import type { FromTrainingWorker } from '../../../../src/protocol/trainingWorker';
import { platformOf, sessionRequest, tinySpec } from '../tinyRuns';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'al-file-errors-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

const nodeError = (code: string, message = `${code}: something, open '/x'`): Error =>
  Object.assign(new Error(message), { code });
const bytes = (s: string): number => new TextEncoder().encode(s).length;

describe('diskError', () => {
  it.each<[string, RegExp]>([
    ['EROFS', /^Cannot write \/r\/f: the disk is read-only; choose a folder on a writable disk/],
    ['EACCES', /^Permission denied for \/r\/f; choose a folder you may write to/],
    ['EPERM', /^Permission denied for \/r\/f;/],
    ['NoPermissions', /^Permission denied for \/r\/f;/],
    ['ENOTDIR', /^Cannot use \/r\/f: part of that path is a file where a folder must be; remove or rename that file/],
    ['FileNotADirectory', /^Cannot use \/r\/f: part of that path is a file/],
    ['EISDIR', /^\/r\/f is a folder where a file must be; remove or rename that folder/],
    ['FileIsADirectory', /^\/r\/f is a folder where a file must be/],
    [
      'ENAMETOOLONG',
      /^Cannot use \/r\/f: a name in it is longer than the file system allows \(255 bytes\); choose a shorter name\.$/,
    ],
    ['EEXIST', /^\/r\/f already exists and is not a folder; remove or rename it/],
    ['FileExists', /^\/r\/f already exists/],
    ['ERR_FS_FILE_TOO_LARGE', /^\/r\/f is over 2 GiB/],
    ['ENOENT', /^\/r\/f does not exist/],
  ])('tells %s in one line naming the file', (code, line) => {
    const e = diskError(nodeError(code), '/r/f');
    expect(FileError.is(e)).toBe(true);
    expect((e as FileError).code).toBe('file/unusable');
    expect((e as Error).message).toMatch(line);
    expect((e as Error).message).not.toContain('\n');
    expect((e as Error).cause).toBeInstanceOf(Error);
  });

  it('reads the code from the message of an error that lost it crossing a thread or VS Code', () => {
    expect(
      (diskError(new Error("Unable to write file '/r/f' (EROFS: read-only file system)"), '/r/f') as Error).message,
    ).toMatch(/the disk is read-only/);
    expect(DiskFullError.is(diskError(new Error('ENOSPC: no space left on device'), '/r/f'))).toBe(true);
  });

  it('keeps the file an inner error named, leaves other errors as they are, and a folder write names the folder', () => {
    const inner = diskError(nodeError('EISDIR'), '/r/run/metrics.jsonl');
    expect(diskError(inner, '/r/run')).toBe(inner);
    const other = new TypeError('a bug');
    expect(diskError(other, '/r/f')).toBe(other);
    expect(
      (folderError(diskError(nodeError('ENOTDIR'), '/r/a-file/.run.export-abc123'), '/r/a-file/run') as Error).message,
    ).toMatch(/^Cannot use \/r\/a-file\/run: part of that path is a file/);
  });

  it('gives the CLI and the workers their code and line: told, crossed as data, or a bare Node error with its path', () => {
    expect(fileErrorData(diskError(nodeError('EROFS'), '/r/f'))).toEqual({
      code: 'file/unusable',
      message: expect.stringMatching(/^Cannot write \/r\/f/),
    });
    expect(fileErrorData(Object.assign(new Error('Cannot write /r/f: …'), { code: 'file/unusable' }))).toEqual({
      code: 'file/unusable',
      message: 'Cannot write /r/f: …',
    });
    expect(fileErrorData(Object.assign(nodeError('ENOTDIR'), { path: '/dev/null/x' }))?.message).toMatch(
      /^Cannot use \/dev\/null\/x: part of that path is a file/,
    );
    expect(fileErrorData(nodeError('ENOTDIR'))).toBeNull(); // no file to name: not told here
    expect(fileErrorData(new Error('x'))).toBeNull();
  });
});

describe('fitName', () => {
  it('cuts the name, never inside a character, so the whole fits 255 bytes', () => {
    expect(fitName('.', 'model.safetensors', '.123.tmp')).toBe('.model.safetensors.123.tmp');
    const ascii = fitName('.', 'a'.repeat(300), '.export-abcdef');
    expect(bytes(ascii)).toBe(MAX_NAME_BYTES);
    expect(ascii.endsWith('.export-abcdef')).toBe(true);
    const wide = fitName('.', 'é'.repeat(200), '.12345.tmp'); // 2 bytes each: 255 - 11 leaves 244, 122 of them
    expect(wide).toBe(`.${'é'.repeat(122)}.12345.tmp`);
    expect(bytes(fitName('.', '😀'.repeat(100), '.1.tmp'))).toBeLessThanOrEqual(MAX_NAME_BYTES);
  });
});

/** Node's file calls, but opening or making anything whose path `hit` picks fails with `code`. */
function refusingIo(code: string, hit: (p: string) => boolean): FileIo {
  const refuse = (p: string): void => {
    if (hit(p)) throw Object.assign(new Error(`${code}: refused, open '${p}'`), { code, path: p });
  };
  return {
    ...NODE_IO,
    openSync: (file, flags) => (refuse(file), NODE_IO.openSync(file, flags)),
    mkdirSync: (dir) => (refuse(dir), NODE_IO.mkdirSync(dir)),
  };
}

describe("Node's file system on a disk that refuses", () => {
  it('tells a read-only disk and a refused permission in one line naming the file', async () => {
    const ro = new NodeFs(refusingIo('EROFS', (p) => p !== tmp)); // the folder is there: its files are refused
    await expect(writeFile(ro, path.join(tmp, 'a.json'), '{}')).rejects.toThrow(
      /^Cannot write .*a\.json: the disk is read-only/,
    );
    await expect(ro.appendLine(path.join(tmp, 'log.jsonl'), '{}\n')).rejects.toThrow(
      /^Cannot write .*log\.jsonl: the disk is read-only/,
    );
    const denied = new NodeFs(refusingIo('EACCES', (p) => p.endsWith('sub')));
    await expect(denied.mkdir(path.join(tmp, 'sub'))).rejects.toThrow(/^Permission denied for .*sub;/);
  });

  it('names a folder read as a file, and a path below a file is nothing to remove', async () => {
    const nfs = new NodeFs();
    fs.mkdirSync(path.join(tmp, 'folder'));
    await expect(nfs.readFile(path.join(tmp, 'folder'))).rejects.toThrow(/folder is a folder where a file must be/);
    await expect(nfs.readRange(path.join(tmp, 'folder'), 0, 4)).rejects.toThrow(
      /folder is a folder where a file must be/,
    );
    fs.writeFileSync(path.join(tmp, 'plain'), 'x');
    await expect(nfs.list(path.join(tmp, 'plain'))).rejects.toThrow(/plain: part of that path is a file/);
    await expect(nfs.remove(path.join(tmp, 'plain', 'below'))).resolves.toBeUndefined();
  });
});

describe('a training session on a disk that refuses', () => {
  it('fails with file/unusable and the line naming the file, not "Internal error"', async () => {
    const runDir = path.join(tmp, 'run');
    const events: FromTrainingWorker[] = [];
    const nfs = new NodeFs(refusingIo('EROFS', (p) => p.endsWith('metrics.jsonl')));
    await runSession({
      platform: platformOf(nfs),
      request: sessionRequest(runDir, tinySpec({ kind: 'task', task: 'reverse' }, 2)),
      control: new SessionControl(),
      emit: (m) => events.push(m),
    });
    const fail = events.find((e) => e.type === 'train/didFail');
    expect(fail).toMatchObject({
      type: 'train/didFail',
      error: {
        code: 'file/unusable',
        message: expect.stringMatching(/^Cannot write .*metrics\.jsonl: the disk is read-only/),
      },
    });
  });
});
