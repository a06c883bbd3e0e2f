/**
 * The lab's file system on VS Code's `workspace.fs`, for the web extension host: workspace
 * files of any provider (a folder served by the remote, a github.dev repository's virtual
 * files) and the extension's storage. Paths are URIs spelled `scheme://authority/path` with
 * the path not percent-encoded (lab/files/slashPaths.ts), so names read as they are and the
 * lab joins and splits them without VS Code.
 *
 * `workspace.fs` writes whole files and renames, so the contract (lab/files/labFs.ts) is
 * kept the same way as on disk: a temporary file beside the target, then a rename over it.
 * Appending reads the log and writes it back whole (the web workers send their log lines in
 * batches, so this happens a few times a second at most). `workspace.fs.writeFile` takes no
 * "create only" flag, so an exclusive create renames a temporary file onto the path without
 * overwriting, then reads it back (see {@link WorkspaceFs.createExclusive}).
 *
 * A failed call is told in one line naming the file (lab/files/fileErrors.ts: VS Code's
 * `FileSystemError` codes, and Node's codes in their messages).
 *
 * Leaves out: watching and permissions.
 */

import * as vscode from 'vscode';
import { FileError, diskError, fitName } from '../../lab/files/fileErrors';
import type { DirEntry, FileStat, FileWrite, LabFs } from '../../lab/files/labFs';
import { bytesOf } from '../../lab/files/labFs';
import { SlashPaths, basenamePath, dirnamePath, joinPath, splitRoot } from '../../lab/files/slashPaths';

/** The lab's path of a URI. */
export function pathOfUri(uri: vscode.Uri): string {
  return `${uri.scheme}://${uri.authority}${uri.path}`;
}

/** The URI of a lab path. */
export function uriOfPath(p: string): vscode.Uri {
  const { root, path } = splitRoot(p);
  const m = /^([^:]+):\/\/(.*)$/.exec(root);
  return m ? vscode.Uri.from({ scheme: m[1] as string, authority: m[2] as string, path }) : vscode.Uri.file(path);
}

/**
 * How long an exclusive create waits before reading its file back: longer than a provider
 * takes between its "is the target there?" check and its rename, so any racer's rename has
 * landed by then.
 */
export const CREATE_SETTLE_MS = 50;

function isMissing(e: unknown): boolean {
  return (e instanceof vscode.FileSystemError && e.code === 'FileNotFound') || (FileError.is(e) && e.problem === 'missing');
}

/** Runs one call of `workspace.fs` on `p`, its failure told in one line naming `p` (fileErrors.ts). */
async function told<T>(p: string, call: () => Thenable<T>): Promise<T> {
  try {
    return await call();
  } catch (e) {
    throw diskError(e, p);
  }
}

function kindOf(type: vscode.FileType): 'file' | 'directory' {
  return (type & vscode.FileType.Directory) !== 0 ? 'directory' : 'file';
}

/** `workspace.fs` as the lab's file system. */
export class WorkspaceFs extends SlashPaths implements LabFs {
  private tempCounter = 0;
  /** The append in flight to each file (appendLine chains the next one after it). */
  private readonly appending = new Map<string, Promise<void>>();
  /** The last file read in ranges (a checkpoint being imported piece by piece), whole. */
  private ranged: { path: string; mtime: number; data: Uint8Array } | null = null;

  async stat(p: string): Promise<FileStat | null> {
    try {
      const st = await vscode.workspace.fs.stat(uriOfPath(p));
      const kind = kindOf(st.type);
      return { kind, size: kind === 'file' ? st.size : 0, mtimeMs: st.mtime };
    } catch (e) {
      if (isMissing(e)) return null;
      throw diskError(e, p);
    }
  }

  async readFile(p: string): Promise<Uint8Array> {
    return told(p, () => vscode.workspace.fs.readFile(uriOfPath(p)));
  }

  async readRange(p: string, position: number, length: number): Promise<Uint8Array> {
    const st = await told(p, () => vscode.workspace.fs.stat(uriOfPath(p)));
    if (this.ranged?.path !== p || this.ranged.mtime !== st.mtime || this.ranged.data.length !== st.size) {
      this.ranged = { path: p, mtime: st.mtime, data: await this.readFile(p) };
    }
    return this.ranged.data.slice(position, position + length);
  }

  async list(dir: string): Promise<DirEntry[]> {
    return (await told(dir, () => vscode.workspace.fs.readDirectory(uriOfPath(dir)))).map(([name, type]) => ({ name, kind: kindOf(type) }));
  }

  async mkdir(dir: string): Promise<void> {
    await told(dir, () => vscode.workspace.fs.createDirectory(uriOfPath(dir)));
  }

  async writeFiles(files: readonly FileWrite[]): Promise<void> {
    const temps: { tmp: string; target: string }[] = [];
    try {
      for (const f of files) {
        const dir = dirnamePath(f.path);
        await this.mkdir(dir);
        const tmp = joinPath(dir, fitName('.', basenamePath(f.path), `.${Date.now()}${++this.tempCounter}.tmp`));
        temps.push({ tmp, target: f.path });
        await told(f.path, () => vscode.workspace.fs.writeFile(uriOfPath(tmp), bytesOf(f.data)));
      }
      for (const { tmp, target } of temps) await told(target, () => vscode.workspace.fs.rename(uriOfPath(tmp), uriOfPath(target), { overwrite: true }));
    } catch (e) {
      for (const { tmp } of temps) await this.remove(tmp).catch(() => undefined);
      throw e;
    }
  }

  async flush(): Promise<void> {
    // Every append went straight to the disk.
  }

  appendLine(p: string, line: string): Promise<void> {
    // One append to a file at a time: two interleaved read-and-write-backs would lose a line.
    const prev = this.appending.get(p) ?? Promise.resolve();
    const next = prev.then(() => this.appendNow(p, line));
    const settled = next.catch(() => undefined);
    this.appending.set(p, settled);
    void settled.then(() => this.appending.get(p) === settled && this.appending.delete(p));
    return next;
  }

  private async appendNow(p: string, line: string): Promise<void> {
    let old: Uint8Array;
    try {
      old = await this.readFile(p);
    } catch (e) {
      if (!isMissing(e)) throw e;
      old = new Uint8Array(0);
    }
    const torn = old.length > 0 && old[old.length - 1] !== 0x0a;
    const add = bytesOf(torn ? `\n${line}` : line);
    const data = new Uint8Array(old.length + add.length);
    data.set(old);
    data.set(add, old.length);
    await this.writeFiles([{ path: p, data }]);
  }

  async rename(from: string, to: string): Promise<void> {
    const [src, dst] = await Promise.all([this.stat(from), this.stat(to)]);
    if (src?.kind === 'directory' && dst?.kind === 'directory') {
      if ((await this.list(to)).length > 0) throw Object.assign(new Error(`${to} is not empty`), { code: 'ENOTEMPTY' });
      await this.remove(to);
    }
    await told(to, () => vscode.workspace.fs.rename(uriOfPath(from), uriOfPath(to), { overwrite: src?.kind === 'file' }));
  }

  async remove(p: string): Promise<void> {
    try {
      await vscode.workspace.fs.delete(uriOfPath(p), { recursive: true, useTrash: false });
    } catch (e) {
      if (!isMissing(e)) throw diskError(e, p);
    }
  }

  /**
   * A temporary file holding `data`, renamed onto `p` with `overwrite: false` (the provider
   * refuses with FileExists when something is there). A provider checks and renames in two
   * steps, so two racers can both pass the check and the later rename replace the earlier;
   * after {@link CREATE_SETTLE_MS} the file holds the last one's bytes, and only the caller
   * whose bytes they are gets true. (Callers put something of their own in `data`: the lock
   * writes a random token.)
   */
  async createExclusive(p: string, data: Uint8Array | string): Promise<boolean> {
    if (await this.stat(p)) return false;
    const bytes = bytesOf(data);
    const tmp = joinPath(dirnamePath(p), `.${basenamePath(p)}.${Date.now()}${++this.tempCounter}.tmp`);
    await vscode.workspace.fs.writeFile(uriOfPath(tmp), bytes);
    try {
      await vscode.workspace.fs.rename(uriOfPath(tmp), uriOfPath(p), { overwrite: false });
    } catch (e) {
      await this.remove(tmp).catch(() => undefined);
      if (e instanceof vscode.FileSystemError && e.code === 'FileExists') return false;
      throw e;
    }
    await new Promise((resolve) => setTimeout(resolve, CREATE_SETTLE_MS));
    let now: Uint8Array;
    try {
      now = await this.readFile(p);
    } catch (e) {
      if (isMissing(e)) return false; // replaced, then removed by whoever won
      throw e;
    }
    return now.length === bytes.length && now.every((b, i) => b === bytes[i]);
  }
}
