/**
 * Fuzz test of every file the lab reads, through the functions the CLI, the workers and the
 * dashboard read them with: a run folder (run.json, tokenizer.json, model.safetensors by
 * openRun; metrics.jsonl, evaluations.jsonl and snapshots by the dashboard's state;
 * optimizer.safetensors by resume), an import folder (config.json, vocab.json + merges.txt,
 * a Hugging Face tokenizer.json, the checkpoint's header and metadata) and pairs files
 * (.tsv, .jsonl). Each case mutates one good file — bytes (flips, cuts, splices, junk) or
 * JSON values (hostile sizes such as 1e15, wrong types, deep nesting) — and must end as a
 * clean result or one EngineError on one line that names the file: never a hang, a
 * TypeError, a stack or an "Internal error". Memory stays under a cap throughout.
 *
 * Fixed seeds; ATTENTION_LAB_FUZZ=N runs N cases per kind of file (default 250), and
 * ATTENTION_LAB_FUZZ_SEED=S other cases.
 */
import * as nodeFs from 'node:fs';
import * as path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { createReferenceBackend } from '../../../../src/engine/backends/reference';
import { presetConfig } from '../../../../src/engine/config';
import { EngineError } from '../../../../src/engine/errors';
import { decodeSafetensors, encodeSafetensors } from '../../../../src/engine/io/safetensors';
import { Transformer } from '../../../../src/engine/models/transformer';
import { Rng } from '../../../../src/engine/rng';
import { trainBpeTokenizer } from '../../../../src/engine/tokenizers/bpeTokenizer';
import { gpt2FilesOf } from '../../../../src/engine/tokenizers/gpt2Files';
import { readPairs } from '../../../../src/lab/data/pairs';
import { appendEvaluation } from '../../../../src/lab/runs/evaluations';
import { NODE_FS } from '../../../../src/lab/files/fs.node';
import { importCheckpoint } from '../../../../src/lab/interop/importCheckpoint';
import { pytorchConfig, pytorchTensors } from '../../../../src/lab/interop/exportPytorch';
import { loadOptimizerCheckpoint } from '../../../../src/lab/runs/checkpoint';
import { openRun } from '../../../../src/lab/inference/openRun';
import { loadRunStateCounted, skippedNote } from '../../../../src/lab/runs/runState';
import { buildOptimizer, optimizerConfig } from '../../../../src/lab/runs/specModel';
import type { EvaluationRecord } from '../../../../src/protocol/evaluation';
import { nodeTestFs } from '../files/fileSystems';
import { tinyDocuments, tinySpec, trainInto } from '../tinyRuns';

const CASES = Number(process.env.ATTENTION_LAB_FUZZ ?? 250);
const SEED = Number(process.env.ATTENTION_LAB_FUZZ_SEED ?? 2025);
/** Heap a case may leave behind: far above what these tiny files need, far below a runaway read. */
const HEAP_CAP = 1.5 * 2 ** 30;

const t = nodeTestFs();
let root = '';
let runDir = '';
let importDir = '';
/** Good bytes of each file, by its path relative to its folder. */
const good = new Map<string, Uint8Array>();

// ----- mutations -----

/** Values a hostile or damaged JSON file may hold where a good one holds anything. */
const HOSTILE: readonly unknown[] = [
  1e15,
  -1,
  0,
  1e6,
  2 ** 31,
  2 ** 53 + 2,
  -0,
  0.5,
  1e308,
  -1e308,
  7,
  null,
  true,
  false,
  '',
  'x',
  '1e15',
  'NaN',
  [],
  [1e15],
  {},
  { a: 1e15 },
  'a'.repeat(5000),
  Array.from({ length: 200 }, () => 0),
];

function pick<T>(rng: Rng, xs: readonly T[]): T {
  return xs[rng.int(xs.length)] as T;
}

/** A deep nest that a recursive reader could overflow its stack on. */
function deep(n: number): unknown {
  let v: unknown = 1;
  for (let i = 0; i < n; i++) v = [v];
  return v;
}

/** Every path to a value in `v` (object keys and array indices), breadth first, at most 4000. */
function paths(v: unknown): (string | number)[][] {
  const out: (string | number)[][] = [];
  const queue: [unknown, (string | number)[]][] = [[v, []]];
  while (queue.length && out.length < 4000) {
    const [x, p] = queue.shift() as [unknown, (string | number)[]];
    out.push(p);
    if (Array.isArray(x)) x.slice(0, 50).forEach((y, i) => queue.push([y, [...p, i]]));
    else if (typeof x === 'object' && x !== null)
      for (const [k, y] of Object.entries(x).slice(0, 200)) queue.push([y, [...p, k]]);
  }
  return out;
}

function setAt(v: unknown, p: readonly (string | number)[], value: unknown, remove: boolean): unknown {
  if (p.length === 0) return value;
  const [head, ...rest] = p as [string | number, ...(string | number)[]];
  const copy: Record<string | number, unknown> = Array.isArray(v)
    ? ([...v] as unknown as Record<number, unknown>)
    : { ...(v as Record<string, unknown>) };
  if (remove && rest.length === 0) {
    if (Array.isArray(copy)) (copy as unknown as unknown[]).splice(Number(head), 1);
    else delete copy[head];
  } else copy[head] = setAt(copy[head], rest, value, remove);
  return copy;
}

/** A JSON value with one part replaced by a hostile value, removed, or given an unknown sibling. */
function mutateJson(v: unknown, rng: Rng): unknown {
  const ps = paths(v);
  const p = pick(rng, ps);
  switch (rng.int(6)) {
    case 0:
      return setAt(v, p, undefined, true);
    case 1:
      return setAt(v, p, deep(500 + rng.int(1500)), false);
    case 2: {
      // Two changes at once: sizes that contradict each other.
      const once = setAt(v, p, pick(rng, HOSTILE), false);
      return setAt(once, pick(rng, ps), pick(rng, HOSTILE), false);
    }
    default:
      return setAt(v, p, pick(rng, HOSTILE), false);
  }
}

/** Raw byte damage: flips, a cut, a splice, junk inserted, NUL or invalid UTF-8 bytes. */
function mutateBytes(b0: Uint8Array, rng: Rng): Uint8Array {
  const b = Uint8Array.from(b0);
  const at = (): number => rng.int(Math.max(1, b.length));
  switch (rng.int(6)) {
    case 0:
      for (let i = 0, n = 1 + rng.int(4); i < n && b.length; i++) b[at()] ^= 1 << rng.int(8);
      return b;
    case 1:
      return b.subarray(0, at());
    case 2: {
      const from = at();
      b.copyWithin(at(), from, from + rng.int(64));
      return b;
    }
    case 3: {
      const i = at();
      const junk = Uint8Array.from({ length: 1 + rng.int(32) }, () =>
        pick(rng, [0, 0x0a, 0x22, 0x7b, 0x7d, 0xff, 0xc3, 0x5c, 0x09, rng.int(256)]),
      );
      const out = new Uint8Array(b.length + junk.length);
      out.set(b.subarray(0, i));
      out.set(junk, i);
      out.set(b.subarray(i), i + junk.length);
      return out;
    }
    case 4:
      return new Uint8Array(0);
    default: {
      // A digit changed (sizes, offsets, shapes), or a run of digits made huge.
      const digits: number[] = [];
      for (let i = 0; i < b.length && digits.length < 5000; i++)
        if ((b[i] as number) >= 48 && (b[i] as number) <= 57) digits.push(i);
      if (!digits.length) return b;
      const i = pick(rng, digits);
      b[i] = 48 + rng.int(10);
      if (rng.int(3) === 0) {
        const nines = new TextEncoder().encode('9'.repeat(1 + rng.int(20)));
        const out = new Uint8Array(b.length + nines.length);
        out.set(b.subarray(0, i));
        out.set(nines, i);
        out.set(b.subarray(i), i + nines.length);
        return out;
      }
      return b;
    }
  }
}

const enc = new TextEncoder();
const dec = new TextDecoder();

/** A JSON file's mutation: of its value (when it parses) or of its bytes. */
function mutateJsonFile(b: Uint8Array, rng: Rng): Uint8Array {
  if (rng.int(3) === 0) return mutateBytes(b, rng);
  return enc.encode(JSON.stringify(mutateJson(JSON.parse(dec.decode(b)), rng)));
}

/** A JSON-lines file's mutation: one line's value, or the bytes. */
function mutateJsonLines(b: Uint8Array, rng: Rng): Uint8Array {
  if (rng.int(3) === 0) return mutateBytes(b, rng);
  const lines = dec.decode(b).split('\n');
  const i = rng.int(Math.max(1, lines.length - 1));
  try {
    lines[i] = JSON.stringify(mutateJson(JSON.parse(lines[i] as string), rng));
  } catch {
    lines[i] = '{"type":"step",';
  }
  return enc.encode(lines.join('\n'));
}

/** A safetensors file's mutation: its bytes, or its metadata values (a config's sizes among them). */
function mutateSafetensors(b: Uint8Array, rng: Rng): Uint8Array {
  if (rng.int(2) === 0) return mutateBytes(b, rng);
  const f = decodeSafetensors(b);
  const meta: Record<string, string> = { ...f.metadata };
  const keys = Object.keys(meta);
  const key = pick(rng, keys);
  const raw = meta[key] as string;
  let next: unknown;
  try {
    next = mutateJson(JSON.parse(raw), rng);
  } catch {
    next = pick(rng, HOSTILE);
  }
  if (next === undefined) delete meta[key];
  else meta[key] = typeof next === 'string' && rng.int(2) === 0 ? next : JSON.stringify(next);
  const tensors = [...f.tensors].map(([name, x]) => ({ name, dtype: x.dtype, shape: x.shape, data: x.data }));
  return encodeSafetensors(tensors, meta);
}

// ----- the files and their readers -----

interface Target {
  /** Which folder: the run, the import, or the root (pairs files). */
  readonly where: 'run' | 'import' | 'root';
  /** The file, relative to its folder. */
  readonly file: string;
  readonly folder: () => string;
  readonly mutate: (b: Uint8Array, rng: Rng) => Uint8Array;
  /** Reads the folder as the lab does; a result is fine, a refusal must be a clean one. */
  readonly read: (dir: string) => Promise<unknown>;
}

const backend = createReferenceBackend();

const TARGETS: readonly Target[] = [
  {
    where: 'run',
    file: 'run.json',
    folder: () => runDir,
    mutate: mutateJsonFile,
    read: async (dir) => [await loadRunStateCounted(NODE_FS, dir), await openRun(NODE_FS, dir, backend)],
  },
  {
    where: 'run',
    file: 'tokenizer.json',
    folder: () => runDir,
    mutate: mutateJsonFile,
    read: (dir) => openRun(NODE_FS, dir, backend),
  },
  {
    where: 'run',
    file: 'model.safetensors',
    folder: () => runDir,
    mutate: mutateSafetensors,
    read: (dir) => openRun(NODE_FS, dir, backend),
  },
  {
    where: 'run',
    file: 'optimizer.safetensors',
    folder: () => runDir,
    mutate: mutateSafetensors,
    read: async (dir) => {
      const r = await openRun(NODE_FS, dir, backend);
      const opt = buildOptimizer(r.model, optimizerConfig(r.run.spec, r.model.config));
      await loadOptimizerCheckpoint(NODE_FS, dir, opt, r.step);
    },
  },
  {
    where: 'run',
    file: 'metrics.jsonl',
    folder: () => runDir,
    mutate: mutateJsonLines,
    read: (dir) => loadRunStateCounted(NODE_FS, dir),
  },
  {
    where: 'run',
    file: 'evaluations.jsonl',
    folder: () => runDir,
    mutate: mutateJsonLines,
    read: (dir) => loadRunStateCounted(NODE_FS, dir),
  },
  {
    where: 'run',
    file: 'snapshots/step-0000002.safetensors',
    folder: () => runDir,
    mutate: mutateSafetensors,
    read: (dir) => loadRunStateCounted(NODE_FS, dir),
  },
  { where: 'import', file: 'config.json', folder: () => importDir, mutate: mutateJsonFile, read: importInto },
  { where: 'import', file: 'vocab.json', folder: () => importDir, mutate: mutateJsonFile, read: importInto },
  { where: 'import', file: 'merges.txt', folder: () => importDir, mutate: mutateBytes, read: importInto },
  { where: 'import', file: 'model.safetensors', folder: () => importDir, mutate: mutateSafetensors, read: importInto },
  {
    where: 'import',
    file: 'hf/tokenizer.json',
    folder: () => importDir,
    mutate: mutateJsonFile,
    read: (dir) => importInto(dir, path.join(dir, 'hf', 'tokenizer.json')),
  },
  {
    where: 'root',
    file: 'pairs.tsv',
    folder: () => root,
    mutate: mutateBytes,
    read: (dir) => readPairs(NODE_FS, path.join(dir, 'pairs.tsv'), null),
  },
  {
    where: 'root',
    file: 'pairs.jsonl',
    folder: () => root,
    mutate: mutateJsonLines,
    read: (dir) => readPairs(NODE_FS, path.join(dir, 'pairs.jsonl'), null),
  },
];

let imports = 0;
async function importInto(dir: string, tokenizer?: string): Promise<unknown> {
  const out = path.join(root, `import-out-${imports++}`);
  try {
    return await importCheckpoint(NODE_FS, {
      from: dir,
      out,
      ...(tokenizer ? { tokenizer } : { tokenizer: path.join(dir, 'vocab.json') }),
    });
  } finally {
    nodeFs.rmSync(out, { recursive: true, force: true });
  }
}

/** Whether a reader's result says it left damaged records out (the dashboard's state does). */
function skippedSome(result: unknown): boolean {
  const skipped = (result as { skipped?: Record<string, number> } | undefined)?.skipped;
  return typeof skipped === 'object' && skipped !== null && Object.values(skipped).some((n) => n > 0);
}

const keyOf = (target: Target): string => `${target.where}/${target.file}`;

beforeAll(async () => {
  root = await t.dir();
  // A run with every file: checkpoints with optimizer state, evaluations, metrics and a snapshot at step 2.
  runDir = path.join(root, 'run');
  const spec = tinySpec(await tinyDocuments(t), 2);
  await trainInto(t, runDir, {
    ...spec,
    training: { ...spec.training, evalEvery: 1, checkpointEvery: 2, snapshotEvery: 2 },
  });
  const record: EvaluationRecord = {
    version: 1,
    at: '2026-01-01T00:00:00.000Z',
    step: 2,
    data: 'documents',
    source: 'test.txt',
    files: [{ path: 'test.txt', bytes: 10, sha256: 'ab' }],
    dataHash: 'cd',
    loss: 1.5,
    ppl: 4.48,
    tokens: 10,
    bytes: 10,
    bpb: 2.1,
    items: 1,
    translation: null,
  };
  await appendEvaluation(NODE_FS, runDir, record);
  // An import folder as PyTorch and Hugging Face save one: weights without our metadata, config.json, GPT-2's tokenizer files.
  importDir = path.join(root, 'import');
  const tok = trainBpeTokenizer(['the cat sat on the mat; the dog sat on the log. '.repeat(8)], { vocabSize: 280 });
  const c = presetConfig('decoder-only', 'tiny', tok.vocabSize);
  const model = new Transformer(
    { ...c, nDecoderLayers: 1, dModel: 16, nHeads: 2, dFF: 32, maxLen: 16 },
    { maxBatch: 1 },
  ).bind(backend);
  model.initialize(new Rng(1));
  const f = decodeSafetensors(pytorchTensors(model).bytes);
  nodeFs.mkdirSync(path.join(importDir, 'hf'), { recursive: true });
  nodeFs.writeFileSync(
    path.join(importDir, 'model.safetensors'),
    encodeSafetensors(
      [...f.tensors].map(([name, x]) => ({ name, dtype: x.dtype, shape: x.shape, data: x.data })),
      { format: 'pt' },
    ),
  );
  nodeFs.writeFileSync(path.join(importDir, 'config.json'), JSON.stringify(pytorchConfig(model.config)));
  const files = gpt2FilesOf(tok);
  nodeFs.writeFileSync(path.join(importDir, 'vocab.json'), files.vocabJson);
  nodeFs.writeFileSync(path.join(importDir, 'merges.txt'), files.mergesText);
  nodeFs.writeFileSync(
    path.join(importDir, 'hf', 'tokenizer.json'),
    JSON.stringify({
      model: {
        type: 'BPE',
        vocab: JSON.parse(files.vocabJson) as unknown,
        merges: files.mergesText
          .split('\n')
          .slice(1)
          .filter((l) => l),
      },
      pre_tokenizer: { type: 'ByteLevel', add_prefix_space: false },
      added_tokens: [],
    }),
  );
  nodeFs.writeFileSync(path.join(root, 'pairs.tsv'), 'one\tuno\ntwo\tdos\nthree\ttres\n');
  nodeFs.writeFileSync(path.join(root, 'pairs.jsonl'), '{"src":"one","tgt":"uno"}\n{"src":"two","tgt":"dos"}\n');
  for (const target of TARGETS)
    good.set(keyOf(target), new Uint8Array(nodeFs.readFileSync(path.join(target.folder(), target.file))));
});

describe('readers fuzz: every file the lab reads', () => {
  it('reads every good file', async () => {
    for (const target of TARGETS) await target.read(target.folder());
    const { skipped } = await loadRunStateCounted(NODE_FS, runDir);
    expect(skipped).toEqual({ metrics: 0, evaluations: 0, snapshots: 0 });
  });

  it.each(TARGETS.map((target, i) => [keyOf(target), target, i] as const))(
    `%s: ${CASES} mutations end as a result (damage counted) or a one-line EngineError naming the file`,
    async (_key, target, i) => {
      const rng = new Rng(SEED + i);
      const file = path.join(target.folder(), target.file);
      const original = good.get(keyOf(target)) as Uint8Array;
      let refused = 0; // refusals, and results that counted damage
      try {
        for (let k = 0; k < CASES; k++) {
          const bytes = target.mutate(original, rng);
          nodeFs.writeFileSync(file, bytes);
          try {
            const result = await target.read(target.folder());
            if (skippedSome(result)) refused++;
          } catch (e) {
            const shown = `case ${k} of ${target.file} (${bytes.length} bytes): ${e instanceof Error ? `${e.name}: ${e.message}` : String(e)}`;
            if (!EngineError.is(e)) throw new Error(`not an EngineError — ${shown}`);
            if (/\n/.test(e.message)) throw new Error(`not one line — ${shown}`);
            if (/internal error/i.test(e.message)) throw new Error(`an internal error — ${shown}`);
            if (!e.message.includes(path.basename(target.file)))
              throw new Error(`does not name ${path.basename(target.file)} — ${shown}`);
            refused++;
          }
          if (process.memoryUsage().heapUsed > HEAP_CAP)
            throw new Error(`case ${k} of ${target.file} left over ${HEAP_CAP} bytes of heap`);
        }
      } finally {
        nodeFs.writeFileSync(file, original);
      }
      expect(refused).toBeGreaterThan(0);
    },
    120_000,
  );

  it('counts damaged metrics lines and snapshots and says so in one line', async () => {
    const metrics = path.join(runDir, 'metrics.jsonl');
    const snapshot = path.join(runDir, 'snapshots', 'step-0000002.safetensors');
    const keep = [nodeFs.readFileSync(metrics), nodeFs.readFileSync(snapshot)] as const;
    try {
      nodeFs.appendFileSync(metrics, '{"type":"step","step":"two"}\nnot json\n');
      nodeFs.writeFileSync(snapshot, keep[1].subarray(0, 100));
      const { state, skipped } = await loadRunStateCounted(NODE_FS, runDir);
      expect(skipped).toEqual({ metrics: 2, evaluations: 0, snapshots: 1 });
      expect(state.steps.length).toBeGreaterThan(0);
      expect(state.snapshots.map((x) => x.step)).toEqual([0]);
      expect(skippedNote(runDir, skipped)).toBe(
        `Skipped 2 damaged metrics lines, 1 unreadable snapshot in ${runDir}; the rest of the run is shown.`,
      );
      expect(skippedNote(runDir, { metrics: 0, evaluations: 0, snapshots: 0 })).toBeNull();
    } finally {
      nodeFs.writeFileSync(metrics, keep[0]);
      nodeFs.writeFileSync(snapshot, keep[1]);
    }
  });
});
