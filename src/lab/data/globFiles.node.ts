/**
 * Globbing for the command line (`--data` patterns, `eval --data`): turns globs and plain
 * file or folder paths into the sorted files they name, on Node's file system, with
 * tinyglobby. `.git/` and `node_modules/` are never listed, nor followed links. The editor
 * does not glob here: it finds its files with `workspace.findFiles` (which also serves the
 * web's virtual workspaces) and hands the list over.
 *
 * Leaves out: reading and filtering the files (corpus.ts).
 */

import { statSync } from 'node:fs';
import * as path from 'node:path';
import { escapePath, glob, isDynamicPattern } from 'tinyglobby';
import { EngineError } from '../../engine/errors';
import { NODE_FS } from '../files/fs.node';
import type { CollectOptions, Corpus } from './corpus';
import { limitsOf, readCorpus } from './corpus';

function kindOf(p: string): 'file' | 'directory' | null {
  try {
    const st = statSync(p);
    return st.isDirectory() ? 'directory' : st.isFile() ? 'file' : null;
  } catch {
    return null;
  }
}

/**
 * Absolute paths of the files the patterns name. A plain path (no glob characters) that
 * is a file is taken as is; one that is a folder means everything under it.
 */
async function expandPatterns(patterns: readonly string[], root: string): Promise<string[]> {
  const found = new Set<string>();
  const globs: string[] = [];
  for (const pattern of patterns) {
    if (pattern.trim() === '')
      throw new EngineError(
        'input/invalid',
        'A data pattern is empty; give a file, a folder or a glob such as "docs/**/*.md".',
      );
    if (isDynamicPattern(pattern)) {
      globs.push(pattern);
      continue;
    }
    const abs = path.resolve(root, pattern);
    const kind = kindOf(abs);
    if (kind === 'file') found.add(abs);
    else if (kind === 'directory')
      globs.push(`${escapePath(path.relative(root, abs).split(path.sep).join('/') || '.')}/**`);
  }
  if (globs.length > 0) {
    const matches = await glob(globs, {
      cwd: root,
      absolute: true,
      dot: false,
      onlyFiles: true,
      expandDirectories: false,
      followSymbolicLinks: false,
      ignore: ['**/node_modules/**', '**/.git/**'],
    });
    for (const m of matches) found.add(path.resolve(m));
  }
  return [...found];
}

/**
 * The files `patterns` name (globs, or plain file and folder paths, relative to `cwd` or
 * absolute), without reading them; `.git/` and `node_modules/` are never listed. Throws
 * `EngineError('input/invalid')` when nothing matches.
 */
export async function listDocumentFiles(
  patterns: readonly string[],
  cwd: string,
): Promise<{ root: string; files: string[] }> {
  const root = path.resolve(cwd);
  const quoted = patterns.map((p) => JSON.stringify(p)).join(', ');
  if (patterns.length === 0) {
    throw new EngineError(
      'input/invalid',
      'No data patterns given; name files, folders or globs such as "docs/**/*.md".',
    );
  }
  const files = await expandPatterns(patterns, root);
  if (files.length === 0) {
    throw new EngineError(
      'input/invalid',
      `No files match ${quoted} (relative to ${root}); check the pattern or quote it so your shell ` +
        `does not expand it. ` +
        '(.git/ and node_modules/ are always left out.)',
    );
  }
  return { root, files: files.sort() };
}

/**
 * Collects the text files matching `patterns` (see {@link listDocumentFiles}) with their
 * texts. Honors `.gitignore` (root and nested) and `.git/info/exclude`; skips and reports
 * binary, non-UTF-8, too large, empty, unreadable and ignored files, and (by default)
 * lockfiles, vendored folders, minified and generated files. Throws
 * `EngineError('input/invalid')` when nothing matches or every match was skipped.
 */
export async function collectDocuments(patterns: readonly string[], opts: CollectOptions): Promise<Corpus> {
  limitsOf(opts);
  const { root, files } = await listDocumentFiles(patterns, opts.cwd);
  return readCorpus(NODE_FS, files, root, opts, `matching ${patterns.map((p) => JSON.stringify(p)).join(', ')}`);
}
