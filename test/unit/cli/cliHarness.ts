/**
 * Runs the built `attention-lab` binary (dist/cli.js, built by `npm run build`, which
 * `npm test` runs first) in a child process, as users run it.
 */

import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

export const CLI = path.resolve(__dirname, '../../../dist/cli.js');

/** Result of one CLI invocation. */
export interface CliResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs the CLI synchronously in `cwd`. */
export function cli(args: readonly string[], cwd: string, timeoutMs = 120_000): CliResult {
  if (!fs.existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npm run build\` first`);
  const r = spawnSync(process.execPath, [CLI, ...args], {
    cwd,
    encoding: 'utf8',
    timeout: timeoutMs,
    env: { ...process.env, NO_COLOR: '1' },
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** Runs the CLI asynchronously (so a test can kill it). */
export function cliAsync(
  args: readonly string[],
  cwd: string,
): { child: ReturnType<typeof spawn>; done: Promise<CliResult> } {
  const child = spawn(process.execPath, [CLI, ...args], { cwd, env: { ...process.env, NO_COLOR: '1' } });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const done = new Promise<CliResult>((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
  return { child, done };
}

/** A fresh temporary folder, removed by the returned cleanup. */
export function tempDir(prefix = 'attention-lab-test-'): { dir: string; cleanup: () => void } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  return { dir, cleanup: () => fs.rmSync(dir, { recursive: true, force: true }) };
}

/** Every file under `dir` with its bytes, for "nothing was damaged" checks. */
export function snapshotTree(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (d: string): void => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else out.set(path.relative(dir, p), fs.readFileSync(p).toString('base64'));
    }
  };
  walk(dir);
  return out;
}

/** Small, fast training flags for tests. */
export const FAST = [
  '--backend',
  'reference',
  '--set',
  'dModel=16',
  '--set',
  'nHeads=2',
  '--set',
  'dFF=32',
  '--set',
  'nEncoderLayers=1',
  '--set',
  'nDecoderLayers=1',
  '--batch',
  '8',
  '--seq',
  '16',
];

/** Fast flags for a decoder-only model on documents. */
export const FAST_DEC = [
  '--backend',
  'reference',
  '--set',
  'dModel=16',
  '--set',
  'nHeads=2',
  '--set',
  'dFF=32',
  '--set',
  'nDecoderLayers=1',
  '--batch',
  '4',
  '--seq',
  '16',
];

/** Lines of a run's metrics.jsonl of one type. */
export function metricLines(runDir: string, type: 'step' | 'eval'): Record<string, number>[] {
  return fs
    .readFileSync(path.join(runDir, 'metrics.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, number> & { type: string })
    .filter((l) => (l as unknown as { type: string }).type === type);
}
