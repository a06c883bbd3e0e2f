/**
 * Who takes a run folder's lock on Node (runLock.ts): this process, this machine's name and
 * boot, and whether another process of this machine still runs — the CLI and desktop VS Code.
 *
 * Leaves out: the lock itself (runLock.ts) and the web, which has none of these (runLock.ts
 * `uncheckedIdentity`).
 */

import * as fs from 'node:fs';
import * as os from 'node:os';
import type { LockIdentity } from './runLock';

/** Linux's id of this boot (a lock from before a restart is stale whatever its process id), or null elsewhere. */
function bootId(): string | null {
  try {
    return fs.readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim() || null;
  } catch {
    return null;
  }
}

/** Whether process `pid` runs: signal 0 checks without sending (EPERM: it runs, as another user). */
export function processAlive(pid: number): boolean | null {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    const code = (e as { code?: unknown }).code;
    return code === 'ESRCH' ? false : code === 'EPERM' ? true : null;
  }
}

/** This Node process as a lock holder; `by` says what it is ("attention-lab train", "VS Code"). */
export function nodeLockIdentity(by: string): LockIdentity {
  return { pid: process.pid, host: os.hostname(), boot: bootId(), by, alive: processAlive };
}
