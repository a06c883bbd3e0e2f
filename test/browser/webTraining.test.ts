/**
 * The web training worker (dist/web/trainingWorker.js, the bundle VS Code's web extension
 * host starts) in headless Chromium: a page plays the host (src/bench/webTrainPage.ts:
 * the worker started from a `blob:` URL, its files answered from memory playing `workspace.fs`) and trains the
 * reverse task's default run. It learns — exact match ≥ 99% on held-out pairs — on one
 * thread in a page that is not cross-origin isolated (the worker says why one), and on two
 * threads (the worker and one helper Web Worker on shared memory) in a page served with
 * COOP/COEP.
 *
 * Leaves out: the extension around the worker (the e2e suite's web hosts) and speed (`npm run bench:web`).
 */

import * as fs from 'node:fs';
import * as path from 'node:path';
import { build } from 'esbuild';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HAS_CHROMIUM, ROOT, SKIP_REASON, launchBrowser } from './harness';
import type { PageRun } from '../../src/bench/webTrainPage';
import { LOG_PART } from '../../src/lab/files/logParts';

if (!HAS_CHROMIUM) console.warn(SKIP_REASON);

const ORIGIN = 'https://lab.test';
const ISOLATION = { 'Cross-Origin-Opener-Policy': 'same-origin', 'Cross-Origin-Embedder-Policy': 'require-corp' };

let browser: Browser;
let pageScript = '';
let workerSource = '';

async function openPage(isolated: boolean): Promise<Page> {
  const page = await browser.newPage();
  page.on('pageerror', (e) => {
    throw e;
  });
  await page.route(`${ORIGIN}/**`, (r) =>
    r.fulfill({
      status: 200,
      contentType: 'text/html',
      headers: isolated ? ISOLATION : {},
      body: `<!DOCTYPE html><html><body><script>${pageScript}</script></body></html>`,
    }),
  );
  await page.goto(`${ORIGIN}/`);
  return page;
}

/** Trains in the page; also counts the most workers the page had at once (the training worker and its helpers, nested ones included). */
async function train(page: Page, helpers?: number): Promise<PageRun & { workers: number }> {
  let workers = 0;
  let done = false;
  const run = page.evaluate(
    ([src, h]) =>
      (globalThis as unknown as { trainInPage: (s: string, t: string, h?: number) => Promise<PageRun> }).trainInPage(
        src,
        'reverse',
        h ?? undefined,
      ),
    [workerSource, helpers ?? null] as const,
  );
  void run.finally(() => (done = true));
  while (!done) {
    workers = Math.max(workers, page.workers().length);
    await new Promise((r) => setTimeout(r, 200));
  }
  return { ...(await run), workers };
}

describe.skipIf(!HAS_CHROMIUM)('the web training worker in Chromium', () => {
  beforeAll(async () => {
    const bundle = path.join(ROOT, 'dist/web/trainingWorker.js');
    if (!fs.existsSync(bundle)) throw new Error(`${bundle} is missing; run \`npm run build\` first.`);
    workerSource = fs.readFileSync(bundle, 'utf8');
    const out = await build({
      entryPoints: [path.join(ROOT, 'src/bench/webTrainPage.ts')],
      bundle: true,
      platform: 'browser',
      format: 'iife',
      target: ['chrome114'],
      write: false,
      logLevel: 'warning',
    });
    pageScript = out.outputFiles[0]?.text ?? '';
    browser = await launchBrowser();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
  });

  it('learns the reverse task on one thread where the page is not cross-origin isolated, and says why one', async () => {
    const page = await openPage(false);
    const r = await train(page);
    expect(r.crossOriginIsolated).toBe(false);
    expect(r.outcome).toEqual({ kind: 'finished', step: 1500, reason: 'completed' });
    expect(r.backend).toBe('wasm');
    expect(r.threads).toBe(1);
    expect(r.workers).toBe(1);
    expect(r.logs.join('\n')).toMatch(/WebAssembly runs on 1 thread: this page is not cross-origin isolated/);
    expect(r.exactMatch).toBeGreaterThanOrEqual(0.99);
    expect(r.status).toBe('completed');
    // The page's files play `workspace.fs`: the logs grew by a few part files, read with them (1500 steps).
    expect(r.files.filter((n) => LOG_PART.test(n)).length).toBeLessThanOrEqual(2 * Math.log2(1500));
    expect(r.files.filter((n) => !LOG_PART.test(n))).toEqual([
      'metrics.jsonl',
      'model.safetensors',
      'optimizer.safetensors',
      'run.json',
      'snapshots',
      'tokenizer.json',
    ]);
    expect(r.steps).toBe(1500);
    await page.close();
  }, 600_000);

  it('learns it on two threads (a helper Web Worker on shared memory) where the page is cross-origin isolated', async () => {
    const page = await openPage(true);
    const r = await train(page, 1);
    expect(r.crossOriginIsolated).toBe(true);
    expect(r.outcome).toEqual({ kind: 'finished', step: 1500, reason: 'completed' });
    expect(r.threads).toBe(2);
    expect(r.workers).toBe(2); // the training worker and its helper
    expect(r.logs.join('\n')).not.toMatch(/1 thread/);
    expect(r.exactMatch).toBeGreaterThanOrEqual(0.99);
    expect(r.status).toBe('completed');
    await page.close();
  }, 600_000);
});
