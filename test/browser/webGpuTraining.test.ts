/**
 * The web training worker (dist/web/trainingWorker.js) on Chromium's WebGPU: a page plays the web
 * extension host (src/bench/webTrainPage.ts, the worker started from a `blob:` URL as VS Code's web
 * host starts it), and the worker opens `navigator.gpu` (SwiftShader's software adapter: headless
 * Linux Chromium gives one with `--enable-unsafe-webgpu`) and trains on the WebGPU kernels. Its
 * per-step losses match the same run on WebAssembly within 1e-4, and the run names the adapter.
 * Without the switch the browser offers no adapter, and the run is refused in one line. The web model
 * worker (dist/web/modelWorker.js) then decodes, scores and draws the attention of the run on the
 * GPU — it asks `navigator.gpu` for an adapter — with the tokens of the CPU's decode, log-probabilities
 * and head scores within 1e-4 of the CPU's and the same 8-bit attention codes but for rounding.
 *
 * Leaves out: the extension around the worker (the e2e suite) and speed.
 */

import * as fs from 'node:fs';
import * as path from 'node:path';
import { build } from 'esbuild';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HAS_CHROMIUM, ROOT, SKIP_REASON, launchBrowser } from './harness';
import type { PageInference, PageRun } from '../../src/bench/webTrainPage';
import { LOG_PART } from '../../src/lab/files/logParts';
import type { RunChoices } from '../../src/lab/runs/runSpec';

if (!HAS_CHROMIUM) console.warn(SKIP_REASON);

const ORIGIN = 'https://lab.test';
/** A small run: the tiny preset on short batches, evaluated, snapshotted and checkpointed at its end. */
const SMALL: RunChoices = {
  batchSize: 4,
  seqLen: 16,
  evalEvery: 6,
  checkpointEvery: 6,
  snapshotEvery: 6,
};
const STEPS = 6;

let pageScript = '';
let workerSource = '';
let modelWorkerSource = '';

async function openPage(browser: Browser): Promise<Page> {
  const page = await browser.newPage();
  await page.route(`${ORIGIN}/**`, (r) =>
    r.fulfill({
      status: 200,
      contentType: 'text/html',
      body: `<!DOCTYPE html><html><body><script>${pageScript}</script></body></html>`,
    }),
  );
  await page.goto(`${ORIGIN}/`);
  return page;
}

async function train(browser: Browser, choices: RunChoices): Promise<PageRun> {
  const page = await openPage(browser);
  const run = await page.evaluate(
    ([src, steps, c]) =>
      (
        globalThis as unknown as {
          trainInPage: (s: string, t: string, h: undefined, n: number, c: RunChoices) => Promise<PageRun>;
        }
      ).trainInPage(src, 'induction', undefined, steps, c),
    [workerSource, STEPS, choices] as const,
  );
  await page.close();
  return run;
}

describe.skipIf(!HAS_CHROMIUM)('the web training worker on WebGPU in Chromium', () => {
  let gpuBrowser: Browser;
  let plainBrowser: Browser;
  beforeAll(async () => {
    const bundle = path.join(ROOT, 'dist/web/trainingWorker.js');
    if (!fs.existsSync(bundle)) throw new Error(`${bundle} is missing; run \`npm run build\` first.`);
    workerSource = fs.readFileSync(bundle, 'utf8');
    modelWorkerSource = fs.readFileSync(path.join(ROOT, 'dist/web/modelWorker.js'), 'utf8');
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
    gpuBrowser = await launchBrowser(['--enable-unsafe-webgpu']);
    plainBrowser = await launchBrowser();
  }, 60_000);
  afterAll(async () => {
    await gpuBrowser?.close();
    await plainBrowser?.close();
  });

  it('trains on navigator.gpu in the nested worker, each step within 1e-4 of WebAssembly, naming the adapter', async () => {
    const cpu = await train(gpuBrowser, { ...SMALL, backend: 'wasm' });
    const gpu = await train(gpuBrowser, { ...SMALL, backend: 'webgpu' });
    expect(cpu.outcome).toEqual({ kind: 'finished', step: STEPS, reason: 'completed' });
    expect(gpu.outcome).toEqual({ kind: 'finished', step: STEPS, reason: 'completed' });
    expect(gpu.backend).toBe('webgpu (google swiftshader · WebGPU (software))');
    expect(gpu.threads).toBeNull(); // no "on 1 thread" beside the adapter
    expect(cpu.threads).toBe(1);
    expect(gpu.status).toBe('completed');
    expect(gpu.losses.length).toBe(STEPS);
    expect(cpu.losses.length).toBe(STEPS);
    gpu.losses.forEach((l, i) => expect(Math.abs(l - (cpu.losses[i] as number)), `step ${i + 1}`).toBeLessThan(1e-4));
    // The same files as on the CPU (log parts aside: how many depends on timing): the checkpoint was
    // downloaded from the GPU and written.
    const kept = (files: readonly string[]): string[] => files.filter((n) => !LOG_PART.test(n));
    expect(kept(gpu.files)).toEqual(kept(cpu.files));
    expect(kept(gpu.files)).toContain('optimizer.safetensors');
  }, 600_000);

  it('the web model worker decodes, scores and draws attention of a WebGPU run on the GPU, as the CPU does', async () => {
    const page = await openPage(gpuBrowser);
    const r = await page.evaluate(
      ([train, model, steps, c]) =>
        (
          globalThis as unknown as {
            inferInPage: (
              t: string,
              m: string,
              task: string,
              n: number,
              c: RunChoices,
              prompt: string,
              text: string,
            ) => Promise<{ trained: PageRun; asTrained: PageInference; onCpu: PageInference }>;
          }
        ).inferInPage(train, model, 'induction', steps, c, 'kpqmrbwkpq', 'kpqmrbwkpqmrbw'),
      [workerSource, modelWorkerSource, STEPS, { ...SMALL, backend: 'webgpu' }] as const,
    );
    await page.close();
    expect(r.trained.outcome).toEqual({ kind: 'finished', step: STEPS, reason: 'completed' });
    // On the GPU: the worker asked navigator.gpu for an adapter; on the CPU it did not.
    expect(r.asTrained.adapterRequests).toBeGreaterThan(0);
    expect(r.onCpu.adapterRequests).toBe(0);
    expect(r.asTrained.decodeIds).toHaveLength(12);
    expect(r.asTrained.decodeIds).toEqual(r.onCpu.decodeIds);
    const close = (a: readonly number[], b: readonly number[], tol: number): void => {
      expect(a.length).toBe(b.length);
      expect(a.length).toBeGreaterThan(0);
      a.forEach((x, i) => expect(Math.abs(x - (b[i] as number)), `element ${i}`).toBeLessThan(tol));
    };
    close(r.asTrained.scoreLogprobs, r.onCpu.scoreLogprobs, 1e-4);
    // The maps travel as 8-bit codes round(255·√p): a probability within 1e-4 may round to the next code.
    close(r.asTrained.attention, r.onCpu.attention, 1.5);
    close(r.asTrained.headScores, r.onCpu.headScores, 1e-4);
  }, 600_000);

  it('refuses backend webgpu in one line where the browser gives no adapter', async () => {
    const r = await train(plainBrowser, { ...SMALL, backend: 'webgpu' });
    expect(r.outcome.kind).toBe('failed');
    const message = r.outcome.kind === 'failed' ? r.outcome.error.message : '';
    expect(message).toBe(
      'This browser gave no WebGPU adapter (its GPU may be blocked, or WebGPU switched off); use backend wasm or auto.',
    );
    expect(r.steps).toBe(0);
  }, 120_000);
});
