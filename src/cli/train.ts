/**
 * `attention-lab train`: builds a TrainSpec from flags (defaults: the reverse task, which a
 * tiny encoder-decoder learns in a few minutes), or resumes a run folder (to its plan, or with
 * --steps on to a new total as a new schedule segment), runs it in a worker thread with a
 * live progress line, stops gracefully on Ctrl-C (checkpoint saved), then prints a few
 * decoded samples and where the run folder is. It holds the run folder's lock while it trains
 * (or prepares the folder for --print-launch): a second writer is refused in one line.
 */

import * as path from 'node:path';
import { createBackend } from '../engine/backends/select';
import { CONFIG_FIELDS } from '../engine/config';
import {
  formatBackend,
  formatBleu,
  formatCompact,
  formatLoss,
  formatPercent,
  formatPerplexity,
} from '../common/format';
import { errorKind, stopsRun } from '../lab/base/errorCodes';
import type { ModelKind, PresetName, TaskName, TrainSpec } from '../protocol/data';
import type { FromTrainingWorker } from '../protocol/trainingWorker';
import {
  BACKEND_KINDS,
  LR_SCHEDULES,
  MODEL_KINDS,
  MODEL_PRESETS,
  OPTIMIZER_PRESETS,
  TASK_MODEL_KINDS,
  TASK_NAMES,
  TOKENIZER_TYPES,
} from '../protocol/data';
import { DEFAULT_MAX_FILE_BYTES, DEFAULT_MAX_TOTAL_BYTES } from '../lab/data/corpus';
import { listDocumentFiles } from '../lab/data/globFiles.node';
import { NODE_FS } from '../lab/files/fs.node';
import type { RunOutcome } from '../lab/workers/trainingClient';
import { startNodeWorker } from '../lab/workers/startWorker.node';
import { TrainingWorker } from '../lab/workers/trainingClient';
import { openRun } from '../lab/inference/openRun';
import { resolveConfig } from '../lab/runs/specModel';
import { lastCheckpointStep } from '../lab/training/stopReasons';
import { DEFAULT_VOCAB, dataDefaults, trainSpecOf } from '../lab/runs/runSpec';
import { newRunDir, readRunJson } from '../lab/runs/runFolder';
import type { RunLock } from '../lab/runs/runLock';
import { LOCK_FILE, RunLockedError, takeRunLock } from '../lab/runs/runLock';
import { nodeLockIdentity } from '../lab/runs/lockIdentity.node';
import { planResume } from '../lab/runs/segments';
import { sampleRun } from './samples';
import type { Flags } from './args';
import { UsageError, parseFlags } from './args';
import type { CommandContext } from './context';
import { PrepareLine, ProgressLine } from './progress';
import { trainBackendKindOf } from './runFlags';
import { PYTORCH_FLAGS, PYTORCH_HELP, ENGINE_FLAGS, printLaunch, pytorchFlags } from './trainPytorch';

export const TRAIN_HELP = `attention-lab train [data] [options]

Data (one of; default: --task reverse):
  --task NAME            generated task: ${TASK_NAMES.join(', ')} (no dropout or label smoothing unless --set);
                         induction trains a decoder-only model (random letters, repeated; loss on the repeat)
                         whose layer-2 induction head forms within its 3000 steps (about a minute);
                         modular-addition trains one layer on a + b mod 113 (30% of the pairs, full
                         batch, weight decay 1) until it groks: see the Curves tab's Grokking view
  --data GLOB…           documents (text files) → a decoder-only language model; validation is the
                         last 10% of each file's text (few files) or whole held-out files (10 or more)
  --max-file-mb N        largest file read, in MB (default ${DEFAULT_MAX_FILE_BYTES / 2 ** 20})
  --max-total-mb N       largest total read, in MB (default ${DEFAULT_MAX_TOTAL_BYTES / 2 ** 20})
  --all-files            also read lockfiles, minified/generated files and vendored folders
                         (dist/, build/, vendor/, .venv/ …), which are skipped by default
  --pairs SRC TGT        parallel line files → an encoder-decoder
  --pairs FILE           a .tsv (src<TAB>tgt) or .jsonl ({"src","tgt"}) file
  --resume DIR           continue a run folder where its last checkpoint left off; with
                         --steps N, train a finished or stopped run on to step N (below);
                         with --backend, on that backend (a WebGPU run continues on wasm)
Model:
  --model KIND           ${MODEL_KINDS.join(' | ')} (default: from the data)
  --preset NAME          ${MODEL_KINDS.map((k) => `${MODEL_PRESETS[k].join(' | ')} (${k})`).join('; ')}
  --set KEY=VALUE        any config field (${CONFIG_FIELDS.join(', ')})
  --tokenizer ${TOKENIZER_TYPES.join('|')}   (default char)      --vocab N   BPE vocabulary size (default 1000)
Training:
  --steps N  --batch N  --seq N  --eval-every N  --checkpoint-every N  --snapshot-every N
  --seed N  --optimizer ${OPTIMIZER_PRESETS.join('|')}  --lr X  --warmup N  --backend ${BACKEND_KINDS.join('|')}
  --schedule ${LR_SCHEDULES.join('|')}  learning-rate schedule of adamw and muon (default cosine; wsd: warm-up,
                         the peak held, a linear decay to lr/10 over the last 20% of the steps)
                         muon: Muon (lr 0.02, momentum 0.95) for attention and MLP matrices, AdamW
                         (--lr) for embeddings, the output projection, norms and biases
  --out DIR              run folder (default: runs/run-<time>)
  --until N              stop after step N with a checkpoint (continue later with --resume)
  --json                 print one JSON object when done (no progress line)
${PYTORCH_HELP}
Training longer (--resume DIR --steps N, N beyond the run's planned steps):
  the new steps are a schedule segment of their own, kept in run.json and marked on the
  dashboard's curves. AdamW + cosine restarts warm (SGDR, Loshchilov & Hutter 2017): the
  rate climbs from lr/10 back to lr over min(the run's warm-up, 10% of the new steps) steps,
  then decays (cosine) to lr/10 at step N. The paper's schedule and a constant rate simply
  continue. The model, data and context (--seq) stay as the run was created; --until still
  stops early, and --resume DIR then continues bit-exactly.`;

/** The flags of `train` (exported for the tests that parse them as the command does). */
export const TRAIN_FLAGS = {
  task: { type: 'string' },
  data: { type: 'string', multiple: true },
  pairs: { type: 'string' },
  resume: { type: 'string' },
  model: { type: 'string' },
  preset: { type: 'string' },
  set: { type: 'string', multiple: true },
  tokenizer: { type: 'string' },
  vocab: { type: 'string' },
  steps: { type: 'string' },
  batch: { type: 'string' },
  seq: { type: 'string' },
  'eval-every': { type: 'string' },
  'checkpoint-every': { type: 'string' },
  'snapshot-every': { type: 'string' },
  seed: { type: 'string' },
  optimizer: { type: 'string' },
  lr: { type: 'string' },
  warmup: { type: 'string' },
  schedule: { type: 'string' },
  backend: { type: 'string' },
  out: { type: 'string' },
  until: { type: 'string' },
  'max-file-mb': { type: 'string' },
  'max-total-mb': { type: 'string' },
  'all-files': { type: 'boolean' },
  ...PYTORCH_FLAGS,
} as const;

/**
 * The flags `--resume` takes: the rest would change the model, the data or how the run trains (the engine may change).
 */
const RESUME_FLAGS: readonly string[] = ['resume', 'steps', 'until', 'backend', ...ENGINE_FLAGS];

/** One line on why flags other than --steps and --until cannot come with --resume. */
function resumeFlagsProblem(given: readonly string[], name: string, context: number): string {
  const flags = given.map((g) => `--${g}`).join(', ');
  const seq = given.includes('seq')
    ? `the context length is fixed by the model (built for ${context} tokens), so `
    : '';
  return (
    `--resume continues ${name} as it was configured: ${seq}drop ${flags}. Only --steps N ` +
    `(train on to step N), --until N and --backend go with --resume; start a new run to change the model or data.`
  );
}

/** Parses `--set key=value` flags. */
export function parseSets(sets: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const s of sets) {
    const eq = s.indexOf('=');
    if (eq <= 0) throw new UsageError(`--set needs KEY=VALUE, got "${s}" (e.g. --set dModel=128).`);
    out[s.slice(0, eq).trim()] = s.slice(eq + 1).trim();
  }
  return out;
}

/** `--preset`, one of the presets of `kind` (default tiny). */
function presetFlag(f: Flags, kind: ModelKind): PresetName {
  const presets: readonly PresetName[] = MODEL_PRESETS[kind];
  const p = f.str('preset') ?? 'tiny';
  if (!(presets as readonly string[]).includes(p))
    throw new UsageError(`--preset must be one of ${presets.join(', ')} for ${kind} models, got "${p}".`);
  return p as PresetName;
}

/** The TrainSpec the flags describe. Paths are made absolute against `cwd`. */
export async function specFromFlags(f: Flags, cwd: string): Promise<TrainSpec> {
  const sources = ['task', 'data', 'pairs'].filter((k) => f.has(k));
  if (sources.length > 1)
    throw new UsageError(`Use one data source, not ${sources.map((s) => `--${s}`).join(' and ')}.`);
  let data: TrainSpec['data'];
  let kind: ModelKind = 'encoder-decoder';
  const dataOnly = ['max-file-mb', 'max-total-mb', 'all-files'].filter((k) => f.has(k));
  if (dataOnly.length && !f.has('data'))
    throw new UsageError(`${dataOnly.map((k) => `--${k}`).join(' and ')} go with --data (documents).`);
  if (f.has('data')) {
    const patterns = [...f.list('data'), ...f.positionals];
    // Only the file list here: the worker reads, checks and tokenizes them with progress.
    const listed = await listDocumentFiles(patterns, cwd);
    const mb = (name: string, fallback: number): number =>
      Math.round(f.num(name, fallback / 2 ** 20, 0.001, 2 ** 20) * 2 ** 20);
    data = {
      kind: 'documents',
      files: listed.files,
      root: listed.root,
      maxFileBytes: mb('max-file-mb', DEFAULT_MAX_FILE_BYTES),
      maxTotalBytes: mb('max-total-mb', DEFAULT_MAX_TOTAL_BYTES),
      skipGenerated: !f.bool('all-files'),
    };
    kind = 'decoder-only';
  } else if (f.has('pairs')) {
    if (f.positionals.length > 1)
      throw new UsageError(`--pairs takes SRC TGT or one FILE; got extra "${f.positionals[1]}".`);
    const src = path.resolve(cwd, f.str('pairs') as string);
    data = { kind: 'pairs', source: src, target: f.positionals[0] ? path.resolve(cwd, f.positionals[0]) : null };
  } else {
    if (f.positionals.length)
      throw new UsageError(
        `unexpected argument "${f.positionals[0]}"; pass documents with --data GLOB or pairs with --pairs SRC TGT.`,
      );
    data = { kind: 'task', task: f.choice<TaskName>('task', TASK_NAMES, 'reverse') };
    kind = TASK_MODEL_KINDS[data.task];
  }
  kind = f.choice('model', MODEL_KINDS, kind);
  if (data.kind === 'task' && kind !== TASK_MODEL_KINDS[data.task])
    throw new UsageError(
      `Task "${data.task}" trains a ${TASK_MODEL_KINDS[data.task]} model; leave out --model or pass ` +
        `--model ${TASK_MODEL_KINDS[data.task]}.`,
    );
  if (kind === 'decoder-only' && data.kind === 'pairs')
    throw new UsageError(
      'A decoder-only model trains on documents (--data) or --task induction; use --model encoder-decoder for pairs.',
    );
  if (kind === 'encoder-decoder' && data.kind === 'documents')
    throw new UsageError(
      'An encoder-decoder needs source→target pairs (--pairs or --task); documents train a decoder-only model.',
    );
  if (data.kind === 'task' && dataDefaults(data).ownTokenizer && f.str('tokenizer') === 'bpe') {
    throw new UsageError(`Task "${data.task}" uses its own character tokenizer (its letters); leave out --tokenizer.`);
  }
  const given = <T>(name: string, read: () => T): T | undefined => (f.has(name) ? read() : undefined);
  // Flags left out take the data's defaults (a task's own run: src/lab/runs/runSpec.ts), as the extension's settings
  // do.
  const spec = trainSpecOf(data, {
    kind,
    preset: presetFlag(f, kind),
    overrides: parseSets(f.list('set')),
    tokenizer: given('tokenizer', () => f.choice('tokenizer', TOKENIZER_TYPES, 'char')),
    vocabSize: given('vocab', () => f.int('vocab', DEFAULT_VOCAB, 261)),
    steps: given('steps', () => f.int('steps', 1)),
    batchSize: given('batch', () => f.int('batch', 32)),
    seqLen: given('seq', () => f.int('seq', 64, 2)),
    evalEvery: given('eval-every', () => f.int('eval-every', 0, 0)),
    checkpointEvery: given('checkpoint-every', () => f.int('checkpoint-every', 0, 0)),
    snapshotEvery: given('snapshot-every', () => f.int('snapshot-every', 0, 0)),
    seed: given('seed', () => f.int('seed', 1, -2147483648, 2147483647)),
    optimizer: given('optimizer', () => f.choice('optimizer', OPTIMIZER_PRESETS, 'adamw')),
    lr: given('lr', () => f.num('lr', 0, 0, 10)),
    warmup: given('warmup', () => f.int('warmup', 0, 0)),
    schedule: given('schedule', () => f.choice('schedule', LR_SCHEDULES, 'cosine')),
    backend: given('backend', () => trainBackendKindOf(f)),
  });
  if (spec.training.optimizer === 'paper' && f.has('schedule'))
    throw new UsageError(
      "--optimizer paper follows the paper's own schedule (noam); leave out --schedule, or use " +
        '--optimizer adamw or muon.',
    );
  // Check the model config now (with a stand-in vocabulary) so a mistake fails before any work.
  resolveConfig(spec, 1000);
  return spec;
}

/**
 * Takes `runDir`'s lock (runs/runLock.ts), saying so when it takes over a stale one; a live
 * holder throws RunLockedError (exit 2). A folder this command named itself (`autoRoot`: no
 * --out) that another `train` took in the same second moves on to the next free name.
 */
async function lockRun(ctx: CommandContext, runDir: string, autoRoot: string | null): Promise<RunLock> {
  const me = nodeLockIdentity('attention-lab train');
  for (let tries = 0; ; tries++) {
    try {
      const lock = await takeRunLock(NODE_FS, runDir, me);
      if (lock.tookOver) ctx.err(lock.tookOver);
      return lock;
    } catch (e) {
      if (autoRoot === null || !RunLockedError.is(e) || tries >= 3) throw e;
      runDir = await newRunDir(NODE_FS, autoRoot);
    }
  }
}

/** Removes the lock; one that cannot be removed is left to be taken over (this process is gone by then). */
async function releaseLock(ctx: CommandContext, lock: RunLock): Promise<void> {
  try {
    await lock.release();
  } catch (e) {
    ctx.err(
      `attention-lab: could not remove ${path.join(lock.runDir, LOCK_FILE)} ` +
        `(${(e as Error).message}); the next session takes it over once this command has exited.`,
    );
  }
}

/** Runs `train`. Returns the exit code. */
export async function trainCommand(argv: string[], ctx: CommandContext): Promise<number> {
  const f = parseFlags('train', argv, TRAIN_FLAGS, 64);
  if (f.bool('help')) return ctx.help(TRAIN_HELP);
  const json = f.bool('json');
  const resumeDir = f.str('resume');
  const stopAt = f.has('until') ? f.int('until', 1) : null;
  let runDir: string;
  let spec: TrainSpec;
  let extendTo: number | null = null;
  if (resumeDir) {
    runDir = path.resolve(ctx.cwd, resumeDir);
    const run = await readRunJson(NODE_FS, runDir);
    const given = Object.keys(TRAIN_FLAGS).filter((k) => !RESUME_FLAGS.includes(k) && f.has(k));
    if (given.length) throw new UsageError(resumeFlagsProblem(given, path.basename(runDir), run.config.maxLen));
    if (f.positionals.length)
      throw new UsageError(
        `unexpected argument "${f.positionals[0]}"; --resume continues the run folder it names and takes no data.`,
      );
    extendTo = f.has('steps') ? f.int('steps', 1) : null;
    // Checked here too (the worker checks again) so a mistake costs no worker start.
    spec = planResume(run, path.basename(runDir), extendTo, stopAt).spec;
    // Another backend continues from the same checkpoint (a run a lost GPU stopped, on wasm); run.json records it.
    if (f.has('backend')) spec = { ...spec, backend: trainBackendKindOf(f) };
  } else {
    spec = await specFromFlags(f, ctx.cwd);
    runDir = f.str('out')
      ? path.resolve(ctx.cwd, f.str('out') as string)
      : await newRunDir(NODE_FS, path.resolve(ctx.cwd, 'runs'));
  }
  const pytorch = pytorchFlags(f, ctx);
  // One writer per run folder: refused here (exit 2, one line) while another session trains it.
  const lock = await lockRun(ctx, runDir, resumeDir || f.str('out') ? null : path.resolve(ctx.cwd, 'runs'));
  runDir = lock.runDir;
  if (pytorch && f.bool('print-launch')) {
    try {
      return await printLaunch(f, ctx, runDir, spec, !!resumeDir, stopAt, extendTo, pytorch);
    } finally {
      await releaseLock(ctx, lock);
    }
  }

  const worker = new TrainingWorker(startNodeWorker(ctx.workerScript, 'training worker'), lock);
  let progress: ProgressLine | null = null;
  const preparing = json ? null : new PrepareLine(ctx.stderr);
  let valLabel = 'val';
  let lastLoss = NaN;
  let lastEval: Extract<FromTrainingWorker, { type: 'train/didEval' }> | null = null;
  worker.onMessage((m) => {
    if (json) {
      if (m.type === 'train/didEval') lastEval = m;
      if (m.type === 'train/didStep') lastLoss = m.loss;
      return;
    }
    switch (m.type) {
      case 'train/didProgress':
        preparing?.update(m);
        break;
      case 'train/didStart':
        preparing?.end();
        // With no held-out text the evaluation runs on training windows, and is called so.
        valLabel = m.data.validation?.kind === 'none' ? 'train-eval' : 'val';
        ctx.err(
          `Training ${m.model.config.kind as string} · ${formatCompact(m.model.params)} parameters ` +
            `· ${formatBackend(m.model.backend)}${m.model.backendChoice ? ` (${m.model.backendChoice})` : ''} ` +
            `· ${m.data.description}`,
        );
        ctx.err(`Run folder: ${runDir}`);
        progress = new ProgressLine(ctx.stderr, m.totalSteps, m.startStep);
        break;
      case 'train/didStep':
        lastLoss = m.loss;
        progress?.update(
          m.step,
          m.loss,
          m.tokensPerSec,
          lastEval
            ? `${valLabel} ${formatLoss(lastEval.loss)}` +
                `${lastEval.exactMatch !== null ? ` · exact ${formatPercent(lastEval.exactMatch)}` : ''}`
            : '',
        );
        break;
      case 'train/didEval':
        lastEval = m;
        break;
      case 'train/didLog':
        preparing?.end();
        if (progress) progress.note(m.message);
        else ctx.err(m.message);
        break;
      default:
        break;
    }
  });
  let interrupts = 0;
  const onSigint = (): void => {
    interrupts++;
    if (interrupts === 1) {
      // Before the first step there is nothing to save yet: preparation just stops.
      if (!json)
        ctx.err(
          progress
            ? '\nStopping after this step and saving a checkpoint… (Ctrl-C again to quit at once)'
            : '\nCancelling… (Ctrl-C again to quit at once)',
        );
      void worker.stop();
    } else process.exit(130);
  };
  process.on('SIGINT', onSigint);
  // `kill PID`, `timeout`, a CI job's cancel: stop as at Ctrl-C (a checkpoint of the last step, status
  // stopped) rather than die between checkpoints with run.json still saying "training".
  process.on('SIGTERM', onSigint);
  let outcome: RunOutcome;
  try {
    await worker.start(runDir, spec, !!resumeDir, stopAt, extendTo, pytorch);
    outcome = await worker.outcome;
  } finally {
    process.off('SIGINT', onSigint);
    process.off('SIGTERM', onSigint);
    await worker.dispose();
    await releaseLock(ctx, lock);
    (progress as ProgressLine | null)?.end();
  }
  if (outcome.kind === 'failed') {
    preparing?.end();
    const kind = errorKind(outcome.error.code);
    ctx.err(`attention-lab: ${outcome.error.message}`);
    // The step a resume starts from (the last checkpoint; null when none), beside the step reached.
    const kept = json ? { step: await lastCheckpointStep(NODE_FS, runDir), step_reached: outcome.step } : null;
    if (kind === 'cancelled') {
      if (json) ctx.out(JSON.stringify({ runDir, status: 'cancelled', ...kept }));
      return 130;
    }
    // A full disk or a lost GPU stops the run (run.json says stopped; it resumes), as the JSON says too.
    const status = stopsRun(outcome.error.code) ? 'stopped' : 'failed';
    if (json) ctx.out(JSON.stringify({ runDir, status, ...kept, error: outcome.error }));
    return kind === 'fixable' ? 2 : 1;
  }
  // Samples on the CPU (a few short decodes: not worth opening a second GPU model for).
  const opened = await openRun(NODE_FS, runDir, createBackend(spec.backend === 'webgpu' ? 'auto' : spec.backend));
  const samples = await sampleRun(opened, 3);
  const ev = lastEval as Extract<FromTrainingWorker, { type: 'train/didEval' }> | null;
  if (json) {
    ctx.out(
      JSON.stringify({
        runDir,
        status: outcome.reason,
        step: outcome.step,
        loss: lastLoss,
        eval: ev ? { loss: ev.loss, ppl: ev.ppl, exact_match: ev.exactMatch, bleu: ev.bleu } : null,
        samples,
      }),
    );
    return 0;
  }
  // BLEU needs 4-grams of words: on a generated task's single-token strings it says nothing.
  const showBleu = ev?.bleu !== null && spec.data.kind === 'pairs';
  ctx.err(
    `${outcome.reason === 'stopped' ? 'Stopped' : 'Finished'} at step ${outcome.step}` +
      (ev
        ? ` · validation loss ${formatLoss(ev.loss)} (perplexity ${formatPerplexity(ev.ppl)})` +
          (ev.exactMatch !== null ? ` · exact match ${formatPercent(ev.exactMatch)}` : '') +
          (showBleu ? ` · BLEU ${formatBleu(ev.bleu)}` : '')
        : ''),
  );
  ctx.out('\nSamples:');
  for (const s of samples)
    ctx.out(
      s.kind === 'pair'
        ? `  ${s.ok ? '✓' : '✗'} ${JSON.stringify(s.input)} → ` +
            `${JSON.stringify(s.output)}` +
            `${s.ok ? '' : `  (expected ${JSON.stringify(s.expected)})`}`
        : `  ${JSON.stringify(s.input)} → ${JSON.stringify(s.output)}`,
    );
  ctx.out(`\nRun folder: ${runDir}`);
  ctx.out(
    `Next: attention-lab decode --run ${path.relative(ctx.cwd, runDir) || '.'} ` +
      `${spec.model.kind === 'encoder-decoder' ? '--src "…"' : '--prompt "…"'}`,
  );
  return 0;
}
