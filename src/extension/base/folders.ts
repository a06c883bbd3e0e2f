/**
 * Folder arithmetic the commands share: whether a path lies inside a folder, and the
 * deepest folder holding a set of files (the corpus root of files from several workspace
 * folders). Pure, on the host platform's separators.
 *
 * Leaves out: touching the file system.
 */

import * as path from 'node:path';

/** True when `p` is `folder` or lies below it. */
export function isInside(folder: string, p: string): boolean {
  const rel = path.relative(path.resolve(folder), path.resolve(p));
  return rel === '' || (!rel.startsWith(`..${path.sep}`) && rel !== '..' && !path.isAbsolute(rel));
}

/** The deepest folder that contains every path (the root folder for none). */
export function commonFolder(paths: readonly string[]): string {
  if (paths.length === 0) return path.parse(process.cwd()).root;
  let parts = path.dirname(path.resolve(paths[0] as string)).split(path.sep);
  for (const p of paths.slice(1)) {
    const q = path.dirname(path.resolve(p)).split(path.sep);
    let i = 0;
    while (i < parts.length && i < q.length && parts[i] === q[i]) i++;
    parts = parts.slice(0, i);
  }
  return parts.join(path.sep) || path.sep;
}
