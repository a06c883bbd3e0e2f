/**
 * Appends on a whole-file file system (wholeFileFs.ts, logParts.ts): a log grows by part files
 * holding only the new bytes, merged as a binary counter merges, so reads give the exact
 * contents, the bytes written per append do not grow with the log, and a writer stopped
 * before any single change — inside an append, a merge or a compaction — leaves a folder that,
 * reopened and recovered (on memory playing `workspace.fs` and on Node's disk), holds every
 * line appended before the stop exactly once.
 */

import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { LabFs } from '../../../../src/lab/files/labFs';
import { completeLines, listNames, readText } from '../../../../src/lab/files/labFs';
import { LOG_PART, chainOf, logPart, partsOf } from '../../../../src/lab/files/logParts';
import { MemoryFs, workspaceLikeFs } from '../../../../src/lab/files/memoryFs';
import { NODE_FS } from '../../../../src/lab/files/fs.node';
import { WholeFileFs } from '../../../../src/lab/files/wholeFileFs';
import { recoverRunFolder } from '../../../../src/lab/runs/recovery';
import { takeRunLock } from '../../../../src/lab/runs/runLock';
import { KillSwitch, killableFs } from './killSwitch';

const DIR = 'vscode-remote://host/home/lab/run';
const LOG = `${DIR}/metrics.jsonl`;

/** Line `i` of the log, of varying length. */
function line(i: number): string {
  return `{"type":"step","step":${i},"pad":"${'x'.repeat((i * 7) % 23)}"}\n`;
}

function lines(from: number, to: number): string {
  let s = '';
  for (let i = from; i < to; i++) s += line(i);
  return s;
}

/** `mem` as the web host sees it, counting the bytes each `writeFile` call writes. */
function countingFs(mem: MemoryFs): { fs: WholeFileFs; written: () => number } {
  const calls = mem.wholeFileCalls();
  let bytes = 0;
  return {
    fs: new WholeFileFs({
      ...calls,
      writeFile: (p, data) => {
        bytes += data.length;
        return calls.writeFile(p, data);
      },
    }),
    written: () => bytes,
  };
}

describe('appends on a whole-file file system', () => {
  it('read back exactly, through stat, readFile and readRange, with few part files, and move and go with their log', async () => {
    const mem = new MemoryFs();
    const lab = workspaceLikeFs(mem);
    await lab.mkdir(DIR);
    let want = '';
    for (let i = 0; i < 300; i++) {
      await lab.appendLine(LOG, line(i));
      want += line(i);
      if (i % 7 === 0 || i < 20) {
        expect(await readText(lab, LOG)).toBe(want);
        expect((await lab.stat(LOG))?.size).toBe(Buffer.byteLength(want));
        expect(new TextDecoder().decode(await lab.readRange(LOG, 10, 40))).toBe(want.slice(10, 50));
      }
      // About log2(i) parts, never one per append.
      expect(partsOf(await listNames(mem, DIR), 'metrics.jsonl').length).toBeLessThanOrEqual(Math.log2(i + 1) + 2);
    }
    const names = await listNames(lab, DIR);
    expect(names.filter((n) => n === 'metrics.jsonl')).toHaveLength(1);
    expect(names.filter((n) => !LOG_PART.test(n))).toEqual(['metrics.jsonl']);
    // A fresh file system (a reload) reads the same, and appends on after a torn line.
    const again = workspaceLikeFs(mem);
    expect(await readText(again, LOG)).toBe(want);
    await again.appendLine(LOG, '{"torn":');
    await again.appendLine(LOG, line(300));
    expect(await readText(again, LOG)).toBe(`${want}{"torn":\n${line(300)}`);
    // A rename takes the parts along (merged), a replace drops them, a remove takes them away.
    await again.rename(LOG, `${DIR}/moved.jsonl`);
    expect(await readText(again, `${DIR}/moved.jsonl`)).toBe(`${want}{"torn":\n${line(300)}`);
    expect(await again.stat(LOG)).toBeNull();
    await again.appendLine(`${DIR}/moved.jsonl`, line(301));
    await again.writeFiles([{ path: `${DIR}/moved.jsonl`, data: 'short\n' }]);
    expect(await readText(again, `${DIR}/moved.jsonl`)).toBe('short\n');
    await again.appendLine(`${DIR}/moved.jsonl`, line(302));
    await again.appendLine(`${DIR}/moved.jsonl`, line(303));
    await again.remove(`${DIR}/moved.jsonl`);
    expect(await listNames(mem, DIR)).toEqual([]);
  });

  it('writes bytes in proportion to the appends, not to the log times the appends', async () => {
    const perAppend = async (n: number): Promise<number> => {
      const mem = new MemoryFs();
      const { fs: lab, written } = countingFs(mem);
      await lab.mkdir(DIR);
      for (let i = 0; i < n; i++) await lab.appendLine(LOG, `${'y'.repeat(63)}\n`);
      expect((await lab.stat(LOG))?.size).toBe(64 * n);
      return written() / n;
    };
    const small = await perAppend(256);
    const large = await perAppend(2048);
    // Each byte is written about log2(n) times (a temporary file and the merges): a replace of
    // the whole log per append would write 64 * n / 2 bytes per append (8 KiB and 64 KiB here).
    expect(large).toBeLessThan(64 * (Math.log2(2048) + 2));
    expect(large - small).toBeLessThan(64 * 4);
  });

  it('are merged into their logs when the session ends (the run lock is released)', async () => {
    const mem = new MemoryFs();
    const lab = workspaceLikeFs(mem);
    const me = { pid: 1, host: 'box', boot: 'b', by: 'test', alive: () => true };
    const lock = await takeRunLock(lab, DIR, me, { heartbeatMs: 0, sleep: () => Promise.resolve() });
    for (let i = 0; i < 50; i++) await lab.appendLine(LOG, line(i));
    await lab.appendLine(`${DIR}/evaluations.jsonl`, line(0));
    await lab.appendLine(`${DIR}/evaluations.jsonl`, line(1));
    expect(partsOf(await listNames(mem, DIR), 'metrics.jsonl').length).toBeGreaterThan(0);
    await lock.release();
    expect((await listNames(mem, DIR)).sort()).toEqual(['evaluations.jsonl', 'metrics.jsonl']);
    expect(await readText(mem, LOG)).toBe(lines(0, 50));
    expect(await readText(mem, `${DIR}/evaluations.jsonl`)).toBe(lines(0, 2));
  });

  it('finds a gap between parts and says so', () => {
    const parts = [logPart('m.jsonl', 10, 20), logPart('m.jsonl', 25, 30)];
    expect(chainOf('m.jsonl', [logPart('m.jsonl', 10, 20), logPart('m.jsonl', 20, 30)], 10).map((p) => p.end)).toEqual([
      20, 30,
    ]);
    expect(() => chainOf('m.jsonl', parts, 10)).toThrow(/starts at byte 25, past its end at 20/);
    expect(() => chainOf('m.jsonl', parts.slice(1), 10)).toThrow(/starts at byte 25, past its end at 10/);
    // A part before the base's end, or shadowed by a longer one, is left out.
    expect(
      chainOf(
        'm.jsonl',
        [logPart('m.jsonl', 0, 5), logPart('m.jsonl', 10, 20), logPart('m.jsonl', 10, 30), logPart('m.jsonl', 20, 30)],
        10,
      ).map((p) => p.name),
    ).toEqual([logPart('m.jsonl', 10, 30).name]);
  });
});

/** Copies every file of `mem` under `from` to a Node folder. */
function toDisk(mem: MemoryFs, names: readonly string[], into: string): Promise<void[]> {
  return Promise.all(names.map(async (n) => fs.writeFileSync(path.join(into, n), await mem.readFile(`${DIR}/${n}`))));
}

describe('a writer stopped before every change of its appends, merges and compactions', () => {
  const FIRST = 37;
  const MORE = 40;

  /** Appends lines FIRST.. until killed; the index of the first line whose append did not finish. */
  async function appendUntilKilled(lab: LabFs): Promise<number> {
    for (let i = FIRST; i < FIRST + MORE; i++) {
      try {
        await lab.appendLine(LOG, line(i));
      } catch {
        return i;
      }
    }
    return FIRST + MORE;
  }

  async function fresh(): Promise<MemoryFs> {
    const mem = new MemoryFs();
    const lab = workspaceLikeFs(mem);
    await lab.mkdir(DIR);
    for (let i = 0; i < FIRST; i++) await lab.appendLine(LOG, line(i));
    return mem;
  }

  it('leaves every line appended before the stop exactly once, on reopen, recovery and on Node', async () => {
    const ref = await fresh();
    const counter = new KillSwitch();
    ref.onChange = () => counter.change('');
    expect(await appendUntilKilled(killableFs(workspaceLikeFs(ref), counter))).toBe(FIRST + MORE);
    expect(counter.changes).toBeGreaterThan(MORE * 3);
    let before = FIRST;
    for (let cut = 1; cut <= counter.changes; cut++) {
      const where = `stopped before change ${cut} of ${counter.changes}`;
      const mem = await fresh();
      const sw = new KillSwitch(cut);
      mem.onChange = () => sw.change('');
      const stopped = await appendUntilKilled(killableFs(workspaceLikeFs(mem), sw));
      expect(sw.dead, where).toBe(true);
      mem.onChange = null;
      // A reader at that instant: the lines done, and at most the one in flight, each once.
      const seen = completeLines(await readText(workspaceLikeFs(mem), LOG));
      const done = completeLines(lines(0, stopped));
      expect([done, completeLines(lines(0, stopped + 1))], where).toContainEqual(seen);
      expect(seen.length, `${where}: never fewer lines than an instant before`).toBeGreaterThanOrEqual(before);
      before = seen.length;
      // The same folder on Node's disk, recovered there, reads the same.
      const names = await listNames(mem, DIR);
      const disk = fs.mkdtempSync(path.join(os.tmpdir(), 'al-parts-'));
      await toDisk(mem, names, disk);
      await recoverRunFolder(NODE_FS, disk);
      expect(completeLines(fs.readFileSync(path.join(disk, 'metrics.jsonl'), 'utf8')), `${where}: on Node`).toEqual(
        seen,
      );
      expect(
        fs.readdirSync(disk).filter((n) => n !== 'metrics.jsonl'),
        `${where}: on Node`,
      ).toEqual([]);
      fs.rmSync(disk, { recursive: true });
      // Reopened on the web: recovered, then appended on, every line once.
      const reopened = workspaceLikeFs(mem);
      await recoverRunFolder(reopened, DIR);
      expect(await listNames(mem, DIR), where).toEqual(['metrics.jsonl']);
      await reopened.appendLine(LOG, line(1000));
      expect(completeLines(await readText(reopened, LOG)), where).toEqual([...seen, line(1000).trimEnd()]);
    }
  });
});
