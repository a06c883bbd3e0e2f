/**
 * Finding workspace files by walking their folders through the file system, for a workspace
 * whose files VS Code's search cannot list (a virtual workspace with no file-search provider:
 * `workspace.findFiles` then never answers). Globs follow VS Code's syntax — `*` and `?` within
 * one name, `**` across folders, `{a,b}` alternatives, `[a-z]` / `[!a-z]` ranges — matched
 * against the path relative to the folder, as `findFiles` matches them. Pure (no VS Code
 * import): it walks a {@link LabFs}.
 *
 * Leaves out: deciding when to walk, and reading `files.exclude` (trainData.ts).
 */

import type { LabFs } from '../../lab/files/labFs';

/** Thrown when a walk is cancelled. */
export class WalkCancelled extends Error {
  constructor() {
    super('Listing the workspace files was cancelled.');
    this.name = 'WalkCancelled';
  }
}

const escapeRe = (c: string): string => c.replace(/[.+^${}()|[\]\\*?]/g, '\\$&');

/** The regular-expression source of a glob (no anchors). */
function globSource(glob: string): string {
  let out = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i] as string;
    if (c === '*' && glob[i + 1] === '*') {
      // `**/` is any number of folders (none included); a trailing `**` is anything below.
      const slash = glob[i + 2] === '/';
      out += slash ? '(?:[^/]*/)*' : '.*';
      i += slash ? 2 : 1;
    } else if (c === '*') out += '[^/]*';
    else if (c === '?') out += '[^/]';
    else if (c === '{') {
      const end = glob.indexOf('}', i);
      if (end < 0) {
        out += '\\{';
        continue;
      }
      out += `(?:${glob
        .slice(i + 1, end)
        .split(',')
        .map(globSource)
        .join('|')})`;
      i = end;
    } else if (c === '[') {
      const end = glob.indexOf(']', i + 2);
      if (end < 0) {
        out += '\\[';
        continue;
      }
      let body = glob.slice(i + 1, end);
      const negate = body.startsWith('!') || body.startsWith('^');
      if (negate) body = body.slice(1);
      out += `[${negate ? '^/' : ''}${body.replace(/[\\\]^]/g, '\\$&')}]`;
      i = end;
    } else out += escapeRe(c);
  }
  return out;
}

/** A test of relative paths (`/`-separated) against a VS Code glob. */
export function globMatcher(glob: string): (relPath: string) => boolean {
  const re = new RegExp(`^${globSource(glob.trim().replace(/^\.\//, ''))}$`);
  return (p) => re.test(p);
}

/** How a walk goes. */
export interface WalkOptions {
  /** Most files returned; the walk stops once it has this many. */
  readonly limit: number;
  /** True for a relative path (a file or a folder, with all below it) that is left out. */
  readonly skip: (relPath: string) => boolean;
  /** Checked between folders; true stops the walk with {@link WalkCancelled}. */
  readonly cancelled: () => boolean;
  /** Called as each folder is listed, with the files matched so far. */
  readonly onFolder?: (relDir: string, matched: number) => void;
}

/** The files under `root` whose relative paths `match` accepts, as `fs` paths, in path order, at most `limit`. */
export async function walkFiles(
  fs: LabFs,
  root: string,
  match: (relPath: string) => boolean,
  o: WalkOptions,
): Promise<string[]> {
  const found: string[] = [];
  const walk = async (dir: string, rel: string): Promise<void> => {
    if (o.cancelled()) throw new WalkCancelled();
    o.onFolder?.(rel, found.length);
    const entries = (await fs.list(dir)).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const e of entries) {
      if (found.length >= o.limit) return;
      const path = rel ? `${rel}/${e.name}` : e.name;
      if (o.skip(path)) continue;
      if (e.kind === 'directory') await walk(fs.join(dir, e.name), path);
      else if (e.kind === 'file' && match(path)) found.push(fs.join(dir, e.name));
    }
  };
  await walk(root, '');
  return found;
}
