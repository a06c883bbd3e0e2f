/**
 * `npm run format:check` (scripts/format.mjs --check) holds src/ and webview/ to 120 columns:
 * run on a small git folder of its own, it fails naming file:line and width for a planted
 * long comment there, and leaves generated files and folders outside src/ and webview/ alone.
 * The AssemblyScript kernels, which .prettierignore names, are still checked.
 */

import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

const SCRIPT = path.resolve(__dirname, '../../../scripts/format.mjs');
const WIDE = `// ${'x'.repeat(130)}\n`; // 133 columns: Prettier leaves a comment as it is

let dir: string;

function write(file: string, text: string): void {
  fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
  fs.writeFileSync(path.join(dir, file), text);
}

function check(): { code: number | null; out: string } {
  const r = spawnSync(process.execPath, [SCRIPT, '--check'], { cwd: dir, encoding: 'utf8' });
  return { code: r.status, out: r.stdout + r.stderr };
}

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'format-check-'));
  execFileSync('git', ['init', '-q'], { cwd: dir });
  write('.prettierrc.json', JSON.stringify({ printWidth: 120, singleQuote: true }));
  write('src/ok.ts', 'export const a = 1;\n');
  write('src/kernels.generated.ts', WIDE);
  write('test/fixture.test.ts', WIDE);
});

afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('format:check line widths', () => {
  it('passes when only generated files and tests have long lines', () => {
    const r = check();
    expect(r.out).toContain('0 lines wider than 120 columns in src/ and webview/');
    expect(r.code).toBe(0);
  });

  it('fails on a long line in src/ or webview/, naming file, line and width', () => {
    write('src/wide.ts', `export const a = 1;\n${WIDE}`);
    write('webview/panel.css', `/* ${'y'.repeat(118)} */\n`); // 124 columns
    const r = check();
    expect(r.code).toBe(1);
    expect(r.out).toContain('src/wide.ts:2: 133 columns');
    expect(r.out).toContain('webview/panel.css:1: 124 columns');
    expect(r.out).toContain('2 lines wider than 120 columns');
    expect(r.out).not.toContain('generated');
    expect(r.out).not.toContain('fixture');
  });

  it('checks the AssemblyScript kernels that .prettierignore names, @inline and all', () => {
    const kernel = 'src/engine/backends/wasm/assembly/k.ts';
    write('.prettierignore', 'src/engine/backends/wasm/assembly/\n');
    write(kernel, '@inline function one(): i32 {\n  return 1;\n}\n');
    expect(check().code).toBe(0);
    write(kernel, '@inline function one(): i32 { return 1 }\n');
    const r = check();
    expect(r.out).toContain(`${kernel}: not formatted as Prettier formats it`);
    expect(r.code).toBe(1);
  });

  it('allows exactly 120 columns', () => {
    write('src/edge.ts', `// ${'z'.repeat(117)}\n`);
    const r = check();
    expect(r.out).not.toContain('src/edge.ts');
    expect(r.code).toBe(0);
  });
});
