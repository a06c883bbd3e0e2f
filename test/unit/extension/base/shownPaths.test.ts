/**
 * No raw URI in what the extension tells people: every notification (`show…Message`,
 * `showError`) that quotes a path of the lab (a run folder, an export folder, a chosen URI)
 * passes it through `shownPath` (or names only its base name), so the web host's
 * `vscode-remote://127.0.0.1:PORT/…` reads as `/…`. `showError` itself rewrites the URI roots
 * of a lab error's message (`shownPathsIn`). A source scan, since these messages are built
 * inside commands that need VS Code to run.
 */

import { readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(__dirname, '../../../../src/extension');

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(path.join(dir, e.name)) : e.name.endsWith('.ts') ? [path.join(dir, e.name)] : [],
  );
}

/** The first argument of every message call in `src`, with the line it starts on. */
function messages(src: string): { line: number; text: string }[] {
  const out: { line: number; text: string }[] = [];
  const call = /\b(?:show(?:Information|Warning|Error)Message|showError)\(\s*(?:s\.log,\s*|log,\s*)?`/g;
  for (let m = call.exec(src); m; m = call.exec(src)) {
    let i = m.index + m[0].length;
    let depth = 0;
    for (; i < src.length; i++) {
      const c = src[i];
      if (c === '\\') i++;
      else if (c === '$' && src[i + 1] === '{') depth++;
      else if (c === '}' && depth > 0) depth--;
      else if (c === '`' && depth === 0) break;
    }
    out.push({ line: src.slice(0, m.index).split('\n').length, text: src.slice(m.index + m[0].length, i) });
  }
  return out;
}

/** An interpolation that names a path (a folder, a file, a URI) without showing it as a person reads it. */
const PATHISH = /\b(?:runDir|dir|target|out|root|from|file|abs|source|uri|path)\b(?![.(\w])|toString\(/;
const SHOWN =
  /^(?:shownPath|shownPathsIn|fs\.basename|s\.host\.fs\.basename|basename|vscode\.workspace\.asRelativePath)\(/;

function rawPaths(text: string): string[] {
  const raw: string[] = [];
  const expr = /\$\{((?:[^{}]|\{[^{}]*\})*)\}/g;
  for (let m = expr.exec(text); m; m = expr.exec(text)) {
    const e = (m[1] as string).trim();
    if (PATHISH.test(e) && !SHOWN.test(e)) raw.push(e);
  }
  return raw;
}

describe('paths in the messages of the extension', () => {
  it('finds the messages it scans (the scan itself works)', () => {
    const all = files(ROOT).flatMap((f) => messages(readFileSync(f, 'utf8')));
    expect(all.length).toBeGreaterThan(20);
    expect(rawPaths('Exported ${run.name} into ${dir} (weights)')).toEqual(['dir']);
    expect(rawPaths('${run.name} is in ${shownPath(run.runDir)}.')).toEqual([]);
  });

  it('quotes every path as a person reads it', () => {
    const found = files(ROOT).flatMap((f) =>
      messages(readFileSync(f, 'utf8')).flatMap((m) =>
        rawPaths(m.text).map((e) => `${path.relative(ROOT, f)}:${m.line}: \${${e}}`),
      ),
    );
    expect(found).toEqual([]);
  });

  it('showError rewrites the URI roots of any message it shows', () => {
    const src = readFileSync(path.join(ROOT, 'base/errors.ts'), 'utf8');
    expect(src).toMatch(/const shown = shownPathsIn\(message\);[\s\S]*showErrorMessage\(shown,/);
  });
});
