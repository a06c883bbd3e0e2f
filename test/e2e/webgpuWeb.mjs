// The WebGPU-in-the-browser scenario of the end-to-end suite (`run.mjs --only webgpuweb`, web
// host only): VS Code for the web's training worker — a nested worker from a blob: URL in the
// web-worker extension host — trains on `navigator.gpu` (Chromium started with
// --enable-unsafe-webgpu: SwiftShader's software adapter; headless Linux Chromium has no adapter
// without it). Train from the palette with `attentionLab.training.backend` webgpu: the status bar
// counts steps with a loss, and the dashboard's header names the adapter. Screenshot: w1-….
import path from 'node:path';
import { Workbench, expectVisible } from './lib/workbench.mjs';

const STEP = /step (\d+)\/(\d+)/;

/** The run's settings: the WebGPU backend. */
export const WEBGPU_WEB_SETTINGS = { 'attentionLab.training.backend': 'webgpu', 'attentionLab.training.steps': 400 };

/** What the header says of the backend on Chromium's software adapter. */
const ADAPTER = 'WebGPU (google swiftshader · WebGPU (software))';

/** Runs the scenario; resolves true when every check passed. */
export async function runWebGpuWeb(page, { shots, log }) {
  const wb = new Workbench(page, log);
  await wb.openActivity('Attention Lab');
  await wb.runCommand('Attention Lab: Train');
  const seen = await wb.waitForStatus('Attention Lab: step', (t) => Number(STEP.exec(t)?.[1] ?? 0) >= 3, 180_000);
  log(`status bar: "${seen}"`);
  if (!/loss \d+\.\d+/.test(seen)) throw new Error(`status bar shows no loss: ${seen}`);
  const header = wb.dashboard().locator('.run-status', { hasText: ADAPTER });
  await expectVisible(header, `the dashboard header naming ${ADAPTER}`, 60_000);
  const said = ((await header.first().textContent()) ?? '').trim();
  log(`dashboard header: "${said}"`);
  if (/on \d+ threads?/.test(said)) throw new Error(`the header counts CPU threads beside the adapter: ${said}`);
  await wb.screenshot(path.join(shots, 'w1-webgpu-web-header.png'));
  await wb.runCommand('Attention Lab: Stop Training');
  await wb.waitForStatus('Attention Lab:', (t) => /stopped at step/.test(t), 120_000);
  return true;
}
