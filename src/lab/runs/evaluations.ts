/**
 * A run's evaluations.jsonl: one line per evaluation of the run on test data (`attention-lab
 * eval`, "Evaluate on Files…"), appended in one piece through the lab's file system (labFs.ts
 * `appendLine`: a full disk leaves the log as it was, a torn last line is skipped on read), each
 * line versioned and validated (protocol/evaluation.ts). Plus what a line says about its test
 * files: their sizes and SHA-256 hashes (WebCrypto's, which Node and browsers share), and one
 * hash of them all, so the same test set is recognised wherever it lies.
 *
 * Leaves out: running the evaluation (evaluateFiles.ts, evaluateRun.ts) and drawing it (the
 * dashboard).
 */

import type { EvaluatedFile, EvaluationRecord } from '../../protocol/evaluation';
import { EVALUATION_VERSION, evaluationRecord } from '../../protocol/evaluation';
import { ProtocolError } from '../../protocol/schema';
import type { LabFs } from '../files/labFs';
import { bytesOf, completeLines, exists, writeFile } from '../files/labFs';
import { RUN_FILES } from './runFolder';
import { readCappedText } from '../files/fileCaps';

/** The part of WebCrypto this uses (Node 20 and browsers have it as `globalThis.crypto`). */
interface Digest {
  readonly subtle: { digest(algorithm: 'SHA-256', data: Uint8Array): Promise<ArrayBuffer> };
}

async function sha256(data: Uint8Array | string): Promise<string> {
  const hash = new Uint8Array(
    await (globalThis as unknown as { crypto: Digest }).crypto.subtle.digest('SHA-256', bytesOf(data)),
  );
  return Array.from(hash, (b) => b.toString(16).padStart(2, '0')).join('');
}

/** Size and SHA-256 of a test file's bytes, under the path given. */
export async function describeFile(fs: LabFs, file: string): Promise<EvaluatedFile> {
  const bytes = await fs.readFile(file);
  return { path: file, bytes: bytes.length, sha256: await sha256(bytes) };
}

/** One hash for a set of test files: of their sorted content hashes (names and folders do not matter). */
export function dataHashOf(files: readonly EvaluatedFile[]): Promise<string> {
  return sha256(
    files
      .map((f) => f.sha256)
      .sort()
      .join('\n'),
  );
}

/** A hash naming a run's own validation split: its data description and seed decide it. */
export function validationHashOf(data: unknown, seed: number): Promise<string> {
  return sha256(`validation\n${JSON.stringify(data)}\n${seed}`);
}

/** What a caller measured; {@link recordEvaluation} adds the version, the time and the hypotheses file. */
export type MeasuredEvaluation = Omit<EvaluationRecord, 'version' | 'at' | 'hypothesesFile'>;

/** Where {@link recordEvaluation} writes, and who hears the result before it does. */
export interface RecordOptions {
  /** Writes the decodes here, one per line in test order. */
  readonly hypothesesFile?: string;
  /**
   * Hears the evaluation before anything is written (a command prints it), so a full or
   * read-only folder that refuses the record loses no result the user asked for.
   */
  readonly onRecord?: (record: EvaluationRecord) => void;
}

/**
 * Hands the evaluation to `opts.onRecord`, writes the hypotheses (one per line, in test
 * order) to `opts.hypothesesFile` when given, then appends the evaluation to the run's
 * evaluations.jsonl; returns the line appended.
 */
export async function recordEvaluation(
  fs: LabFs,
  runDir: string,
  measured: MeasuredEvaluation,
  hypotheses: readonly string[],
  opts: RecordOptions,
): Promise<EvaluationRecord> {
  const out = opts.hypothesesFile;
  const record: EvaluationRecord = {
    version: EVALUATION_VERSION,
    at: new Date().toISOString(),
    ...measured,
    ...(out !== undefined ? { hypothesesFile: out } : {}),
  };
  opts.onRecord?.(record);
  if (out !== undefined) await writeFile(fs, out, hypotheses.map((h) => `${h}\n`).join(''));
  await appendEvaluation(fs, runDir, record);
  return record;
}

/**
 * Appends `record` to the run's evaluations.jsonl (throws DiskFullError, leaving the log as it was, on a full disk).
 */
export async function appendEvaluation(fs: LabFs, runDir: string, record: EvaluationRecord): Promise<void> {
  evaluationRecord.check(record, 'evaluation');
  await fs.appendLine(fs.join(runDir, RUN_FILES.evaluations), `${JSON.stringify(record)}\n`);
  // Recorded before the evaluation is answered, even where log lines travel in batches.
  await fs.flush();
}

/**
 * The run's evaluations, oldest first. Lines that are torn, damaged or of another version are
 * skipped and counted (the rest still show), so one bad line never hides a run's history.
 */
export async function readEvaluations(
  fs: LabFs,
  runDir: string,
): Promise<{ evaluations: EvaluationRecord[]; skipped: number }> {
  const file = fs.join(runDir, RUN_FILES.evaluations);
  const evaluations: EvaluationRecord[] = [];
  let skipped = 0;
  if (!(await exists(fs, file))) return { evaluations, skipped };
  for (const line of completeLines(await readCappedText(fs, file, 'evaluations log'))) {
    try {
      const v = JSON.parse(line) as { version?: unknown } | null;
      if (typeof v !== 'object' || v === null || v.version !== EVALUATION_VERSION) {
        skipped++;
        continue;
      }
      evaluations.push(evaluationRecord.check(v, 'evaluation'));
    } catch (e) {
      if (!(e instanceof SyntaxError || e instanceof ProtocolError)) throw e;
      skipped++;
    }
  }
  return { evaluations, skipped };
}
