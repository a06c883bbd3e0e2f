/**
 * Following a run folder that another process trains (the PyTorch trainer), through its
 * files alone, and turning what lands there into the training worker's notifications, so
 * the CLI's progress line, the extension's status bar and the dashboard show it as they show
 * our engine's runs:
 * - metrics.jsonl, read on from where the last poll stopped (a line cut short waits for the
 *   next poll): `step` lines → train/didStep, `eval` lines → train/didEval;
 * - run.json: a new `step` → train/didSaveCheckpoint, status paused/training → didPause/didResume;
 * - snapshots/step-N.weights.safetensors (the model at a snapshot step, our checkpoint
 *   format): the lab's own model draws the probe's attention and scores every head
 *   (snapshots.ts, the same code as for our engine), saves the snapshot, sends
 *   train/didSnapshot and removes the weights. This is how attention over training works for
 *   PyTorch runs: what a snapshot is (probe, diagnostic sequences, score definitions) stays
 *   written once, in TypeScript, and the GPU never waits for it.
 *
 * Leaves out: starting and stopping the trainer (pytorchSession.ts).
 */

import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Transformer } from '../../engine/models/transformer';
import type { Tokenizer } from '../../engine/tokenizers/special';
import { validateStepMetrics } from '../../protocol/data';
import type { EvalMetrics } from '../../protocol/data';
import type { Dataset } from '../data/dataset';
import { loadModelFile } from '../runs/checkpoint';
import type { RunStatus } from '../runs/runFolder';
import { RUN_FILES, readRunJson } from '../runs/runFolder';
import type { Emit } from '../training/sessionControl';
import { saveSnapshot, takeSnapshot } from '../training/snapshots';

/** What the follower needs to draw snapshots: the lab's model of the run and its data. */
export interface SnapshotMaker {
  readonly model: Transformer;
  readonly dataset: Dataset;
  readonly tok: Tokenizer;
  readonly seed: number;
  /** Score heads (default true; only the benchmark turns it off). */
  readonly headScores?: boolean;
}

const WEIGHTS = /^step-(\d+)\.weights\.safetensors$/;

/** Snapshot weights waiting in `runDir`, by step. */
export function pendingSnapshotWeights(runDir: string): { step: number; file: string }[] {
  const dir = path.join(runDir, RUN_FILES.snapshots);
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir).flatMap((n) => {
    const m = WEIGHTS.exec(n);
    return m ? [{ step: Number(m[1]), file: path.join(dir, n) }] : [];
  }).sort((a, b) => a.step - b.step);
}

/** Polls a run folder's files and emits what changed since the last poll. */
export class RunFollower {
  private offset = 0;
  private partial = '';
  private lastStep: number;
  private checkpointStep: number;
  private status: RunStatus | null = null;

  constructor(
    private readonly runDir: string,
    private readonly emit: Emit,
    private readonly snapshots: SnapshotMaker,
    startStep: number,
  ) {
    this.lastStep = startStep;
    this.checkpointStep = startStep;
    // Lines up to the start were there before this session (resume truncates the rest).
    const file = path.join(runDir, RUN_FILES.metrics);
    this.offset = fs.existsSync(file) ? fs.statSync(file).size : 0;
  }

  /** The last step the trainer logged. */
  get step(): number {
    return this.lastStep;
  }

  /** Reads everything new: metrics, run.json, snapshot weights. */
  poll(): void {
    this.readMetrics();
    this.readRun();
    for (const w of pendingSnapshotWeights(this.runDir)) this.snapshot(w.step, w.file);
  }

  private readMetrics(): void {
    const file = path.join(this.runDir, RUN_FILES.metrics);
    if (!fs.existsSync(file)) return;
    const size = fs.statSync(file).size;
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
      this.emit({ type: 'train/didEval', step: e.step, loss: e.loss, ppl: e.ppl ?? Math.exp(e.loss), exactMatch: e.exactMatch ?? null, bleu: e.bleu ?? null });
    }
  }

  private readRun(): void {
    let status: RunStatus;
    let step: number;
    try {
      ({ status, step } = readRunJson(this.runDir));
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

  private snapshot(step: number, file: string): void {
    const s = this.snapshots;
    try {
      loadModelFile(file, s.model);
    } catch {
      return; // still being renamed into place, or cut short: the next poll tries again
    }
    const snap = takeSnapshot(s.model, s.dataset, s.tok, step, s.seed, s.headScores ?? true);
    saveSnapshot(this.runDir, snap);
    fs.rmSync(file, { force: true });
    this.emit({ type: 'train/didSnapshot', ...snap }, [...snap.maps.map((m) => m.data.buffer as ArrayBuffer), ...snap.masks.map((m) => m.data.buffer as ArrayBuffer)]);
  }
}
