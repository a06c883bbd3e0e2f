/**
 * A training session on the PyTorch engine, hosted by the training worker exactly where our
 * engine's session runs (so the CLI and the extension need no second path): check the Python
 * and its torch against the options, prepare the run folder as our engine does (the same
 * data, tokenizer, config and seeded step-0 weights, saved as the run's checkpoint), write the
 * trainer's inputs (trainerInputs.node.ts), start the trainer as a child process (launch.node.ts), and
 * follow its files into the same notifications (follow.node.ts) until it exits. Stop and pause
 * reach the trainer as files in the run folder; it acts on them at the next step boundary.
 * A full disk stops the run as it stops ours, whichever side's write found no room: the
 * trainer's (it records the one-line reason in run.json and exits) or the lab's (a snapshot:
 * the lab stops the trainer, which checkpoints if it can); run.json says stopped, the reason
 * and the step of the checkpoint kept.
 *
 * Leaves out: the trainer (python/attention_lab_trainer/) and the cluster commands, which
 * `train --print-launch` prints after {@link preparePytorchRun}.
 */

import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import type { PytorchOptions, TrainSpec } from '../../protocol/data';
import type { AttentionSnapshot } from '../../protocol/model';
import type { FileIo } from '../files/atomicFile.node';
import { NODE_IO } from '../files/atomicFile.node';
import { NodeFs } from '../files/fs.node';
import type { LabPlatform } from '../platform/platform';
import { saveCheckpoint } from '../runs/checkpoint';
import { readRunJson } from '../runs/runFolder';
import type { Emit, SessionControl } from '../training/sessionControl';
import { emitSnapshot } from '../training/sessionControl';
import type { Ownership, PreparedSession, PytorchStart, SessionRequest } from '../training/sessionSetup';
import { NOT_OWNED, RunnerError, SetupFailure, prepareSession, reportFailure } from '../training/sessionSetup';
import { saveSnapshot } from '../runs/snapshotFiles';
import { takeSnapshot } from '../inference/takeSnapshot';
import { RunFollower, SnapshotDrawer } from './follow.node';
import { Tail, exitError, recordedDiskFull } from './trainerExit';
import { localLaunch } from './launch.node';
import type { TorchEnv } from './probe.node';
import { checkOptions, describeEnv, probeTorch, resolvedDevice } from './probe.node';
import type { TrainerManifest } from './trainerInputs.node';
import { PYTORCH_DIR, writeTrainerInputs } from './trainerInputs.node';

/** How often the lab looks at the run folder while the trainer runs. */
const POLL_MS = 200;
/** How long a trainer may take to exit after run.json says it is done before the lab ends it. */
const EXIT_GRACE_MS = 30_000;

/**
 * Why the run's batches cannot be shared among `nproc` processes of `accumulate` micro-batches
 * each, or null: a fixed batch (documents, induction) must divide evenly; a pairs batch (its
 * rows vary with the examples' lengths, at least --batch of them) needs a row for each share.
 */
export function batchShareProblem(spec: TrainSpec, nproc: number, accumulate = 1): string | null {
  const rows = spec.training.batchSize;
  const shares = nproc * accumulate;
  if (shares <= 1) return null;
  const what =
    accumulate > 1
      ? `${nproc} ${nproc === 1 ? 'process' : 'processes'} × --accumulate ${accumulate}`
      : `${nproc} processes`;
  if (spec.data.kind === 'pairs' || (spec.data.kind === 'task' && spec.model.kind === 'encoder-decoder')) {
    return shares > rows
      ? `${what} are more shares than the batch has rows (--batch ${rows}); pass --nproc ` +
          `${Math.max(1, Math.floor(rows / accumulate))} or less, or a larger --batch.`
      : null;
  }
  if (rows % shares === 0) return null;
  const fits = Array.from({ length: Math.min(rows, 16) }, (_, i) => i + 1).filter(
    (n) => rows % (n * accumulate) === 0 && n > 1,
  );
  return (
    `--batch ${rows} does not divide among ${what}; pass --nproc ${fits.join(' or ') || 1}, or ` +
    `a --batch that ${shares} divides (e.g. ${Math.ceil(rows / shares) * shares}).`
  );
}

/** The engine as people see it: "pytorch cpu ×2", "pytorch cuda bf16" (the trainer writes the same into run.json). */
export function engineLabel(device: 'cpu' | 'cuda', nproc: number, bf16: boolean): string {
  return `pytorch ${device}${nproc > 1 ? ` ×${nproc}` : ''}${bf16 ? ' bf16' : ''}`;
}

/** Everything {@link preparePytorchRun} needs: the session's request, its control, and the trainer's side. */
export interface PytorchSetup extends SessionRequest {
  readonly control: SessionControl;
  readonly emit: Emit;
  /** The trainer package copied into the run folder (python/attention_lab_trainer's parent). */
  readonly trainerDir: string;
  /** The engine run.json names until the trainer, starting, names it exactly (default `pytorch`). */
  readonly label?: string;
  /** Node's file calls the lab's writes go through (default Node's own; tests pass a disk that fills up). */
  readonly io?: FileIo;
}

/**
 * Prepares (or reopens) the run folder for the trainer: our engine's preparation, then the
 * seeded weights saved as the step-0 checkpoint of a new run, the trainer's inputs, and the
 * step-0 attention snapshot, every file written through `io` (Node's file calls: the trainer
 * runs on Node). A failure is thrown as a {@link SetupFailure} that says what the session owned
 * by then (reportFailure reads it).
 */
export async function preparePytorchRun(
  setup: PytorchSetup,
): Promise<{ prepared: PreparedSession; manifest: TrainerManifest; snapshot: AttentionSnapshot | null }> {
  const files = new NodeFs(setup.io ?? NODE_IO);
  const prepared = await prepareSession({
    ...setup,
    platform: torchPlatform(files),
    otherEngine: setup.label ?? 'pytorch',
  });
  try {
    return await prepareTrainer(prepared, setup, files);
  } catch (e) {
    throw new SetupFailure(e, prepared.own);
  }
}

/** The trainer's start in a prepared run folder: step-0 weights, its inputs, the step-0 snapshot. */
async function prepareTrainer(
  prepared: PreparedSession,
  setup: PytorchSetup,
  files: NodeFs,
): Promise<{ prepared: PreparedSession; manifest: TrainerManifest; snapshot: AttentionSnapshot | null }> {
  const { runDir, stopAt, trainerDir, io = NODE_IO } = setup;
  const { model, dataset, tok, run, trainer, startStep } = prepared;
  // A new run, or one stopped before its first checkpoint and started over: the seeded weights are the trainer's start.
  if (prepared.fresh) await saveCheckpoint(files, runDir, model, null, 0);
  const manifest = writeTrainerInputs(
    runDir,
    { model, tok, dataset, spec: run.spec, segments: run.segments, optimizer: trainer.optimizer.config, stopAt },
    trainerDir,
    io,
  );
  const snapshot =
    run.spec.training.snapshotEvery > 0 && startStep === 0
      ? takeSnapshot(model, dataset, tok, 0, run.spec.training.seed)
      : null;
  if (snapshot) await saveSnapshot(files, runDir, snapshot);
  return { prepared, manifest, snapshot };
}

/**
 * The lab's side of a PyTorch run: Node's file system through `files`, and no helper threads
 * (its model only initializes the weights and draws the probe's snapshots).
 */
function torchPlatform(files: NodeFs): LabPlatform {
  return { fs: files, threads: () => null };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => (typeof addr === 'object' && addr ? resolve(addr.port) : reject(new Error('no free port'))));
    });
  });
}

/** A session's start on the PyTorch engine, and the file calls the lab's own writes go through. */
export interface PytorchSessionStart extends PytorchStart {
  /** Node's file calls (default Node's own; tests pass a disk that fills up). */
  readonly io?: FileIo;
}

/**
 * Runs (or resumes, or extends) the run in `request.runDir` on the PyTorch engine, as
 * `runSession` runs it on ours: the same notifications, the same run folder. The lab's own
 * writes (the prepared folder, snapshots) go through `io`. Never throws.
 */
export async function runPytorchSession(start: PytorchSessionStart): Promise<void> {
  const { request, control, emit, pytorch: opts, options = {}, io = NODE_IO } = start;
  const { runDir, spec, resume, stopAt, extendTo } = request;
  const files = new NodeFs(io);
  let step = 0;
  let own: Readonly<Ownership> = NOT_OWNED;
  try {
    const env = await probeTorch(opts.python, opts.trainerDir, {
      signal: control.signal,
      onWait: (message) => emit({ type: 'train/didLog', level: 'info', message }),
    });
    checkOptions(env, opts);
    const share = batchShareProblem(
      resume ? (await readRunJson(files, runDir)).spec : spec,
      opts.nproc,
      opts.accumulate,
    );
    if (share) throw new RunnerError('pytorch/launch', share);
    emit({ type: 'train/didLog', level: 'info', message: `PyTorch: ${describeEnv(env)}.` });
    const label = engineLabel(resolvedDevice(env, opts.device), opts.nproc, opts.bf16);
    const { prepared, snapshot } = await preparePytorchRun({
      runDir,
      spec,
      resume,
      stopAt,
      extendTo,
      control,
      emit,
      trainerDir: opts.trainerDir,
      label,
      io,
    });
    own = prepared.own;
    step = prepared.startStep;
    const { run } = prepared;
    emit({
      type: 'train/didStart',
      runDir,
      startStep: step,
      totalSteps: run.spec.training.steps,
      segments: run.segments,
      model: prepared.info,
      data: run.data,
    });
    if (snapshot) emitSnapshot(emit, snapshot);
    const end = await launchAndFollow({
      runDir,
      prepared,
      control,
      emit,
      opts,
      env,
      headScores: options.headScores ?? true,
      files,
    });
    step = end.step;
    if ('failure' in end) throw end.failure;
    emit({ type: 'train/didFinish', step: end.step, reason: end.reason });
  } catch (e) {
    await reportFailure(files, runDir, own, e, step, emit);
  }
}

/** Ends a process and its group (the launcher and every rank: it was started as a group leader). */
function killGroup(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    process.kill(process.platform === 'win32' ? pid : -pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

/** A trainer to start and follow: the prepared run, its control, the options, and the lab's file system. */
interface TrainerLaunch {
  readonly runDir: string;
  readonly prepared: PreparedSession;
  readonly control: SessionControl;
  readonly emit: Emit;
  readonly opts: PytorchOptions;
  readonly env: TorchEnv;
  /** Score every head in the snapshots the lab draws. */
  readonly headScores: boolean;
  readonly files: NodeFs;
}

/**
 * How a trainer's run ended: its reason, or the failure that ended it; `step` is the last step
 * the trainer logged (or the snapshot the lab could not save).
 */
type TrainerEnd =
  | { readonly step: number; readonly reason: 'completed' | 'stopped' }
  | { readonly step: number; readonly failure: unknown };

/**
 * Starts the trainer and follows its files until it exits; says how the run ended. Throws only
 * when the trainer could not be started (the run is then still at its start step).
 */
async function launchAndFollow(launch: TrainerLaunch): Promise<TrainerEnd> {
  const { runDir, prepared, control, emit, opts, env, headScores, files } = launch;
  let step = prepared.startStep;
  const logDir = fs.mkdtempSync(path.join(os.tmpdir(), 'attention-lab-torchrun-'));
  const cmd = localLaunch(runDir, opts, env, await freePort(), logDir);
  const drawer = await SnapshotDrawer.open(files, runDir, prepared.model.backendOrThrow(), headScores);
  const follower = new RunFollower(runDir, emit, drawer, prepared.startStep, files);
  const tail = new Tail();
  const child = spawn(cmd.command, [...cmd.args], {
    env: { ...process.env, ...cmd.env, PYTHONUNBUFFERED: '1' },
    stdio: ['pipe', 'pipe', 'pipe'],
    // Its own process group: a terminal's Ctrl-C reaches the lab, which stops the run with a checkpoint.
    detached: process.platform !== 'win32',
    windowsHide: true,
  });
  child.stdout.on('data', (d: Buffer) => tail.push(d));
  child.stderr.on('data', (d: Buffer) => tail.push(d));
  const exited = new Promise<{ code: number | null; signal: string | null }>((resolve, reject) => {
    child.on('error', (e) => reject(new RunnerError('pytorch/launch', `Could not start ${cmd.command}: ${e.message}`)));
    child.on('close', (code, signal) => resolve({ code, signal }));
  });
  const controlDir = path.join(runDir, PYTORCH_DIR);
  let paused = false;
  let stopping = false;
  let done = false;
  let finishedAt: number | null = null;
  let ended = false;
  void exited.finally(() => (done = true)).catch(() => undefined);
  const stop = (): void => {
    stopping = true;
    try {
      fs.writeFileSync(path.join(controlDir, 'stop'), '');
    } catch {
      child.stdin.end(); // no room even for an empty file: the end of its input stops the trainer too
    }
  };
  try {
    while (!done) {
      await Promise.race([exited.catch(() => undefined), new Promise((r) => setTimeout(r, POLL_MS))]);
      // A snapshot the lab could not save for a full disk stops the run, as it stops ours.
      if ((control.isStopped || follower.diskFull) && !stopping) stop();
      else if (control.isPaused !== paused && !stopping) {
        paused = control.isPaused;
        if (paused) fs.writeFileSync(path.join(controlDir, 'pause'), '');
        else fs.rmSync(path.join(controlDir, 'pause'), { force: true });
      }
      await follower.poll();
      step = follower.step;
      const status = follower.runStatus;
      if (status === 'completed' || status === 'stopped' || status === 'failed') finishedAt ??= Date.now();
      if (finishedAt !== null && Date.now() - finishedAt > EXIT_GRACE_MS && !ended) {
        // The run is saved and over; a process stuck on its way out (a launcher or a library
        // that hangs at exit) must not keep the session, or the GPU, busy.
        ended = true;
        emit({
          type: 'train/didLog',
          level: 'warn',
          message:
            `The PyTorch trainer had not exited ${EXIT_GRACE_MS / 1000} s after the run was ` + `${status}; ended it.`,
        });
        killGroup(child.pid);
      }
    }
    const { code, signal } = await exited;
    await follower.poll();
    step = follower.step;
    const full = follower.diskFull;
    if (full) {
      step = full.step;
      throw full.error;
    }
    const saved = ended && (follower.runStatus === 'completed' || follower.runStatus === 'stopped');
    if (code !== 0 && !saved) throw await exitError(files, runDir, code, signal, tail);
    // A trainer ended after recording a full disk (it had stopped, then hung on its way out).
    const recorded = await recordedDiskFull(files, runDir);
    if (recorded) throw recorded;
    const run = await readRunJson(files, runDir);
    return { step: run.step, reason: run.status === 'completed' ? 'completed' : 'stopped' };
  } catch (failure) {
    return { step, failure };
  } finally {
    fs.rmSync(path.join(controlDir, 'pause'), { force: true });
    fs.rmSync(logDir, { recursive: true, force: true });
    if (child.exitCode === null && child.signalCode === null) child.stdin.end();
  }
}
