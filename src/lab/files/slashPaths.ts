/**
 * Path arithmetic for file systems whose paths use `/` and may start with a URI's
 * `scheme://authority` (VS Code's `workspace.fs` as the web host spells it, its workers'
 * channel, the in-memory file system): joining, splitting and relating paths without
 * Node's `path`, which the web bundles must not contain. A path is its root
 * (`scheme://authority` or nothing) followed by an absolute `/…` part that is never
 * percent-encoded, so a name with spaces reads as it is.
 *
 * Leaves out: queries and fragments (file URIs have none), Windows drive letters and
 * backslashes (Node's paths go through fs.node.ts).
 */

const ROOT = /^[a-zA-Z][\w+.-]*:\/\/[^/]*/;

/** File systems whose authority names a machine (or none): a person knows their paths as they are. */
const MACHINE_SCHEMES = new Set(['file', 'vscode-remote', 'vscode-userdata']);

/**
 * `p` as a person reads it, for messages and run descriptions: a disk's path without its URI
 * root (`vscode-remote://host/home/me/notes` → `/home/me/notes`), another file system's
 * authority and path (github.dev's `vscode-vfs://github/owner/repo` → `github/owner/repo`).
 * A path without a root is returned as it is.
 */
export function shownPath(p: string): string {
  const m = /^([a-zA-Z][\w+.-]*):\/\/([^/]*)/.exec(p);
  if (!m) return p;
  const scheme = (m[1] as string).toLowerCase();
  const authority = m[2] as string;
  const rest = p.slice(m[0].length) || '/';
  if (MACHINE_SCHEMES.has(scheme)) return rest;
  let name = authority;
  try {
    name = decodeURIComponent(authority);
  } catch {
    // not percent-encoded after all: shown as it is
  }
  return name ? `${name}${rest}` : `${scheme}:${rest}`;
}

/** A URI root inside a message: after the start, a space or an opening quote or bracket. */
const ROOT_IN_TEXT = /(^|[\s(["'`])([a-zA-Z][\w+.-]*):\/\/([^/\s]*)/g;

/**
 * `text` with every path in it as a person reads it ({@link shownPath}), for messages that
 * quote paths from anywhere (a lab error naming a file the web host spelled as a URI). Only a
 * URI's root is rewritten, so a name with spaces after it stays whole; web addresses
 * (`http`, `https`) are left as they are.
 */
export function shownPathsIn(text: string): string {
  return text.replace(ROOT_IN_TEXT, (all: string, before: string, scheme: string, authority: string, at: number) => {
    if (/^https?$/i.test(scheme)) return all;
    const shown = shownPath(`${scheme}://${authority}/`);
    const pathFollows = text[at + all.length] === '/';
    return before + (pathFollows ? shown.slice(0, -1) : shown);
  });
}

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

/**
 * Lower-case extension of a path's last name, without the dot ("" when there is none; `/` and `\\` both separate
 * names).
 */
export function extensionOf(file: string): string {
  const name = file.slice(Math.max(file.lastIndexOf('/'), file.lastIndexOf('\\')) + 1);
  const dot = name.lastIndexOf('.');
  return dot <= 0 ? '' : name.slice(dot + 1).toLowerCase();
}
