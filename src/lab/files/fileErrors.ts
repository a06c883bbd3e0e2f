/**
 * File-system errors as people read them, on every file system the lab uses: Node's error
 * codes (ENOSPC, EROFS, EACCES, ENOTDIR, EISDIR, ENAMETOOLONG, EEXIST …), VS Code's
 * `FileSystemError` codes (FileNotADirectory, NoPermissions …), and the same words in the
 * message of an error that crossed VS Code's file service or a worker's channel to its
 * host. Each becomes one line that names the file and says what to do, so no front door
 * prints a stack trace or "Internal error" for a disk that is read-only, full, or has a file
 * where a folder should be:
 * - a full disk is a {@link DiskFullError} (code `disk/full`: a run stops, keeping its last
 *   checkpoint, and resumes once there is room);
 * - every other problem is a {@link FileError} (code `file/unusable`: the user moves, renames
 *   or frees something, or picks another path).
 * It also makes the names of temporary files and folders fit the 255 bytes a file name may
 * have, however long the name they stand beside.
 *
 * Leaves out: the writes (fs.node.ts with files/atomicFile.node.ts, and each host's file system),
 * which call {@link diskError} where they know the file.
 */

/** Error codes of a file system with no room left. */
const FULL_CODES = new Set(['ENOSPC', 'EDQUOT']);

/** What went wrong with a file, as far as a person can do something about it. */
export type FileProblem =
  | 'readOnly'
  | 'denied'
  | 'notFolder'
  | 'isFolder'
  | 'nameTooLong'
  | 'exists'
  | 'notEmpty'
  | 'missing'
  | 'tooLarge'
  | 'busy'
  | 'io'
  | 'special';

/** Node's codes and VS Code's `FileSystemError` codes, by the problem each means. */
const PROBLEM_OF_CODE: Readonly<Record<string, FileProblem>> = {
  EROFS: 'readOnly',
  EACCES: 'denied',
  EPERM: 'denied',
  NoPermissions: 'denied',
  ENOTDIR: 'notFolder',
  FileNotADirectory: 'notFolder',
  EISDIR: 'isFolder',
  FileIsADirectory: 'isFolder',
  ENAMETOOLONG: 'nameTooLong',
  EEXIST: 'exists',
  FileExists: 'exists',
  ENOTEMPTY: 'notEmpty',
  ENOENT: 'missing',
  FileNotFound: 'missing',
  ERR_FS_FILE_TOO_LARGE: 'tooLarge',
  EBUSY: 'busy',
  ETXTBSY: 'busy',
  EIO: 'io',
};

/** The Node codes above, as they appear in a message that lost its code on the way. */
const CODE_IN_MESSAGE = new RegExp(
  '\\b(EROFS|EACCES|EPERM|ENOTDIR|EISDIR|ENAMETOOLONG|EEXIST|ENOTEMPTY|ENOENT|' +
    'ERR_FS_FILE_TOO_LARGE|EBUSY|ETXTBSY|EIO)\\b',
);

/** The one line each problem is told in: what is wrong with `file`, and what to do. */
function problemMessage(problem: FileProblem, file: string): string {
  switch (problem) {
    case 'readOnly':
      return (
        `Cannot write ${file}: the disk is read-only; choose a folder on a writable disk, or ` +
        `make this one writable.`
      );
    case 'denied':
      return `Permission denied for ${file}; choose a folder you may write to, or change the permissions of this one.`;
    case 'notFolder':
      return (
        `Cannot use ${file}: part of that path is a file where a folder must be; remove or ` +
        `rename that file, or choose another path.`
      );
    case 'isFolder':
      return `${file} is a folder where a file must be; remove or rename that folder, or choose another path.`;
    case 'nameTooLong':
      return (
        `Cannot use ${file}: a name in it is longer than the file system allows (255 bytes); ` +
        `choose a shorter name.`
      );
    case 'exists':
      return `${file} already exists and is not a folder; remove or rename it, or choose another path.`;
    case 'notEmpty':
      return `${file} is a folder that is not empty; empty it, or choose a new path.`;
    case 'missing':
      return `${file} does not exist (it was moved or deleted); check the path and try again.`;
    case 'tooLarge':
      return `${file} is over 2 GiB, more than can be read in one piece; check that it is the right file.`;
    case 'busy':
      return `${file} is in use by another program; close that program and try again.`;
    case 'io':
      return `The disk failed reading or writing ${file} (an I/O error); check the disk, then try again.`;
    case 'special':
      return (
        `${file} is not a regular file (a device, a FIFO or a socket); Attention Lab writes only ` +
        `regular files — choose another path.`
      );
  }
}

/** A file or folder that could not be used as asked, for a reason the user can fix; the message names it. */
export class FileError extends Error {
  /** The code errors carry across threads (lab/base/errorCodes.ts). */
  readonly code = 'file/unusable' as const;

  constructor(
    /** The file or folder at fault, as the user named it or as the lab builds it. */
    readonly file: string,
    /** What is wrong with it. */
    readonly problem: FileProblem,
    options?: { cause?: unknown },
  ) {
    super(problemMessage(problem, file), options);
    this.name = 'FileError';
  }

  /** True for a FileError, also from another realm. */
  static is(e: unknown): e is FileError {
    return e instanceof Error && e.name === 'FileError' && typeof (e as FileError).file === 'string';
  }
}

/** A write that failed because the disk (or the user's quota) is full; nothing half-written was left. */
export class DiskFullError extends Error {
  /** The code errors carry across threads (lab/base/errorCodes.ts). */
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
 * The problem a file-system error reports (by its code, or by Node's code in its message), or null for any other error.
 */
export function fileProblemOf(e: unknown): FileProblem | null {
  if (typeof e !== 'object' || e === null) return null;
  const code = (e as { code?: unknown }).code;
  if (typeof code === 'string' && Object.hasOwn(PROBLEM_OF_CODE, code)) return PROBLEM_OF_CODE[code] as FileProblem;
  const m = CODE_IN_MESSAGE.exec(String((e as { message?: unknown }).message ?? ''));
  return m ? (PROBLEM_OF_CODE[m[1] as string] as FileProblem) : null;
}

/**
 * `e` told in one line about `file`: a DiskFullError when it says the disk is full (also a
 * DiskFullError about a file inside `file`: an export or import names its folder, not its
 * temporary files), a {@link FileError} for another file-system problem (one already told
 * keeps the file it named), else `e` itself (not a file-system error: a bug, or the
 * engine's own error).
 */
export function diskError(e: unknown, file: string): unknown {
  if (isNoSpace(e) || DiskFullError.is(e)) return new DiskFullError(file, { cause: e });
  if (FileError.is(e)) return e;
  const problem = fileProblemOf(e);
  return problem === null ? e : new FileError(file, problem, { cause: e });
}

/**
 * `e` told about the folder `dir` being written as a whole (an export, an imported run):
 * a problem with one of its temporary files or folders beside it is the folder's, named as
 * the user chose it; anything else is `e` itself.
 */
export function folderError(e: unknown, dir: string): unknown {
  const problem = FileError.is(e) ? e.problem : fileProblemOf(e);
  return problem === null ? diskError(e, dir) : new FileError(dir, problem, { cause: e });
}

/**
 * A file-system error as the code and one line a front door shows (the CLI's last line, a
 * worker's failure), or null for any other error: a DiskFullError or FileError; one that
 * crossed a thread as data (its code kept); or Node's own error that reached the top without
 * passing a call that knew its file, told about the path it carries.
 */
export function fileErrorData(
  e: unknown,
): { readonly code: 'disk/full' | 'file/unusable'; readonly message: string } | null {
  if (typeof e !== 'object' || e === null) return null;
  const { code, message, path } = e as { code?: unknown; message?: unknown; path?: unknown };
  if ((code === 'disk/full' || code === 'file/unusable') && typeof message === 'string') return { code, message };
  if (typeof path !== 'string') return null;
  const told = diskError(e, path);
  return DiskFullError.is(told) || FileError.is(told) ? { code: told.code, message: told.message } : null;
}

/**
 * The most bytes a name in a folder may have on the file systems the lab writes to (ext4, APFS, NTFS's 255 UTF-16 units
 * hold more).
 */
export const MAX_NAME_BYTES = 255;

const encoder = new TextEncoder();

/**
 * `${prefix}${name}${suffix}` in at most {@link MAX_NAME_BYTES} UTF-8 bytes: `name` is cut
 * (never inside a character) when the whole would be longer, so a temporary name beside a
 * long file or run name is still a name the disk takes.
 */
export function fitName(prefix: string, name: string, suffix: string): string {
  const room = MAX_NAME_BYTES - encoder.encode(prefix + suffix).length;
  if (encoder.encode(name).length <= room) return prefix + name + suffix;
  let cut = '';
  let bytes = 0;
  for (const ch of name) {
    const n = encoder.encode(ch).length;
    if (bytes + n > room) break;
    cut += ch;
    bytes += n;
  }
  return prefix + cut + suffix;
}
