/**
 * The extension's model worker, on any host (its entries: modelWorker.node.ts on Node,
 * modelWorker.web.ts on the web): answers decode, score, attention (and its layers one at a time),
 * export, import, speed-calibration, evaluate-on-files, logit-lens, head-ablation and patching requests so
 * none of that compute runs on the extension host's thread. Each job is written once in the lab
 * (lab/inference/ for decode, score, attention, lens, ablation and patching; lab/evaluation/evaluateFiles.ts,
 * lab/interop/exportPytorch.ts, lab/training/calibrate.ts), where the CLI's commands call it too:
 * this file opens runs, and its one handler per request kind (`ModelHandlers`, typed from
 * protocol/modelWorker.ts `modelRequests`) calls the job and returns its answer, which is posted as
 * the kind's `model/did<Kind>`. Requests are validated on arrival and answered one at a time, in
 * order (an evaluation reads its files before it computes, and the next request waits for it), each
 * with exactly one `model/did*` or `model/didFail` carrying its id. Each request opens its run
 * planned for what it needs (lab/inference/requestPlan.ts, the rule the CLI's commands open by: one
 * sequence, the text's length, the beam width); opened runs are kept and reopened when their
 * checkpoint file changes or a request needs more than they were planned for (the old model's
 * memory is given back first). An evaluation polls its request's shared cancel flag between
 * batches.
 *
 * A run trained on WebGPU decodes, scores, takes attention maps, the logit lens and the ablation
 * comparison on the platform's GPU (its device opened once per
 * worker; the model's weights uploaded once per opened run, the logits read back as each job
 * needs them) — Dawn's in Node, `navigator.gpu` in a browser's web worker; its other jobs, and every
 * job where the platform gives no adapter (a GPU blocked, a browser without WebGPU), run on the CPU.
 *
 * Drawing a PyTorch run's pending snapshots is handed in by the Node entry (its weights are
 * listed with Node's `fs`); the web's answers that request with a one-line refusal.
 *
 * Leaves out: training (the training worker does that), starting the worker, and any VS Code API.
 */

import { EngineError } from '../../engine/errors';
import { fileErrorData } from '../files/fileErrors';
import { calibrate } from '../training/calibrate';
import { EvaluationCancelled, evaluateFiles } from '../evaluation/evaluateFiles';
import { CancelledError } from '../base/cancelled';
import { exportRun } from '../interop/exportFolder';
import { compareHeadsOffAsync } from '../inference/ablate';
import { importCheckpoint } from '../interop/importCheckpoint';
import type { TextAttention } from '../inference/attend';
import { attendTextAsync } from '../inference/attend';
import { decodeTextAsync } from '../inference/decode';
import { attribute, attributeRequestPlan } from '../inference/attribute';
import { logitChunkRows } from '../../engine/models/inputs';
import type { LensInput } from '../inference/lens';
import { logitLensAsync } from '../inference/lens';
import { patchIds, patchLength, patchPlan, patchRun } from '../inference/patch';
import { steerPlan, steerRun } from '../inference/steer';
import { scoreTextAsync } from '../inference/score';
import type { OpenRun } from '../inference/openRun';
import { openRun } from '../inference/openRun';
import type { RunPlan } from '../inference/openRun';
import type { InferenceRequest } from '../inference/requestPlan';
import { covers, planRequest, widened } from '../inference/requestPlan';
import { readCheckpointConfig } from '../runs/checkpoint';
import { readTokenizer } from '../runs/tokenizerFile';
import { mostRowsThatFit } from '../runs/memoryCheck';
import { backendFor } from '../runs/specModel';
import { RUN_FILES, readRunJson } from '../runs/runFolder';
import type { LabFs } from '../files/labFs';
import type { LabPlatform, OpenedGpu, WorkerChannel } from '../platform/platform';
import type { Backend } from '../../engine/backend';
import { createWebGpuBackend } from '../../engine/backends/webgpu/webgpuBackend';
import type { LensInputData } from '../../protocol/analysis';
import type { ErrorData } from '../../protocol/data';
import type {
  ToModelWorker,
  ModelHandlers,
  ModelRequestKind,
  ModelRequestMessage,
  FromModelWorker,
} from '../../protocol/modelWorker';
import { modelRequestKind, modelRequests, validateToModelWorker } from '../../protocol/modelWorker';
import { ProtocolError } from '../../protocol/schema';

/**
 * Open runs by folder, with the checkpoint's mtime they were opened at and the attention of the last text asked for.
 */
type RunCache = Map<
  string,
  { mtimeMs: number; run: OpenRun; attention?: { text: string; run: OpenRun; result: TextAttention } }
>;

/**
 * Draws the snapshots a PyTorch run's trainer left as weights in `runDir`
 * (src/lab/pytorch/follow.node.ts); resolves to how many.
 */
export type SnapshotDrawing = (fs: LabFs, runDir: string) => Promise<number>;

/** What every request's handling shares. */
interface Context {
  readonly platform: LabPlatform;
  readonly drawSnapshots: SnapshotDrawing | null;
  readonly opened: RunCache;
  readonly post: (msg: FromModelWorker, transfer?: ArrayBuffer[]) => void;
  /** The platform's GPU, opened on the first job that runs on it (kept for the worker's life). */
  gpu: Promise<OpenedGpu> | null;
}

/** What a request needs: an inference request's plan (requestPlan.ts), or a plan made from the run's config. */
type Need = InferenceRequest | ((config: OpenRun['model']['config']) => RunPlan);

/** Most sequences an evaluation batches (fewer when a bigger model leaves no room for them). */
const EVAL_ROWS = 4;

/** An evaluation's plan: the most sequences of a whole context, up to EVAL_ROWS, that fit. */
function evaluationPlan(config: OpenRun['model']['config']): RunPlan {
  // its loss only: the logits are taken in chunks (ModelShape.logitRows), never [rows · context, V] whole
  const shape = (n: number): RunPlan['shape'] => ({
    maxBatch: n,
    logitRows: logitChunkRows(config, n * config.maxLen),
  });
  return { shape: shape(mostRowsThatFit(config, EVAL_ROWS, shape, { decodeRows: 1 })), decodeRows: 1 };
}

/**
 * `runDir`'s model, opened (or kept open) planned for `need`; with `onDevice`, on the GPU when
 * the run trained on WebGPU and the platform offers one (see the file comment).
 */
async function open(ctx: Context, runDir: string, need: Need, onDevice = false): Promise<OpenRun> {
  const { platform } = ctx;
  const { fs } = platform;
  const json = await readRunJson(fs, runDir);
  const kind = json.spec.backend;
  // A run on the GPU: named webgpu, or `auto` that chose it when it last trained (run.json's backendUsed).
  const trainedOnGpu = kind === 'webgpu' || (kind === 'auto' && (json.backendUsed ?? '').startsWith('webgpu'));
  const gpu = onDevice && trainedOnGpu && platform.gpu ? platform.gpu : null;
  // A run's GPU model is kept beside its CPU one (the jobs not built on the GPU use that).
  const key = gpu ? `${runDir}\u0000webgpu` : runDir;
  // Where the platform offers no adapter after all (a GPU blocked, a browser without WebGPU), the run's CPU
  // backend answers: the same numbers within float32 rounding, never a refusal of a run that trained elsewhere.
  const backend = async (): Promise<Backend> => {
    if (gpu) {
      const opened = await (ctx.gpu ??= gpu());
      if (opened.ok) return createWebGpuBackend(opened.device);
    }
    return backendFor(kind, platform.threads);
  };
  const { opened } = ctx;
  const stat = await fs.stat(fs.join(runDir, RUN_FILES.model));
  if (stat === null) {
    await readRunJson(fs, runDir); // says clearly when the folder is not a run at all
    throw new EngineError(
      'input/invalid',
      `${fs.basename(runDir)} has no trained model yet (no ${RUN_FILES.model}); train it for a few steps first.`,
    );
  }
  const hit = opened.get(key);
  const current = hit && hit.mtimeMs === stat.mtimeMs ? hit.run : null;
  const plan =
    typeof need === 'function'
      ? need(current ? current.model.config : (await readCheckpointConfig(fs, runDir)).config)
      : planRequest(
          current ? current.model.config : (await readCheckpointConfig(fs, runDir)).config,
          current ? current.tok : await readTokenizer(fs, runDir),
          need,
        );
  if (current && covers(current, plan)) return current;
  // Give the old model's memory back before the new one takes its own (WebAssembly frees nothing else).
  if (hit) {
    opened.delete(key);
    (hit.run.model.backendOrThrow() as { dispose?: () => void }).dispose?.();
  }
  const run = await openRun(fs, runDir, await backend(), current ? widened(current, plan) : plan);
  opened.set(key, { mtimeMs: stat.mtimeMs, run });
  return run;
}

/**
 * The attention of `text` with a run's model: the last one computed for the run when it is
 * of the same text and checkpoint (its whole maps serve the layers the dashboard opens one at
 * a time), else computed now and kept in its place. Maps are posted as copies (never
 * transferred), so what is kept stays whole.
 */
async function attention(ctx: Context, runDir: string, text: string): Promise<TextAttention> {
  const r = await open(ctx, runDir, { job: 'attend', text }, true);
  const entry = [...ctx.opened.values()].find((e) => e.run === r);
  const kept = entry?.attention;
  if (kept && kept.text === text && kept.run === r) return kept.result;
  const result = await attendTextAsync(r, text);
  if (entry) entry.attention = { text, run: r, result };
  return result;
}

/** One handler per request kind (protocol/modelWorker.ts `modelRequests`), each returning its kind's answer. */
const HANDLERS: ModelHandlers<Context> = {
  async decode(msg, ctx) {
    const id = msg.id;
    const onToken = (token: string, logprob: number): void => ctx.post({ type: 'model/didToken', id, token, logprob });
    const { output } = await decodeTextAsync(
      await open(
        ctx,
        msg.runDir,
        { job: 'decode', input: msg.params.input, beam: msg.params.strategy === 'beam' ? msg.params.beam : 1 },
        true,
      ),
      msg.params,
      { attention: true, onToken },
    );
    return output;
  },
  async score(msg, ctx) {
    const need = { job: 'score', text: msg.text, ...(msg.source === null ? {} : { source: msg.source }) } as const;
    return (await scoreTextAsync(await open(ctx, msg.runDir, need, true), msg.source, msg.text)).output;
  },
  async attend(msg, ctx) {
    return (await attention(ctx, msg.runDir, msg.text)).snapshot;
  },
  async attendLayer(msg, ctx) {
    const map = (await attention(ctx, msg.runDir, msg.text)).full.find(
      (m) => m.stack === msg.stack && m.layer === msg.layer,
    );
    if (!map) throw new EngineError('input/invalid', `The model has no ${msg.stack} layer ${msg.layer + 1}.`);
    return map;
  },
  async export(msg, ctx) {
    const { dir, files, tensors, warnings } = await exportRun(
      ctx.platform.fs,
      await open(ctx, msg.runDir, { job: 'export' }),
      msg.outDir,
      { force: msg.force, ...(msg.format ? { format: msg.format } : {}) },
    );
    return { dir, files: [...files], tensors, warnings: [...warnings] };
  },
  async calibrate(msg, ctx) {
    return calibrate(msg.spec, msg.vocabSize, () => performance.now(), ctx.platform.threads, 250, ctx.platform.gpu);
  },
  async evaluateFiles(msg, ctx) {
    const { id, cancel } = msg;
    let posted = -Infinity;
    return evaluateFiles(ctx.platform.fs, await open(ctx, msg.runDir, evaluationPlan), msg.data, {
      maxPairs: msg.maxPairs,
      decoding: msg.decoding,
      tokenize: msg.tokenize,
      onProgress: (done, total) => {
        // At most ten a second: a large test set is thousands of batches.
        if (done < total && performance.now() - posted < 100) return;
        posted = performance.now();
        ctx.post({ type: 'model/didProgress', id, done, total });
      },
      cancelled: () => cancel !== undefined && Atomics.load(cancel, 0) !== 0,
    });
  },
  async lens(msg, ctx) {
    const input = lensInput(msg.input);
    const run = await open(ctx, msg.runDir, { job: 'lens', input }, true);
    return logitLensAsync(run, input, { topK: msg.topK, fit: msg.fit });
  },
  async drawSnapshots(msg, ctx) {
    if (!ctx.drawSnapshots)
      throw new EngineError(
        'input/invalid',
        "Drawing a PyTorch run's snapshots needs desktop VS Code or the CLI (attention-lab heads or report).",
      );
    return ctx.drawSnapshots(ctx.platform.fs, msg.runDir);
  },
  async ablate(msg, ctx) {
    const input = lensInput(msg.input);
    return compareHeadsOffAsync(await open(ctx, msg.runDir, { job: 'lens', input }, true), input, msg.off, {
      topK: msg.topK,
      fit: msg.fit,
    });
  },
  async patch(msg, ctx) {
    const { id, cancel } = msg;
    const { fs } = ctx.platform;
    // the prompts' length plans the model: refused here, before it is opened, when they differ
    const { config } = await readCheckpointConfig(fs, msg.runDir);
    const T = patchLength(patchIds(await readTokenizer(fs, msg.runDir), config, msg.request));
    let posted = -Infinity;
    return patchRun(await open(ctx, msg.runDir, (c) => patchPlan(c, T)), msg.request, {
      onProgress: (done, total) => {
        if (done < total && performance.now() - posted < 100) return; // at most ten a second
        posted = performance.now();
        ctx.post({ type: 'model/didProgress', id, done, total });
      },
      isCancelled: () => cancel !== undefined && Atomics.load(cancel, 0) !== 0,
    });
  },
  async steer(msg, ctx) {
    const tok = await readTokenizer(ctx.platform.fs, msg.runDir);
    return steerRun(await open(ctx, msg.runDir, (c) => steerPlan(c, tok, msg.request)), msg.request);
  },
  async attribute(msg, ctx) {
    const { id, cancel } = msg;
    const p = msg.params;
    const { fs } = ctx.platform;
    // beside full patching, the model is planned as `patch` plans it (many patched runs per forward)
    const tok = await readTokenizer(fs, msg.runDir);
    const run = await open(ctx, msg.runDir, (c) => attributeRequestPlan(c, tok, p));
    return attribute(run, p, {
      onProgress: (done, total) => ctx.post({ type: 'model/didProgress', id, done, total }),
      isCancelled: () => cancel !== undefined && Atomics.load(cancel, 0) !== 0,
    });
  },
  async import(msg, ctx) {
    const { id, cancel } = msg;
    let posted = -Infinity;
    const res = await importCheckpoint(
      ctx.platform.fs,
      { from: msg.from, out: msg.outDir, ...(msg.heads === undefined ? {} : { heads: msg.heads }) },
      {
        onProgress: (p) => {
          if (p.done < p.total && performance.now() - posted < 100) return; // at most ten a second
          posted = performance.now();
          ctx.post({ type: 'model/didProgress', id, done: p.done, total: p.total });
        },
        isCancelled: () => cancel !== undefined && Atomics.load(cancel, 0) !== 0,
      },
    );
    const { runDir, layout, layoutText, modelFile, params, tensors, tokenizer, notes } = res;
    return { runDir, layout, layoutText, modelFile, params, tensors, tokenizer, notes: [...notes] };
  },
};

/** Handles one request and posts its answer. */
async function handle<K extends ModelRequestKind>(kind: K, msg: ModelRequestMessage<K>, ctx: Context): Promise<void> {
  const handler: ModelHandlers<Context>[K] = HANDLERS[kind];
  ctx.post(modelRequests.answer(kind, msg.id, await handler(msg, ctx)));
}

/** The lab's lens input of a request's. */
function lensInput(input: LensInputData): LensInput {
  if (input.kind === 'decoder-only') return { prompt: input.prompt };
  return input.tgt === undefined ? { src: input.src } : { src: input.src, tgt: input.tgt };
}

/** The error a failed request is answered with. */
function errorOf(e: unknown): ErrorData {
  if (EngineError.is(e)) return e.toData();
  const fileError = fileErrorData(e); // a full or read-only disk, a file in the way …
  if (fileError) return fileError;
  if (e instanceof EvaluationCancelled || e instanceof CancelledError) return { code: 'cancelled', message: e.message };
  return { code: 'internal', message: `Internal error in the model worker: ${(e as Error)?.message ?? String(e)}` };
}

/**
 * Answers requests arriving on `channel` (with `platform`'s files and threads) until the worker
 * is ended; `drawSnapshots` serves model/drawSnapshots (null: refused in one line).
 */
export function serveModelRequests(
  platform: LabPlatform,
  channel: WorkerChannel<FromModelWorker>,
  drawSnapshots: SnapshotDrawing | null = null,
): void {
  let queue: Promise<void> = Promise.resolve(); // requests run one after another
  const post = (msg: FromModelWorker, transfer: ArrayBuffer[] = []): void => channel.post(msg, transfer);
  const ctx: Context = { platform, drawSnapshots, opened: new Map(), post, gpu: null };
  channel.onMessage((raw: unknown) => {
    let msg: ToModelWorker;
    try {
      msg = validateToModelWorker(raw);
    } catch (e) {
      const id = typeof (raw as { id?: unknown })?.id === 'number' ? (raw as { id: number }).id : 0;
      post({
        type: 'model/didFail',
        id,
        error: {
          code: 'protocol',
          message: `The model worker got an invalid request (${e instanceof ProtocolError ? e.message : String(e)}).`,
        },
      });
      return;
    }
    queue = queue
      .then(async () => {
        try {
          await handle(modelRequestKind(msg), msg, ctx);
        } catch (e) {
          post({ type: 'model/didFail', id: msg.id, error: errorOf(e) });
        }
      })
      .catch(() => undefined); // only posting the failure itself lands here: nothing can carry it, so keep serving
  });
  post({ type: 'worker/ready' });
}
