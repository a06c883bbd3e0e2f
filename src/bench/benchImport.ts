/**
 * The import bench: a random GPT-2-layout checkpoint (GPT-2 small's sizes by default: 124M
 * parameters, 498 MB of F32) is written to a temporary folder, imported into a run folder,
 * opened on the WebAssembly backend (as the CLI opens it: helper threads where the machine
 * has cores for them), decoded greedily for 20 tokens with the key/value cache, its heads
 * measured on the diagnostic sequences (induction, once per opened model), and asked for the
 * attention of its whole context (1024 tokens: every layer and head, with head scores).
 * Prints the seconds of each phase, the process's peak resident memory after each, decode
 * ms/token, and how many bytes the attention is kept in.
 *
 * Peak memory is the process's (resourceUsage().maxRSS): it only grows, so each figure is
 * the most held up to the end of that phase.
 */

import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createWasmBackend } from '../engine/backends/wasm/wasmBackend';
import { NODE_FS } from '../lab/files/nodeFs';
import { createWasmThreads } from '../lab/workers/wasmThreads';
import { importCheckpoint } from '../lab/interop/importCheckpoint';
import { decodeText } from '../lab/inference/decode';
import { attendDiagnostic, attendText } from '../lab/inference/attend';
import { openRun } from '../lab/runs/openRun';
import type { RandomGpt2Sizes } from './randomGpt2';
import { GPT2_SMALL, writeRandomGpt2 } from './randomGpt2';

/** What the import bench measured. */
export interface ImportBenchResult {
  readonly params: number;
  readonly fileBytes: number;
  readonly generateSeconds: number;
  readonly importSeconds: number;
  readonly openSeconds: number;
  /** Tokens decoded and ms per token (greedy, key/value cache). */
  readonly decodeTokens: number;
  readonly msPerToken: number;
  /** Seconds of the heads on the diagnostic sequences (their induction, measured once per opened model). */
  readonly diagnosticSeconds: number;
  /** Positions whose attention was returned, and the maps' [heads, rows, cols]. */
  readonly attentionTokens: number;
  readonly attentionShape: readonly number[];
  readonly attendSeconds: number;
  /** CPU seconds of the attention, all threads (the wall time depends on what else runs). */
  readonly attendCpuSeconds: number;
  /** Bytes every layer's whole map is kept in (8-bit codes), and the overviews sent at once. */
  readonly attentionBytes: number;
  readonly overviewBytes: number;
  /** Heads scored. */
  readonly heads: number;
  /** Threads the kernels ran on. */
  readonly threads: number;
  /** Peak resident memory (MiB) after generating, importing, opening, decoding and attending. */
  readonly peakMiB: { readonly generate: number; readonly import: number; readonly open: number; readonly decode: number; readonly attend: number };
}

const peakMiB = (): number => Math.round(process.resourceUsage().maxRSS / 1024);

/** Runs the import bench at `sizes` in a temporary folder it removes. */
export async function runImportBench(sizes: RandomGpt2Sizes = GPT2_SMALL, onProgress: (line: string) => void = () => undefined): Promise<ImportBenchResult> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'al-import-bench-'));
  try {
    let t = performance.now();
    const lap = (): number => {
      const now = performance.now();
      const s = (now - t) / 1000;
      t = now;
      return s;
    };
    onProgress(`import bench: writing a random GPT-2 layout model (${sizes.nLayer} layers, d ${sizes.nEmbd}, vocab ${256 + sizes.merges + 1}) …`);
    const src = path.join(root, 'gpt2');
    const gen = writeRandomGpt2(src, sizes);
    const generateSeconds = lap();
    const p0 = peakMiB();
    onProgress(`import bench: importing ${(gen.bytes / 2 ** 20).toFixed(0)} MiB …`);
    const runDir = path.join(root, 'run');
    await importCheckpoint(NODE_FS, { from: src, out: runDir });
    const importSeconds = lap();
    const p1 = peakMiB();
    const threads = createWasmThreads();
    const backend = createWasmBackend({ runner: threads });
    if (!backend) throw new Error('the import bench needs the wasm backend (WebAssembly SIMD and SharedArrayBuffer)');
    await threads.whenReady();
    const r = await openRun(NODE_FS, runDir, backend, 1);
    const openSeconds = lap();
    const p2 = peakMiB();
    onProgress('import bench: decoding 20 tokens …');
    const decoded = decodeText(r, { input: 'ab', strategy: 'greedy', beam: 1, lengthPenalty: 0, temperature: 1, topK: 0, topP: 1, maxTokens: 20, seed: 1 });
    const decodeSeconds = lap();
    const p3 = peakMiB();
    const L = r.model.config.maxLen;
    // Once per opened model: every head's induction on the diagnostic sequences (what `heads` on an import prints).
    onProgress('import bench: the heads on the diagnostic sequences …');
    attendDiagnostic(r);
    const diagnosticSeconds = lap();
    onProgress(`import bench: the attention of ${L} tokens …`);
    const cpu0 = process.cpuUsage();
    const { snapshot, full } = attendText(r, 'ab'.repeat(L - 1)); // BOS + L − 1 tokens: the whole context
    const attendSeconds = lap();
    // CPU time of every thread of the process: what the attention costs whatever else shares the machine.
    const used = process.cpuUsage(cpu0);
    const attendCpuSeconds = (used.user + used.system) / 1e6;
    const bytes = (maps: readonly { data: { byteLength: number } }[]): number => maps.reduce((a, m) => a + m.data.byteLength, 0);
    backend.dispose();
    return {
      params: gen.params, fileBytes: gen.bytes, generateSeconds, importSeconds, openSeconds,
      decodeTokens: decoded.output.ids.length, msPerToken: (1000 * decodeSeconds) / Math.max(1, decoded.output.ids.length),
      diagnosticSeconds, attentionTokens: snapshot.tgtTokens.length, attentionShape: full[0] ? [...full[0].shape] : [], attendSeconds, attendCpuSeconds,
      attentionBytes: bytes(full), overviewBytes: bytes(snapshot.maps), heads: snapshot.headScores?.length ?? 0,
      threads: backend.threads,
      peakMiB: { generate: p0, import: p1, open: p2, decode: p3, attend: peakMiB() },
    };
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
}

/** The result as lines for people. */
export function formatImportBench(r: ImportBenchResult): string {
  return [
    `Import of a random GPT-2-layout model: ${(r.params / 1e6).toFixed(1)}M parameters, ${(r.fileBytes / 2 ** 20).toFixed(0)} MiB of F32`,
    `  load: import ${r.importSeconds.toFixed(1)} s (stream, convert, write the run folder), open on wasm (${r.threads} thread${r.threads === 1 ? '' : 's'}) ${r.openSeconds.toFixed(1)} s`,
    `  decode: ${r.decodeTokens} tokens greedy with the KV cache, ${r.msPerToken.toFixed(1)} ms/token`,
    `  heads on the diagnostic sequences (induction, once per opened model): ${r.diagnosticSeconds.toFixed(1)} s`,
    `  attention: ${r.attentionTokens} tokens, maps [${r.attentionShape.join(', ')}] per layer, ${r.heads} heads scored, ${r.attendSeconds.toFixed(1)} s (${r.attendCpuSeconds.toFixed(1)} CPU-s on ${r.threads} thread${r.threads === 1 ? '' : 's'}); kept in ${(r.attentionBytes / 2 ** 20).toFixed(0)} MiB of 8-bit codes (float32: ${((4 * r.attentionBytes) / 2 ** 20).toFixed(0)} MiB), overviews ${(r.overviewBytes / 2 ** 20).toFixed(1)} MiB`,
    `  peak memory (process RSS, MiB): after generating ${r.peakMiB.generate}, import ${r.peakMiB.import}, open ${r.peakMiB.open}, decode ${r.peakMiB.decode}, attention ${r.peakMiB.attend}`,
  ].join('\n');
}
