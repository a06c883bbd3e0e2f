/**
 * The layers of docs/ARCHITECTURE.md, enforced: every import of every .ts file under src/ and webview/
 * (static, type-only, re-exports, dynamic `import()` and `require`) must point down or stay
 * inside its own layer, and no two source files may import each other in a cycle. A
 * violation is reported as `file: imports X (layer A may not import layer B)`.
 *
 * Layers, top to bottom, and what each may import besides itself:
 *   extension  lab, engine, protocol, common, vscode, Node built-ins (not cli or bench: sibling front doors)
 *   cli        bench, lab, engine, protocol, common, Node built-ins
 *   bench      lab, engine, protocol, common, Node built-ins, the dev-only TF.js packages and
 *              playwright-core (the web benchmark drives Chromium)
 *   lab        engine, protocol, common, Node built-ins, its runtime packages (ignore, tinyglobby,
 *              @huggingface/tokenizers, @huggingface/jinja, and webgpu: Dawn's optional native binding,
 *              opened only by lab/platform/webgpu.node.ts)
 *   common     protocol (src/common/: the helpers every side of the wire shares — the
 *              typed-array codec of the wire, the one way numbers are printed, the one CSV
 *              writer — so the dashboard, the extension and the CLI agree)
 *   protocol   nothing (src/protocol/: the message vocabulary, one file per channel)
 *   engine     nothing outside src/engine: no vscode, no node: modules, no packages
 *   webview    protocol, common, and uplot (the charts)
 * Inside a layer, FLOORS orders its folders bottom to top: a file may import its own folder and
 * lower floors only, files directly in the layer's root sit above every floor (a floor file may
 * not import them), and every folder of such a layer needs a floor. A violation is reported as
 * `file: imports X (folder a sits below folder b in layer L)`.
 * Node globals (`Buffer`, `process`) are the engine tsconfig's job (src/engine/tsconfig.json,
 * which has no Node types), not this test's.
 *
 * Leaves out: the files' contents beyond their import specifiers (a regex over statements
 * that start a line, not a parser: the TypeScript of this repo has no compiler API).
 */

import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, importSpecifiers, isNodeBuiltin, packageName, readSource, sourceFiles } from './importGraph';

type Layer = 'extension' | 'cli' | 'bench' | 'lab' | 'common' | 'protocol' | 'engine' | 'webview';

/** Project layers each layer may import (itself included). */
const MAY_IMPORT: Readonly<Record<Layer, readonly Layer[]>> = {
  extension: ['extension', 'lab', 'engine', 'protocol', 'common'],
  cli: ['cli', 'bench', 'lab', 'engine', 'protocol', 'common'],
  bench: ['bench', 'lab', 'engine', 'protocol', 'common'],
  lab: ['lab', 'engine', 'protocol', 'common'],
  common: ['common', 'protocol'],
  protocol: ['protocol'],
  engine: ['engine'],
  webview: ['webview', 'protocol', 'common'],
};

/** Outside modules each layer may import: 'node' stands for every Node built-in. */
const MAY_USE: Readonly<Record<Layer, readonly string[]>> = {
  extension: ['node', 'vscode'],
  cli: ['node'],
  bench: ['node', '@tensorflow/tfjs-core', '@tensorflow/tfjs-backend-wasm', 'playwright-core'],
  lab: ['node', 'ignore', 'tinyglobby', 'webgpu', '@huggingface/tokenizers', '@huggingface/jinja'],
  protocol: [],
  common: [],
  engine: [],
  webview: ['uplot'],
};

/** Folders of a layer, bottom floor first: a file may import its own folder and lower floors only; files directly in the layer's root sit above every floor. */
const FLOORS: Partial<Record<Layer, readonly string[]>> = {
  extension: ['base', 'host', 'workers', 'runs', 'training', 'configure', 'commands', 'dashboard'],
  lab: [
    'base',
    'files',
    'platform',
    'runs',
    'data',
    'inference',
    'evaluation',
    'interop',
    'training',
    'pytorch',
    'workers',
    'editor',
  ],
};

/** The layer of a repository-relative path, or null for a file outside every layer. */
function layerOf(rel: string): Layer | null {
  if (rel.startsWith('webview/')) return 'webview';
  const m = /^src\/(extension|cli|bench|lab|protocol|common|engine)\//.exec(rel);
  return m ? (m[1] as Layer) : null;
}

/** The repository-relative .ts file a relative specifier names (or the bare path when it is not .ts). */
function resolveRelative(from: string, spec: string): string {
  const base = path.posix.normalize(path.posix.join(path.posix.dirname(from), spec));
  for (const c of [`${base}.ts`, `${base}/index.ts`]) if (fs.existsSync(path.join(ROOT, c))) return c;
  return base;
}

/** Every layering violation among `files`, one line each. */
function layerViolations(files: readonly string[], read: (rel: string) => string): string[] {
  const problems: string[] = [];
  for (const file of files) {
    const from = layerOf(file);
    if (!from) {
      problems.push(
        `${file}: belongs to no layer (put it under src/{engine,common,protocol,lab,bench,cli,extension}/ or webview/)`,
      );
      continue;
    }
    for (const spec of importSpecifiers(read(file))) {
      if (spec.startsWith('.')) {
        const target = resolveRelative(file, spec);
        const to = layerOf(target);
        if (to === null)
          problems.push(`${file}: imports ${spec} (layer ${from} may not import ${target}, which is in no layer)`);
        else if (!MAY_IMPORT[from].includes(to))
          problems.push(`${file}: imports ${spec} (layer ${from} may not import layer ${to})`);
        continue;
      }
      const isNode = isNodeBuiltin(spec);
      const allowed = isNode ? MAY_USE[from].includes('node') : MAY_USE[from].includes(packageName(spec));
      if (!allowed)
        problems.push(
          `${file}: imports ${spec} (layer ${from} may not import ${isNode ? 'Node built-ins' : `the package ${packageName(spec)}`})`,
        );
    }
  }
  return problems;
}

/** The folder of `layer` a repository-relative path is in, or null for a file directly in the layer's root. */
function folderOf(layer: Layer, rel: string): string | null {
  const parts = rel.slice(layerRoot(layer).length + 1).split('/');
  return parts.length > 1 ? (parts[0] as string) : null;
}

/** The directory a layer's files live under. */
function layerRoot(layer: Layer): string {
  return layer === 'webview' ? 'webview' : `src/${layer}`;
}

/** Every import among `files` that goes up or sideways between the floors of a layer (`floors`), one line each. */
function floorViolations(
  files: readonly string[],
  read: (rel: string) => string,
  floors: Partial<Record<Layer, readonly string[]>> = FLOORS,
): string[] {
  const problems: string[] = [];
  for (const file of files) {
    const layer = layerOf(file);
    const order = layer ? floors[layer] : undefined;
    if (!layer || !order) continue;
    const from = folderOf(layer, file);
    if (from !== null && !order.includes(from)) {
      problems.push(`${file}: is in folder ${from}, which has no floor in layer ${layer} (add it to FLOORS)`);
      continue;
    }
    for (const spec of importSpecifiers(read(file))) {
      if (!spec.startsWith('.')) continue;
      const target = resolveRelative(file, spec);
      if (layerOf(target) !== layer) continue;
      const to = folderOf(layer, target);
      if (from === null || to === from) continue;
      if (to === null)
        problems.push(
          `${file}: imports ${spec} (${path.posix.basename(target)} sits above every floor in layer ${layer})`,
        );
      else if (!order.includes(to))
        problems.push(`${file}: imports ${spec} (folder ${to} has no floor in layer ${layer}; add it to FLOORS)`);
      else if (order.indexOf(from) < order.indexOf(to))
        problems.push(`${file}: imports ${spec} (folder ${from} sits below folder ${to} in layer ${layer})`);
    }
  }
  return problems;
}

/** Import cycles among `files` (relative imports only), each as `a → b → … → a`. */
function importCycles(files: readonly string[], read: (rel: string) => string): string[] {
  const known = new Set(files);
  const edges = new Map<string, string[]>();
  for (const f of files) {
    const targets = importSpecifiers(read(f))
      .filter((s) => s.startsWith('.'))
      .map((s) => resolveRelative(f, s))
      .filter((t) => known.has(t));
    edges.set(f, [...new Set(targets)]);
  }
  const cycles: string[] = [];
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (f: string): void => {
    state.set(f, 'open');
    stack.push(f);
    for (const t of edges.get(f) ?? []) {
      if (state.get(t) === 'open') cycles.push([...stack.slice(stack.indexOf(t)), t].join(' → '));
      else if (!state.has(t)) visit(t);
    }
    stack.pop();
    state.set(f, 'done');
  };
  for (const f of files) if (!state.has(f)) visit(f);
  return cycles;
}

describe('layers (imports point down only)', () => {
  const files = [...sourceFiles('src'), ...sourceFiles('webview')];
  const read = readSource;

  it('finds the files and their imports', () => {
    expect(files.length).toBeGreaterThan(100);
    expect(
      importSpecifiers(
        "import type { A } from '../a';\nexport { b } from './b';\nimport './c.css';\nconst d = require('node:fs');\ntype E = typeof import('./e');",
      ),
    ).toEqual(['../a', './b', './c.css', './e', 'node:fs']);
  });

  it('has no import that goes up or sideways', () => {
    expect(layerViolations(files, read)).toEqual([]);
  });

  it('keeps every import inside a layer on its own floor or a lower one, and every folder on a floor', () => {
    expect(floorViolations(files, read)).toEqual([]);
    for (const [layer, order] of Object.entries(FLOORS) as [Layer, readonly string[]][]) {
      const folders = fs
        .readdirSync(path.join(ROOT, layerRoot(layer)), { withFileTypes: true })
        .filter((e) => e.isDirectory())
        .map((e) => e.name);
      expect([...order].sort(), `the floors of ${layer} are its folders`).toEqual(folders.sort());
    }
  });

  it('reports an extension folder that imports a higher or a sideways one, or the root files above every floor', () => {
    const fake: Record<string, string> = {
      'src/extension/runs/r.ts':
        "import { decodeCommand } from '../commands/decodeCommand';\nimport type { Services } from '../services';\nimport { Emitter } from '../base/emitter';",
      'src/extension/workers/w.ts':
        "import type { ExtensionHost } from '../host/extensionHost';\nimport { x } from './x';",
      'src/extension/host/h.ts': "import type { ModelClient } from '../workers/modelClient';",
      'src/extension/activation.ts': "import { registerCommands } from './commands/commands';",
      'src/extension/commands/c.ts': "import { openRunCommand } from '../runs/runActions';",
    };
    expect(floorViolations(Object.keys(fake), (f) => fake[f] as string)).toEqual([
      'src/extension/runs/r.ts: imports ../commands/decodeCommand (folder runs sits below folder commands in layer extension)',
      'src/extension/runs/r.ts: imports ../services (services.ts sits above every floor in layer extension)',
      'src/extension/host/h.ts: imports ../workers/modelClient (folder host sits below folder workers in layer extension)',
    ]);
  });

  it('reports a folder missing from the floors table, in any layer the table lists', () => {
    const fake: Record<string, string> = {
      'src/extension/panels/p.ts': "import { Emitter } from '../base/emitter';",
      'src/extension/base/b.ts': "import { Panel } from '../panels/p';",
      'src/lab/runs/q.ts': "import { readRun } from '../files/x';\nimport { w } from '../workers/w';",
      'src/lab/files/x.ts': "import { openRun } from '../runs/openRun';",
    };
    const floors = { extension: FLOORS.extension ?? [], lab: ['runs', 'files'] };
    expect(floorViolations(Object.keys(fake), (f) => fake[f] as string, floors)).toEqual([
      'src/extension/panels/p.ts: is in folder panels, which has no floor in layer extension (add it to FLOORS)',
      'src/extension/base/b.ts: imports ../panels/p (folder panels has no floor in layer extension; add it to FLOORS)',
      'src/lab/runs/q.ts: imports ../files/x (folder runs sits below folder files in layer lab)',
      'src/lab/runs/q.ts: imports ../workers/w (folder workers has no floor in layer lab; add it to FLOORS)',
    ]);
  });

  it('reports a lab folder that imports a higher floor, and a folder missing from the table', () => {
    const fake: Record<string, string> = {
      'src/lab/runs/a.ts':
        "import { runSession } from '../training/session';\nimport { RUN_FILES } from './runFolder';",
      'src/lab/files/b.ts':
        "import type { LabPlatform } from '../platform/platform';\nimport { yieldToEvents } from '../base/yieldToEvents';",
      'src/lab/training/c.ts':
        "import { readRunJson } from '../runs/runFolder';\nimport { corpus } from '../data/corpus';",
      'src/lab/gadgets/d.ts': "import { readRunJson } from '../runs/runFolder';",
      'src/lab/runs/e.ts':
        "export { openRun } from '../inference/openRun';\nconst w = require('../workers/trainingClient');",
    };
    expect(floorViolations(Object.keys(fake), (f) => fake[f] as string)).toEqual([
      'src/lab/runs/a.ts: imports ../training/session (folder runs sits below folder training in layer lab)',
      'src/lab/files/b.ts: imports ../platform/platform (folder files sits below folder platform in layer lab)',
      'src/lab/gadgets/d.ts: is in folder gadgets, which has no floor in layer lab (add it to FLOORS)',
      'src/lab/runs/e.ts: imports ../inference/openRun (folder runs sits below folder inference in layer lab)',
      'src/lab/runs/e.ts: imports ../workers/trainingClient (folder runs sits below folder workers in layer lab)',
    ]);
  });

  it('has no import cycle', () => {
    expect(importCycles(files, read)).toEqual([]);
  });

  it('keeps src/lab and src/extension in rooms: no file at their top but the extension entries (desktop, web), the activation they call and its services', () => {
    const loose = files.filter((f) => /^src\/(lab|extension)\/[^/]+\.ts$/.test(f));
    expect(loose.sort()).toEqual([
      'src/extension/activation.ts',
      'src/extension/extension.ts',
      'src/extension/services.ts',
      'src/extension/webExtension.ts',
    ]);
  });

  it('reports an engine file that reaches into lab or Node, and a webview file that reaches into the engine', () => {
    const fake: Record<string, string> = {
      'src/engine/models/x.ts': "import { openRun } from '../../lab/runs/openRun';\nimport * as fs from 'node:fs';",
      'webview/y.ts': "import type { Backend } from '../src/engine/backend';",
      'src/lab/workers/z.ts': "import * as vscode from 'vscode';\nimport { Services } from '../../extension/services';",
      'src/protocol/w.ts': "import { formatLoss } from '../common/format';",
    };
    expect(layerViolations(Object.keys(fake), (f) => fake[f] as string)).toEqual([
      'src/engine/models/x.ts: imports ../../lab/runs/openRun (layer engine may not import layer lab)',
      'src/engine/models/x.ts: imports node:fs (layer engine may not import Node built-ins)',
      'webview/y.ts: imports ../src/engine/backend (layer webview may not import layer engine)',
      'src/lab/workers/z.ts: imports vscode (layer lab may not import the package vscode)',
      'src/lab/workers/z.ts: imports ../../extension/services (layer lab may not import layer extension)',
      'src/protocol/w.ts: imports ../common/format (layer protocol may not import layer common)',
    ]);
  });
});
