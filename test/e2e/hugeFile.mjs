// A large file on the web (issue 27, items 7 and 1): a workspace holding one generated ~62 MB
// text file, the per-file limit raised past it, trains from the palette in the browser's
// web-worker extension host, while a probe in the page records how long its main thread was
// held (the gaps of a 50 ms interval timer, and a CPU profile of the page's main thread,
// summarised by function over the longest busy stretch), and the test polls the run's
// metrics.jsonl on the disk and counts the polls that find it missing. The checks are not
// timings (the machine is shared): training starts and reaches step STEPS_TO_REACH, and every
// step is logged once in metrics.jsonl; the longest pause, the pauses over a quarter second, where
// the main thread's time went and the missing count are printed to the e2e log (the missing count
// is not asserted: a whole-file file system replaces metrics.jsonl by renames, and an outside
// reader can fall in the gap; the lab's own readers take the kept copy).
import fs from 'node:fs';
import path from 'node:path';
import { sleep } from './lib/codeServer.mjs';
import { Workbench } from './lib/workbench.mjs';

const STEP = /step (\d+)\/(\d+)/;
/** The step training must reach (past a checkpoint, an evaluation and snapshots: FAST_TRAINING's every 20 / 20 / 10). */
const STEPS_TO_REACH = 45;
/** Bytes of the generated file: over the default 64 MiB limit's neighbourhood, as the issue's 67 MB. */
const BYTES = 62 * 2 ** 20;
/** How long the probe watches from Train on (the issue measured 80 s). */
const WATCH_MS = 80_000;

/** The settings: the one file, its limit raised, runs kept in the workspace (so the test can poll them on the disk). */
export const HUGEFILE_SETTINGS = {
  'attentionLab.data.include': 'books/huge.txt',
  'attentionLab.data.maxFileSizeMB': 100,
  'attentionLab.training.steps': 100_000,
  'attentionLab.runs.location': 'workspace',
};

/** Writes `rel` in `workspace`: BYTES of line-broken pseudo-English from a fixed seed. */
export function writeHugeFile(workspace, rel) {
  const file = path.join(workspace, rel);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const words = 'the king shall speak of love and honour to my lord what is this night that we fear no more'.split(' ');
  let s = 4242;
  const next = () => (s = (Math.imul(s, 1103515245) + 12345) >>> 0) / 4294967296;
  const fd = fs.openSync(file, 'w');
  try {
    let written = 0;
    while (written < BYTES) {
      const lines = [];
      let size = 0;
      while (size < 1 << 20) {
        const n = 4 + Math.floor(next() * 8);
        let line = '';
        for (let i = 0; i < n; i++) line += (i ? ' ' : '') + words[Math.floor(next() * words.length)];
        line += next() < 0.3 ? ',\n' : '.\n';
        lines.push(line);
        size += line.length;
      }
      const chunk = lines.join('');
      fs.writeSync(fd, chunk);
      written += chunk.length;
    }
  } finally {
    fs.closeSync(fd);
  }
}

/** Installs the pause probe in the page: an interval timer whose late ticks are the main thread's pauses. */
async function startProbe(page) {
  await page.evaluate(() => {
    const probe = {
      start: performance.now(),
      last: performance.now(),
      max: 0,
      mark: Infinity,
      sinceMark: 0,
      pauses: [],
    };
    window.__pauseProbe = probe;
    setInterval(() => {
      const now = performance.now();
      const gap = now - probe.last;
      probe.last = now;
      if (gap > probe.max) probe.max = gap;
      if (now - gap >= probe.mark && gap > probe.sinceMark) probe.sinceMark = gap;
      if (gap > 250) probe.pauses.push([Math.round(now - probe.start - gap), Math.round(gap)]);
    }, 50);
  });
}

/**
 * Sums a CPU profile's self time by function over the longest stretch with no idle sample
 * (the longest time the main thread was held), and over the whole profile: the top rows of each.
 */
export function summariseProfile(profile, top = 12) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const name = (n) => {
    const f = n.callFrame;
    const file = f.url ? f.url.split('/').pop().split('?')[0] : '';
    return `${f.functionName || '(anonymous)'} ${file}:${f.lineNumber + 1}`;
  };
  const samples = profile.samples ?? [];
  const deltas = profile.timeDeltas ?? [];
  // The longest run of samples none of which is (idle) or (program) waiting.
  let best = { from: 0, to: 0, us: 0 };
  let from = 0;
  let us = 0;
  for (let i = 0; i < samples.length; i++) {
    const n = byId.get(samples[i]);
    const idle = n?.callFrame.functionName === '(idle)';
    const dt = deltas[i + 1] ?? 0;
    if (idle) {
      from = i + 1;
      us = 0;
    } else {
      us += dt;
      if (us > best.us) best = { from, to: i + 1, us };
    }
  }
  const sum = (a, b) => {
    const m = new Map();
    for (let i = a; i < b; i++) {
      const n = byId.get(samples[i]);
      if (!n || n.callFrame.functionName === '(idle)') continue;
      const k = name(n);
      m.set(k, (m.get(k) ?? 0) + (deltas[i + 1] ?? 0));
    }
    return [...m.entries()]
      .sort((x, y) => y[1] - x[1])
      .slice(0, top)
      .map(([k, v]) => `${(v / 1000).toFixed(0).padStart(7)} ms  ${k}`);
  };
  return { longestMs: best.us / 1000, longest: sum(best.from, best.to), whole: sum(0, samples.length) };
}

/** Runs the scenario; resolves true when every check passed. */
export async function runHugeFile(page, { log, workspace, dir }) {
  const wb = new Workbench(page, log);
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Profiler.enable');
  await cdp.send('Profiler.setSamplingInterval', { interval: 1000 });
  await startProbe(page);
  const runs = path.join(workspace, '.attention-lab/runs');
  const poll = { polls: 0, missing: 0, seen: null };
  const timer = setInterval(() => {
    try {
      if (!poll.seen) {
        const run = fs.existsSync(runs) ? fs.readdirSync(runs).find((d) => !d.startsWith('.')) : undefined;
        const f = run && path.join(runs, run, 'metrics.jsonl');
        if (f && fs.existsSync(f)) poll.seen = f;
        return;
      }
      poll.polls++;
      if (!fs.existsSync(poll.seen)) poll.missing++;
    } catch {
      /* a folder being renamed: the next poll sees it */
    }
  }, 20);
  const t0 = Date.now();
  const at = () => `${((Date.now() - t0) / 1000).toFixed(1)} s`;
  try {
    await cdp.send('Profiler.start');
    const trainAt = await page.evaluate(() => {
      const probe = window.__pauseProbe;
      probe.mark = performance.now();
      return probe.mark - probe.start;
    });
    await wb.runCommand('Attention Lab: Train');
    log(`hugefile: Train run at ${at()}`);
    let phase = '';
    let firstStep = null;
    const status = await wb.waitForStatus(
      'Attention Lab',
      (t) => {
        if (t !== phase) {
          phase = t;
          log(`hugefile: ${at()} status "${t}"`);
          if (firstStep === null && Number(STEP.exec(t)?.[1] ?? 0) >= 1) firstStep = at();
        }
        return Number(STEP.exec(t)?.[1] ?? 0) >= STEPS_TO_REACH;
      },
      540_000,
    );
    log(`hugefile: reached "${status}" at ${at()}`);
    // Keep watching while it trains on (checkpoints, evaluations, snapshots, the growing metrics.jsonl).
    while (Date.now() - t0 < WATCH_MS) {
      const t = await wb.statusItem('Attention Lab');
      if (t !== phase) {
        phase = t;
        if (!STEP.test(t ?? '')) log(`hugefile: ${at()} status "${t}"`);
      }
      await sleep(1000);
    }
    log(`hugefile: ${at()} status "${phase}"`);
    const { profile } = await cdp.send('Profiler.stop');
    fs.writeFileSync(path.join(dir, 'hugefile-page.cpuprofile'), JSON.stringify(profile));
    const probe = await page.evaluate(() => window.__pauseProbe);
    const s = summariseProfile(profile);
    const sinceTrain = probe.sinceMark;
    log(
      `hugefile: the page's longest pause from Train on ${(sinceTrain / 1000).toFixed(2)} s ` +
        `(${(probe.max / 1000).toFixed(2)} s with the workbench's start) over ${((probe.last - probe.start) / 1000).toFixed(0)} s; ` +
        `Train at ${(trainAt / 1000).toFixed(1)} s, step 1 at ${firstStep}`,
    );
    log(
      `hugefile: pauses over 0.25 s (start s, length s): ${probe.pauses.map(([t, g]) => `${(t / 1000).toFixed(1)}+${(g / 1000).toFixed(2)}`).join(', ') || 'none'}`,
    );
    log(
      `hugefile: the longest busy stretch of the page's main thread (CPU profile): ${s.longestMs.toFixed(0)} ms, by self time:\n  ${s.longest.join('\n  ')}`,
    );
    log(`hugefile: the page's main thread over the whole run, by self time:\n  ${s.whole.join('\n  ')}`);
  } finally {
    clearInterval(timer);
  }
  log(`hugefile: metrics.jsonl missing in ${poll.missing} of ${poll.polls} polls (every 20 ms once it existed)`);
  if (!poll.seen) throw new Error('no metrics.jsonl appeared in the run folder under .attention-lab/runs');
  await wb.runCommand('Attention Lab: Stop Training');
  await wb
    .waitForStatus('Attention Lab', (t) => !/step \d+\/\d+ · loss/.test(t) || /stopped/.test(t), 60_000)
    .catch(() => '');
  const lines = fs
    .readFileSync(poll.seen, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l))
    .filter((m) => m.type === undefined || m.type === 'step');
  const steps = lines.map((m) => m.step);
  if (steps.length < STEPS_TO_REACH || new Set(steps).size !== steps.length)
    throw new Error(
      `metrics.jsonl should hold each of ≥ ${STEPS_TO_REACH} steps once; it holds ${JSON.stringify(steps)}`,
    );
  return true;
}
