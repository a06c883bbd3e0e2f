/**
 * Crash-safe file writes: write a temporary file beside the target, flush it to disk,
 * then rename it over the target (rename is atomic on POSIX and NTFS), then flush the
 * directory. A process killed at any moment leaves either the old file or the new one,
 * never a half-written one.
 */

import * as fs from 'node:fs';
import * as path from 'node:path';

/** Atomically replaces `file` with `data`. */
export function writeFileAtomic(file: string, data: Uint8Array | string): void {
  writeFilesAtomic([{ file, data }]);
}

/**
 * Replaces several files that belong together (a model and its optimizer state): every new
 * file is written and flushed first, then they are renamed into place one after another, so a
 * process killed while writing (the slow part) leaves all the old files; only a kill between
 * the renames (microseconds) could leave a mix.
 */
export function writeFilesAtomic(files: readonly { readonly file: string; readonly data: Uint8Array | string }[]): void {
  const temps = files.map(({ file, data }) => {
    const tmp = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.tmp`);
    const fd = fs.openSync(tmp, 'w');
    try {
      fs.writeSync(fd, typeof data === 'string' ? Buffer.from(data, 'utf8') : data);
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    return { tmp, file };
  });
  for (const { tmp, file } of temps) fs.renameSync(tmp, file);
  for (const dir of new Set(files.map(({ file }) => path.dirname(file)))) syncDir(dir);
}

/** Flushes a directory entry (best effort: not every platform can open a directory). */
function syncDir(dir: string): void {
  let fd: number | null = null;
  try {
    fd = fs.openSync(dir, 'r');
    fs.fsyncSync(fd);
  } catch {
    // Windows cannot fsync a directory; the rename is still atomic there.
  } finally {
    if (fd !== null) fs.closeSync(fd);
  }
}

/** Removes temporary files a killed writer may have left in `dir`. */
export function removeStaleTemps(dir: string): void {
  if (!fs.existsSync(dir)) return;
  for (const name of fs.readdirSync(dir)) if (/^\..+\.\d+\.tmp$/.test(name)) fs.rmSync(path.join(dir, name), { force: true });
}
