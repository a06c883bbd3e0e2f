/**
 * What a PyTorch trainer that exited without finishing says, as one error of ours: what it
 * recorded in run.json (a non-finite loss, a full disk, an internal error), its own one line
 * ("attention-lab trainer: …", a problem the user fixes, or a full disk when even run.json
 * had no room), or else the exception or last lines torchrun and Python printed.
 *
 * Leaves out: starting and following the trainer (pytorchSession.node.ts, follow.node.ts).
 */

import { EngineError } from '../../engine/errors';
import type { LabFs } from '../files/labFs';
import { readRunJson } from '../runs/runFolder';
import { RunnerError } from '../training/sessionSetup';

/** Lines of the trainer's output kept for an error message. */
const TAIL_LINES = 60;
/** Characters kept of each of them (the end, where a message says what went wrong). */
export const TAIL_LINE_CHARS = 4096;
/** A Python exception's line: "RuntimeError: …", "torch.cuda.OutOfMemoryError: …". */
const EXCEPTION = /^([A-Za-z_][\w.]*)?(Error|Exception|Interrupt)\b[^:]*:/;
/** How the trainer's own one-line messages begin (the trainer's train.py). */
const OWN = 'attention-lab trainer: ';
/** How a full disk's one line begins, in both engines (training/stopReasons.ts, the trainer's files.py). */
const DISK_FULL = 'Disk full while ';

/** The last lines a process wrote, for an error message. */
export class Tail {
  private lines: string[] = [];
  private partial = '';

  push(chunk: Buffer): void {
    const parts = (this.partial + chunk.toString('utf8')).split(/\r?\n/);
    // A line without end (a process printing megabytes with no newline) keeps only its last
    // TAIL_LINE_CHARS: joining every chunk to the whole line so far was quadratic.
    this.partial = (parts.pop() ?? '').slice(-TAIL_LINE_CHARS);
    this.lines.push(
      ...parts.filter((l) => l.trim()).map((l) => (l.length > TAIL_LINE_CHARS ? `…${l.slice(-TAIL_LINE_CHARS)}` : l)),
    );
    if (this.lines.length > TAIL_LINES) this.lines = this.lines.slice(-TAIL_LINES);
  }

  last(n: number = TAIL_LINES): string[] {
    return [...this.lines, ...(this.partial.trim() ? [this.partial] : [])].slice(-n);
  }
}

/** The error a run.json records for a run that a full disk stopped, or null. */
export async function recordedDiskFull(files: LabFs, runDir: string): Promise<RunnerError | null> {
  try {
    const { error } = await readRunJson(files, runDir);
    return error?.code === 'disk/full' ? new RunnerError('disk/full', error.message) : null;
  } catch {
    return null;
  }
}

/**
 * The error of a trainer that exited with `code`: what it recorded in run.json, its own one line, or the launcher's
 * last lines.
 */
export async function exitError(
  files: LabFs,
  runDir: string,
  code: number | null,
  signal: string | null,
  tail: Tail,
): Promise<Error> {
  const full = await recordedDiskFull(files, runDir);
  if (full) return full;
  let recorded: { code: string; message: string } | null = null;
  try {
    const run = await readRunJson(files, runDir);
    if (run.status === 'failed' && run.error) recorded = run.error;
  } catch {
    // run.json unreadable: the launcher's own lines below say more
  }
  if (recorded?.code === 'train/nonFinite')
    return new EngineError('train/nonFinite', recorded.message.replace(/ The last good checkpoint.*$/, ''));
  const own = tail
    .last()
    .map((l) => l.replace(/^\[[^\]]*\]:/, ''))
    .reverse()
    .find((l) => l.startsWith(OWN))
    ?.slice(OWN.length);
  // A disk so full that the trainer could not record its reason in run.json: its line says it.
  if (own?.startsWith(DISK_FULL)) return new RunnerError('disk/full', own);
  if (code === 2 && own) return new RunnerError('pytorch/launch', own);
  const how = signal ? `was killed (${signal})` : `exited with code ${code}`;
  // The exception of a failed process (torchrun's summary quotes it), else the last lines.
  const lines = tail.last().map((l) => l.replace(/^\[[^\]]*\]:/, '').trim());
  const cause = lines.reverse().find((l) => EXCEPTION.test(l));
  const why = recorded
    ? `: ${recorded.message}`
    : cause
      ? `: ${cause}`
      : lines.length
        ? `; its last lines: ${lines.slice(0, 3).reverse().join(' | ')}`
        : '';
  return new RunnerError(recorded ? 'internal' : 'pytorch/launch', `The PyTorch trainer ${how}${why}`);
}
