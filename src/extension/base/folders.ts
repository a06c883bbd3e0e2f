/**
 * Folder arithmetic the commands share: whether a path lies inside a folder, and the
 * deepest folder holding a set of files (the corpus root of files from several workspace
 * folders), in the spelling of the host's file system (its own join, split and relate).
 *
 * Leaves out: touching the file system.
 */

import type { LabFs } from '../../lab/files/labFs';

type Paths = Pick<LabFs, 'relative' | 'dirname' | 'resolve'>;

/** True when `p` is `folder` or lies below it. */
export function isInside(fs: Paths, folder: string, p: string): boolean {
  return fs.relative(folder, p) !== null;
}

/** The deepest folder that contains every path (`paths` must not be empty). */
export function commonFolder(fs: Paths, paths: readonly string[]): string {
  let common = fs.dirname(fs.resolve(paths[0] as string));
  for (const p of paths.slice(1)) {
    while (fs.relative(common, p) === null && fs.dirname(common) !== common) common = fs.dirname(common);
  }
  return common;
}
