/**
 * Runs kept under another identity of the same folder. VS Code keeps an extension's storage
 * per workspace identity — the folder's URI, address and port included — so the same folder
 * opened through code-server on another port, or another remote address, gets storage of its
 * own, and the runs trained under the old identity seem gone. They still sit beside this
 * workspace's storage: `workspaceStorage/<id>/<extension>/runs/`, where `<id>/workspace.json`
 * names the folder it belongs to. This finds them, the ones of a folder with the same path
 * first. Pure (no VS Code import).
 *
 * Leaves out: showing and adding them (runActions.ts), and storage VS Code keeps where this
 * host cannot list it (another browser's or profile's storage on vscode.dev).
 */

import type { LabFs } from '../../lab/files/labFs';
import { exists, readText } from '../../lab/files/labFs';

/** One other workspace storage that holds runs. */
export interface StrayStorage {
  /** Its runs folder. */
  readonly runsDir: string;
  /** The folder (or workspace file) URI its workspace.json names, or null when it names none. */
  readonly folder: string | null;
  /** True when that folder has the same path as this workspace's (another address or port of it). */
  readonly sameFolder: boolean;
  /** Its run folders. */
  readonly runs: readonly string[];
}

/**
 * The path part of a URI string ("vscode-remote://localhost:8080/home/me/x" → "/home/me/x"), without a trailing slash.
 */
export function uriPath(uri: string): string {
  const m = /^[a-z][a-z0-9+.-]*:\/\/[^/]*(\/.*)?$/i.exec(uri);
  const p = decodeURIComponent(m ? (m[1] ?? '/') : uri);
  return p.length > 1 ? p.replace(/\/+$/, '') : p;
}

/**
 * The run folders in every other workspace storage beside `storageDir` (this workspace's
 * extension storage: `…/workspaceStorage/<id>/<extension>`), those of a folder with the same
 * path as `folderUri` first. `isRun` says whether a folder is a run.
 */
export async function findStrayRuns(
  fs: LabFs,
  storageDir: string,
  folderUri: string | null,
  isRun: (dir: string) => Promise<boolean>,
): Promise<StrayStorage[]> {
  const extensionName = fs.basename(storageDir);
  const idDir = fs.dirname(storageDir);
  const all = fs.dirname(idDir);
  if (all === idDir) return [];
  let ids;
  try {
    ids = await fs.list(all);
  } catch {
    return []; // storage this host cannot list
  }
  const here = folderUri === null ? null : uriPath(folderUri);
  const found: StrayStorage[] = [];
  for (const id of ids.filter((e) => e.kind === 'directory').map((e) => fs.join(all, e.name))) {
    if (id === idDir) continue;
    const runsDir = fs.join(id, extensionName, 'runs');
    if (!(await exists(fs, runsDir))) continue;
    const runs: string[] = [];
    for (const e of await fs.list(runsDir))
      if (e.kind === 'directory' && (await isRun(fs.join(runsDir, e.name)))) runs.push(fs.join(runsDir, e.name));
    if (runs.length === 0) continue;
    const folder = await workspaceFolderOf(fs, id);
    found.push({
      runsDir,
      folder,
      sameFolder: here !== null && folder !== null && uriPath(folder) === here,
      runs: runs.sort(),
    });
  }
  return found.sort(
    (a, b) => Number(b.sameFolder) - Number(a.sameFolder) || (a.folder ?? '').localeCompare(b.folder ?? ''),
  );
}

/** The folder or workspace URI a workspace storage's workspace.json names, or null. */
async function workspaceFolderOf(fs: LabFs, idDir: string): Promise<string | null> {
  try {
    const json = JSON.parse(await readText(fs, fs.join(idDir, 'workspace.json'))) as {
      folder?: unknown;
      workspace?: unknown;
    };
    const v = json.folder ?? json.workspace;
    return typeof v === 'string' ? v : null;
  } catch {
    return null;
  }
}
