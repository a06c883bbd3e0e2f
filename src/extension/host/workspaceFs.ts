/**
 * The lab's file system on VS Code's `workspace.fs`, for the web extension host: workspace
 * files of any provider (a folder served by the remote, a github.dev repository's virtual
 * files) and the extension's storage. Paths are URIs spelled `scheme://authority/path` with
 * the path not percent-encoded (lab/files/slashPaths.ts), so names read as they are and the
 * lab joins and splits them without VS Code.
 *
 * `workspace.fs` writes whole files, has no append, and renames over a file by deleting it
 * first; lab/files/wholeFileFs.ts keeps the contract (lab/files/labFs.ts) on such calls, so a
 * reload at any instant loses nothing, and creates a file exclusively by renaming without
 * overwriting and reading it back. This file only adapts `workspace.fs` to those calls.
 *
 * A failed call is told in one line naming the file (lab/files/fileErrors.ts: VS Code's
 * `FileSystemError` codes, and Node's codes in their messages).
 *
 * Leaves out: watching and permissions.
 */

import * as vscode from 'vscode';
import { FileError, diskError } from '../../lab/files/fileErrors';
import type { WholeFileCalls } from '../../lab/files/wholeFileFs';
import { WholeFileFs } from '../../lab/files/wholeFileFs';
import { splitRoot } from '../../lab/files/slashPaths';

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

function isMissing(e: unknown): boolean {
  return (
    (e instanceof vscode.FileSystemError && e.code === 'FileNotFound') || (FileError.is(e) && e.problem === 'missing')
  );
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

/** `workspace.fs` as the calls of a whole-file file system. */
const WORKSPACE_CALLS: WholeFileCalls = {
  async stat(p) {
    try {
      const st = await vscode.workspace.fs.stat(uriOfPath(p));
      const kind = kindOf(st.type);
      return { kind, size: kind === 'file' ? st.size : 0, mtimeMs: st.mtime };
    } catch (e) {
      if (isMissing(e)) return null;
      throw diskError(e, p);
    }
  },
  readFile: (p) => told(p, () => vscode.workspace.fs.readFile(uriOfPath(p))),
  list: async (dir) =>
    (await told(dir, () => vscode.workspace.fs.readDirectory(uriOfPath(dir)))).map(([name, type]) => ({
      name,
      kind: kindOf(type),
    })),
  mkdir: (dir) => told(dir, () => vscode.workspace.fs.createDirectory(uriOfPath(dir))),
  writeFile: (p, data) => told(p, () => vscode.workspace.fs.writeFile(uriOfPath(p), data)),
  rename: (from, to, overwrite) =>
    told(to, () => vscode.workspace.fs.rename(uriOfPath(from), uriOfPath(to), { overwrite })),
  async delete(p) {
    try {
      await told(p, () => vscode.workspace.fs.delete(uriOfPath(p), { recursive: true, useTrash: false }));
    } catch (e) {
      if (!isMissing(e)) throw e;
    }
  },
  isMissing,
};

/** `workspace.fs` as the lab's file system. */
export class WorkspaceFs extends WholeFileFs {
  constructor() {
    super(WORKSPACE_CALLS);
  }
}
