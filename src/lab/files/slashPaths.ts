/**
 * Path arithmetic for file systems whose paths use `/` and may start with a URI's
 * `scheme://authority` (VS Code's `workspace.fs` as the web host spells it, its workers'
 * channel, the in-memory file system): joining, splitting and relating paths without
 * Node's `path`, which the web bundles must not contain. A path is its root
 * (`scheme://authority` or nothing) followed by an absolute `/…` part that is never
 * percent-encoded, so a name with spaces reads as it is.
 *
 * Leaves out: queries and fragments (file URIs have none), Windows drive letters and
 * backslashes (Node's paths go through nodeFs.ts).
 */

const ROOT = /^[a-zA-Z][\w+.-]*:\/\/[^/]*/;

/** Splits `p` into its root (`scheme://authority`, or '') and its `/…` part. */
export function splitRoot(p: string): { readonly root: string; readonly path: string } {
  const m = ROOT.exec(p);
  const root = m ? m[0] : '';
  const rest = p.slice(root.length);
  return { root, path: rest.startsWith('/') ? rest : `/${rest}` };
}

/** The `/…` part with `.`, `..` and repeated slashes resolved. */
function normalize(path: string): string {
  const out: string[] = [];
  for (const part of path.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') out.pop();
    else out.push(part);
  }
  return `/${out.join('/')}`;
}

/** `dir` with `names` appended. */
export function joinPath(dir: string, ...names: string[]): string {
  const { root, path } = splitRoot(dir);
  return root + normalize([path, ...names].join('/'));
}

/** The folder holding `p` (`p` itself at the root). */
export function dirnamePath(p: string): string {
  const { root, path } = splitRoot(p);
  const n = normalize(path);
  const cut = n.lastIndexOf('/');
  return root + (cut <= 0 ? '/' : n.slice(0, cut));
}

/** The last name of `p` ('' at the root). */
export function basenamePath(p: string): string {
  const n = normalize(splitRoot(p).path);
  return n.slice(n.lastIndexOf('/') + 1);
}

/** `p` below `from` ('' for `from` itself), or null when it is elsewhere. */
export function relativePath(from: string, p: string): string | null {
  const a = splitRoot(from);
  const b = splitRoot(p);
  if (a.root !== b.root) return null;
  const base = normalize(a.path);
  const target = normalize(b.path);
  if (target === base) return '';
  const prefix = base === '/' ? '/' : `${base}/`;
  return target.startsWith(prefix) ? target.slice(prefix.length) : null;
}

/** The normalized spelling of `p`; a relative `p` (no root, no leading `/`) is taken from `from`. */
export function resolvePath(p: string, from?: string): string {
  const relative = !ROOT.test(p) && !p.startsWith('/');
  return relative && from !== undefined ? joinPath(from, p) : joinPath(p);
}

/**
 * The path methods of a file system with these paths; its implementations extend this and add
 * the I/O (memoryFs.ts, remoteFs.ts, the extension's workspaceFs.ts).
 */
export abstract class SlashPaths {
  join(dir: string, ...names: string[]): string {
    return joinPath(dir, ...names);
  }

  dirname(p: string): string {
    return dirnamePath(p);
  }

  basename(p: string): string {
    return basenamePath(p);
  }

  relative(from: string, p: string): string | null {
    return relativePath(from, p);
  }

  resolve(p: string, from?: string): string {
    return resolvePath(p, from);
  }
}
