/**
 * Nothing is lost at any instant (lab/runs/recovery.ts, lab/files/wholeFileFs.ts): a run is
 * killed before every single change its training makes to the files — checkpoints after every
 * step included — on memory playing VS Code's `workspace.fs` (no append, a rename over a file
 * that deletes it first, a `writeFile` that lands in two pieces) and on Node's disk. At each
 * instant a reader sees a run.json, metrics never shorter than the checkpoint and never
 * shorter than an instant before, and a restart (`train --resume` when run.json is there,
 * else `train --out` into the same folder) finishes the run with every step logged once and
 * the weights bit-identical to an uninterrupted run's. The same for kills at every change of
 * a resume itself.
 */

import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { LabFs } from '../../../../src/lab/files/labFs';
import { exists, listNames, readText, writeFile } from '../../../../src/lab/files/labFs';
import { MemoryFs, workspaceLikeFs } from '../../../../src/lab/files/memoryFs';
import { NodeFs } from '../../../../src/lab/files/fs.node';
import { readCheckpointConfig } from '../../../../src/lab/runs/checkpoint';
import { readMetrics, readRunJson } from '../../../../src/lab/runs/runFolder';
import { recoverRunFolder } from '../../../../src/lab/runs/recovery';
import { runSession } from '../../../../src/lab/training/session';
import { SessionControl } from '../../../../src/lab/training/sessionControl';
import type { TrainSpec } from '../../../../src/protocol/data';
import type { FromTrainingWorker } from '../../../../src/protocol/trainingWorker';
import { KillSwitch, killableFs, killableIo } from '../files/killSwitch';
import { platformOf, sessionRequest } from '../tinyRuns';

const STEPS = 3;

const TEXT = 'the cat sat on the mat. the dog sat on the log. '.repeat(4);

/** A tiny decoder on one short document, a checkpoint after every step. */
function spec(file: string, root: string): TrainSpec {
  return {
    model: { kind: 'decoder-only', preset: 'tiny', overrides: { dModel: 8, nHeads: 2, dFF: 16, nDecoderLayers: 1 } },
    tokenizer: { type: 'char', vocabSize: 1000 },
    data: { kind: 'documents', files: [file], root },
    training: {
      steps: STEPS,
      batchSize: 2,
      seqLen: 8,
      evalEvery: 0,
      checkpointEvery: 1,
      snapshotEvery: 0,
      seed: 5,
      optimizer: 'adamw',
      lr: 3e-3,
      warmup: 0,
    },
    backend: 'reference',
  };
}

/** A disk that outlives the processes writing to it, and a process's view of it. */
interface Disk {
  /** The run folder. */
  readonly dir: string;
  readonly spec: TrainSpec;
  /** A process's file system; `sw` counts its changes and kills it. */
  process(sw: KillSwitch): LabFs;
}

interface DiskKind {
  readonly name: string;
  fresh(): Promise<Disk>;
}

const DISKS: readonly DiskKind[] = [
  {
    name: 'memory playing workspace.fs',
    fresh: async () => {
      const mem = new MemoryFs();
      const root = 'vscode-remote://host/home/lab';
      await writeFile(mem, `${root}/data/a.txt`, TEXT);
      return {
        dir: `${root}/run`,
        spec: spec(`${root}/data/a.txt`, `${root}/data`),
        process: (sw) => {
          mem.onChange = (what, p) => sw.change(`${what} ${p}`);
          return killableFs(workspaceLikeFs(mem), sw);
        },
      };
    },
  },
  {
    name: "Node's disk",
    fresh: async () => {
      const root = fs.mkdtempSync(path.join(os.tmpdir(), 'al-kill-'));
      fs.mkdirSync(path.join(root, 'data'));
      fs.writeFileSync(path.join(root, 'data', 'a.txt'), TEXT);
      return {
        dir: path.join(root, 'run'),
        spec: spec(path.join(root, 'data', 'a.txt'), path.join(root, 'data')),
        process: (sw) => killableFs(new NodeFs(killableIo(sw)), sw),
      };
    },
  },
];

/** One process: trains (or resumes) the run until it finishes or `sw` kills it. */
async function session(disk: Disk, sw: KillSwitch, resume: boolean): Promise<FromTrainingWorker[]> {
  const events: FromTrainingWorker[] = [];
  await runSession({
    platform: platformOf(disk.process(sw)),
    request: sessionRequest(disk.dir, disk.spec, { resume }),
    control: new SessionControl(),
    emit: (m) => events.push(m),
  });
  return events;
}

/**
 * The restart after a kill, as a person would: resume the run, or start it again where there
 * is none; a run whose run.json says completed is left alone (null).
 */
async function restart(disk: Disk, sw = new KillSwitch()): Promise<FromTrainingWorker[] | null> {
  const fs = disk.process(new KillSwitch());
  const resume = await exists(fs, fs.join(disk.dir, 'run.json'));
  if (resume && (await readRunJson(fs, disk.dir)).status === 'completed') return null;
  return session(disk, sw, resume);
}

/** What a reader (the dashboard, the runs view) sees of the run right now. */
async function view(
  disk: Disk,
): Promise<{ run: boolean; steps: { step: number; loss: number }[]; checkpoint: number | null }> {
  const fs = disk.process(new KillSwitch());
  const run = await readRunJson(fs, disk.dir).then(
    () => true,
    () => false,
  );
  const steps = run ? (await readMetrics(fs, disk.dir)).steps.map((s) => ({ step: s.step, loss: s.loss })) : [];
  const checkpoint = await readCheckpointConfig(fs, disk.dir).then(
    (c) => c.step,
    () => null,
  );
  return { run, steps, checkpoint };
}

interface Reference {
  readonly changes: number;
  readonly trace: readonly string[];
  readonly losses: readonly number[];
  readonly model: Uint8Array;
}

async function reference(kind: DiskKind): Promise<Reference> {
  const disk = await kind.fresh();
  const sw = new KillSwitch(Number.POSITIVE_INFINITY, true);
  const events = await session(disk, sw, false);
  expect(events.find((e) => e.type === 'train/didFail')).toBeUndefined();
  const fs = disk.process(new KillSwitch());
  return {
    changes: sw.changes,
    trace: sw.trace,
    losses: (await readMetrics(fs, disk.dir)).steps.map((s) => s.loss),
    model: await fs.readFile(fs.join(disk.dir, 'model.safetensors')),
  };
}

/** The run finished after its restarts exactly as the uninterrupted one did. */
async function expectFinishedAsReference(
  disk: Disk,
  ref: Reference,
  events: FromTrainingWorker[] | null,
  where: string,
): Promise<void> {
  if (events) {
    expect(
      events.find((e) => e.type === 'train/didFail'),
      where,
    ).toBeUndefined();
    expect(
      events.find((e) => e.type === 'train/didFinish'),
      where,
    ).toMatchObject({ step: STEPS, reason: 'completed' });
  }
  const fs = disk.process(new KillSwitch());
  expect((await readRunJson(fs, disk.dir)).status, where).toBe('completed');
  const steps = (await readMetrics(fs, disk.dir)).steps;
  expect(
    steps.map((s) => s.step),
    where,
  ).toEqual(Array.from({ length: STEPS }, (_, i) => i + 1));
  expect(
    steps.map((s) => s.loss),
    where,
  ).toEqual(ref.losses);
  expect(
    Buffer.from(await fs.readFile(fs.join(disk.dir, 'model.safetensors'))).equals(Buffer.from(ref.model)),
    `${where}: final weights`,
  ).toBe(true);
}

/** What a reader sees is whole: every logged step once, in order, with the reference's loss, and at least up to the checkpoint. */
function expectWhole(seen: Awaited<ReturnType<typeof view>>, ref: Reference, where: string): void {
  expect(
    seen.steps.map((s) => s.step),
    where,
  ).toEqual(Array.from({ length: seen.steps.length }, (_, i) => i + 1));
  expect(
    seen.steps.map((s) => s.loss),
    where,
  ).toEqual(ref.losses.slice(0, seen.steps.length));
  if (seen.checkpoint !== null) {
    expect(seen.run, `${where}: run.json beside the checkpoint`).toBe(true);
    expect(
      seen.steps.length,
      `${where}: metrics up to the checkpoint of step ${seen.checkpoint}`,
    ).toBeGreaterThanOrEqual(seen.checkpoint);
  }
}

describe.each(DISKS)('a run killed at every instant on $name', (kind) => {
  it('is seen whole at each instant, and a restart finishes it as if it had never stopped', async () => {
    const ref = await reference(kind);
    let before = { run: false, steps: 0, checkpoint: -1 };
    for (let cut = 1; cut <= ref.changes; cut++) {
      const where = `killed before change ${cut} of ${ref.changes} (${ref.trace[cut - 1]})`;
      const disk = await kind.fresh();
      const sw = new KillSwitch(cut);
      await session(disk, sw, false);
      expect(sw.dead, where).toBe(true);
      const seen = await view(disk);
      expectWhole(seen, ref, where);
      // Nothing a reader once saw disappears at a later instant.
      expect(seen.run || !before.run, `${where}: run.json`).toBe(true);
      expect(seen.steps.length, `${where}: metrics`).toBeGreaterThanOrEqual(before.steps);
      expect(seen.checkpoint ?? -1, `${where}: checkpoint`).toBeGreaterThanOrEqual(before.checkpoint);
      before = { run: seen.run, steps: seen.steps.length, checkpoint: seen.checkpoint ?? -1 };
      await expectFinishedAsReference(disk, ref, await restart(disk), where);
    }
  });

  it('says so when a run killed before its first checkpoint starts over, and --out takes a folder holding only temporary files', async () => {
    const ref = await reference(kind);
    const firstCheckpoint = ref.trace.findIndex((t) => /optimizer\.safetensors/.test(t)) + 1;
    const early = await kind.fresh();
    await session(early, new KillSwitch(firstCheckpoint), false);
    const events = await session(early, new KillSwitch(), true);
    const logs = events.flatMap((e) => (e.type === 'train/didLog' ? [e.message] : []));
    expect(logs).toContain('The run stopped before its first checkpoint was saved; starting it over from step 0.');
    expect(events.find((e) => e.type === 'train/didStart')).toMatchObject({ startStep: 0 });
    await expectFinishedAsReference(early, ref, events, 'started over');
    // Killed while writing its run.json: the folder holds a temporary file alone, and a new run takes it.
    const firstRunJson = ref.trace.findIndex((t) => /run\.json/.test(t)) + 2;
    const earlier = await kind.fresh();
    await session(earlier, new KillSwitch(firstRunJson), false);
    const fs = earlier.process(new KillSwitch());
    expect((await fs.list(earlier.dir)).map((e) => e.name)).toEqual([expect.stringMatching(/^\.run\.json\.\d+\.tmp$/)]);
    await expectFinishedAsReference(
      earlier,
      ref,
      await session(earlier, new KillSwitch(), false),
      'a new run over the leftovers',
    );
  });

  it('a resume killed at every instant is restarted and finishes as if nothing had stopped', async () => {
    const ref = await reference(kind);
    // Three instants of the first run: inside its first metrics write, between the two renames
    // of its second checkpoint, and inside the metrics write after that checkpoint.
    const firstLog = ref.trace.findIndex((t) => /metrics\.jsonl/.test(t)) + 2;
    const models = ref.trace.flatMap((t, i) => (/rename \S*\.model\.safetensors\.\d+\.tmp/.test(t) ? [i + 1] : []));
    const midPair = models[1] as number;
    const afterPair = ref.trace.findIndex((t, i) => i > midPair && /metrics\.jsonl/.test(t)) + 2;
    for (const first of [firstLog, midPair, afterPair]) {
      let resumeChanges = Number.POSITIVE_INFINITY;
      for (let cut = 1; cut <= resumeChanges; cut++) {
        const where = `first killed before change ${first} (${ref.trace[first - 1]}), the restart before its change ${cut}`;
        const disk = await kind.fresh();
        await session(disk, new KillSwitch(first), false);
        const sw = new KillSwitch(cut);
        const events = await restart(disk, sw);
        if (!sw.dead) {
          // The restart finished before the cut: every instant of it has been tried.
          await expectFinishedAsReference(disk, ref, events, where);
          resumeChanges = cut - 1;
          break;
        }
        expectWhole(await view(disk), ref, where);
        await expectFinishedAsReference(disk, ref, await restart(disk), where);
      }
      expect(resumeChanges).toBeGreaterThan(5);
    }
  });
});

describe('recoverRunFolder on what a stopped writer left', () => {
  it('keeps the history a temporary file holds, puts kept copies back (snapshots too) and removes the rest', async () => {
    const mem = new MemoryFs();
    const dir = '/runs/r';
    const lines = (n: number): string =>
      Array.from({ length: n }, (_, i) => `{"type":"step","step":${i + 1}}\n`).join('');
    // Issue 27's state: the log renamed away by a replace that never finished, its 320 lines in a temporary file.
    await writeFile(mem, `${dir}/.metrics.jsonl.17.tmp`, lines(320));
    await writeFile(mem, `${dir}/.metrics.jsonl.18.tmp`, lines(12).slice(0, -5)); // an older write, cut off
    await writeFile(mem, `${dir}/.run.json.old`, '{"kept":true}\n');
    await writeFile(mem, `${dir}/.evaluations.jsonl.old`, 'stale\n');
    await writeFile(mem, `${dir}/evaluations.jsonl`, 'new\n');
    await writeFile(mem, `${dir}/snapshots/.step-0000010.safetensors.old`, 'snap');
    const got = await recoverRunFolder(mem, dir);
    expect(got).toEqual({ checkpointStep: null, hasModel: false });
    expect((await listNames(mem, dir)).sort()).toEqual(['evaluations.jsonl', 'metrics.jsonl', 'run.json', 'snapshots']);
    expect(await readText(mem, `${dir}/metrics.jsonl`)).toBe(lines(320));
    expect(await readText(mem, `${dir}/run.json`)).toBe('{"kept":true}\n');
    expect(await readText(mem, `${dir}/evaluations.jsonl`)).toBe('new\n');
    expect(await listNames(mem, `${dir}/snapshots`)).toEqual(['step-0000010.safetensors']);
  });
});
