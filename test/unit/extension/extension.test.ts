import { readFileSync, readdirSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(__dirname, '../../..');
const read = (f: string): string => readFileSync(path.join(ROOT, f), 'utf8');

function sources(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir)).flatMap((name) => {
    const rel = path.join(dir, name);
    if (statSync(path.join(ROOT, rel)).isDirectory()) return sources(rel);
    return rel.endsWith('.ts') ? [rel] : [];
  });
}

const importsVscode = (src: string): boolean => /from ['"]vscode['"]|require\(['"]vscode['"]\)/.test(src);

describe('layering of the extension', () => {
  it('keeps vscode out of the engine, the lab (its workers included), the protocol and the common helpers', () => {
    const pure = [
      ...sources('src/engine'),
      ...sources('src/lab'),
      ...sources('src/protocol'),
      ...sources('src/common'),
    ];
    expect(pure.length).toBeGreaterThan(50);
    expect(pure.filter((f) => importsVscode(read(f)))).toEqual([]);
  });

  it('builds an activation bundle without the engine, and worker bundles without vscode', () => {
    // Built by `npm run build` (npm test builds first).
    const main = read('dist/extension.js');
    expect(main).toMatch(/require\("vscode"\)/);
    // An engine message that survives minification marks the engine's presence.
    const engineMarker = 'is not divisible by nHeads';
    expect(main).not.toContain(engineMarker);
    expect(main).toMatch(/extensionLab\.js/);
    for (const f of ['dist/extensionLab.js', 'dist/modelWorker.js']) {
      const code = read(f);
      expect(code, f).not.toMatch(/require\("vscode"\)/);
      expect(code, f).toContain(engineMarker);
    }
  });
});
