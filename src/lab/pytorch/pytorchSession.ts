/**
 * A training session on the PyTorch engine, hosted by the training worker exactly where our
 * engine's session runs (so the CLI and the extension need no second path): check the Python
 * and its torch against the options, prepare the run folder as our engine does (the same
 * data, tokenizer, config and seeded step-0 weights, saved as the run's checkpoint), write the
 * trainer's inputs (trainerInputs.ts), start the trainer as a child process (launch.ts), and
 * follow its files into the same notifications (follow.ts) until it exits. Stop and pause
 * reach the trainer as files in the run folder; it acts on them at the next step boundary.
 *
 * Leaves out: the trainer (scripts/pytorch/trainer.py) and the cluster commands, which
 * `train --print-launch` prints after {@link preparePytorchRun}.
 */

import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { EngineError } from '../../engine/errors';
import type { PytorchOptions, TrainSpec } from '../../protocol/data';
import type { AttentionSnapshot } from '../../protocol/model';
import { saveCheckpoint } from '../runs/checkpoint';
import { readRunJson } from '../runs/runFolder';
import type { Emit, SessionControl } from '../training/sessionControl';
import { emitSnapshot } from '../training/sessionControl';
import type { Ownership, PreparedSession } from '../training/sessionSetup';
import { RunnerError, prepareSession, reportFailure } from '../training/sessionSetup';
import { saveSnapshot, takeSnapshot } from '../training/snapshots';
import { RunFollower, SnapshotDrawer } from './follow';
import { localLaunch } from './launch';
import type { TorchEnv } from './probe';
import { checkOptions, describeEnv, probeTorch, resolvedDevice } from './probe';
import type { TrainerManifest } from './trainerInputs';
import { PYTORCH_DIR, writeTrainerInputs } from './trainerInputs';

/** How often the lab looks at the run folder while the trainer runs. */
const POLL_MS = 200;
/** How long a trainer may take to exit after run.json says it is done before the lab ends it. */
const EXIT_GRACE_MS = 30_000;
/** Lines of the trainer's output kept for an error message. */
const TAIL_LINES = 60;
/** A Python exception's line: "RuntimeError: …", "torch.cuda.OutOfMemoryError: …". */
const EXCEPTION = /^([A-Za-z_][\w.]*)?(Error|Exception|Interrupt)\b[^:]*:/;

/**
 * Why the run's batches cannot be shared among `nproc` processes of `accumulate` micro-batches
 * each, or null: a fixed batch (documents, induction) must divide evenly; a pairs batch (its
 * rows vary with the examples' lengths, at least --batch of them) needs a row for each share.
 */
export function batchShareProblem(spec: TrainSpec, nproc: number, accumulate = 1): string | null {
  const rows = spec.training.batchSize;
  const shares = nproc * accumulate;
  if (shares <= 1) return null;
  const what = accumulate > 1 ? `${nproc} ${nproc === 1 ? 'process' : 'processes'} × --accumulate ${accumulate}` : `${nproc} processes`;
  if (spec.data.kind === 'pairs' || (spec.data.kind === 'task' && spec.model.kind === 'encoder-decoder')) {
    return shares > rows ? `${what} are more shares than the batch has rows (--batch ${rows}); pass --nproc ${Math.max(1, Math.floor(rows / accumulate))} or less, or a larger --batch.` : null;
  }
  if (rows % shares === 0) return null;
  const fits = Array.from({ length: Math.min(rows, 16) }, (_, i) => i + 1).filter((n) => rows % (n * accumulate) === 0 && n > 1);
  return `--batch ${rows} does not divide among ${what}; pass --nproc ${fits.join(' or ') || 1}, or a --batch that ${shares} divides (e.g. ${Math.ceil(rows / shares) * shares}).`;
}

/** The engine as people see it: "pytorch cpu ×2", "pytorch cuda bf16" (trainer.py writes the same into run.json). */
export function engineLabel(device: 'cpu' | 'cuda', nproc: number, bf16: boolean): string {
  return `pytorch ${device}${nproc > 1 ? ` ×${nproc}` : ''}${bf16 ? ' bf16' : ''}`;
}

/**
 * Prepares (or reopens) the run folder for the trainer: our engine's preparation, then the
 * seeded weights saved as the step-0 checkpoint of a new run, the trainer's inputs, and the
 * step-0 attention snapshot. Failures are thrown (the caller reports them with `own`).
 * `label` is the engine run.json names until the trainer, starting, names it exactly.
 */
export async function preparePytorchRun(
  runDir: string, spec: TrainSpec, resume: boolean, control: SessionControl, emit: Emit, own: Ownership, stopAt: number | null, extendTo: number | null, trainerDir: string, label = 'pytorch',
): Promise<{ prepared: PreparedSession; manifest: TrainerManifest; snapshot: AttentionSnapshot | null }> {
  const prepared = await prepareSession(runDir, spec, resume, control, emit, own, stopAt, extendTo, label);
  const { model, dataset, tok, run, trainer, startStep } = prepared;
  if (!resume) saveCheckpoint(runDir, model, null, 0);
  const manifest = writeTrainerInputs(runDir, { model, dataset, spec: run.spec, segments: run.segments, optimizer: trainer.optimizer.config, stopAt }, trainerDir);
  const snapshot = run.spec.training.snapshotEvery > 0 && startStep === 0 ? takeSnapshot(model, dataset, tok, 0, run.spec.training.seed) : null;
  if (snapshot) saveSnapshot(runDir, snapshot);
  return { prepared, manifest, snapshot };
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

/** The last lines a process wrote, for an error message. */
class Tail {
  private lines: string[] = [];
  private partial = '';

  push(chunk: Buffer): void {
    const parts = (this.partial + chunk.toString('utf8')).split(/\r?\n/);
    this.partial = parts.pop() ?? '';
    this.lines.push(...parts.filter((l) => l.trim()));
    if (this.lines.length > TAIL_LINES) this.lines = this.lines.slice(-TAIL_LINES);
  }

  last(n: number): string[] {
    return [...this.lines, ...(this.partial.trim() ? [this.partial] : [])].slice(-n);
  }
}

/** The error of a trainer that exited with `code`: what it recorded in run.json, its own one line, or the launcher's last lines. */
function exitError(runDir: string, code: number | null, signal: string | null, tail: Tail): Error {
  let recorded: { code: string; message: string } | null = null;
  try {
    const run = readRunJson(runDir);
    if (run.status === 'failed' && run.error) recorded = run.error;
  } catch {
    // run.json unreadable: the launcher's own lines below say more
  }
  if (recorded?.code === 'train/nonFinite') return new EngineError('train/nonFinite', recorded.message.replace(/ The last good checkpoint.*$/, ''));
  const own = tail.last(TAIL_LINES).map((l) => l.replace(/^\[[^\]]*\]:/, '')).reverse().find((l) => l.startsWith('attention-lab trainer: '));
  if (code === 2 && own) return new RunnerError('pytorch/launch', own.slice('attention-lab trainer: '.length));
  const how = signal ? `was killed (${signal})` : `exited with code ${code}`;
  // The exception of a failed process (torchrun's summary quotes it), else the last lines.
  const lines = tail.last(TAIL_LINES).map((l) => l.replace(/^\[[^\]]*\]:/, '').trim());
  const cause = lines.reverse().find((l) => EXCEPTION.test(l));
  const why = recorded ? `: ${recorded.message}` : cause ? `: ${cause}` : lines.length ? `; its last lines: ${lines.slice(0, 3).reverse().join(' | ')}` : '';
  return new RunnerError(recorded ? 'internal' : 'pytorch/launch', `The PyTorch trainer ${how}${why}`);
}

/**
 * Runs (or resumes, or extends) the run in `runDir` on the PyTorch engine, as `runSession`
 * runs it on ours: the same notifications, the same run folder. Never throws.
 */
export async function runPytorchSession(
  runDir: string, spec: TrainSpec, resume: boolean, control: SessionControl, emit: Emit, stopAt: number | null, extendTo: number | null, opts: PytorchOptions,
): Promise<void> {
  const own: Ownership = { created: false, owned: false };
  let step = 0;
  try {
    const env = await probeTorch(opts.python, opts.trainerDir);
    checkOptions(env, opts);
    const share = batchShareProblem(resume ? readRunJson(runDir).spec : spec, opts.nproc, opts.accumulate);
    if (share) throw new RunnerError('pytorch/launch', share);
    emit({ type: 'train/didLog', level: 'info', message: `PyTorch: ${describeEnv(env)}.` });
    const label = engineLabel(resolvedDevice(env, opts.device), opts.nproc, opts.bf16);
    const { prepared, snapshot } = await preparePytorchRun(runDir, spec, resume, control, emit, own, stopAt, extendTo, opts.trainerDir, label);
    step = prepared.startStep;
    const { run } = prepared;
    emit({ type: 'train/didStart', runDir, startStep: step, totalSteps: run.spec.training.steps, segments: run.segments, model: prepared.info, data: run.data });
    if (snapshot) emitSnapshot(emit, snapshot);
    const reason = await launchAndFollow(runDir, prepared, control, emit, opts, env);
    step = reason.step;
    emit({ type: 'train/didFinish', step: reason.step, reason: reason.reason });
  } catch (e) {
    reportFailure(runDir, own, e, step, emit);
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

async function launchAndFollow(runDir: string, prepared: PreparedSession, control: SessionControl, emit: Emit, opts: PytorchOptions, env: TorchEnv): Promise<{ step: number; reason: 'completed' | 'stopped' }> {
  const logDir = fs.mkdtempSync(path.join(os.tmpdir(), 'attention-lab-torchrun-'));
  const cmd = localLaunch(runDir, opts, env, await freePort(), logDir);
  const follower = new RunFollower(runDir, emit, new SnapshotDrawer(runDir, prepared.model.backendOrThrow()), prepared.startStep);
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
  try {
    while (!done) {
      await Promise.race([exited.catch(() => undefined), new Promise((r) => setTimeout(r, POLL_MS))]);
      if (control.isStopped && !stopping) {
        stopping = true;
        fs.writeFileSync(path.join(controlDir, 'stop'), '');
      } else if (control.isPaused !== paused && !stopping) {
        paused = control.isPaused;
        if (paused) fs.writeFileSync(path.join(controlDir, 'pause'), '');
        else fs.rmSync(path.join(controlDir, 'pause'), { force: true });
      }
      follower.poll();
      const status = follower.runStatus;
      if (status === 'completed' || status === 'stopped' || status === 'failed') finishedAt ??= Date.now();
      if (finishedAt !== null && Date.now() - finishedAt > EXIT_GRACE_MS && !ended) {
        // The run is saved and over; a process stuck on its way out (a launcher or a library
        // that hangs at exit) must not keep the session, or the GPU, busy.
        ended = true;
        emit({ type: 'train/didLog', level: 'warn', message: `The PyTorch trainer had not exited ${EXIT_GRACE_MS / 1000} s after the run was ${status}; ended it.` });
        killGroup(child.pid);
      }
    }
    const { code, signal } = await exited;
    follower.poll();
    const saved = ended && (follower.runStatus === 'completed' || follower.runStatus === 'stopped');
    if (code !== 0 && !saved) throw exitError(runDir, code, signal, tail);
    const run = readRunJson(runDir);
    return { step: run.step, reason: run.status === 'completed' ? 'completed' : 'stopped' };
  } finally {
    fs.rmSync(path.join(controlDir, 'pause'), { force: true });
    fs.rmSync(logDir, { recursive: true, force: true });
    if (child.exitCode === null && child.signalCode === null) child.stdin.end();
  }
}
