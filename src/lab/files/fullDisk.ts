/**
 * A full disk, on every file system the lab writes through: the error a write that found no
 * room throws (naming the file), how to recognise the file system's own "no space" error —
 * Node's ENOSPC or EDQUOT code, or the same words in the message of an error that crossed
 * VS Code's file service or a worker's channel to its host — and how to turn one into the
 * other, so each caller can say in one line what was being saved and what is kept.
 *
 * Leaves out: the writes (nodeFs.ts with runs/atomicFile.ts, and each host's file system).
 */

/** Error codes of a file system with no room left. */
const FULL_CODES = new Set(['ENOSPC', 'EDQUOT']);

/** A write that failed because the disk (or the user's quota) is full; nothing half-written was left. */
export class DiskFullError extends Error {
  /** The code errors carry across threads (lab/workers/errorCodes.ts). */
  readonly code = 'disk/full' as const;

  constructor(
    /** The file that could not be written. */
    readonly file: string,
    options?: { cause?: unknown },
  ) {
    super(`Disk full while writing ${file}; nothing was half-written — free space and try again.`, options);
    this.name = 'DiskFullError';
  }

  /** True for a DiskFullError, also from another realm. */
  static is(e: unknown): e is DiskFullError {
    return e instanceof Error && e.name === 'DiskFullError' && typeof (e as DiskFullError).file === 'string';
  }
}

/** True for an error saying the disk or quota is full (by its code, or by Node's code in its message). */
export function isNoSpace(e: unknown): boolean {
  if (typeof e !== 'object' || e === null) return false;
  if (FULL_CODES.has(String((e as { code?: unknown }).code))) return true;
  return /\b(ENOSPC|EDQUOT)\b/.test(String((e as { message?: unknown }).message ?? ''));
}

/**
 * `e` as a DiskFullError about `file` when it says the disk is full (also a DiskFullError
 * about a file inside `file`: an export or import names its folder, not its temporary files),
 * else `e` itself.
 */
export function diskError(e: unknown, file: string): unknown {
  return isNoSpace(e) || DiskFullError.is(e) ? new DiskFullError(file, { cause: e }) : e;
}

