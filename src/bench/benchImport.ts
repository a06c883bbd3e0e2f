/**
 * The import bench: a random GPT-2-layout checkpoint (GPT-2 small's sizes by default: 124M
 * parameters, 498 MB of F32) is written to a temporary folder, then everything else goes
 * through the editor's model worker service (lab/workers/modelService.ts, in this process on
 * Node's platform: the same requests, the same per-request planning, the same kept models
 * and helper threads the dashboard gets): the checkpoint is imported into a run folder, and
 * the run is asked for what the dashboard asks of it — the attention and head scores of a
 * 1,000-token text (Attention and Heads' "Your text"; the first request opens the model and
 * measures its heads' induction once), the logit lens of that text, a greedy decode of 20
 * tokens with the key/value cache, and the scores of the text (Score Selection). Prints the
 * seconds of each and the process's peak resident memory after each, decode ms/token, and
 * how many bytes the attention is kept in.
 *
 * Peak memory is the process's (resourceUsage().maxRSS): it only grows, so each figure is
 * the most held up to the end of that phase — the last is the model worker's peak.
 *
 * With a Hugging Face family's random folder (randomHf.ts: SmolLM2-135M or Qwen2.5-0.5B
 * shaped, bf16, sharded as the Hub ships it) the same requests run: the logit lens and the
 * scores of the text run one forward whose layers reuse two sets of buffers
 * (ModelShape.activations; Qwen2.5 over 1,024 positions: 554 and 473 MiB of activations, where
 * every layer keeping its own would take 3.9 GiB, more than WebAssembly has beside its weights).
 *
 * Last, the run is opened once more as the attention request opens it (openForRequest: run.json,
 * the tokenizer, the checkpoint read into a bound model): the seconds of "open" alone, which the
 * attention's figure includes. Its memory is not in the peaks (they are taken before it).
 */

import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { NODE_PLATFORM } from '../lab/platform/platform.node';
import { serveModelRequests } from '../lab/workers/modelService';
import { NODE_FS } from '../lab/files/fs.node';
import { openForRequest } from '../lab/inference/requestPlan';
import { backendFor } from '../lab/runs/specModel';
import type { WorkerChannel } from '../lab/platform/platform';
import type { ToModelWorker, FromModelWorker } from '../protocol/modelWorker';
import type { RandomGpt2Sizes } from './randomGpt2';
import { GPT2_SMALL, writeRandomGpt2 } from './randomGpt2';
import type { RandomHfSpec } from './randomHf';
import { writeRandomHf } from './randomHf';

/** What the import bench measured. */
export interface ImportBenchResult {
  /** What was imported, in words. */
  readonly model: string;
  readonly params: number;
  readonly fileBytes: number;
  readonly generateSeconds: number;
  readonly importSeconds: number;
  /** Tokens of the text every view was asked about. */
  readonly textTokens: number;
  /** Positions whose attention was returned, and the maps' [heads, rows, cols]. */
  readonly attentionTokens: number;
  readonly attentionShape: readonly number[];
  /** Seconds of the first attention: opening the model, its heads' induction, the text's attention. */
  readonly attendSeconds: number;
  /** CPU seconds of it, all threads (the wall time depends on what else runs). */
  readonly attendCpuSeconds: number;
  /** Bytes the layer a person opens is sent in (8-bit codes), and the overviews sent at once. */
  readonly layerBytes: number;
  readonly overviewBytes: number;
  /** Heads scored. */
  readonly heads: number;
  /** Seconds of the logit lens of the text (its forward is planned for the text: the model is reopened wider once). */
  readonly lensSeconds: number;
  readonly lensPositions: number;
  /** Tokens decoded and ms per token (greedy, key/value cache). */
  readonly decodeTokens: number;
  readonly msPerToken: number;
  /** Seconds of scoring the text, and tokens scored. */
  readonly scoreSeconds: number;
  readonly scoredTokens: number;
  /** Seconds (wall and CPU) of opening the imported run as the attention request plans it. */
  readonly openSeconds: number;
  readonly openCpuSeconds: number;
  /** Peak resident memory (MiB) after generating, importing, and each request. */
  readonly peakMiB: {
    readonly generate: number;
    readonly import: number;
    readonly attend: number;
    readonly lens: number;
    readonly decode: number;
    readonly score: number;
  };
}

const peakMiB = (): number => Math.round(process.resourceUsage().maxRSS / 1024);

/** A request without its id. */
type Request = ToModelWorker extends infer M ? (M extends { id: number } ? Omit<M, 'id'> : never) : never;

/**
 * The model worker's service in this process: requests in, each request's final answer out (a failure throws its
 * message).
 */
function inProcessWorker(): (msg: Request) => Promise<FromModelWorker> {
  let listener: (msg: unknown) => void = () => undefined;
  const waiting = new Map<number, { done: (m: FromModelWorker) => void; fail: (e: Error) => void }>();
  const channel: WorkerChannel<FromModelWorker> = {
    post: (msg) => {
      if (msg.type === 'worker/ready' || msg.type === 'model/didToken' || msg.type === 'model/didProgress') return;
      const w = waiting.get(msg.id);
      waiting.delete(msg.id);
      if (msg.type === 'model/didFail') w?.fail(new Error(`the model worker failed: ${msg.error.message}`));
      else w?.done(msg);
    },
    onMessage: (l) => {
      listener = l;
    },
  };
  serveModelRequests(NODE_PLATFORM, channel);
  let next = 1;
  return (msg) =>
    new Promise((done, fail) => {
      const id = next++;
      waiting.set(id, { done, fail });
      listener({ ...msg, id });
    });
}

/** The answer `reply` when it is of `type` (the service answers each request with one). */
function as<T extends FromModelWorker['type']>(reply: FromModelWorker, type: T): Extract<FromModelWorker, { type: T }> {
  if (reply.type !== type) throw new Error(`expected ${type}, got ${reply.type}`);
  return reply as Extract<FromModelWorker, { type: T }>;
}

/**
 * Runs the import bench at `sizes` in a temporary folder it removes; `textTokens` is the length of the text asked
 * about.
 */
export async function runImportBench(
  sizes: RandomGpt2Sizes | RandomHfSpec = GPT2_SMALL,
  onProgress: (line: string) => void = () => undefined,
  textTokens = 1000,
): Promise<ImportBenchResult> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'al-import-bench-'));
  try {
    let t = performance.now();
    const lap = (): number => {
      const now = performance.now();
      const s = (now - t) / 1000;
      t = now;
      return s;
    };
    const hf = 'modelType' in sizes ? sizes : null;
    const model = hf
      ? `a random ${hf.name} (${hf.layers} layers, d ${hf.hidden}, ${hf.heads}/${hf.kvHeads} heads, vocab ` +
        `${hf.vocab}, bf16${hf.shardBytes > 0 ? ', sharded' : ''})`
      : `a random GPT-2-layout model (${(sizes as RandomGpt2Sizes).nLayer} layers, d ` +
        `${(sizes as RandomGpt2Sizes).nEmbd}, vocab ${256 + (sizes as RandomGpt2Sizes).merges + 1}, F32)`;
    onProgress(`import bench: writing ${model} …`);
    const src = path.join(root, hf ? hf.name : 'gpt2');
    const gen = hf ? writeRandomHf(src, hf) : writeRandomGpt2(src, sizes as RandomGpt2Sizes);
    const context = hf ? hf.context : (sizes as RandomGpt2Sizes).nPositions;
    const generateSeconds = lap();
    const p0 = peakMiB();
    const ask = inProcessWorker();
    onProgress(`import bench: importing ${(gen.bytes / 2 ** 20).toFixed(0)} MiB through the model worker …`);
    const runDir = path.join(root, 'run');
    await ask({ type: 'model/import', from: src, outDir: runDir });
    const importSeconds = lap();
    const p1 = peakMiB();
    const n = Math.min(textTokens, context - 1);
    const text = 'ab'.repeat(n); // one token per "ab" (its first merge)
    onProgress(`import bench: Attention and Heads on a ${n}-token text (opens the model, measures its heads once) …`);
    const cpu0 = process.cpuUsage();
    const { output: snapshot } = as(await ask({ type: 'model/attend', runDir, text }), 'model/didAttend');
    const layer = as(
      await ask({ type: 'model/attendLayer', runDir, text, stack: 'decoder.self', layer: 0 }),
      'model/didAttendLayer',
    );
    const attendSeconds = lap();
    // CPU time of every thread of the process: what the attention costs whatever else shares the machine.
    const used = process.cpuUsage(cpu0);
    const attendCpuSeconds = (used.user + used.system) / 1e6;
    const p2 = peakMiB();
    onProgress('import bench: the logit lens of the text …');
    const lens = as(
      await ask({ type: 'model/lens', runDir, input: { kind: 'decoder-only', prompt: text }, topK: 5, fit: true }),
      'model/didLens',
    );
    const lensSeconds = lap();
    const p3 = peakMiB();
    onProgress('import bench: decoding 20 tokens …');
    const decoded = as(
      await ask({
        type: 'model/decode',
        runDir,
        params: {
          input: 'ab',
          strategy: 'greedy',
          beam: 1,
          lengthPenalty: 0,
          temperature: 1,
          topK: 0,
          topP: 1,
          maxTokens: 20,
          seed: 1,
        },
      }),
      'model/didDecode',
    );
    const decodeSeconds = lap();
    const p4 = peakMiB();
    onProgress('import bench: scoring the text …');
    const scored = as(await ask({ type: 'model/score', runDir, source: null, text }), 'model/didScore');
    const scoreSeconds = lap();
    const peakScore = peakMiB();
    onProgress('import bench: opening the run once more, as the attention request opens it …');
    const open = await timeOpen(runDir, text);
    const bytes = (maps: readonly { data: { byteLength: number } }[]): number =>
      maps.reduce((a, m) => a + m.data.byteLength, 0);
    return {
      model,
      params: gen.params,
      fileBytes: gen.bytes,
      generateSeconds,
      importSeconds,
      textTokens: n,
      attentionTokens: snapshot.tgtTokens.length,
      attentionShape: [...layer.output.shape],
      attendSeconds,
      attendCpuSeconds,
      layerBytes: layer.output.data.byteLength,
      overviewBytes: bytes(snapshot.maps),
      heads: snapshot.headScores?.length ?? 0,
      lensSeconds,
      lensPositions: lens.output.tokens.length,
      decodeTokens: decoded.output.ids.length,
      msPerToken: (1000 * decodeSeconds) / Math.max(1, decoded.output.ids.length),
      scoreSeconds,
      scoredTokens: scored.output.logprobs.length,
      openSeconds: open.seconds,
      openCpuSeconds: open.cpuSeconds,
      peakMiB: { generate: p0, import: p1, attend: p2, lens: p3, decode: p4, score: peakScore },
    };
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
}

/** Opens `runDir` as the attention of `text` plans it, times it (wall and CPU seconds of every thread), lets it go. */
async function timeOpen(runDir: string, text: string): Promise<{ seconds: number; cpuSeconds: number }> {
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const r = await openForRequest(NODE_FS, runDir, backendFor('auto', NODE_PLATFORM.threads), { job: 'attend', text });
  const seconds = (performance.now() - t0) / 1000;
  const used = process.cpuUsage(cpu0);
  (r.model.backendOrThrow() as { dispose?: () => void }).dispose?.();
  return { seconds, cpuSeconds: (used.user + used.system) / 1e6 };
}

/** The result as lines for people. */
export function formatImportBench(r: ImportBenchResult): string {
  return [
    `Import of ${r.model}: ${(r.params / 1e6).toFixed(1)}M parameters, ` +
      `${(r.fileBytes / 2 ** 20).toFixed(0)} MiB, through the model worker's requests`,
    `  import: ${r.importSeconds.toFixed(1)} s (stream, convert, write the run folder)`,
    `  open the imported run (read its checkpoint into a bound model; inside the attention's figure): ` +
      `${r.openSeconds.toFixed(1)} s (${r.openCpuSeconds.toFixed(1)} CPU-s)`,
    `  attention of a ${r.textTokens}-token text (opening the model, its heads' induction once, ` +
      `${r.heads} heads scored): ${r.attendSeconds.toFixed(1)} s (${r.attendCpuSeconds.toFixed(1)} ` +
      `CPU-s); a layer [${r.attentionShape.join(', ')}] is sent in ` +
      (`${(r.layerBytes / 2 ** 20).toFixed(1)} MiB of 8-bit codes, the ` +
        `overviews in ${(r.overviewBytes / 2 ** 20).toFixed(1)} MiB`),
    ...(r.lensPositions > 0
      ? [`  logit lens of the text (${r.lensPositions} positions, top 5 per layer): ${r.lensSeconds.toFixed(1)} s`]
      : []),
    `  decode: ${r.decodeTokens} tokens greedy with the KV cache, ${r.msPerToken.toFixed(1)} ms/token`,
    ...(r.scoredTokens > 0 ? [`  score the text (${r.scoredTokens} tokens): ${r.scoreSeconds.toFixed(1)} s`] : []),
    `  peak memory (process RSS, MiB): after generating ${r.peakMiB.generate}, import ` +
      `${r.peakMiB.import}, attention ${r.peakMiB.attend}, lens ${r.peakMiB.lens}, decode ` +
      `${r.peakMiB.decode}, score ${r.peakMiB.score}`,
  ].join('\n');
}
