/**
 * The data a Train command uses, from the settings: a built-in task; pairs files named
 * relative to the workspace; or documents found with `workspace.findFiles` (which applies
 * `files.exclude`), minus `attentionLab.data.exclude` — `.gitignore` and unreadable,
 * binary or oversized files are then left out, and reported, by the worker's corpus
 * collection. Refuses workspace files in Restricted Mode and in virtual workspaces.
 *
 * Leaves out: reading file contents (the worker does, off the extension host's thread).
 */

import * as vscode from 'vscode';
import { exists } from '../../lab/files/labFs';
import type { DataSpec } from '../../protocol/data';
import { commonFolder, isInside } from '../base/folders';
import type { LabHost } from '../host/labHost';
import type { Settings } from '../configure/settings';

/** Most files one run takes from the workspace. */
export const MAX_FILES = 20_000;

/** A data problem the user can fix, with the fix's action. */
export class DataError extends Error {
  constructor(
    message: string,
    readonly fix: 'configure' | 'trust' | 'none',
  ) {
    super(message);
    this.name = 'DataError';
  }
}

/** The data, and a line saying what was found. */
export interface FoundData {
  readonly data: DataSpec;
  readonly found: string;
}

/**
 * Resolves the settings' data source for a Train command, in `host`'s paths; files under
 * `runsRoot` (earlier runs) are never training data.
 */
export async function findTrainingData(host: LabHost, s: Settings, workspaceDir: string | null, runsRoot: string, token: vscode.CancellationToken): Promise<FoundData> {
  const { fs } = host;
  const d = s.data;
  if (d.source === 'task') return { data: { kind: 'task', task: d.task }, found: `built-in task "${d.task}"` };
  if (!vscode.workspace.isTrusted) {
    throw new DataError('This workspace is in Restricted Mode, so Attention Lab does not train on its files. Trust the workspace, or choose a built-in task in "Configure Model…".', 'trust');
  }
  if (!workspaceDir) {
    throw new DataError(`Training on ${d.source} needs a workspace folder on disk (none is open, or it is virtual). Open a folder, or choose a built-in task in "Configure Model…".`, 'configure');
  }
  if (d.source === 'pairs') {
    if (!d.pairsSource.trim()) throw new DataError('No pairs file is set (attentionLab.data.pairsSource). Choose one in "Configure Model…".', 'configure');
    const source = fs.resolve(d.pairsSource, workspaceDir);
    const target = d.pairsTarget.trim() ? fs.resolve(d.pairsTarget, workspaceDir) : null;
    for (const f of [source, target]) if (f && !(await exists(fs, f))) throw new DataError(`The pairs file ${f} does not exist. Fix attentionLab.data.pairsSource / pairsTarget, or choose pairs in "Configure Model…".`, 'configure');
    return { data: { kind: 'pairs', source, target }, found: `pairs ${fs.basename(source)}${target ? ` → ${fs.basename(target)}` : ''}` };
  }
  const { files, capped, excluded } = await findDocumentFiles(host, d.include, d.exclude, runsRoot, MAX_FILES, token);
  if (files.length === 0) {
    throw new DataError(`No files in this workspace match "${d.include}"${excluded ? ` once "${d.exclude}" is left out` : ''} (files.exclude applies). Change attentionLab.data.include in "Configure Model…".`, 'configure');
  }
  const root = documentsRoot(host, files);
  const notes = [excluded ? `${excluded} excluded by attentionLab.data.exclude` : '', capped ? `only the first ${MAX_FILES} taken` : ''].filter(Boolean).join(', ');
  return { data: { kind: 'documents', files, root }, found: `${files.length} ${files.length === 1 ? 'file' : 'files'} matching "${d.include}"${notes ? ` (${notes})` : ''}` };
}

/** Files a documents glob names, as training takes them. */
export interface DocumentFiles {
  /** Absolute paths, sorted, at most `limit`. */
  readonly files: string[];
  /** True when more than `limit` files matched. */
  readonly capped: boolean;
  /** Files left out by the exclude glob. */
  readonly excluded: number;
}

/**
 * The workspace files `include` names (VS Code's search, which applies `files.exclude` and
 * also searches a virtual workspace such as github.dev's), minus `exclude` and anything
 * under `runsRoot`, as `host`'s paths (files its file system cannot reach are left out),
 * sorted, the first `limit` of them. Used by Train and by Configure's live count, so both
 * see the same files.
 */
export async function findDocumentFiles(host: LabHost, include: string, exclude: string, runsRoot: string, limit: number, token?: vscode.CancellationToken): Promise<DocumentFiles> {
  const found = await vscode.workspace.findFiles(include, undefined, limit + 1, token);
  const reachable = (uris: readonly vscode.Uri[]): string[] => uris.map((u) => host.pathOf(u)).filter((p): p is string => p !== null);
  let files = reachable(found).filter((f) => !isInside(host.fs, runsRoot, f));
  let excluded = 0;
  if (exclude.trim()) {
    const drop = new Set(reachable(await vscode.workspace.findFiles(exclude, undefined, undefined, token)));
    const before = files.length;
    files = files.filter((f) => !drop.has(f));
    excluded = before - files.length;
  }
  const capped = files.length > limit;
  return { files: files.sort().slice(0, limit), capped, excluded };
}

/** The folder document paths are relative to: the workspace folder when it holds them all, else their common folder. */
export function documentsRoot(host: LabHost, files: readonly string[]): string {
  const folders = (vscode.workspace.workspaceFolders ?? []).map((f) => host.pathOf(f.uri)).filter((p): p is string => p !== null);
  return folders.length === 1 && files.every((f) => isInside(host.fs, folders[0] as string, f)) ? (folders[0] as string) : commonFolder(host.fs, files);
}
