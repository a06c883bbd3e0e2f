// Benchmark of the dashboard in headless Chromium (`npm run bench:dashboard`): loads synthetic
// data of demanding sizes — 100,000 loss points, and a 6-layer × 8-head grid of
// 128×128 attention maps (5 snapshots) — and prints how long the page takes to draw them, to
// redraw on a toggle, to scrub the timeline, and how the main thread holds up (input delay,
// long tasks, frame rate) while 250 live steps per second stream in, and what the Heads tab
// costs with 6 × 8 heads over 200 scored snapshots (first draw, redraw per live snapshot), and
// GPT-2's whole 1024-token context in the attention tab's large view (first draw, zoom, pan,
// hover). Numbers, not assertions.
//
// The data is generated in the page (posted as typed arrays, as a VS Code host posts them), so
// the numbers measure the dashboard, not a JSON transfer.
import { chromium } from 'playwright-core';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildWebview } from './buildWebview.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
process.chdir(root);
await buildWebview();
const CHROMIUM = '/usr/bin/chromium';
if (!fs.existsSync(CHROMIUM)) {
  console.error(`${CHROMIUM} is missing: apt-get install -y chromium`);
  process.exit(2);
}
const ORIGIN = 'https://dashboard.bench';
const html = `<!DOCTYPE html><html><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src ${ORIGIN}; script-src 'nonce-b'; img-src data:">
<link rel="stylesheet" href="${ORIGIN}/dashboard.css"><script nonce="b">window.acquireVsCodeApi = () => ({ postMessage() {}, getState() {}, setState() {} });</script>
</head><body class="vscode-dark"><main id="attention-lab-root"></main><script nonce="b" src="${ORIGIN}/dashboard.js"></script></body></html>`;

const browser = await chromium.launch({
  executablePath: CHROMIUM,
  headless: true,
  args: [
    '--headless',
    '--no-sandbox',
    '--disable-gpu',
    '--disable-quic',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
  ],
});
const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
await page.route('**/*', (route) => {
  const url = route.request().url();
  if (url === `${ORIGIN}/`) return route.fulfill({ contentType: 'text/html', body: html });
  const file = {
    [`${ORIGIN}/dashboard.js`]: 'dist/webview/dashboard.js',
    [`${ORIGIN}/dashboard.css`]: 'dist/webview/dashboard.css',
  }[url];
  return file ? route.fulfill({ body: fs.readFileSync(file) }) : route.abort();
});
await page.goto(`${ORIGIN}/`);

// Phase 1 (in the page): generate the data, post it, time the first draws and toggles.
const results = await page.evaluate(async () => {
  const frame = () => new Promise((r) => requestAnimationFrame(() => r(undefined)));
  /** Resolves after `cond` holds and one more frame has been painted. */
  const until = async (cond) => {
    while (!cond()) await frame();
    await frame();
  };
  const timed = async (fn, cond = () => true) => {
    const t0 = performance.now();
    await fn();
    await frame();
    await until(cond);
    return performance.now() - t0;
  };
  // --- synthetic data: decoder-only, 6 layers × 8 heads, T = 128; 100k steps
  const L = 6,
    H = 8,
    T = 128,
    N = 100_000;
  let seed = 1;
  const rand = () => (seed = (seed * 1664525 + 1013904223) >>> 0) / 2 ** 32;
  const steps = [];
  for (let i = 1; i <= N; i++)
    steps.push({
      step: i,
      loss: 0.8 + 4 * Math.exp(-i / 8000) + 0.3 * rand(),
      lr: 3e-4 * Math.min(1, i / 2000),
      gradNorm: 0.5 + rand(),
      tokens: 4096,
      tokensPerSec: 20000 + 2000 * rand(),
      elapsedMs: i * 200,
    });
  const evals = [];
  for (let i = 1000; i <= N; i += 1000)
    evals.push({ step: i, loss: 0.9 + 4 * Math.exp(-i / 8000), ppl: 1, exactMatch: null, bleu: null });
  const causal = new Uint8Array(T * T).map((_, k) => (k % T <= Math.floor(k / T) ? 1 : 0));
  const snapshot = (step) => {
    const maps = [];
    for (let l = 0; l < L; l++) {
      const data = new Float32Array(H * T * T);
      for (let h = 0; h < H; h++)
        for (let t = 0; t < T; t++) {
          let sum = 0;
          const row = (h * T + t) * T;
          for (let s = 0; s <= t; s++) sum += data[row + s] = Math.exp(3 * rand() * (1 + step / 1000));
          for (let s = 0; s <= t; s++) data[row + s] /= sum;
        }
      maps.push({ stack: 'decoder.self', layer: l, shape: [H, T, T], data });
    }
    return {
      step,
      srcTokens: [],
      tgtTokens: Array.from({ length: T }, (_, i) => String.fromCharCode(97 + (i % 26))),
      maps,
      masks: [
        { name: 'target.padding', shape: [1, 1, 1, T], data: new Uint8Array(T).fill(1) },
        { name: 'decoder.causal', shape: [1, 1, T, T], data: causal },
      ],
    };
  };
  const snapshots = [0, 1000, 2000, 3000, 4000].map(snapshot);
  const model = {
    config: {
      kind: 'decoder-only',
      dModel: 512,
      nHeads: H,
      dFF: 2048,
      nEncoderLayers: 0,
      nDecoderLayers: L,
      vocabSize: 50257,
      maxLen: T,
    },
    params: 44e6,
    paramsByModule: { embeddings: 26e6, decoder: 18e6 },
    memoryBytes: 1e9,
    flopsPerToken: 3e8,
    backend: 'wasm',
  };
  const run = {
    run: {
      id: 'big',
      name: 'big',
      runDir: '/runs/big',
      status: 'training',
      kind: 'decoder-only',
      step: N,
      totalSteps: 200000,
      segments: [{ fromStep: 0, toStep: 200000, schedule: 'cosine' }],
      bestValLoss: 0.9,
      model,
      data: null,
    },
    steps,
    evals,
    snapshots,
  };
  const out = {};
  const chart = () => document.querySelector('.chart-main');
  // Curves: first draw of 100k points (message → validated → stored → painted).
  out.loadAndDrawCurvesMs = await timed(
    () => window.postMessage({ type: 'dashboard/didLoadRuns', runs: [run], selectedId: 'big' }, '*'),
    () => chart()?.dataset.points === String(N),
  );
  out.points = Number(chart()?.dataset.points);
  out.drawnRows = Number(chart()?.dataset.drawnRows);
  // Curves: full redraw (charts rebuilt) on a toggle; median of 7.
  const log = document.getElementById('curves-log');
  const toggles = [];
  for (let i = 0; i < 7; i++) toggles.push(await timed(() => log.click()));
  out.curvesToggleRedrawMs = toggles.sort((a, b) => a - b)[3];
  // Attention: first draw of the 6 × 8 grid of 128 × 128 maps plus the large view.
  const grid = () => document.querySelector('.attn-grid');
  out.attentionFirstDrawMs = await timed(
    () => document.getElementById('tab-attention').click(),
    () => grid()?.dataset.pending === '0',
  );
  out.cells = document.querySelectorAll('.attn-cell').length;
  // Timeline scrubbing: each snapshot repaints 48 thumbnails and the large view.
  const slider = document.getElementById('attn-timeline');
  const scrub = [];
  for (let pass = 0; pass < 2; pass++)
    for (let i = 0; i < snapshots.length; i++) {
      scrub.push(
        await timed(
          () => {
            slider.value = String(i);
            slider.dispatchEvent(new Event('input'));
          },
          () => grid()?.dataset.pending === '0',
        ),
      );
    }
  out.scrubFirstPassMs = scrub.slice(0, snapshots.length).reduce((a, b) => a + b, 0) / snapshots.length;
  out.scrubCachedMs = scrub.slice(snapshots.length).reduce((a, b) => a + b, 0) / snapshots.length;
  // Selecting another head: the grid's selection and the large view.
  const sel = [];
  for (let i = 0; i < 8; i++)
    sel.push(
      await timed(
        () => document.querySelector(`.attn-cell[data-layer="${i % L}"][data-head="${(i * 3) % H}"]`).click(),
        () => grid()?.dataset.pending === '0',
      ),
    );
  out.selectHeadMs = sel.sort((a, b) => a - b)[4];
  document.getElementById('tab-curves').click();
  await frame();
  await frame();
  return out;
});

// Phase 2: live streaming (250 steps/s onto the 100k-point curves, then onto the attention
// tab while scrubbing) with real key presses from outside the page: the delay between a key
// event's timestamp and its handler is the time input waited for the main thread.
async function live(label, scrub) {
  await page.evaluate((scrubbing) => {
    window.__bench = {
      delays: [],
      long: [],
      frames: 0,
      live: true,
      step: Number(document.querySelector('.chart-main')?.dataset.points ?? 0) + 1000,
    };
    const b = window.__bench;
    b.po = new PerformanceObserver((l) => l.getEntries().forEach((e) => b.long.push(e.duration)));
    b.po.observe({ type: 'longtask', buffered: false });
    b.onKey = (e) => b.delays.push(performance.now() - e.timeStamp);
    window.addEventListener('keydown', b.onKey, true);
    const count = () => {
      b.frames++;
      if (b.live) requestAnimationFrame(count);
    };
    requestAnimationFrame(count);
    b.t0 = performance.now();
    b.sent = 0;
    b.stream = setInterval(() => {
      b.sent++;
      window.postMessage(
        {
          type: 'run/didUpdate',
          runId: 'big',
          event: {
            type: 'train/didStep',
            step: ++b.step,
            loss: 1,
            lr: 3e-4,
            gradNorm: 1,
            tokens: 4096,
            tokensPerSec: 20000,
            elapsedMs: b.step * 200,
          },
        },
        '*',
      );
    }, 4);
    if (scrubbing) {
      const slider = document.getElementById('attn-timeline');
      let i = 0;
      b.scrub = setInterval(() => {
        slider.value = String(i++ % 5);
        slider.dispatchEvent(new Event('input'));
      }, 100);
    }
  }, scrub);
  const end = Date.now() + 3000;
  while (Date.now() < end) {
    await page.keyboard.press('Shift');
    await new Promise((r) => setTimeout(r, 40));
  }
  const r = await page.evaluate(() => {
    const b = window.__bench;
    clearInterval(b.stream);
    clearInterval(b.scrub);
    b.live = false;
    b.po.disconnect();
    window.removeEventListener('keydown', b.onKey, true);
    const secs = (performance.now() - b.t0) / 1000;
    const d = b.delays.sort((x, y) => x - y);
    return {
      keys: d.length,
      sent: b.sent,
      fps: b.frames / secs,
      median: d[Math.floor(d.length / 2)],
      p95: d[Math.floor(d.length * 0.95)],
      max: d[d.length - 1],
      longTasks: b.long.length,
      longest: b.long.length ? Math.max(...b.long) : 0,
    };
  });
  results[label] = r;
}
await live('liveCurves', false);
await page.click('#tab-attention');
await live('liveScrubbing', true);

// Phase 3: the Heads tab with 6 layers × 8 heads and 200 scored snapshots (the maps tiny: the
// tab reads only the scores): first draw, then each live snapshot's redraw (script, from the
// panel's data-draw-ms, and message → painted frame).
results.heads = await page.evaluate(async () => {
  const frame = () => new Promise((r) => requestAnimationFrame(() => r(undefined)));
  const L = 6,
    H = 8,
    N = 200;
  const snapshot = (i) => {
    const headScores = [];
    for (let l = 0; l < L; l++)
      for (let h = 0; h < H; h++) {
        const w = 0.05 * Math.sin(i / 7 + l * 3 + h);
        headScores.push({
          stack: 'decoder.self',
          layer: l,
          head: h,
          scores: {
            previousToken: 0.1 + w,
            firstToken: 0.3 + w,
            diagonal: 0.1 - w,
            induction: l === 1 && h === 2 ? 0.9 / (1 + Math.exp(-(i - 100) / 10)) : 0.05 + w,
            entropy: 2 + w,
          },
        });
      }
    const maps = Array.from({ length: L }, (_, l) => ({
      stack: 'decoder.self',
      layer: l,
      shape: [H, 2, 2],
      data: new Float32Array(H * 4).fill(0.5),
    }));
    return { step: i * 50, srcTokens: [], tgtTokens: ['a', 'b'], maps, masks: [], headScores };
  };
  const model = {
    config: {
      kind: 'decoder-only',
      dModel: 512,
      nHeads: H,
      dFF: 2048,
      nEncoderLayers: 0,
      nDecoderLayers: L,
      vocabSize: 50257,
      maxLen: 128,
    },
    params: 44e6,
    paramsByModule: { embeddings: 26e6, decoder: 18e6 },
    memoryBytes: 1e9,
    flopsPerToken: 3e8,
    backend: 'wasm',
  };
  const run = {
    run: {
      id: 'heads',
      name: 'heads',
      runDir: '/runs/heads',
      status: 'training',
      kind: 'decoder-only',
      step: N * 50,
      totalSteps: 20000,
      segments: [{ fromStep: 0, toStep: 20000, schedule: 'cosine' }],
      bestValLoss: null,
      model,
      data: null,
    },
    steps: [],
    evals: [],
    snapshots: Array.from({ length: N }, (_, i) => snapshot(i)),
  };
  window.postMessage({ type: 'dashboard/didLoadRuns', runs: [run], selectedId: 'heads' }, '*');
  await frame();
  const panel = () => document.querySelector('.panel.heads');
  const t0 = performance.now();
  document.getElementById('tab-heads').click();
  while (!panel()?.dataset.drawMs) await frame();
  await frame();
  const out = {
    cells: document.querySelectorAll('.heads-cell').length,
    snapshots: N,
    firstDrawMs: performance.now() - t0,
  };
  const script = [],
    painted = [];
  for (let i = N; i < N + 20; i++) {
    const t = performance.now();
    window.postMessage(
      { type: 'run/didUpdate', runId: 'heads', event: { type: 'train/didSnapshot', ...snapshot(i) } },
      '*',
    );
    await frame();
    await frame();
    painted.push(performance.now() - t);
    script.push(Number(panel().dataset.drawMs));
  }
  const med = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  out.liveRedrawScriptMs = med(script);
  out.liveSnapshotToPaintMs = med(painted);
  return out;
});

// Phase 4: GPT-2's whole context in the large view — one layer of 12 heads of 1024 × 1024
// (8-bit codes, as the model worker sends a text's attention): first draw, then zooming in
// (+), panning (a 100 px drag) and hovering, each timed from the input to the painted frame.
// The frame budget is one frame at 60 Hz (16.7 ms) for a pan or zoom step.
results.gpt2 = await page.evaluate(async () => {
  const frame = () => new Promise((r) => requestAnimationFrame(() => r(undefined)));
  const T = 1024,
    H = 12;
  let seed = 7;
  const rand = () => (seed = (seed * 1664525 + 1013904223) >>> 0) / 2 ** 32;
  const data = new Uint8Array(H * T * T);
  for (let h = 0; h < H; h++)
    for (let t = 0; t < T; t++) {
      const row = (h * T + t) * T;
      for (let s = 0; s <= t; s++) data[row + s] = Math.floor(40 * rand());
      data[row + Math.max(0, t - 1 - (h % 3))] = 255;
    }
  const causal = new Uint8Array(T * T).map((_, k) => (k % T <= Math.floor(k / T) ? 1 : 0));
  const tokens = Array.from({ length: T }, (_, i) =>
    i === 0 ? '<|endoftext|>' : ['·the', '·cat', '·sat', '·on', '·a', '·mat', '.', '↵'][i % 8],
  );
  const snapshot = {
    step: 0,
    srcTokens: [],
    tgtTokens: tokens,
    maps: [{ stack: 'decoder.self', layer: 0, shape: [H, T, T], data }],
    masks: [{ name: 'decoder.causal', shape: [1, 1, T, T], data: causal }],
    source: 'selection',
    text: 'x',
  };
  const model = {
    config: {
      kind: 'decoder-only',
      dModel: 768,
      nHeads: H,
      dFF: 3072,
      nEncoderLayers: 0,
      nDecoderLayers: 12,
      vocabSize: 50257,
      maxLen: T,
    },
    params: 124e6,
    paramsByModule: { embeddings: 39e6, decoder: 85e6 },
    memoryBytes: 1e9,
    flopsPerToken: 3e8,
    backend: 'wasm',
  };
  const run = {
    run: {
      id: 'gpt2',
      name: 'gpt2',
      runDir: '/runs/gpt2',
      status: 'stopped',
      kind: 'decoder-only',
      step: 0,
      totalSteps: 200,
      segments: [{ fromStep: 0, toStep: 200, schedule: 'cosine' }],
      bestValLoss: null,
      model,
      data: null,
      imported: { layout: 'Hugging Face GPT-2', from: '/m/model.safetensors' },
    },
    steps: [],
    evals: [],
    snapshots: [],
  };
  window.postMessage({ type: 'dashboard/didLoadRuns', runs: [run], selectedId: 'gpt2' }, '*');
  await frame();
  document.getElementById('tab-attention').click();
  await frame();
  const canvas = () => document.querySelector('.attn-large .hm-view canvas');
  let t0 = performance.now();
  window.postMessage({ type: 'dashboard/didAttend', runId: 'gpt2', snapshot }, '*');
  while (canvas()?.dataset.rows !== String(T)) await frame();
  await frame();
  const out = { tokens: T, heads: H, firstDrawMs: performance.now() - t0 };
  const c = canvas();
  const key = (k) => c.dispatchEvent(new KeyboardEvent('keydown', { key: k, bubbles: true }));
  const med = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  c.focus();
  const zoom = [];
  for (let i = 0; i < 5; i++) {
    t0 = performance.now();
    key('+');
    await frame();
    zoom.push(performance.now() - t0);
  }
  out.zoomStepMs = med(zoom);
  out.zoomedCellPx = Number(c.dataset.cellW) / (window.devicePixelRatio || 1);
  const r = c.getBoundingClientRect();
  const pan = [];
  let x = r.left + r.width / 2;
  const y = r.top + r.height / 2;
  c.dispatchEvent(new MouseEvent('mousedown', { clientX: x, clientY: y, bubbles: true }));
  for (let i = 0; i < 20; i++) {
    t0 = performance.now();
    x -= 5;
    c.dispatchEvent(new MouseEvent('mousemove', { clientX: x, clientY: y, bubbles: true }));
    await frame();
    pan.push(performance.now() - t0);
  }
  window.dispatchEvent(new MouseEvent('mouseup', { bubbles: true }));
  out.panStepMs = med(pan);
  out.s0AfterPan = Number(c.dataset.s0);
  const hover = [];
  const readout = document.querySelector('.attn-large .hm-readout');
  for (let i = 0; i < 20; i++) {
    t0 = performance.now();
    c.dispatchEvent(
      new MouseEvent('mousemove', { clientX: r.left + 10 + 13 * i, clientY: r.top + 10 + 7 * i, bubbles: true }),
    );
    await frame();
    hover.push(performance.now() - t0);
  }
  out.hoverMs = med(hover);
  out.readout = readout?.textContent ?? '';
  return out;
});
await browser.close();

const f = (x) => (typeof x === 'number' ? x.toFixed(1) : String(x));
const liveLine = (r) =>
  `${r.sent} messages in 3 s; ${f(r.fps)} frames/s; key-press delay median ${f(r.median)} ms, p95 ${f(r.p95)} ms, max ${f(r.max)} ms (${r.keys} presses); ${r.longTasks} long tasks (> 50 ms), longest ${f(r.longest)} ms`;
console.log(`Dashboard benchmark — headless Chromium ${browser.version()}, software rendering, 1400×1000 viewport`);
console.log(`  curves, ${results.points} points (${results.drawnRows} drawn after min/max decimation):`);
console.log(
  `    load + first draw ${f(results.loadAndDrawCurvesMs)} ms · full redraw on a toggle ${f(results.curvesToggleRedrawMs)} ms (median of 7)`,
);
console.log(`    live, 250 steps/s: ${liveLine(results.liveCurves)}`);
console.log(`  attention, ${results.cells} heatmaps of 128×128 (+ the 128×128 large view):`);
console.log(
  `    first draw ${f(results.attentionFirstDrawMs)} ms · timeline scrub ${f(results.scrubFirstPassMs)} ms per snapshot (first visit, entropies computed), ${f(results.scrubCachedMs)} ms (revisit) · select a head ${f(results.selectHeadMs)} ms (median)`,
);
console.log(`    live steps + scrubbing 10×/s: ${liveLine(results.liveScrubbing)}`);
const hd = results.heads;
console.log(`  heads, ${hd.cells} heads × 5 scores over ${hd.snapshots} snapshots:`);
console.log(
  `    first draw ${f(hd.firstDrawMs)} ms · live snapshot: redraw ${f(hd.liveRedrawScriptMs)} ms of script, ${f(hd.liveSnapshotToPaintMs)} ms message → painted (median of 20; two frames included)`,
);
const g = results.gpt2;
console.log(
  `  GPT-2's context: ${g.heads} heads of ${g.tokens} × ${g.tokens} (8-bit codes), frame budget 16.7 ms for a pan or zoom step:`,
);
console.log(
  `    first draw ${f(g.firstDrawMs)} ms · zoom step (+) ${f(g.zoomStepMs)} ms · pan step (drag) ${f(g.panStepMs)} ms · hover read-out ${f(g.hoverMs)} ms (medians, input → painted frame)`,
);
console.log(JSON.stringify(results));
await browser.close();
