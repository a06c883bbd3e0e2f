/**
 * Every code an error carries across a thread (protocol `ErrorData.code`), and what a person
 * can do about it — the one classification the CLI's exit codes and the extension's
 * notifications both follow, so the same failure is "yours to fix" in both.
 *
 * Deliberately tiny and free of engine code (the engine's codes come in as a type only): the
 * extension's activation bundle includes it (scripts/buildExtension.mjs allows it beside
 * trainingClient.ts).
 *
 * Leaves out: the messages (each error says what to change) and the actions offered.
 */

import type { EngineErrorCode } from '../../engine/errors';

/**
 * What a person can do about an error, which decides how every front door reports it:
 * - `fixable`: the message names a setting, flag, file or run folder to change (the CLI exits
 *   2 with one line; the extension offers "Configure Model…");
 * - `cancelled`: the user stopped the work, so nothing failed (the CLI exits 130; the
 *   extension shows an information message, not an error);
 * - `failed`: anything else — a numerical failure of training or a bug (the CLI exits 1; the
 *   extension shows the error).
 */
export type ErrorKind = 'fixable' | 'cancelled' | 'failed';

/**
 * The engine's codes plus those a runner adds: `cancelled` (the user cancelled, e.g. while the
 * data was still being read), `internal` (anything thrown that was not an EngineError),
 * `protocol` (a worker message that failed validation), `disk/full` (a write found no room:
 * nothing half-written was left, and the message says what was kept; the engine's `gpu/lost` stops a run
 * the same way), `file/unusable` (a file
 * or folder could not be used: a read-only disk, a file where a folder must be, a name too
 * long …; the message names it) and `pytorch/launch`
 * (the PyTorch engine could not run: no Python, no or too old a torch, no GPU for
 * --device cuda, or torchrun exiting with an error, whose last lines the message quotes).
 */
export type ErrorCode =
  EngineErrorCode | 'cancelled' | 'internal' | 'protocol' | 'disk/full' | 'file/unusable' | 'pytorch/launch';

const ERROR_KINDS = {
  'config/invalid': 'fixable',
  'input/invalid': 'fixable',
  'tokenizer/invalid': 'fixable',
  'checkpoint/invalid': 'fixable', // a damaged or foreign run folder: start a new run or pick another
  'shape/mismatch': 'failed', // tensors that do not fit each other: a bug in the model code
  // The message suggests lowering the learning rate, but no setting is invalid as such.
  'train/nonFinite': 'failed',
  'disk/full': 'fixable', // free space, then resume or run the command again
  'gpu/lost': 'fixable', // the run stopped at its last checkpoint: resume it (on WebAssembly, or once the GPU is back)
  'file/unusable': 'fixable', // move, rename or free the file named, or pick another path
  cancelled: 'cancelled',
  internal: 'failed',
  protocol: 'failed',
  'pytorch/launch': 'fixable', // the message names the interpreter, package, device or flag to change
} as const satisfies Record<ErrorCode, ErrorKind>;

/** The {@link ErrorKind} of an error code; a code this version does not know (a request's `timeout`) is a failure. */
export function errorKind(code: string): ErrorKind {
  return Object.hasOwn(ERROR_KINDS, code) ? ERROR_KINDS[code as ErrorCode] : 'failed';
}

/**
 * Whether an error with `code` stops a run rather than failing it: a full disk or a lost GPU device
 * leaves the last checkpoint intact and run.json saying stopped, so the run resumes (the message says how).
 */
export function stopsRun(code: string): boolean {
  return code === 'disk/full' || code === 'gpu/lost';
}

/** Whether the user can fix what caused an error with `code`: bad input, settings or run folder. */
export function isUserFixable(code: string): boolean {
  return errorKind(code) === 'fixable';
}
