/**
 * Entry of `npm run bench:web` (bundled to dist/benchWeb.js by scripts/benchWeb.mjs, which
 * passes the bundles' paths): parses the options, runs benchWeb.ts and prints the table (or
 * the JSON object with --json) to stdout, progress to stderr.
 * argv: --node-worker FILE --web-worker FILE --page FILE [--task reverse] [--steps 500]
 * [--rounds 1] [--chromium /usr/bin/chromium] [--json].
 *
 * Leaves out: the measurements (benchWeb.ts).
 */

import * as fs from 'node:fs';
import type { TaskName } from '../protocol/data';
import { TASK_NAMES } from '../protocol/data';
import { formatWebBench, runWebBench } from './benchWeb';

function option(argv: readonly string[], name: string, fallback?: string): string {
  const i = argv.indexOf(name);
  const v = i >= 0 ? argv[i + 1] : fallback;
  if (v === undefined) throw new Error(`${name} is required`);
  return v;
}

function count(argv: readonly string[], name: string, fallback: string): number {
  const n = Number(option(argv, name, fallback));
  if (!Number.isInteger(n) || n < 1) throw new Error(`${name} takes a whole number of at least 1`);
  return n;
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const task = option(argv, '--task', 'reverse') as TaskName;
  if (!TASK_NAMES.includes(task)) throw new Error(`--task ${task}: use one of ${TASK_NAMES.join(', ')}`);
  const chromium = option(argv, '--chromium', process.env.CHROMIUM ?? '/usr/bin/chromium');
  if (!fs.existsSync(chromium))
    throw new Error(`${chromium} is missing: apt-get install -y chromium, or name one with --chromium`);
  const r = await runWebBench({
    task,
    steps: count(argv, '--steps', '500'),
    rounds: count(argv, '--rounds', '1'),
    chromium,
    nodeWorker: option(argv, '--node-worker'),
    webWorkerSource: fs.readFileSync(option(argv, '--web-worker'), 'utf8'),
    pageScript: fs.readFileSync(option(argv, '--page'), 'utf8'),
    onProgress: (line) => process.stderr.write(`${line}\n`),
  });
  process.stdout.write(argv.includes('--json') ? `${JSON.stringify(r, null, 2)}\n` : `${formatWebBench(r)}\n`);
}

main().catch((e: unknown) => {
  process.stderr.write(`${e instanceof Error ? e.message : String(e)}\n`);
  process.exitCode = 1;
});
