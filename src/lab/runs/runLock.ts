/**
 * One writer per run folder: the lock a training session holds for as long as it trains (our
 * engine's, or the PyTorch engine's where the lab starts and follows torchrun), so that two
 * trainers — two `train` commands, a command and an editor, two editor windows — never write
 * into the same run. The host that starts the training worker takes it (the CLI, the
 * extension's training controller) before the worker touches the folder, rewrites it at
 * {@link HEARTBEAT_MS} from its own thread (never blocked by a training step), and removes
 * it when the worker has ended.
 *
 * The lock is `lock.json` in the run folder, created with the file system's exclusive create
 * (labFs.ts `createExclusive`), so of two takers at once exactly one gets it. It records who
 * holds it: the process id, the machine's name and boot (where the host has them: Node;
 * VS Code for the web has neither), what holds it (`attention-lab train`, `VS Code` …), when
 * it was taken and when it was last rewritten (the heartbeat), and a random token that tells
 * the holder its own lock from a later one.
 *
 * A lock whose holder is gone is taken over, and the taker says so in one line:
 * - same machine, and this host can check processes (Node): gone when its process is not
 *   running, or the machine has restarted since (another boot id). A running process keeps
 *   its lock however long it has been silent (a run suspended with Ctrl-Z resumes later).
 * - a browser window's lock (no process id, no host: VS Code for the web), rewritten every
 *   {@link WEB_HEARTBEAT_MS}: gone when silent for {@link WEB_STALE_MS}; a taker that finds it
 *   fresh watches it for a beat before refusing, since a reloaded window's last beat is fresh;
 * - any other case (another machine sharing the folder, a taker on the web): gone
 *   when not rewritten for {@link STALE_MS} (8 missed heartbeats; the machines' clocks are
 *   taken to agree within a minute). A holder that finds its lock taken over (it was silent
 *   that long: a suspended laptop) stops at once without saving.
 * - a damaged or half-written lock file: gone when not touched for {@link STALE_MS}.
 * Taking over moves the old file aside first (a rename: of two takers, one moves it) and puts
 * back a newer lock it moved by mistake, so a stale lock, too, goes to exactly one taker.
 *
 * Leaves out: readers (decode, eval, the dashboard read a run while it trains; eval appends
 * evaluations.jsonl, which training never writes) and relabelling (a display name or note is
 * written into run.json between two of the trainer's rereads: runFolder.ts `setRunLabel`).
 */

import { FileError } from '../files/fileErrors';
import type { LabFs } from '../files/labFs';
import { exists, listNames, readText, writeFile } from '../files/labFs';
import { mergeLogParts } from '../files/logParts';

/** The lock's file in a run folder. */
export const LOCK_FILE = 'lock.json';
/** `format` of lock.json. */
export const LOCK_FORMAT = 'attention-lab-lock';
/** `version` of lock.json. */
export const LOCK_VERSION = 1;
/** How often a holder rewrites its lock. */
export const HEARTBEAT_MS = 15_000;
/** A lock not rewritten this long, whose holder cannot be checked otherwise, is stale. */
export const STALE_MS = 120_000;
/**
 * A browser window (VS Code for the web: no process, no host to check) rewrites its lock this
 * often, and its lock is stale once silent for {@link WEB_STALE_MS}: a window reload ends the old
 * window without a word, and the reloaded one must be able to resume its run within seconds.
 */
export const WEB_HEARTBEAT_MS = 5_000;
export const WEB_STALE_MS = 20_000;

/** True for a holder that is a browser window (no process id, no host name). */
function isWindow(r: { readonly pid: number | null; readonly host: string | null }): boolean {
  return r.pid === null && r.host === null;
}

/** Who takes locks here, and how this host tells whether another holder still runs. */
export interface LockIdentity {
  /** This process's id, or null where the host has none to give (the web). */
  readonly pid: number | null;
  /** This machine's name, or null (the web). */
  readonly host: string | null;
  /** This machine's boot (Linux's boot id), or null where unknown. */
  readonly boot: string | null;
  /** What holds the lock, for people: "attention-lab train", "VS Code". */
  readonly by: string;
  /** Whether process `pid` of this machine runs: true, false, or null where it cannot be told. */
  alive(pid: number): boolean | null;
}

/** A holder that cannot check processes: VS Code for the web, or a host that does not say. */
export function uncheckedIdentity(by: string): LockIdentity {
  return { pid: null, host: null, boot: null, by, alive: () => null };
}

/** What lock.json holds. */
export interface LockRecord {
  readonly format: typeof LOCK_FORMAT;
  readonly version: typeof LOCK_VERSION;
  readonly pid: number | null;
  readonly host: string | null;
  readonly boot: string | null;
  readonly by: string;
  /** ISO time the lock was taken. */
  readonly startedAt: string;
  /** ISO time the holder last rewrote it. */
  readonly heartbeatAt: string;
  /** Random; tells the holder its own lock from a later one. */
  readonly token: string;
  /** The lock's taker created the run folder (a new run that fails with nothing to keep removes it). */
  readonly newFolder: boolean;
}

/** A second writer refused: the message names the run and the holder. */
export class RunLockedError extends Error {
  readonly code = 'run/locked' as const;

  constructor(message: string) {
    super(message);
    this.name = 'RunLockedError';
  }

  /** True for a RunLockedError, also from another realm. */
  static is(e: unknown): e is RunLockedError {
    return e instanceof Error && e.name === 'RunLockedError';
  }
}

/** True for the lock's file and the files beside it while it is rewritten or taken over. */
export function isLockFile(name: string): boolean {
  return name === LOCK_FILE || name.startsWith(`.${LOCK_FILE}.`);
}

/** A lock file as found: its text, its record (null: damaged or half-written) and when it changed. */
interface Found {
  readonly text: string;
  readonly record: LockRecord | null;
  readonly mtimeMs: number;
}

function parseRecord(text: string): LockRecord | null {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return null;
  }
  const r = v as Partial<LockRecord> | null;
  const optional = (x: unknown, type: string): boolean => x === null || typeof x === type;
  const ok =
    typeof r === 'object' &&
    r !== null &&
    r.format === LOCK_FORMAT &&
    r.version === LOCK_VERSION &&
    optional(r.pid, 'number') &&
    optional(r.host, 'string') &&
    optional(r.boot, 'string') &&
    typeof r.by === 'string' &&
    typeof r.token === 'string' &&
    !Number.isNaN(Date.parse(r.startedAt ?? '')) &&
    !Number.isNaN(Date.parse(r.heartbeatAt ?? ''));
  return ok ? (r as LockRecord) : null;
}

async function readLock(fs: LabFs, file: string): Promise<Found | null> {
  const st = await fs.stat(file);
  if (!st) return null;
  let text: string;
  try {
    text = await readText(fs, file);
  } catch (e) {
    if (!(await exists(fs, file))) return null; // removed in between
    throw e;
  }
  return { text, record: parseRecord(text), mtimeMs: st.mtimeMs };
}

/** The run's lock record, or null when none (or a damaged one) is there. */
export async function readRunLock(fs: LabFs, runDir: string): Promise<LockRecord | null> {
  return (await readLock(fs, fs.join(runDir, LOCK_FILE)))?.record ?? null;
}

/** "18:02" today, "2026-11-26 18:02" another day (local time). */
export function clockTime(ms: number, now: number): string {
  const d = new Date(ms);
  const two = (n: number): string => String(n).padStart(2, '0');
  const hm = `${two(d.getHours())}:${two(d.getMinutes())}`;
  return d.toDateString() === new Date(now).toDateString()
    ? hm
    : `${d.getFullYear()}-${two(d.getMonth() + 1)}-${two(d.getDate())} ${hm}`;
}

/** "process 1234 on host box (attention-lab train)", or "VS Code for the web". */
function holderText(r: LockRecord): string {
  if (r.pid === null) return r.host === null ? r.by : `${r.by} on host ${r.host}`;
  return `process ${r.pid}${r.host === null ? '' : ` on host ${r.host}`} (${r.by})`;
}

/** Why the lock found is stale (its holder is gone), or null while it holds. */
function staleReason(found: Found, me: LockIdentity, now: number): string | null {
  const r = found.record;
  if (!r)
    return now - found.mtimeMs > STALE_MS
      ? `its ${LOCK_FILE} was damaged and untouched since ${clockTime(found.mtimeMs, now)}`
      : null;
  if (r.pid !== null && r.host !== null && r.host === me.host && me.pid !== null) {
    if (r.boot !== null && me.boot !== null && r.boot !== me.boot)
      return `process ${r.pid} held it before this machine restarted`;
    const alive = me.alive(r.pid);
    if (alive === false) return `process ${r.pid} (${r.by}) is no longer running`;
    if (alive === true) return null;
  }
  const heard = Date.parse(r.heartbeatAt);
  return now - heard > (isWindow(r) ? WEB_STALE_MS : STALE_MS)
    ? `${holderText(r)} has not been heard from since ${clockTime(heard, now)}`
    : null;
}

/** The one line that refuses a second writer. */
function refusal(name: string, found: Found, now: number): string {
  const r = found.record;
  if (!r)
    return (
      `${name} holds a lock file being written (${LOCK_FILE}) — another session is starting ` +
      `it; wait, or try again in a moment.`
    );
  const heard = Date.parse(r.heartbeatAt);
  // Only a running process on this machine keeps a lock while silent this long (suspended, or a reused process id).
  const silent =
    now - heard > STALE_MS
      ? ` (silent since ${clockTime(heard, now)}: if process ${r.pid} is not training it, delete ${LOCK_FILE})`
      : '';
  return (
    `${name} is being trained by ${holderText(r)} since ` +
    `${clockTime(Date.parse(r.startedAt), now)}${silent} — stop it first, or wait.`
  );
}

/**
 * Why `runDir` cannot be written now — the line naming the session training it — or null when
 * no live session holds its lock (none, or a stale one).
 */
export async function runLockProblem(
  fs: LabFs,
  runDir: string,
  me: LockIdentity,
  now = Date.now(),
): Promise<string | null> {
  const found = await readLock(fs, fs.join(runDir, LOCK_FILE));
  if (!found || staleReason(found, me, now) !== null) return null;
  return refusal(fs.basename(runDir), found, now);
}

/** True when the run's lock says its taker created the folder (lock.json is then all it held). */
export async function lockMadeFolder(fs: LabFs, runDir: string): Promise<boolean> {
  return (await readRunLock(fs, runDir))?.newFolder === true;
}

function newToken(): string {
  const bytes = new Uint8Array(12);
  globalThis.crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

function serialize(r: LockRecord): string {
  return `${JSON.stringify(r, null, 2)}\n`;
}

/**
 * Removes the stale lock `found` unless it changed meanwhile: it is moved aside (one of two
 * takers moves it), and a newer lock moved by mistake is put back. True when it was removed.
 */
async function removeStale(fs: LabFs, file: string, found: Found): Promise<boolean> {
  const aside = fs.join(fs.dirname(file), `.${LOCK_FILE}.${newToken()}.taken`);
  try {
    await fs.rename(file, aside);
  } catch (e) {
    if (!(await exists(fs, file))) return false; // another taker moved it first
    throw e;
  }
  const moved = await readText(fs, aside);
  // someone's fresh lock: back it goes (unless a third came in between)
  if (moved !== found.text) await fs.createExclusive(file, moved);
  await fs.remove(aside);
  return moved === found.text;
}

/** How a lock is taken (tests set the clock and the cadence). */
export interface LockOptions {
  readonly now?: () => number;
  /**
   * Milliseconds between heartbeats (default {@link HEARTBEAT_MS}, {@link WEB_HEARTBEAT_MS} for a
   * browser window); 0: none (the caller beats).
   */
  readonly heartbeatMs?: number;
  /** Waits `ms` (tests pass a clock of their own); default: a timer. */
  readonly sleep?: (ms: number) => Promise<void>;
}

/**
 * Whether a browser window's lock is still beating: watched until its heartbeat moves (a live
 * window: true) or it goes stale (a window that was reloaded or closed: false), at most
 * {@link WEB_STALE_MS}. Anything else about the lock changing ends the watch too (true: look again).
 */
async function windowBeats(
  fs: LabFs,
  file: string,
  found: Found,
  me: LockIdentity,
  options: LockOptions,
): Promise<boolean> {
  const now = options.now ?? Date.now;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  // One look a second, for as long as a lock takes to go stale (whatever the clock says).
  for (let looks = 0; looks <= WEB_STALE_MS / 1_000; looks++) {
    if (staleReason(found, me, now()) !== null) return false;
    await sleep(1_000);
    const again = await readLock(fs, file);
    if (!again || again.text !== found.text) return true;
  }
  return staleReason(found, me, now()) === null;
}

/**
 * Takes the lock of `runDir` (creating the folder when missing) for `me`, taking over a stale
 * one ({@link RunLock.tookOver} says so); throws {@link RunLockedError} naming the run and
 * its holder when a live session holds it.
 */
export async function takeRunLock(
  fs: LabFs,
  runDir: string,
  me: LockIdentity,
  options: LockOptions = {},
): Promise<RunLock> {
  const now = options.now ?? Date.now;
  const st = await fs.stat(runDir);
  if (st?.kind === 'file') throw new FileError(runDir, 'exists'); // a run folder's name taken by a file (or /dev/null)
  const newFolder = st === null;
  if (newFolder) await fs.mkdir(runDir);
  const file = fs.join(runDir, LOCK_FILE);
  const name = fs.basename(runDir);
  let tookOver: string | null = null;
  for (let attempt = 0; attempt < 8; attempt++) {
    const at = new Date(now()).toISOString();
    const record: LockRecord = {
      format: LOCK_FORMAT,
      version: LOCK_VERSION,
      pid: me.pid,
      host: me.host,
      boot: me.boot,
      by: me.by,
      startedAt: at,
      heartbeatAt: at,
      token: newToken(),
      newFolder,
    };
    if (await fs.createExclusive(file, serialize(record)))
      return new RunLock(
        fs,
        runDir,
        record,
        tookOver,
        now,
        options.heartbeatMs ?? (isWindow(me) ? WEB_HEARTBEAT_MS : HEARTBEAT_MS),
      );
    const found = await readLock(fs, file);
    if (!found) continue; // released in between
    // A browser window's lock after a reload: the old window is gone but its last beat is fresh.
    // Watch it for a beat (a live window) or until it goes stale (a reloaded one), at most 20 s.
    if (found.record && isWindow(found.record) && staleReason(found, me, now()) === null) {
      if (await windowBeats(fs, file, found, me, options)) {
        const latest = await readLock(fs, file);
        if (latest && staleReason(latest, me, now()) === null) throw new RunLockedError(refusal(name, latest, now()));
        continue;
      }
    }
    const stale = staleReason(found, me, now());
    if (stale === null) throw new RunLockedError(refusal(name, found, now()));
    if (await removeStale(fs, file, found)) tookOver = `Took over the lock of ${name}: ${stale}.`;
  }
  throw new RunLockedError(
    `${name}'s lock changed hands while this session tried to take it — another session is starting ` +
      `it; wait, or try again in a moment.`,
  );
}

/** A lock held: rewritten at its cadence until released. */
export class RunLock {
  private timer: ReturnType<typeof setInterval> | null = null;
  private released = false;
  private lost: string | null = null;
  private readonly lostListeners: ((message: string) => void)[] = [];
  /** The beat in flight: a release waits for it, so a beat never writes the lock back after its removal. */
  private beating: Promise<void> = Promise.resolve();

  constructor(
    private readonly fs: LabFs,
    /** The run folder locked. */
    readonly runDir: string,
    private record: LockRecord,
    /** The line saying whose stale lock this one replaced, or null. */
    readonly tookOver: string | null,
    private readonly now: () => number,
    heartbeatMs: number,
  ) {
    if (heartbeatMs > 0) {
      // A beat that fails (a full disk, the folder being moved) is simply tried again at the next.
      this.timer = setInterval(() => void this.beat().catch(() => undefined), heartbeatMs);
      (this.timer as { unref?: () => void }).unref?.();
    }
  }

  private get file(): string {
    return this.fs.join(this.runDir, LOCK_FILE);
  }

  /**
   * Calls `listener` with one line if another session takes this lock over (this one was silent past {@link STALE_MS}).
   */
  onLost(listener: (message: string) => void): void {
    if (this.lost !== null) listener(this.lost);
    else this.lostListeners.push(listener);
  }

  /** Rewrites the lock's heartbeat; finds out when it was taken over. */
  beat(): Promise<void> {
    const next = this.beating.then(() => this.beatNow());
    this.beating = next.catch(() => undefined);
    return next;
  }

  private async beatNow(): Promise<void> {
    if (this.released || this.lost !== null) return;
    const found = await readLock(this.fs, this.file);
    if (!found) return; // removed with its folder (a new run that failed, a deleted run): nothing to keep alive
    if (found.record?.token !== this.record.token) {
      this.stopBeating();
      const by = found.record ? holderText(found.record) : 'another session';
      this.lost =
        `${this.fs.basename(this.runDir)} was taken over by ${by}; this session stopped ` +
        `at once without saving, so that only one writes the run.`;
      for (const l of this.lostListeners.splice(0)) l(this.lost);
      return;
    }
    this.record = { ...this.record, heartbeatAt: new Date(this.now()).toISOString() };
    await writeFile(this.fs, this.file, serialize(this.record));
  }

  private stopBeating(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }

  /**
   * Merges the logs' part files into them (files/logParts.ts), removes the lock (only while it is
   * still this holder's), and the run folder when the lock
   * created it and nothing else is in it (a new run that failed before writing). Idempotent.
   */
  async release(): Promise<void> {
    if (this.released) return;
    this.released = true;
    this.stopBeating();
    await this.beating;
    const found = await readLock(this.fs, this.file);
    if (found?.record?.token === this.record.token) {
      // The session is over: its logs' parts (a whole-file file system's appends) go into them
      // while this is still the only writer. Left there, they are still read and merged on reopen.
      await mergeLogParts(this.fs, this.runDir).catch(() => undefined);
      await this.fs.remove(this.file);
    }
    if (
      this.record.newFolder &&
      (await exists(this.fs, this.runDir)) &&
      (await listNames(this.fs, this.runDir)).length === 0
    )
      await this.fs.remove(this.runDir);
  }
}
