/**
 * Extension host ⇄ model worker (src/lab/workers/modelWorker.node.ts, .web.ts): requests (decode,
 * score, attention and one layer of it, export, speed calibration, evaluation on test files,
 * logit lens, head ablation, drawing a PyTorch run's pending snapshots), each answered by
 * exactly one `model/did<Kind>` answer with the same id, or `model/didFail`; a decode streams
 * `model/didToken` and a long evaluation `model/didProgress` before its answer. Each request
 * is one entry of `modelRequests` (schema.ts `requests`): its fields, answer, time-out, what it
 * streams and whether the dashboard may send it; the messages, their validators, the client's
 * `request(kind, params)` and the worker's handlers are typed from it.
 *
 * Leaves out: data shared with other channels (data.ts, model.ts).
 */

import type { AnswerMessageOf, AnswerOf, Infer, PageKinds, ParamsOf, RequestMessageOf } from './schema';
import {
  arrayOf,
  bool,
  finiteOrNaN,
  i32Shared,
  messages,
  nonNegInt,
  nullable,
  num,
  obj,
  oneOf,
  optional,
  posInt,
  ProtocolError,
  requests,
  str,
  variants,
} from './schema';
import { errorData, skippedFile, trainSpec } from './data';
import { attentionMapData, attentionSnapshot, attentionStack, decodeOutput, decodeParams } from './model';
import { ablationOutputData, headRefData, lensInputData, lensOutputData } from './analysis';
import { attributionOutputData, attributionParamsData } from './attribution';
import { patchOutputData, patchRequestData } from './patching';
import { steerOutputData, steerRequestData } from './steering';
import { bleuTokenize, evalDecoding, evaluationRecord, translationScores } from './evaluation';

/** Per-token surprise of a text under a run's model (`model/score`). */
export type ScoreOutput = Infer<typeof scoreOutput>;
export const scoreOutput = obj({
  /** Display strings of the scored tokens (BOS excluded; an encoder-decoder target ends with its EOS). */
  tokens: arrayOf(str),
  /** log p(token | what precedes it, up to a context: lab/inference/score.ts states the rule), one per token. */
  logprobs: arrayOf(finiteOrNaN),
  /**
   * UTF-16 offsets [start, end) of each token in the scored text (a token inside a split character gets that
   * character's range).
   */
  starts: arrayOf(nonNegInt),
  ends: arrayOf(nonNegInt),
  /** Tokens past the most one text is scored on (MAX_SCORED_TOKENS), left unscored. */
  truncated: nonNegInt,
});

/** What `model/export` wrote: the folder `<outDir>/<run name>` and its files (src/lab/interop/exportFolder.ts). */
export type ExportOutput = Infer<typeof exportOutput>;
export const exportOutput = obj({ dir: str, files: arrayOf(str), tensors: nonNegInt, warnings: arrayOf(str) });

/**
 * Test files a run never saw (`eval --data/--pairs`, "Evaluate on Files…"): documents for a
 * decoder-only run, source→target pairs for an encoder-decoder.
 */
export type EvalFilesData = Infer<typeof evalFilesData>;
export const evalFilesData = variants('kind', {
  documents: {
    /** Globs, files or folders (relative to `cwd` or absolute) when `glob`; else exact file paths. */
    paths: arrayOf(str),
    /** Folder the paths are relative to; document paths are reported relative to it. */
    cwd: str,
    glob: bool,
    /** Size limits in bytes (the training defaults when absent). */
    maxFileBytes: optional(posInt),
    maxTotalBytes: optional(posInt),
  },
  /** Two parallel line files, or one `.tsv` / `.jsonl` file when `target` is null. */
  pairs: { source: str, target: nullable(str) },
});

/** What evaluating a run on test files measured (`model/evaluateFiles`, `eval --data/--pairs`). */
export type EvalFilesOutput = Infer<typeof evalFilesOutput>;
export const evalFilesOutput = obj({
  kind: oneOf('documents', 'pairs'),
  /** The test data, for people: "2 documents under /w/test", "/w/test.de → /w/test.en (40 pairs)". */
  source: str,
  /** Checkpoint step of the model evaluated. */
  step: nonNegInt,
  /** The model's context: window length (documents), longest source or target + 1 (pairs). */
  context: posInt,
  /** Token-weighted mean negative log-likelihood in nats (no dropout, no label smoothing). */
  loss: finiteOrNaN,
  /** exp(loss). */
  ppl: finiteOrNaN,
  /** Target tokens scored. */
  tokens: nonNegInt,
  /** Documents scored (0 for pairs). */
  documents: nonNegInt,
  /** Pairs scored for loss (0 for documents). */
  pairs: nonNegInt,
  /** Pairs left out of the loss because the source or the target does not fit the context. */
  pairsTooLong: nonNegInt,
  /**
   * Decoded pairs whose source was cut to the encoder's context (every pair is decoded, so hypotheses line up with
   * references).
   */
  sourcesCut: nonNegInt,
  /** UTF-8 bytes of the text the scored tokens stand for, and bits per byte (lab/evaluation/bitsPerByte.ts). */
  bytes: nonNegInt,
  bpb: nullable(num),
  /**
   * Exact match, BLEU and chrF of the decoded pairs (the first `maxPairs` of the test file, in its order); null for
   * documents.
   */
  translation: nullable(translationScores),
  /** Why BLEU tokenized as its signature says, for people (null for documents). */
  bleuTokenizeReason: nullable(str),
  /** The decodes, in test order (empty for documents). */
  hypotheses: arrayOf(str),
  /** Files that matched but were left out (documents), and why. */
  skipped: arrayOf(skippedFile),
  /** Characters (code points) of the test text. */
  characters: nonNegInt,
  /** Of those, characters outside a char tokenizer's vocabulary; null for BPE (its bytes cover any text). */
  unseenChars: nullable(nonNegInt),
  /** A few of the unseen characters, most frequent first. */
  unseenExamples: arrayOf(str),
  /** The line appended to the run's evaluations.jsonl. */
  record: evaluationRecord,
});

/** What `model/import` made: the new run folder and what was in the checkpoint (lab/interop/importCheckpoint.ts). */
export type ImportOutput = Infer<typeof importOutput>;
export const importOutput = obj({
  runDir: str,
  /** The layout's name and, for people, its description. */
  layout: oneOf(
    'attention-lab',
    'nanogpt',
    'hf-gpt2',
    'seed-transformer',
    'hf-llama',
    'hf-qwen2',
    'hf-qwen3',
    'hf-mistral',
    'hf-gpt-neox',
    'hf-gemma3',
  ),
  layoutText: str,
  modelFile: str,
  params: nonNegInt,
  tensors: nonNegInt,
  tokenizer: str,
  notes: arrayOf(str),
});

/** What `model/calibrate` measured. */
export type CalibrationOutput = Infer<typeof calibrationOutput>;
export const calibrationOutput = obj({
  secondsPerStep: num,
  flopsPerSec: num,
  backend: str,
  /** The threads the measured steps ran on. */
  threads: posInt,
});

/**
 * The model worker's requests, each declared once: its fields, its answer, its time-out, what it
 * streams, and whether the dashboard may send it (forwarded as it came: docs/ARCHITECTURE.md,
 * "The protocol"). A big model on a long text is the slowest short request — GPT-2 small's
 * logit lens of 1,000 tokens is 13 unembeddings of 50,257 ids, minutes on two busy cores; an
 * evaluation on files shows its progress and can be cancelled, so it gets an hour.
 */
export const modelRequests = requests('model', {
  decode: {
    params: { runDir: str, params: decodeParams },
    answer: decodeOutput,
    what: 'Decoding',
    timeoutMs: 300_000,
    streams: 'token',
    page: true,
  },
  score: {
    params: { runDir: str, source: nullable(str), text: str },
    answer: scoreOutput,
    what: 'Scoring',
    timeoutMs: 300_000,
    streams: null,
    page: false,
  },
  /** The attention of `text`: every head's scores, every layer's map (an overview of a long one). */
  attend: {
    params: { runDir: str, text: str },
    answer: attentionSnapshot,
    what: 'Computing attention',
    timeoutMs: 300_000,
    streams: null,
    page: true,
  },
  /** One layer's whole map of the attention of `text` (after `model/attend` sent its overview). */
  attendLayer: {
    params: { runDir: str, text: str, stack: attentionStack, layer: nonNegInt },
    answer: attentionMapData,
    what: 'Computing attention',
    timeoutMs: 300_000,
    streams: null,
    page: true,
  },
  /**
   * The logit lens of an input (lab/inference/lens.ts); `fit` cuts one longer than the context instead of refusing it.
   */
  lens: {
    params: { runDir: str, input: lensInputData, topK: posInt, fit: bool },
    answer: lensOutputData,
    what: 'Computing the logit lens',
    timeoutMs: 600_000,
    streams: null,
    page: true,
  },
  /**
   * Next-token top-k and loss of an input with every head on and with the heads of `off` off (lab/inference/ablate.ts).
   */
  ablate: {
    params: { runDir: str, input: lensInputData, off: arrayOf(headRefData), topK: posInt, fit: bool },
    answer: ablationOutputData,
    what: 'Ablating heads',
    timeoutMs: 600_000,
    streams: null,
    page: true,
  },
  /**
   * Activation and path patching of a clean and a corrupted prompt (lab/inference/patch.ts);
   * progress in patched runs; `cancel` as for evaluateFiles (checked between forwards).
   */
  patch: {
    params: { runDir: str, request: patchRequestData, cancel: optional(i32Shared) },
    answer: patchOutputData,
    what: 'Patching',
    timeoutMs: 1_800_000,
    streams: 'progress',
    page: true,
  },
  /**
   * Direct logit attribution, the accumulated residual or attribution patching of two prompts
   * (lab/inference/attribute.ts); progress in passes; `cancel` as for evaluateFiles.
   */
  attribute: {
    params: { runDir: str, params: attributionParamsData, cancel: optional(i32Shared) },
    answer: attributionOutputData,
    what: 'Attributing',
    timeoutMs: 1_800_000, // with full patching beside it, as long as `patch`
    streams: 'progress',
    page: true,
  },
  /**
   * A decode steered by activation addition beside the same decode unsteered (lab/inference/steer.ts).
   */
  steer: {
    params: { runDir: str, request: steerRequestData },
    answer: steerOutputData,
    what: 'Steering',
    timeoutMs: 300_000,
    streams: null,
    page: true,
  },
  /**
   * The run's export folder `<outDir>/<run name>`; force: replace a non-empty one; format: pytorch (default) or hf
   * (Hugging Face's LlamaForCausalLM, lab/interop/exportHf.ts).
   */
  export: {
    params: { runDir: str, outDir: str, force: bool, format: optional(oneOf('pytorch', 'hf')) },
    answer: exportOutput,
    what: 'Exporting',
    timeoutMs: 300_000,
    streams: null,
    page: false,
  },
  /** Seconds per training step of `spec` on this machine. */
  calibrate: {
    params: { spec: trainSpec, vocabSize: posInt },
    answer: calibrationOutput,
    what: 'Measuring speed',
    timeoutMs: 60_000,
    streams: null,
    page: false,
  },
  /**
   * "Open PyTorch Checkpoint…": a .safetensors file or its folder into a new run folder
   * `outDir`; progress in bytes read; `cancel` as for evaluateFiles (checked between pieces).
   */
  import: {
    params: { from: str, outDir: str, heads: optional(posInt), cancel: optional(i32Shared) },
    answer: importOutput,
    what: 'Importing',
    timeoutMs: 1_800_000,
    streams: 'progress',
    page: false,
  },
  /**
   * The run evaluated on test files it never saw, recorded in its evaluations.jsonl; progress
   * in batches and decodes.
   */
  evaluateFiles: {
    params: {
      runDir: str,
      data: evalFilesData,
      /** Most pairs to decode for exact match, BLEU and chrF (the loss covers every pair). */
      maxPairs: posInt,
      decoding: evalDecoding,
      /** BLEU's tokenizer; null: the one the references' language calls for. */
      tokenize: nullable(bleuTokenize),
      /**
       * One Int32 on a SharedArrayBuffer: the host stores 1 to cancel, and the worker, busy
       * computing, reads it between batches (a cancel message would wait behind the work).
       * Absent where there is no SharedArrayBuffer (a web page that is not cross-origin
       * isolated): the host then cancels by ending the worker.
       */
      cancel: optional(i32Shared),
    },
    answer: evalFilesOutput,
    what: 'Evaluating',
    timeoutMs: 3_600_000,
    streams: 'progress',
    page: false,
  },
  /**
   * The snapshots a PyTorch run's trainer left as weights where no lab followed it (a cluster):
   * drawn into snapshot files with the lab's model (lab/pytorch/follow.node.ts); answers how many.
   */
  drawSnapshots: {
    params: { runDir: str },
    answer: nonNegInt,
    what: 'Drawing attention snapshots',
    timeoutMs: 300_000,
    streams: null,
    page: false,
  },
});

/** The model worker's requests by kind. */
export type ModelRequests = typeof modelRequests.table;
/** A kind of model worker request (`decode` for `model/decode`). */
export type ModelRequestKind = keyof ModelRequests & string;
/** What request `K` sends besides its type and id. */
export type ModelParams<K extends ModelRequestKind> = ParamsOf<ModelRequests, K>;
/** What request `K` resolves to. */
export type ModelAnswer<K extends ModelRequestKind> = AnswerOf<ModelRequests, K>;
/** The message answering request `K` (`model/didDecode` for `decode`). */
export type ModelAnswerMessage<K extends ModelRequestKind> = AnswerMessageOf<'model', ModelRequests, K>;
/** The request message of kind `K`. */
export type ModelRequestMessage<K extends ModelRequestKind> = RequestMessageOf<'model', ModelRequests, K>;
/**
 * One handler per request kind, each resolving to its kind's answer: a missing handler, or one answering the wrong
 * type, does not compile. `C` is what the handlers share.
 */
export type ModelHandlers<C> = {
  readonly [K in ModelRequestKind]: (msg: ModelRequestMessage<K>, ctx: C) => Promise<ModelAnswer<K>>;
};
/** The kinds the dashboard may send (forwarded to the model worker as they came). */
export type PageRequestKind = PageKinds<ModelRequests>;

/** What a request streams, and how it fails: shared by every request of the channel, and by the dashboard's. */
export const modelStreams = {
  /** A decoded token (`streams: 'token'`). */
  'model/didToken': { id: nonNegInt, token: str, logprob: num },
  /**
   * Progress of a long request (`streams: 'progress'`): `done` of `total` batches and decodes (`model/evaluateFiles`),
   * bytes (`model/import`) or patched runs (`model/patch`).
   */
  'model/didProgress': { id: nonNegInt, done: nonNegInt, total: nonNegInt },
  'model/didFail': { id: nonNegInt, error: errorData },
} as const;

/** Requests from the extension host to its model worker. */
export type ToModelWorker = Infer<typeof toModelWorker>;
export const toModelWorker = messages(modelRequests.requests);

/** Answers (and streamed tokens and progress) from the model worker. */
export type FromModelWorker = Infer<typeof fromModelWorker>;
export const fromModelWorker = messages({ 'worker/ready': {}, ...modelRequests.answers, ...modelStreams });

/** The kind of a request type (`decode` for `model/decode`). */
export type ModelKindOf<T extends string> = T extends `model/${infer K extends ModelRequestKind}` ? K : never;

/** The kind of a request (`decode` for `model/decode`). */
export function modelRequestKind<M extends ToModelWorker>(msg: M): ModelKindOf<M['type']> {
  const kind = modelRequests.kindOf(msg.type);
  if (kind === null) throw new ProtocolError(`${msg.type} is not a model worker request.`);
  return kind as ModelKindOf<M['type']>; // kindOf is `type` without its `model/`
}

/** Validates a request arriving at the model worker; throws ProtocolError. */
export function validateToModelWorker(msg: unknown): ToModelWorker {
  return toModelWorker.check(msg, 'message');
}

/** Validates a response arriving from the model worker; throws ProtocolError. */
export function validateFromModelWorker(msg: unknown): FromModelWorker {
  return fromModelWorker.check(msg, 'message');
}
