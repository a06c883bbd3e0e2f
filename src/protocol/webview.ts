/**
 * Host ⇄ dashboard (webview/; its hosts are the extension's panel and the report page's
 * loader): runs to draw, forwarded training events, decodes, the attention of a text, logit
 * lenses and ablations, and the dashboard's requests. The model worker's requests the page
 * may send (modelWorker.ts `modelRequests`, its `page` entries) and their answers are the
 * model worker's own messages, forwarded as they came.
 * Each message is one table entry: its type and its validator both come from it (schema.ts
 * `messages`). The dashboard bundles this file, so it stays free of Node.
 *
 * Leaves out: data shared with other channels (data.ts, model.ts).
 */

import type { Infer } from './schema';
import { arrayOf, fail, messages, nonNegInt, nullable, num, obj, oneOf, optional, refine, str } from './schema';
import { dataSummary, modelKind, evalMetrics, runSegments, stepMetrics, trainSpec } from './data';
import { attentionSnapshot, decodeOutput, decodeParams, headScoreData, modelInfo } from './model';
import { fromTrainingWorker } from './trainingWorker';
import type { ModelRequestMessage, PageRequestKind } from './modelWorker';
import { modelRequests, modelStreams } from './modelWorker';
import { evaluationRecord } from './evaluation';

/** A run as the dashboard lists it. */
export type RunSummary = Infer<typeof runSummary>;
export const runSummary = obj({
  id: str,
  /** The name the user gave the run (run.json's `displayName`), else its folder's name. */
  name: str,
  runDir: str,
  /** As runStatus.ts's `shownRunState` says (`interrupted`: run.json says training, nothing trains it). */
  status: oneOf('created', 'training', 'paused', 'completed', 'stopped', 'failed', 'interrupted'),
  kind: modelKind,
  step: nonNegInt,
  totalSteps: nonNegInt,
  /** The schedule segments (one unless the run was extended); the last ends at totalSteps. */
  segments: runSegments,
  bestValLoss: nullable(num),
  model: nullable(modelInfo),
  data: nullable(dataSummary),
  /** The user's note on the run (run.json's `note`). */
  note: optional(str),
  /** The training settings (run.json's `spec.training`), for comparing runs. */
  training: optional(trainSpec.fields.training),
  /** The tokenizer's kind and vocabulary size (the model's rows), for comparing runs. */
  tokenizer: optional(trainSpec.fields.tokenizer),
  /** Set for a run made by importing a checkpoint: its layout, for people ("Hugging Face GPT-2"), and the file. */
  imported: optional(obj({ layout: str, from: str })),
});

/** Everything the dashboard needs to draw one run from scratch (restore, report, overlay). */
export type RunState = Infer<typeof runState>;
export const runState = obj({
  run: runSummary,
  steps: arrayOf(stepMetrics),
  evals: arrayOf(evalMetrics),
  snapshots: arrayOf(attentionSnapshot),
  /**
   * Head scores of snapshots left out of `snapshots` (a report keeps a few snapshots' maps
   * but every snapshot's scores, so the Heads view and its threshold marker lose no step).
   */
  headScores: optional(arrayOf(obj({ step: nonNegInt, heads: arrayOf(headScoreData) }))),
  /** The run's evaluations on test data (its evaluations.jsonl), oldest first. */
  evaluations: optional(arrayOf(evaluationRecord)),
});

/** The dashboard's tabs. */
export type DashboardTab = Infer<typeof dashboardTab>;
export const dashboardTab = oneOf('curves', 'attention', 'heads', 'masks', 'model', 'playground', 'patching');

/** Messages from the extension host (or the report page's loader) to the dashboard. */
export type ToWebview = Infer<typeof toWebview>;
export const toWebview = messages({
  /**
   * Answers to the model worker's requests the page sent (`model/didDecode`, `model/didLens`, …: modelRequests's
   * `page` entries), its decoded tokens and its failures, forwarded as the model worker sent them, with the page's id.
   */
  ...modelRequests.pageAnswers,
  'model/didToken': modelStreams['model/didToken'],
  /** How far a long request of the page (patching, attribution) is: `done` of `total`, at most ten a second. */
  'model/didProgress': modelStreams['model/didProgress'],
  'model/didFail': modelStreams['model/didFail'],
  'dashboard/didLoadRuns': { runs: arrayOf(runState), selectedId: nullable(str) },
  /** A training worker's notification about one run, forwarded as it came. */
  'run/didUpdate': { runDir: str, event: fromTrainingWorker },
  /** The run was just evaluated on test data (a new line of its evaluations.jsonl). */
  'run/didEvaluate': { runDir: str, evaluation: evaluationRecord },
  /** A decode the host ran itself (the Decode command): show it in the playground. */
  'playground/didDecode': { runDir: str, params: decodeParams, output: decodeOutput },
  /** Bring a run (if given) and a tab to the front, e.g. after "Show Attention for Selection". */
  'dashboard/show': { runDir: nullable(str), tab: dashboardTab },
  /** The active run changed elsewhere (Runs view, status bar, a command's quick pick): show it. */
  'dashboard/didSetActiveRun': { runDir: str },
  /**
   * The attention of a text the host computed (Show Attention for Selection): the run's, shown in its Attention tab.
   */
  'dashboard/didAttend': { runDir: str, snapshot: attentionSnapshot },
});

/** What the dashboard can export: an image (PNG, sent as base64), a vector image, a table. */
export type ExportKind = Infer<typeof exportKind>;
export const exportKind = oneOf('png', 'svg', 'csv');

/** Largest export the host accepts, in characters of `content` (a 4096 × 4096 PNG is ~10 MB of base64). */
export const MAX_EXPORT_CHARS = 48 * 1024 * 1024;

/**
 * A file name the dashboard proposes for an export: a plain name (no folder, not hidden, no
 * characters Windows forbids), at most 120 characters, ending in .png, .svg or .csv.
 */
export const exportFileName = refine(str, (v, p) => {
  // oxlint-disable-next-line no-control-regex -- control characters are what a file name may not hold
  if (v.length > 120 || !/^[^\\/:*?"<>|\u0000-\u001f.][^\\/:*?"<>|\u0000-\u001f]*\.(png|svg|csv)$/.test(v))
    fail(p, 'a plain file name ending in .png, .svg or .csv (at most 120 characters)', v);
});

/** Messages from the dashboard to its host. */
export type FromWebview = Infer<typeof fromWebview>;
export const fromWebview = messages({
  /**
   * The model worker's requests the page may send (`model/decode`, `model/attend`, `model/attendLayer`, `model/lens`,
   * `model/ablate`: modelRequests's `page` entries), with the page's own id; the host forwards them as they came,
   * for a run folder it lists.
   */
  ...modelRequests.pageRequests,
  'webview/ready': {},
  'webview/didError': { message: str },
  /**
   * Stop the page's model worker request `id` (a patching sweep, say): it fails at once with code
   * 'cancelled', and the worker stops at its next check. An id not in flight is ignored.
   */
  'model/cancel': { id: nonNegInt },
  'train/control': { runDir: str, action: oneOf('pause', 'resume', 'stop') },
  /**
   * Save an exported chart, heatmap or table: the host asks where (a save dialog proposing
   * `fileName`) and writes it. `content` is base64 for 'png', the text itself otherwise.
   */
  'export/save': {
    fileName: exportFileName,
    kind: exportKind,
    content: refine(str, (v, p) => {
      if (v.length > MAX_EXPORT_CHARS)
        fail(p, `at most ${MAX_EXPORT_CHARS} characters (a smaller export)`, `${v.length} characters`);
    }),
  },
  /** The user picked a run in the header's picker: it becomes the active run the commands use. */
  'dashboard/didSelectRun': { runDir: str },
});

/** A model worker request the page sent (`model/decode`, …), which the host forwards as it came. */
export type PageModelRequest = ModelRequestMessage<PageRequestKind>;

/** Whether `msg` is a model worker request the page sent. */
export function isPageModelRequest(msg: FromWebview): msg is PageModelRequest {
  return modelRequests.kindOf(msg.type) !== null;
}

/** Validates a message arriving in the dashboard; throws ProtocolError. */
export function validateToWebview(msg: unknown): ToWebview {
  return toWebview.check(msg, 'message');
}

/** Validates a message arriving from the dashboard; throws ProtocolError. */
export function validateFromWebview(msg: unknown): FromWebview {
  return fromWebview.check(msg, 'message');
}
