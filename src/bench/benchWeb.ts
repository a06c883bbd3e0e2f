/**
 * `npm run bench:web`: training tokens/s of the web training worker — the bundle VS Code for
 * the web starts, in headless Chromium, on one thread in a page that is not cross-origin
 * isolated and on two (a helper Web Worker on shared memory) in a page served with COOP/COEP —
 * beside Node's training worker (the desktop extension's) on one thread and on two, all four
 * training the same run: a built-in task's default run, seeded, so every one does the same
 * work. The runs alternate, Node then web, round after round, so a machine's drifting speed
 * reaches both sides alike; each figure is tokens/s over the warm steps with median, min and
 * max over ten windows of them.
 *
 * Leaves out: building the bundles and the page (scripts/benchWeb.mjs) and the engine's own
 * measurements (bench.ts).
 */

import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Browser } from 'playwright-core';
import { chromium } from 'playwright-core';
import { NODE_FS } from '../lab/files/fs.node';
import { trainSpecOf } from '../lab/runs/runSpec';
import { TrainingWorker } from '../lab/workers/trainingClient';
import { startNodeWorker } from '../lab/workers/startWorker.node';
import type { TaskName } from '../protocol/data';
import { formatCount } from '../common/format';
import type { PageRun } from './webTrainPage';
import type { WorkerTraining } from './workerTraining';
import { trainInWorker } from './workerTraining';

/** Where a run trained. */
export type WebBenchWhere = 'node' | 'web' | 'web-isolated';

/** Options of {@link runWebBench}. */
export interface WebBenchOptions {
  readonly task: TaskName;
  readonly steps: number;
  /** Rounds of the four runs. */
  readonly rounds: number;
  /** Chromium's executable. */
  readonly chromium: string;
  /** dist/worker.js: Node's training worker. */
  readonly nodeWorker: string;
  /** The text of dist/web/trainingWorker.js. */
  readonly webWorkerSource: string;
  /** The bundled webTrainPage.ts (a classic script). */
  readonly pageScript: string;
  /** Called with one line per finished run. */
  readonly onProgress?: (line: string) => void;
}

/** One run of the benchmark. */
export interface WebBenchRun {
  readonly where: WebBenchWhere;
  readonly round: number;
  /** Helper threads asked for (the run's `threads` says what it got). */
  readonly helpers: number;
  readonly run: WorkerTraining;
}

/** Everything {@link runWebBench} measured. */
export interface WebBenchResult {
  readonly task: TaskName;
  readonly steps: number;
  readonly machine: { readonly cpu: string; readonly cores: number; readonly node: string; readonly chromium: string };
  readonly runs: readonly WebBenchRun[];
}

const ORIGIN = 'https://bench.attention-lab.test';
const ISOLATION = { 'Cross-Origin-Opener-Policy': 'same-origin', 'Cross-Origin-Embedder-Policy': 'require-corp' };

/** One run in Node's training worker, into a temporary folder it removes after. */
async function trainOnNode(o: WebBenchOptions, helpers: number): Promise<WorkerTraining> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'al-bench-web-'));
  try {
    const worker = new TrainingWorker(startNodeWorker(o.nodeWorker, 'training worker'));
    return await trainInWorker(
      worker,
      NODE_FS,
      path.join(dir, 'run'),
      trainSpecOf({ kind: 'task', task: o.task }, { steps: o.steps }),
      helpers,
    );
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** One run in a fresh page (served with COOP/COEP when `isolated`) playing the web extension host. */
async function trainOnWeb(browser: Browser, o: WebBenchOptions, isolated: boolean, helpers: number): Promise<PageRun> {
  const page = await browser.newPage();
  try {
    const html = `<!DOCTYPE html><html><body><script>${o.pageScript}</script></body></html>`;
    await page.route(`${ORIGIN}/**`, (r) =>
      r.fulfill({ status: 200, contentType: 'text/html', headers: isolated ? ISOLATION : {}, body: html }),
    );
    await page.goto(`${ORIGIN}/`);
    return await page.evaluate(
      ([source, task, h, steps]) =>
        (
          globalThis as unknown as { trainInPage: (s: string, t: string, h: number, n: number) => Promise<PageRun> }
        ).trainInPage(source, task, h, steps),
      [o.webWorkerSource, o.task, helpers, o.steps] as const,
    );
  } finally {
    await page.close();
  }
}

/** One line about a finished run. */
function progressLine(r: WebBenchRun): string {
  const { run } = r;
  const end = run.outcome.kind === 'finished' ? run.outcome.reason : `failed: ${run.outcome.error.message}`;
  return (
    `${r.where} round ${r.round}: ${run.threads ?? '?'} thread(s), ` +
    `${formatCount(run.tokensPerSec)} tokens/s, ${end}`
  );
}

/** Runs the benchmark: each round Node on one thread, the web on one, Node on two, the web isolated on two. */
export async function runWebBench(o: WebBenchOptions): Promise<WebBenchResult> {
  const browser = await chromium.launch({
    executablePath: o.chromium,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  const runs: WebBenchRun[] = [];
  const add = (r: WebBenchRun): void => {
    runs.push(r);
    o.onProgress?.(progressLine(r));
  };
  try {
    for (let round = 1; round <= o.rounds; round++) {
      add({ where: 'node', round, helpers: 0, run: await trainOnNode(o, 0) });
      add({ where: 'web', round, helpers: 0, run: await trainOnWeb(browser, o, false, 0) });
      add({ where: 'node', round, helpers: 1, run: await trainOnNode(o, 1) });
      add({ where: 'web-isolated', round, helpers: 1, run: await trainOnWeb(browser, o, true, 1) });
    }
    return {
      task: o.task,
      steps: o.steps,
      machine: {
        cpu: os.cpus()[0]?.model ?? 'unknown CPU',
        cores: os.availableParallelism(),
        node: process.versions.node,
        chromium: browser.version(),
      },
      runs,
    };
  } finally {
    await browser.close();
  }
}

const WHERE: Readonly<Record<WebBenchWhere, string>> = {
  node: "Node's worker thread (desktop)",
  web: 'Web Worker, page not isolated',
  'web-isolated': 'Web Worker, COOP/COEP page',
};

/**
 * The result as a table: one row per run, tokens/s with the windows' median (min–max), and the ratio to Node on the
 * same threads in the same round.
 */
export function formatWebBench(r: WebBenchResult): string {
  const lines = [
    `Training tokens/s, the ${r.task} task's default run for ${r.steps} steps (steps after the ` +
      `first tenth; median and min–max over ten windows)`,
    `${r.machine.cpu}, ${r.machine.cores} cores; Node ${r.machine.node}, Chromium ${r.machine.chromium}`,
    '',
    `${'where'.padEnd(32)}${'round'.padStart(6)}${'threads'.padStart(9)}${'tokens/s'.padStart(11)}  ` +
      ` ${'windows'.padEnd(24)}${'vs Node'.padStart(8)}  exact match`,
  ];
  for (const x of r.runs) {
    const node = r.runs.find((n) => n.where === 'node' && n.round === x.round && n.helpers === x.helpers);
    const ratio =
      x.where !== 'node' && node && node.run.tokensPerSec > 0
        ? `${(x.run.tokensPerSec / node.run.tokensPerSec).toFixed(2)}×`
        : '';
    const w = x.run.windows;
    const windows = w ? `${formatCount(w.median)} (${formatCount(w.min)}–${formatCount(w.max)})` : '—';
    const failed = x.run.outcome.kind === 'failed' ? `  failed: ${x.run.outcome.error.message}` : '';
    lines.push(
      `${WHERE[x.where].padEnd(32)}${String(x.round).padStart(6)}` +
        `${String(x.run.threads ?? '?').padStart(9)}` +
        `${formatCount(x.run.tokensPerSec).padStart(11)}   ` +
        `${windows.padEnd(24)}${ratio.padStart(8)}  ` +
        `${x.run.exactMatch === null ? '—' : x.run.exactMatch.toFixed(3)}` +
        `${failed}`,
    );
  }
  return lines.join('\n');
}
