/**
 * A run's evaluations.jsonl: one line per evaluation of the run on test data (`attention-lab
 * eval`, "Evaluate on Files…"), appended in one piece (atomicFile.ts `appendLine`: a full disk
 * leaves the log as it was, a torn last line is skipped on read), each line versioned and
 * validated (protocol/evaluation.ts). Plus what a line says about its test files: their
 * sizes and SHA-256 hashes, and one hash of them all, so the same test set is recognised
 * wherever it lies.
 *
 * Leaves out: running the evaluation (evaluateFiles.ts, evaluateRun.ts) and drawing it (the
 * dashboard).
 */

import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { EvaluatedFile, EvaluationRecord } from '../../protocol/evaluation';
import { EVALUATION_VERSION, evaluationRecord } from '../../protocol/evaluation';
import { ProtocolError } from '../../protocol/schema';
import type { FileIo } from '../runs/atomicFile';
import { NODE_IO, appendLine, completeLines, makeDir, writeFileAtomic } from '../runs/atomicFile';
import { RUN_FILES } from '../runs/runFolder';

function sha256(data: Uint8Array | string): string {
  return createHash('sha256').update(data).digest('hex');
}

/** Size and SHA-256 of a test file's bytes, under the path given. */
export function describeFile(file: string): EvaluatedFile {
  const bytes = fs.readFileSync(file);
  return { path: file, bytes: bytes.length, sha256: sha256(bytes) };
}

/** One hash for a set of test files: of their sorted content hashes (names and folders do not matter). */
export function dataHashOf(files: readonly EvaluatedFile[]): string {
  return sha256(files.map((f) => f.sha256).sort().join('\n'));
}

/** A hash naming a run's own validation split: its data description and seed decide it. */
export function validationHashOf(data: unknown, seed: number): string {
  return sha256(`validation\n${JSON.stringify(data)}\n${seed}`);
}

/** What a caller measured; {@link recordEvaluation} adds the version, the time and the hypotheses file. */
export type MeasuredEvaluation = Omit<EvaluationRecord, 'version' | 'at' | 'hypothesesFile'>;

/**
 * Writes the hypotheses (one per line, in test order) to `opts.hypothesesFile` when given,
 * then appends the evaluation to the run's evaluations.jsonl; returns the line appended.
 */
export function recordEvaluation(runDir: string, measured: MeasuredEvaluation, hypotheses: readonly string[], opts: { readonly hypothesesFile?: string; readonly io?: FileIo }): EvaluationRecord {
  const io = opts.io ?? NODE_IO;
  const out = opts.hypothesesFile;
  if (out !== undefined) {
    makeDir(path.dirname(out), io);
    writeFileAtomic(out, hypotheses.map((h) => `${h}\n`).join(''), io);
  }
  const record: EvaluationRecord = { version: EVALUATION_VERSION, at: new Date().toISOString(), ...measured, ...(out !== undefined ? { hypothesesFile: out } : {}) };
  appendEvaluation(runDir, record, io);
  return record;
}

/** Appends `record` to the run's evaluations.jsonl (throws DiskFullError, leaving the log as it was, on a full disk). */
export function appendEvaluation(runDir: string, record: EvaluationRecord, io: FileIo = NODE_IO): void {
  evaluationRecord.check(record, 'evaluation');
  appendLine(path.join(runDir, RUN_FILES.evaluations), `${JSON.stringify(record)}\n`, io);
}

/**
 * The run's evaluations, oldest first. Lines that are torn, damaged or of another version are
 * skipped and counted (the rest still show), so one bad line never hides a run's history.
 */
export function readEvaluations(runDir: string): { evaluations: EvaluationRecord[]; skipped: number } {
  const file = path.join(runDir, RUN_FILES.evaluations);
  const evaluations: EvaluationRecord[] = [];
  let skipped = 0;
  if (!fs.existsSync(file)) return { evaluations, skipped };
  for (const line of completeLines(fs.readFileSync(file, 'utf8'))) {
    try {
      const v = JSON.parse(line) as { version?: unknown };
      if (v.version !== EVALUATION_VERSION) {
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
