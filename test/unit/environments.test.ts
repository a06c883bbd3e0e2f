/**
 * Node stays out of the web: from each entry the web build bundles (scripts/buildWeb.mjs: the
 * web extension and the two web workers), every file its imports reach, transitively, must be
 * neither a `*.node.ts` file nor one that imports a Node built-in. And the suffix tells the
 * truth: every file under src/lab and src/extension that imports a Node built-in is named
 * `*.node.ts`. A violation is one line naming the file and the chain of imports that reached it.
 *
 * The walk follows what runs: type-only imports (`import type`, `export type … from`,
 * `typeof import()`) are erased by the compiler, so a web file may name a Node module's types
 * (the extension's lab loader types desktop's module that way).
 *
 * Leaves out: the contents of files beyond their import specifiers (the same regex reading as
 * the layers test, test/unit/layers.test.ts); esbuild's own refusal of a `node:` import in a web
 * bundle (scripts/buildWeb.mjs) stays as a second check on what the bundles keep.
 */

import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, importSpecifiers, isNodeBuiltin, readSource, sourceFiles } from './importGraph';

/** The known .ts file a relative specifier names, or null (a non-.ts asset, or nothing). */
function resolveIn(known: ReadonlySet<string>, from: string, spec: string): string | null {
  const base = path.posix.normalize(path.posix.join(path.posix.dirname(from), spec));
  for (const c of [base, `${base}.ts`, `${base}/index.ts`]) if (known.has(c)) return c;
  return null;
}

/**
 * Every Node-only file reachable from `entries` (a `.node.ts` file, or one importing a Node
 * built-in), each reported once with the chain that first reached it.
 */
function nodeReachedFromWeb(
  entries: readonly string[],
  files: readonly string[],
  read: (rel: string) => string,
): string[] {
  const known = new Set(files);
  const problems: string[] = [];
  for (const entry of entries) {
    const via = new Map<string, string | null>([[entry, null]]);
    const queue = [entry];
    const chain = (f: string): string => {
      const names: string[] = [];
      for (let at: string | null = f; at !== null; at = via.get(at) ?? null) names.unshift(at);
      return names.join(' → ');
    };
    while (queue.length > 0) {
      const file = queue.shift() as string;
      if (file.endsWith('.node.ts')) {
        problems.push(`${entry} reaches ${file}, which needs Node (${chain(file)})`);
        continue;
      }
      for (const spec of importSpecifiers(read(file), true)) {
        if (isNodeBuiltin(spec)) {
          problems.push(`${entry} reaches ${file}, which imports ${spec} (${chain(file)})`);
          continue;
        }
        if (!spec.startsWith('.')) continue;
        const target = resolveIn(known, file, spec);
        if (target === null || via.has(target)) continue;
        via.set(target, file);
        queue.push(target);
      }
    }
  }
  return problems;
}

/** Files under src/lab and src/extension that import a Node built-in but are not named `*.node.ts`. */
function unsuffixedNodeFiles(files: readonly string[], read: (rel: string) => string): string[] {
  return files
    .filter((f) => /^src\/(lab|extension)\//.test(f) && !f.endsWith('.node.ts'))
    .flatMap((f) => {
      const spec = importSpecifiers(read(f)).find(isNodeBuiltin);
      return spec === undefined ? [] : [`${f}: imports ${spec}, so its name must end in .node.ts`];
    });
}

/** The entry points scripts/buildWeb.mjs bundles for the browser. */
function webEntries(): string[] {
  const script = fs.readFileSync(path.join(ROOT, 'scripts/buildWeb.mjs'), 'utf8');
  return [...script.matchAll(/entryPoints:\s*\[\s*'([^']+)'/g)].map((m) => m[1] as string);
}

describe('environments (Node code stays out of the web, and says so in its name)', () => {
  const files = [...sourceFiles('src'), ...sourceFiles('webview')];
  const read = readSource;

  it('knows the web entries the web build bundles', () => {
    expect(webEntries().sort()).toEqual([
      'src/extension/webExtension.ts',
      'src/lab/workers/modelWorker.web.ts',
      'src/lab/workers/trainingWorker.web.ts',
    ]);
  });

  it('reaches no .node.ts file and no Node built-in from a web entry', () => {
    expect(nodeReachedFromWeb(webEntries(), files, read)).toEqual([]);
  });

  it('names every lab and extension file that imports a Node built-in *.node.ts', () => {
    expect(unsuffixedNodeFiles(files, read)).toEqual([]);
  });

  it('reports a .node.ts file and a Node import reached from a web entry, with the chain', () => {
    const fake: Record<string, string> = {
      'src/lab/workers/w.web.ts':
        "import { a } from '../runs/a';\nimport { c } from '../data/c';\nimport type { D } from '../data/d.node';\ntype E = typeof import('../data/e.node');",
      'src/lab/runs/a.ts': "import { b } from '../files/b.node';\nimport { a2 } from './a';",
      'src/lab/files/b.node.ts': "import * as fs from 'node:fs';",
      'src/lab/data/c.ts': "const os = require('os');",
      'src/lab/data/d.node.ts': "import * as fs from 'node:fs';",
      'src/lab/data/e.node.ts': "import * as fs from 'node:fs';",
    };
    expect(nodeReachedFromWeb(['src/lab/workers/w.web.ts'], Object.keys(fake), (f) => fake[f] as string)).toEqual([
      'src/lab/workers/w.web.ts reaches src/lab/data/c.ts, which imports os (src/lab/workers/w.web.ts → src/lab/data/c.ts)',
      'src/lab/workers/w.web.ts reaches src/lab/files/b.node.ts, which needs Node (src/lab/workers/w.web.ts → src/lab/runs/a.ts → src/lab/files/b.node.ts)',
    ]);
  });

  it('reports a lab or extension file that imports Node without the suffix', () => {
    const fake: Record<string, string> = {
      'src/lab/files/disk.ts': "import { promises } from 'node:fs';",
      'src/lab/files/disk.node.ts': "import { promises } from 'node:fs';",
      'src/extension/host/spawn.ts': "const cp = require('child_process');",
      'src/cli/main.ts': "import * as path from 'node:path';",
      'src/lab/data/pure.ts': "import { x } from './x';",
    };
    expect(unsuffixedNodeFiles(Object.keys(fake), (f) => fake[f] as string)).toEqual([
      'src/lab/files/disk.ts: imports node:fs, so its name must end in .node.ts',
      'src/extension/host/spawn.ts: imports child_process, so its name must end in .node.ts',
    ]);
  });
});
