/**
 * Schedule segments of a run: what a new run plans, how an extension continues each kind of
 * schedule, the learning rate across a warm restart, the checks on a resume with a new
 * total, and run.json files with and without segments.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { NODE_FS } from '../../../../src/lab/files/fs.node';
import { EngineError } from '../../../../src/engine/errors';
import { learningRate } from '../../../../src/engine/optim/schedule';
import type { ModelConfig } from '../../../../src/engine/config';
import type { RunSegment, TrainSpec } from '../../../../src/protocol/data';
import { optimizerConfig } from '../../../../src/lab/runs/specModel';
import { readRunJson } from '../../../../src/lab/runs/runFolder';
import {
  extendSegments,
  planResume,
  planSegments,
  restartWarmup,
  segmentsProblem,
} from '../../../../src/lab/runs/segments';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'attention-lab-segments-'));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

function spec(over: Partial<TrainSpec['training']> = {}): TrainSpec {
  return {
    model: { kind: 'decoder-only', preset: 'tiny', overrides: {} },
    tokenizer: { type: 'char', vocabSize: 1000 },
    data: { kind: 'task', task: 'copy' },
    training: {
      steps: 1000,
      batchSize: 4,
      seqLen: 16,
      evalEvery: 0,
      checkpointEvery: 0,
      snapshotEvery: 0,
      seed: 1,
      optimizer: 'adamw',
      lr: 0,
      warmup: 0,
      ...over,
    },
    backend: 'reference',
  };
}
const cfg = { dModel: 64 } as ModelConfig;

/** The learning rate of `s` (with `segments`) at `step`. */
function lrAt(s: TrainSpec, segments: readonly RunSegment[], step: number): number {
  return learningRate(optimizerConfig(s, cfg, segments), step);
}

describe('planned segments', () => {
  it('plans one segment of the schedule the optimizer uses', () => {
    expect(planSegments(spec())).toEqual([{ fromStep: 0, toStep: 1000, schedule: 'cosine' }]);
    expect(planSegments(spec({ steps: 5, warmup: 10 }))).toEqual([{ fromStep: 0, toStep: 5, schedule: 'constant' }]);
    expect(planSegments(spec({ optimizer: 'paper' }))).toEqual([{ fromStep: 0, toStep: 1000, schedule: 'noam' }]);
  });

  it('continues cosine and restart with a warm restart, noam and constant as they were', () => {
    const cos = extendSegments(planSegments(spec()), 1500);
    expect(cos).toEqual([
      { fromStep: 0, toStep: 1000, schedule: 'cosine' },
      { fromStep: 1000, toStep: 1500, schedule: 'restart' },
    ]);
    expect(extendSegments(cos, 1600)[2]).toEqual({ fromStep: 1500, toStep: 1600, schedule: 'restart' });
    expect(extendSegments(planSegments(spec({ optimizer: 'paper' })), 2000)[1]?.schedule).toBe('noam');
    expect(extendSegments(planSegments(spec({ steps: 5, warmup: 10 })), 9)[1]?.schedule).toBe('constant');
  });

  it('gives a restart min(the run warm-up, 10% of its steps) to warm up', () => {
    expect(restartWarmup(100, { fromStep: 1000, toStep: 1500, schedule: 'restart' })).toBe(50);
    expect(restartWarmup(100, { fromStep: 1000, toStep: 5000, schedule: 'restart' })).toBe(100);
    expect(restartWarmup(100, { fromStep: 1000, toStep: 1004, schedule: 'restart' })).toBe(0);
  });
});

describe('warmup–stable–decay runs', () => {
  const w = spec({ schedule: 'wsd' }); // lr 1e-3, minLr 1e-4, warm-up 100, decay over steps 800–1000

  it('plan a wsd segment (constant when the warm-up reaches into the last 20%), and continue as wsd', () => {
    expect(planSegments(w)).toEqual([{ fromStep: 0, toStep: 1000, schedule: 'wsd' }]);
    expect(planSegments(spec({ schedule: 'wsd', steps: 100, warmup: 90 }))[0]?.schedule).toBe('constant');
    expect(extendSegments(planSegments(w), 1500)[1]).toEqual({ fromStep: 1000, toStep: 1500, schedule: 'wsd' });
    expect(segmentsProblem(planSegments(w), w)).toBeNull();
    expect(segmentsProblem(planSegments(spec()), w)).toMatch(/segment 1 has schedule cosine.*plans wsd/);
  });

  it('warm up, hold the peak, decay linearly to lr/10 at the end; an extension warms up again from lr/10', () => {
    const one = planSegments(w);
    expect([50, 100, 500, 800].map((step) => lrAt(w, one, step))).toEqual([5e-4, 1e-3, 1e-3, 1e-3]);
    expect(lrAt(w, one, 900)).toBeCloseTo(5.5e-4, 15);
    expect(lrAt(w, one, 1000)).toBe(1e-4);
    const two = extendSegments(one, 1500);
    const ext: TrainSpec = { ...w, training: { ...w.training, steps: 1500 } };
    for (const step of [1, 100, 850, 1000]) expect(lrAt(ext, two, step)).toBe(lrAt(w, one, step));
    expect(lrAt(ext, two, 1025)).toBeCloseTo(5.5e-4, 15); // half-way up its 50-step warm-up
    expect(lrAt(ext, two, 1400)).toBe(1e-3);
    expect(lrAt(ext, two, 1450)).toBeCloseTo(5.5e-4, 15);
    expect(lrAt(ext, two, 1500)).toBe(1e-4);
  });

  it('the muon preset: Muon at 0.02 with momentum 0.95 over the same AdamW and schedule', () => {
    const m = spec({ optimizer: 'muon', schedule: 'wsd' });
    const a = optimizerConfig(w, cfg);
    expect(optimizerConfig(m, cfg)).toEqual({ ...a, type: 'muon', muonLr: 0.02, muonMomentum: 0.95 });
    expect(planSegments(spec({ optimizer: 'muon' }))[0]?.schedule).toBe('cosine');
  });

  it('the paper optimizer refuses wsd', () => {
    expect(() => optimizerConfig(spec({ optimizer: 'paper', schedule: 'wsd' }), cfg)).toThrow(
      /paper optimizer follows its own schedule \(noam\), not wsd/,
    );
  });
});

describe('the learning rate of an extended run', () => {
  const s = spec(); // lr 1e-3, minLr 1e-4, warm-up 100 (10% of 1000)
  const one = planSegments(s);
  const two = extendSegments(one, 1500);
  const extended: TrainSpec = { ...s, training: { ...s.training, steps: 1500 } };

  it('is unchanged over the original plan, so an extension never rewrites the past', () => {
    for (const step of [1, 50, 100, 101, 500, 999, 1000]) expect(lrAt(extended, two, step)).toBe(lrAt(s, one, step));
    expect(optimizerConfig(s, cfg)).toEqual(optimizerConfig(s, cfg, one));
  });

  it('restarts warm from minLr, peaks after 50 steps, and ends at exactly minLr', () => {
    expect(lrAt(extended, two, 1000)).toBe(1e-4);
    expect(lrAt(extended, two, 1001)).toBeCloseTo(1e-4 + 9e-4 / 50, 15);
    expect(lrAt(extended, two, 1050)).toBeCloseTo(1e-3, 15);
    expect(lrAt(extended, two, 1275)).toBeCloseTo(5.5e-4, 15); // half-way through the decay
    expect(lrAt(extended, two, 1500)).toBe(1e-4);
    for (let step = 1002; step <= 1050; step++)
      expect(lrAt(extended, two, step)).toBeGreaterThan(lrAt(extended, two, step - 1));
    for (let step = 1051; step <= 1500; step++)
      expect(lrAt(extended, two, step)).toBeLessThan(lrAt(extended, two, step - 1));
  });

  it('rises by no more than one warm-up increment per step at the restart (continuous from minLr)', () => {
    const jump = lrAt(extended, two, 1001) - lrAt(extended, two, 1000);
    expect(jump).toBeCloseTo((1e-3 - 1e-4) / 50, 15);
  });

  it('continues the paper schedule and a constant rate with their own formula', () => {
    const p = spec({ optimizer: 'paper', steps: 100 });
    const pExt: TrainSpec = { ...p, training: { ...p.training, steps: 300 } };
    for (const step of [1, 10, 100, 101, 250, 300])
      expect(lrAt(pExt, extendSegments(planSegments(p), 300), step)).toBe(lrAt(p, planSegments(p), step));
    const c = spec({ steps: 5, warmup: 10 });
    const cExt: TrainSpec = { ...c, training: { ...c.training, steps: 20 } };
    expect([4, 5, 6, 20].map((step) => lrAt(cExt, extendSegments(planSegments(c), 20), step))).toEqual([
      1e-3, 1e-3, 1e-3, 1e-3,
    ]);
  });
});

describe('planResume', () => {
  const run = (over: { step?: number; status?: string; steps?: number } = {}) => {
    const s = spec({ steps: over.steps ?? 1000 });
    return { spec: s, segments: planSegments(s), step: over.step ?? 1000, status: over.status ?? 'completed' };
  };
  const refused = (f: () => unknown, pattern: RegExp): void => {
    let err: unknown;
    try {
      f();
    } catch (e) {
      err = e;
    }
    expect(EngineError.is(err, 'input/invalid'), String(err)).toBe(true);
    expect((err as Error).message).toMatch(pattern);
    expect((err as Error).message).not.toContain('\n');
  };

  it('extends a finished run to the new total as a new segment', () => {
    const p = planResume(run(), 'r', 1500, null);
    expect(p.extended).toBe(true);
    expect(p.spec.training.steps).toBe(1500);
    expect(p.segments).toEqual([
      { fromStep: 0, toStep: 1000, schedule: 'cosine' },
      { fromStep: 1000, toStep: 1500, schedule: 'restart' },
    ]);
  });

  it('extends a stopped run from its planned total, so it finishes its plan first', () => {
    const p = planResume(run({ step: 400, status: 'stopped' }), 'r', 1500, 1200);
    expect(p.segments[1]).toEqual({ fromStep: 1000, toStep: 1500, schedule: 'restart' });
    expect(planResume(run({ step: 400, status: 'stopped' }), 'r', null, null)).toMatchObject({
      extended: false,
      spec: { training: { steps: 1000 } },
    });
  });

  it('refuses what would not train the run any further, saying what to pass', () => {
    refused(
      () => planResume(run(), 'run-a', 1000, null),
      /^run-a is already at step 1000; pass --steps greater than 1000 to train it longer\.$/,
    );
    refused(() => planResume(run(), 'run-a', 20, null), /already at step 1000; pass --steps greater than 1000/);
    refused(
      () => planResume(run({ step: 400, status: 'stopped' }), 'run-a', 800, null),
      /run-a plans 1000 steps and is at step 400, so --steps 800 would not extend it; pass --until 800 to stop there, or --steps greater than 1000/,
    );
    refused(
      () => planResume(run(), 'run-a', null, null),
      /^run-a is complete \(step 1000 of 1000\); pass --steps N with N greater than 1000 to train it longer\.$/,
    );
    // Killed after its last checkpoint, before run.json said completed: the resume finishes it.
    expect(planResume(run({ status: 'training' }), 'run-a', null, null)).toMatchObject({
      extended: false,
      spec: { training: { steps: 1000 } },
    });
    refused(
      () => planResume(run({ step: 400, status: 'stopped' }), 'run-a', null, 300),
      /already at step 400; pass --until greater than 400/,
    );
  });
});

describe('segments in run.json', () => {
  const s = spec({ steps: 10 });
  function writeRun(name: string, extra: Record<string, unknown>): string {
    const dir = path.join(root, name);
    fs.mkdirSync(dir, { recursive: true });
    const config = {
      kind: 'decoder-only',
      dModel: 16,
      nHeads: 2,
      dFF: 32,
      nDecoderLayers: 1,
      nEncoderLayers: 0,
      maxLen: 16,
      vocabSize: 270,
      srcVocabSize: 0,
      dropout: 0,
      norm: 'pre',
      positional: 'learned',
      activation: 'gelu',
      tieEmbeddings: true,
      bias: true,
      layerNormEps: 1e-5,
      embedScale: false,
      labelSmoothing: 0,
    };
    const data = { description: 'd', documents: 1, bytes: 1, trainTokens: 1, valTokens: 1, skipped: [] };
    const run = {
      format: 'attention-lab-run',
      version: 1,
      createdAt: 'x',
      updatedAt: 'x',
      status: 'completed',
      spec: s,
      config,
      step: 10,
      bestValLoss: null,
      data,
      error: null,
      ...extra,
    };
    fs.writeFileSync(path.join(dir, 'run.json'), JSON.stringify(run));
    return dir;
  }

  it('reads a run.json from before segments existed as one segment', async () => {
    expect((await readRunJson(NODE_FS, writeRun('old', {}))).segments).toEqual([
      { fromStep: 0, toStep: 10, schedule: 'cosine' },
    ]);
  });

  it('reads the segments of an extended run', async () => {
    const segments = [
      { fromStep: 0, toStep: 10, schedule: 'cosine' },
      { fromStep: 10, toStep: 30, schedule: 'restart' },
    ];
    expect(
      (
        await readRunJson(
          NODE_FS,
          writeRun('extended', { spec: { ...s, training: { ...s.training, steps: 30 } }, segments }),
        )
      ).segments,
    ).toEqual(segments);
  });

  it.each<[string, unknown, RegExp]>([
    ['not a list', 'cosine', /segments: expected an array/],
    [
      'with a gap',
      [
        { fromStep: 0, toStep: 10, schedule: 'cosine' },
        { fromStep: 12, toStep: 30, schedule: 'restart' },
      ],
      /segments\[1\]\.fromStep: expected 10/,
    ],
    [
      'ending before the planned total',
      [{ fromStep: 0, toStep: 8, schedule: 'cosine' }],
      /segments end at step 8 but spec.training.steps is 10/,
    ],
    [
      'of another optimizer',
      [{ fromStep: 0, toStep: 10, schedule: 'noam' }],
      /segment 1 has schedule noam, but a run with optimizer adamw and 10 steps plans cosine/,
    ],
  ])('rejects segments %s, saying the file is damaged', async (name, segments, pattern) => {
    let err: unknown;
    try {
      await readRunJson(NODE_FS, writeRun(`bad-${name.replace(/\W+/g, '-')}`, { segments }));
    } catch (e) {
      err = e;
    }
    expect(EngineError.is(err, 'checkpoint/invalid')).toBe(true);
    expect((err as Error).message).toMatch(pattern);
    expect((err as Error).message).toMatch(/damaged/);
  });

  it('segmentsProblem names a segment that does not continue the one before', () => {
    const bad: RunSegment[] = [
      { fromStep: 0, toStep: 10, schedule: 'cosine' },
      { fromStep: 10, toStep: 20, schedule: 'constant' },
    ];
    expect(segmentsProblem(bad, { ...s, training: { ...s.training, steps: 20 } })).toMatch(
      /segment 2 has schedule constant, but it continues a cosine segment, so it must be restart/,
    );
  });
});
