/**
 * Reading the repository's import graph, for the tests that check it (layers.test.ts: layers,
 * floors and cycles; environments.test.ts: Node code kept out of the web): the source files,
 * the import specifiers of a text, and which specifiers name Node built-ins.
 *
 * Leaves out: the files' contents beyond their import specifiers (a regex over statements
 * that start a line, not a parser: the TypeScript of this repo has no compiler API).
 */

import * as fs from 'node:fs';
import * as path from 'node:path';
import { builtinModules } from 'node:module';

/** The repository's root. */
export const ROOT = path.resolve(__dirname, '../..');

/** A repository-relative file's text. */
export function readSource(rel: string): string {
  return fs.readFileSync(path.join(ROOT, rel), 'utf8');
}

/** Every .ts file under the repository-relative `dir`, but node_modules and the AssemblyScript kernels. */
export function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const e of fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
    const rel = `${dir}/${e.name}`;
    if (e.isDirectory()) {
      if (e.name !== 'node_modules' && e.name !== 'assembly') out.push(...sourceFiles(rel));
    } else if (e.name.endsWith('.ts')) out.push(rel);
  }
  return out;
}

/**
 * Import specifiers of a source text: import/export … from, side-effect imports, import(),
 * require(); with `values`, only those that survive compilation (no `import type`, `export
 * type … from` or `typeof import()`).
 */
export function importSpecifiers(text: string, values = false): string[] {
  const patterns = [
    values
      ? /^\s*(?:import|export)\b(?!\s+type\b)[^;'"]*?\bfrom\s*['"]([^'"]+)['"]/gm
      : /^\s*(?:import|export)\b[^;'"]*?\bfrom\s*['"]([^'"]+)['"]/gm,
    /^\s*import\s*['"]([^'"]+)['"]/gm,
    values ? /(?<!\btypeof\s+)\bimport\(\s*['"]([^'"]+)['"]\s*\)/g : /\bimport\(\s*['"]([^'"]+)['"]\s*\)/g,
    /\brequire\(\s*['"]([^'"]+)['"]\s*\)/g,
  ];
  const found: string[] = [];
  for (const re of patterns) for (const m of text.matchAll(re)) found.push(m[1] as string);
  return found;
}

/** The package a bare specifier names (`@scope/name` or `name`). */
export function packageName(spec: string): string {
  const parts = spec.split('/');
  return spec.startsWith('@') ? parts.slice(0, 2).join('/') : (parts[0] as string);
}

const NODE_BUILTINS = new Set(builtinModules);

/** True for a specifier naming a Node built-in (`node:fs`, `fs`, `fs/promises`). */
export function isNodeBuiltin(spec: string): boolean {
  return spec.startsWith('node:') || NODE_BUILTINS.has(packageName(spec));
}
