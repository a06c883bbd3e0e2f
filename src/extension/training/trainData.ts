/**
 * The data a Train command uses, from the settings: a built-in task; pairs files named
 * relative to the workspace; or documents found with `workspace.findFiles` (which applies
 * `files.exclude`; where it does not answer, as in a virtual workspace without a file-search
 * provider, by walking the folders through the file system), minus `attentionLab.data.exclude`
 * and the workspace settings file — `.gitignore` and unreadable, binary or oversized files
 * are then left out, and reported, by the worker's corpus collection. Refuses workspace
 * files in Restricted Mode and where the host's file system cannot reach the folder.
 *
 * Leaves out: reading file contents (the worker does, off the extension host's thread).
 */

import * as vscode from 'vscode';
import { exists } from '../../lab/files/labFs';
import type { DataSpec } from '../../protocol/data';
import { commonFolder, isInside } from '../base/folders';
import type { ExtensionHost } from '../host/extensionHost';
import type { Settings } from '../base/settings';
import { WalkCancelled, globMatcher, walkFiles } from './walkFiles';

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
export async function findTrainingData(
  host: Pick<ExtensionHost, 'fs' | 'pathOf'>,
  s: Settings,
  workspaceDir: string | null,
  runsRoot: string,
  token: vscode.CancellationToken,
  how: FindOptions = {},
): Promise<FoundData> {
  const { fs } = host;
  const d = s.data;
  if (d.source === 'task') return { data: { kind: 'task', task: d.task }, found: `built-in task "${d.task}"` };
  if (!vscode.workspace.isTrusted) {
    throw new DataError(
      'This workspace is in Restricted Mode, so Attention Lab does not train on its files. Trust ' +
        'the workspace, or choose a built-in task in "Configure Model…".',
      'trust',
    );
  }
  if (!workspaceDir) {
    throw new DataError(
      `Training on ${d.source} needs a workspace folder on disk (none is open, or it is virtual). ` +
        `Open a folder, or choose a built-in task in "Configure Model…".`,
      'configure',
    );
  }
  if (d.source === 'pairs') {
    if (!d.pairsSource.trim())
      throw new DataError(
        'No pairs file is set (attentionLab.data.pairsSource). Choose one in "Configure Model…".',
        'configure',
      );
    const source = fs.resolve(d.pairsSource, workspaceDir);
    const target = d.pairsTarget.trim() ? fs.resolve(d.pairsTarget, workspaceDir) : null;
    for (const f of [source, target])
      if (f && !(await exists(fs, f)))
        throw new DataError(
          `The pairs file ${f} does not exist. Fix attentionLab.data.pairsSource / pairsTarget, or ` +
            `choose pairs in "Configure Model…".`,
          'configure',
        );
    return {
      data: { kind: 'pairs', source, target },
      found: `pairs ${fs.basename(source)}${target ? ` → ${fs.basename(target)}` : ''}`,
    };
  }
  const { files, capped, excluded, settingsLeftOut } = await findDocumentFiles(
    host,
    d.include,
    d.exclude,
    runsRoot,
    MAX_FILES,
    token,
    how,
  );
  if (files.length === 0) {
    throw new DataError(
      `No files in this workspace match "${d.include}"` +
        `${excluded ? ` once "${d.exclude}" is left out` : ''} (files.exclude ` +
        `applies). Change attentionLab.data.include in "Configure Model…".`,
      'configure',
    );
  }
  const root = documentsRoot(host, files);
  const notes = [
    excluded ? `${excluded} excluded by attentionLab.data.exclude` : '',
    settingsLeftOut ? `the editor's ${SETTINGS_FILE} left out` : '',
    capped ? `only the first ${MAX_FILES} taken` : '',
  ]
    .filter(Boolean)
    .join(', ');
  return {
    data: { kind: 'documents', files, root },
    found:
      `${files.length} ${files.length === 1 ? 'file' : 'files'} matching "` +
      `${d.include}"${notes ? ` (${notes})` : ''}`,
  };
}

/** Files a documents glob names, as training takes them. */
export interface DocumentFiles {
  /** Absolute paths, sorted, at most `limit`. */
  readonly files: string[];
  /** True when more than `limit` files matched. */
  readonly capped: boolean;
  /** Files left out by the exclude glob. */
  readonly excluded: number;
  /**
   * Workspace settings files (`.vscode/settings.json`, which Configure writes) the glob matched and that were left out.
   */
  readonly settingsLeftOut: number;
}

/** The workspace settings file Configure Model… saves to: never training data. */
export const SETTINGS_FILE = '.vscode/settings.json';

/**
 * The workspace files `include` names (VS Code's search, which applies `files.exclude` and
 * also searches a virtual workspace such as github.dev's), minus `exclude`, anything under
 * `runsRoot` and each folder's `.vscode/settings.json` (the settings Save and Train has just
 * written are not a document to learn), as `host`'s paths (files its file system cannot reach are left out),
 * sorted, the first `limit` of them. Used by Train and by Configure's live count, so both
 * see the same files.
 */
export async function findDocumentFiles(
  host: Pick<ExtensionHost, 'fs' | 'pathOf'>,
  include: string,
  exclude: string,
  runsRoot: string,
  limit: number,
  token?: vscode.CancellationToken,
  how: FindOptions = {},
): Promise<DocumentFiles> {
  const reachable = (uris: readonly vscode.Uri[]): string[] =>
    uris.map((u) => host.pathOf(u)).filter((p): p is string => p !== null);
  const found = await searchOrWalk(host, include, limit + 1, runsRoot, token, how);
  const settings = new Set(
    reachable(
      (vscode.workspace.workspaceFolders ?? []).map((w) => vscode.Uri.joinPath(w.uri, ...SETTINGS_FILE.split('/'))),
    ),
  );
  const outside = found.filter((f) => !isInside(host.fs, runsRoot, f));
  let files = outside.filter((f) => !settings.has(f));
  const settingsLeftOut = outside.length - files.length;
  let excluded = 0;
  if (exclude.trim()) {
    const drop = new Set(await searchOrWalk(host, exclude, undefined, runsRoot, token, how));
    const before = files.length;
    files = files.filter((f) => !drop.has(f));
    excluded = before - files.length;
  }
  const capped = files.length > limit;
  return { files: files.sort().slice(0, limit), capped, excluded, settingsLeftOut };
}

/** How long VS Code's file search may take before the folders are also walked through the file system. */
export const SEARCH_GRACE_MS = 2000;

/** Thrown when finding the files was cancelled. */
export class FindCancelled extends Error {
  constructor() {
    super('Finding the training data was cancelled.');
    this.name = 'FindCancelled';
  }
}

/** How {@link findDocumentFiles} reports a walk, and how long it lets the search try first. */
export interface FindOptions {
  /** Default {@link SEARCH_GRACE_MS}. */
  readonly graceMs?: number;
  /** What the walk is doing, in a few words ("listing docs/ · 12 files so far"). */
  readonly onProgress?: (message: string) => void;
}

/**
 * The files `glob` names, as `host`'s paths: VS Code's search (`findFiles`, which applies
 * `files.exclude`), or, when it has not answered within the grace period — a virtual
 * workspace with no file-search provider never answers — a walk of each workspace folder
 * through the host's file system with the same glob and `files.exclude`, whichever finishes
 * first. Cancelling `token` rejects with {@link FindCancelled} at once.
 */
async function searchOrWalk(
  host: Pick<ExtensionHost, 'fs' | 'pathOf'>,
  glob: string,
  max: number | undefined,
  runsRoot: string,
  token: vscode.CancellationToken | undefined,
  how: FindOptions,
): Promise<string[]> {
  const cts = new vscode.CancellationTokenSource();
  const outer = token?.onCancellationRequested(() => cts.cancel());
  if (token?.isCancellationRequested) cts.cancel();
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    const cancelled = new Promise<never>((_, reject) => {
      if (cts.token.isCancellationRequested) reject(new FindCancelled());
      cts.token.onCancellationRequested(() => reject(new FindCancelled()));
    });
    const search = Promise.resolve(vscode.workspace.findFiles(glob, undefined, max, cts.token)).then((uris) =>
      uris.map((u) => host.pathOf(u)).filter((p): p is string => p !== null),
    );
    const walk = new Promise<void>((resolve) => (timer = setTimeout(resolve, how.graceMs ?? SEARCH_GRACE_MS))).then(
      () => walkWorkspace(host, glob, max ?? Number.POSITIVE_INFINITY, runsRoot, cts.token, how.onProgress),
    );
    return await Promise.race([search, walk, cancelled]);
  } catch (e) {
    throw e instanceof WalkCancelled ? new FindCancelled() : e;
  } finally {
    clearTimeout(timer);
    cts.cancel(); // stops the one still running
    cts.dispose();
    outer?.dispose();
  }
}

/**
 * The workspace files `glob` names (VS Code's search, else a walk of the folders), as `host`'s paths, at most `max`.
 */
export function findWorkspaceFiles(
  host: Pick<ExtensionHost, 'fs' | 'pathOf'>,
  glob: string,
  max: number,
  runsRoot: string,
  token?: vscode.CancellationToken,
): Promise<string[]> {
  return searchOrWalk(host, glob, max, runsRoot, token, {});
}

/** Walks every workspace folder the host reaches for `glob`, leaving out `files.exclude` and the runs folder. */
async function walkWorkspace(
  host: Pick<ExtensionHost, 'fs' | 'pathOf'>,
  glob: string,
  max: number,
  runsRoot: string,
  token: vscode.CancellationToken,
  onProgress?: (message: string) => void,
): Promise<string[]> {
  const match = globMatcher(glob);
  const out: string[] = [];
  for (const folder of vscode.workspace.workspaceFolders ?? []) {
    const root = host.pathOf(folder.uri);
    if (root === null || out.length >= max) continue;
    const excludes = Object.entries(
      vscode.workspace.getConfiguration('files', folder.uri).get<Record<string, unknown>>('exclude') ?? {},
    )
      .filter(([, on]) => on === true)
      .map(([g]) => globMatcher(g));
    const files = await walkFiles(host.fs, root, match, {
      limit: max - out.length,
      skip: (rel) => excludes.some((x) => x(rel)) || isInside(host.fs, runsRoot, host.fs.join(root, rel)),
      cancelled: () => token.isCancellationRequested,
      onFolder: (rel, n) =>
        onProgress?.(`VS Code's search did not answer; listing ${folder.name}/${rel} · ${n + out.length} files so far`),
    });
    out.push(...files);
  }
  return out;
}

/** The folder document paths are relative to: the workspace folder when it holds them all, else their common folder. */
export function documentsRoot(host: Pick<ExtensionHost, 'fs' | 'pathOf'>, files: readonly string[]): string {
  const folders = (vscode.workspace.workspaceFolders ?? [])
    .map((f) => host.pathOf(f.uri))
    .filter((p): p is string => p !== null);
  return folders.length === 1 && files.every((f) => isInside(host.fs, folders[0] as string, f))
    ? (folders[0] as string)
    : commonFolder(host.fs, files);
}
