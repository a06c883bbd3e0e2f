/**
 * A run killed with SIGKILL at a random instant — while it starts, writes run.json, logs a
 * step or saves one of the checkpoints it saves after every step — is restarted as a person
 * would (`train --resume DIR` where run.json is there, else the same `train --out DIR`), and
 * finishes with every step logged once and the weights and losses bit-identical to an
 * uninterrupted run's. The instants are drawn from a fixed seed; 15 kills by default,
 * ATTENTION_LAB_KILLS=100 for more (ATTENTION_LAB_KILL_SEED picks other instants).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FAST_DEC, cli, cliAsync, metricLines, tempDir } from './cliHarness';

const tmp = tempDir();
afterAll(tmp.cleanup);

const KILLS = Number(process.env.ATTENTION_LAB_KILLS ?? 15);
const SEED = Number(process.env.ATTENTION_LAB_KILL_SEED ?? 1);
const STEPS = 24;

/** mulberry32: the kill instants, the same on every run of the test. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const doc = path.join(tmp.dir, 'doc.txt');
fs.writeFileSync(doc, 'the cat sat on the mat. the dog sat on the log. '.repeat(8));
const train = (out: string): string[] => [
  'train',
  '--data',
  doc,
  '--steps',
  String(STEPS),
  '--checkpoint-every',
  '1',
  '--eval-every',
  '0',
  '--snapshot-every',
  '0',
  '--seed',
  '7',
  '--out',
  out,
  '--json',
  ...FAST_DEC,
];

/** What a run finished with: each step's loss (in order of the log) and the final weights. */
function result(out: string): { steps: number[]; losses: number[]; model: Buffer } {
  const lines = metricLines(out, 'step');
  return {
    steps: lines.map((l) => l.step as number),
    losses: lines.map((l) => l.loss as number),
    model: fs.readFileSync(path.join(out, 'model.safetensors')),
  };
}

/** Where the run stood when it was killed, for the summary. */
function stage(out: string): string {
  if (!fs.existsSync(path.join(out, 'run.json'))) return 'before run.json';
  if (!fs.existsSync(path.join(out, 'model.safetensors'))) return 'before the first checkpoint';
  return JSON.parse(fs.readFileSync(path.join(out, 'run.json'), 'utf8')).status === 'completed'
    ? 'after it finished'
    : 'while training';
}

describe('SIGKILL at random instants, then a restart', () => {
  it(
    `finishes every run bit-identical to an uninterrupted one (${KILLS} kills)`,
    async () => {
      const ref = path.join(tmp.dir, 'reference');
      const t0 = Date.now();
      const reference = cliAsync(train(ref), tmp.dir);
      let created = 0;
      const poll = setInterval(() => (created ||= fs.existsSync(path.join(ref, 'run.json')) ? Date.now() - t0 : 0), 2);
      const started = (): number => created || span / 2;
      const r = await reference.done;
      clearInterval(poll);
      // How long a whole run takes here, and when its run.json appears (Node's start and the
      // data before it): most kills fall after that, among the steps and their checkpoints.
      const span = Date.now() - t0;
      expect(r.code, r.stderr).toBe(0);
      const want = result(ref);
      expect(want.steps).toEqual(Array.from({ length: STEPS }, (_, i) => i + 1));
      const rand = random(SEED);
      const stages = new Map<string, number>();
      let evaluated = false;
      for (let k = 0; k < KILLS; k++) {
        const out = path.join(tmp.dir, `killed-${k}`);
        // One kill in five at any instant from the start (Node starting, the data, run.json being
        // written); the others at an instant after run.json appeared, among the steps and checkpoints.
        const early = rand() < 0.2;
        const delay = Math.floor(rand() * (early ? started() * 1.2 : 0.8 * (span - started())));
        const { child, done } = cliAsync(train(out), tmp.dir);
        let timer: ReturnType<typeof setTimeout> | undefined;
        const arm = (): void => void (timer = setTimeout(() => child.kill('SIGKILL'), delay));
        const watch = early
          ? (arm(), undefined)
          : setInterval(() => fs.existsSync(path.join(out, 'run.json')) && (clearInterval(watch), arm()), 2);
        const killed = await done;
        clearInterval(watch);
        clearTimeout(timer);
        const where = `kill ${k}, ${delay} ms after ${early ? 'the start' : 'run.json appeared'} (${killed.code === null ? stage(out) : 'it had finished'})`;
        stages.set(where.replace(/^.*\(|\)$/g, ''), (stages.get(where.replace(/^.*\(|\)$/g, '')) ?? 0) + 1);
        if (!evaluated && stage(out) === 'while training') {
          // A killed run's checkpoint is usable as it is, before any restart.
          const ev = cli(['eval', '--run', out, '--json'], tmp.dir);
          expect(ev.code, `${where}: ${ev.stderr}`).toBe(0);
          expect(Number.isFinite((JSON.parse(ev.stdout) as { loss: number }).loss)).toBe(true);
          evaluated = true;
        }
        if (stage(out) !== 'after it finished') {
          const again = cli(
            fs.existsSync(path.join(out, 'run.json')) ? ['train', '--resume', out, '--json'] : train(out),
            tmp.dir,
          );
          expect(again.code, `${where}: ${again.stderr}`).toBe(0);
        }
        const got = result(out);
        expect(got.steps, where).toEqual(want.steps);
        expect(got.losses, where).toEqual(want.losses);
        expect(got.model.equals(want.model), `${where}: final weights`).toBe(true);
        fs.rmSync(out, { recursive: true, force: true });
      }
      if (process.env.ATTENTION_LAB_KILLS)
        console.log(`kills by where they landed: ${JSON.stringify(Object.fromEntries(stages))}`);
    },
    KILLS * 30_000 + 60_000,
  );
});
