/**
 * Following a run folder that another process trains (the PyTorch trainer), through its
 * files alone, and turning what lands there into the training worker's notifications, so
 * the CLI's progress line, the extension's status bar and the dashboard show it as they show
 * our engine's runs:
 * - metrics.jsonl, read on from where the last poll stopped (a line cut short waits for the
 *   next poll; a log cut back after a failed append is read on from its new end): `step`
 *   lines → train/didStep, `eval` lines → train/didEval (with the trainer's bytes and bits
 *   per byte, counted as our engine counts them);
 * - run.json: a new `step` → train/didSaveCheckpoint, status paused/training → didPause/didResume;
 * - snapshots/step-N.weights.safetensors (the model at a snapshot step, our checkpoint
 *   format): the lab's own model of the run, planned as our engine's session plans it, draws
 *   the probe's attention and scores every head (snapshots.ts, the same code as for our
 *   engine), saves the snapshot, sends train/didSnapshot and removes the weights. A full disk
 *   while saving one keeps its weights (drawn when there is room) and is reported once
 *   ({@link RunFollower.diskFull}), for the session to stop the trainer.
 *
 * That is how attention over training works for PyTorch runs, chosen over a Python port of the
 * snapshot: what a snapshot is (probe, diagnostic sequences, score definitions) stays written
 * once, in TypeScript, with its tests; the GPU never waits for it; and a run trained where no
 * lab was watching (a cluster) keeps its weights until a lab opens it (`heads`, `report`:
 * {@link drawPendingSnapshots}, from the probe and plan the manifest holds).
 *
 * It runs on Node only (beside the trainer's processes): the folder is listed and the metrics
 * log read with Node's `fs`; what the lab reads and writes of a run goes through the LabFs
 * given (Node's; tests pass one whose disk fills up).
 *
 * Leaves out: starting and stopping the trainer (pytorchSession.node.ts).
 */

import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Backend } from '../../engine/backend';
import type { Batch } from '../../engine/models/inputs';
import { Transformer } from '../../engine/models/transformer';
import type { Tokenizer } from '../../engine/tokenizers/special';
import { validateStepMetrics } from '../../protocol/data';
import type { EvalMetrics } from '../../protocol/data';
import type { AttentionSnapshot } from '../../protocol/model';
import type { LabFs } from '../files/labFs';
import { DiskFullError } from '../files/fileErrors';
import { loadModelFile } from '../runs/checkpoint';
import type { RunJson, RunStatus } from '../runs/runFolder';
import { RUN_FILES, readRunJson } from '../runs/runFolder';
import { modelPadId } from '../runs/specModel';
import { readTokenizer } from '../runs/tokenizerFile';
import type { Emit } from '../training/sessionControl';
import { emitSnapshot } from '../training/sessionControl';
import { saveSnapshot } from '../runs/snapshotFiles';
import { scoredSnapshot, snapshotOf } from '../inference/takeSnapshot';
import type { TrainerManifest } from './trainerInputs.node';
import { PYTORCH_DIR, batchFromIds, readManifest } from './trainerInputs.node';
import { readCapped } from '../files/fileCaps';

const WEIGHTS = /^step-(\d+)\.weights\.safetensors$/;

/** Snapshot weights waiting in `runDir`, by step. */
export function pendingSnapshotWeights(runDir: string): { step: number; file: string }[] {
  const dir = path.join(runDir, RUN_FILES.snapshots);
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir)
    .flatMap((n) => {
      const m = WEIGHTS.exec(n);
      return m ? [{ step: Number(m[1]), file: path.join(dir, n) }] : [];
    })
    .sort((a, b) => a.step - b.step);
}

/** Draws attention snapshots from weights files of one run, with the lab's model of it. */
export class SnapshotDrawer {
  private readonly model: Transformer;
  private readonly probe: Batch;
  private readonly tok: Tokenizer;
  private readonly seed: number;

  private constructor(
    private readonly files: LabFs,
    run: RunJson,
    m: TrainerManifest,
    tok: Tokenizer,
    backend: Backend,
    private readonly headScores: boolean,
    probeBytes: Uint8Array,
  ) {
    this.tok = tok;
    this.seed = run.spec.training.seed;
    this.probe = batchFromIds(new Int32Array(probeBytes.slice().buffer), m.probe);
    const plan = {
      maxBatch: Math.max(m.plan.maxBatch, this.probe.B),
      maxLen: m.plan.maxLen,
      ...(run.config.kind === 'encoder-decoder' ? { maxSrcLen: m.plan.maxSrcLen } : {}),
      padId: modelPadId(this.tok),
    };
    this.model = new Transformer(run.config, plan).bind(backend);
  }

  /** The drawer of the run in `runDir` (read through `files`), on `backend`. */
  static async open(files: LabFs, runDir: string, backend: Backend, headScores = true): Promise<SnapshotDrawer> {
    const m = readManifest(runDir);
    const probe = await readCapped(files, files.join(runDir, PYTORCH_DIR, m.probe.file), 'probe file');
    return new SnapshotDrawer(
      files,
      await readRunJson(files, runDir),
      m,
      await readTokenizer(files, runDir),
      backend,
      headScores,
      probe,
    );
  }

  /** The snapshot of the weights in `file` at `step`; throws when the file cannot be loaded. */
  async draw(step: number, file: string): Promise<AttentionSnapshot> {
    await loadModelFile(this.files, file, this.model);
    return this.headScores
      ? scoredSnapshot(this.model, this.probe, this.tok, step, this.seed)
      : snapshotOf(this.model, this.probe, this.tok, step);
  }
}

/**
 * Turns every snapshot weights file waiting in `runDir` into a snapshot (saved through `files`,
 * weights removed), calling `onSnapshot` with each; `drawer` may be a function, called only
 * when there is something to draw. Returns how many it drew. A file that cannot be loaded yet
 * (a writer still renaming it) is left for the next call; a full disk throws DiskFullError
 * and keeps the weights of the snapshot it could not save.
 */
export async function drawPendingSnapshots(
  files: LabFs,
  runDir: string,
  drawer: SnapshotDrawer | (() => Promise<SnapshotDrawer>),
  onSnapshot?: (s: AttentionSnapshot) => void,
): Promise<number> {
  const pending = pendingSnapshotWeights(runDir);
  if (pending.length === 0) return 0;
  const d = typeof drawer === 'function' ? await drawer() : drawer;
  let drawn = 0;
  for (const { step, file } of pending) {
    let snap: AttentionSnapshot;
    try {
      snap = await d.draw(step, file);
    } catch {
      continue;
    }
    await saveSnapshot(files, runDir, snap);
    await files.remove(file);
    onSnapshot?.(snap);
    drawn++;
  }
  return drawn;
}

/** Polls a run folder's files and emits what changed since the last poll. */
export class RunFollower {
  private offset = 0;
  private partial = '';
  private lastStep: number;
  private checkpointStep: number;
  private status: RunStatus | null = null;
  private full: { readonly error: DiskFullError; readonly step: number } | null = null;

  constructor(
    private readonly runDir: string,
    private readonly emit: Emit,
    private readonly drawer: SnapshotDrawer,
    startStep: number,
    private readonly files: LabFs,
  ) {
    this.lastStep = startStep;
    this.checkpointStep = startStep;
    // Lines up to the start were there before this session (resume truncates the rest).
    const file = path.join(runDir, RUN_FILES.metrics);
    this.offset = fs.existsSync(file) ? fs.statSync(file).size : 0;
  }

  /** The status run.json had at the last poll (null before the first). */
  get runStatus(): RunStatus | null {
    return this.status;
  }

  /** The last step the trainer logged. */
  get step(): number {
    return this.lastStep;
  }

  /** The first snapshot the lab could not save for a full disk, and its step (null while there was room). */
  get diskFull(): { readonly error: DiskFullError; readonly step: number } | null {
    return this.full;
  }

  /** Reads everything new: metrics, run.json, snapshot weights (none after a full disk). */
  async poll(): Promise<void> {
    this.readMetrics();
    await this.readRun();
    if (this.full) return;
    try {
      await drawPendingSnapshots(this.files, this.runDir, this.drawer, (snap) => emitSnapshot(this.emit, snap));
    } catch (e) {
      if (!DiskFullError.is(e)) throw e;
      const step = /^step-(\d+)\./.exec(path.basename(e.file));
      this.full = { error: e, step: step ? Number(step[1]) : this.lastStep };
    }
  }

  private readMetrics(): void {
    const file = path.join(this.runDir, RUN_FILES.metrics);
    if (!fs.existsSync(file)) return;
    const size = fs.statSync(file).size;
    if (size < this.offset) {
      // An append that failed (a full disk) was cut back: read on from the log's new end.
      this.offset = size;
      this.partial = '';
    }
    if (size <= this.offset) return;
    const fd = fs.openSync(file, 'r');
    const buf = Buffer.alloc(size - this.offset);
    try {
      fs.readSync(fd, buf, 0, buf.length, this.offset);
    } finally {
      fs.closeSync(fd);
    }
    this.offset = size;
    const lines = (this.partial + buf.toString('utf8')).split('\n');
    this.partial = lines.pop() ?? '';
    for (const text of lines) if (text.trim()) this.line(text);
  }

  private line(text: string): void {
    let v: Record<string, unknown>;
    try {
      v = JSON.parse(text) as Record<string, unknown>;
    } catch {
      return; // not ours to judge; readMetrics (runFolder.ts) skips it too
    }
    if (v.type === 'step') {
      const { type: _type, ...fields } = v;
      const m = validateStepMetrics(fields);
      this.lastStep = m.step;
      this.emit({ type: 'train/didStep', ...m });
    } else if (v.type === 'eval' && typeof v.step === 'number' && typeof v.loss === 'number') {
      const e = v as unknown as EvalMetrics;
      const bpb = e.bpb === undefined ? {} : { bpb: typeof e.bpb === 'number' ? e.bpb : null };
      this.emit({
        type: 'train/didEval',
        step: e.step,
        loss: e.loss,
        ppl: e.ppl ?? Math.exp(e.loss),
        exactMatch: e.exactMatch ?? null,
        bleu: e.bleu ?? null,
        ...bpb,
      });
    }
  }

  private async readRun(): Promise<void> {
    let status: RunStatus;
    let step: number;
    try {
      ({ status, step } = await readRunJson(this.files, this.runDir));
    } catch {
      return; // replaced between two reads: the next poll sees it
    }
    if (step !== this.checkpointStep) {
      this.checkpointStep = step;
      this.emit({ type: 'train/didSaveCheckpoint', step, path: path.join(this.runDir, RUN_FILES.model) });
    }
    if (status === 'paused' && this.status !== 'paused') this.emit({ type: 'train/didPause', step: this.lastStep });
    if (status === 'training' && this.status === 'paused') this.emit({ type: 'train/didResume', step: this.lastStep });
    this.status = status;
  }
}
