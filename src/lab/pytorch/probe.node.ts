/**
 * Finds out what a Python interpreter offers the PyTorch engine before anything is prepared
 * or launched — its torch version, GPUs, bf16, gloo/NCCL, and whether torchrun's defaults
 * work there (the trainer package's probe.py prints it as one JSON line) — and checks a session's options
 * against it, so every problem is one line that says what to change: no Python, a Python
 * without torch, a torch older than 1.13, CUDA without a GPU, more processes than GPUs.
 *
 * Leaves out: the batch-size check (it needs the run's data: pytorchSession.node.ts) and the
 * launch itself (launch.node.ts).
 */

import { execFile } from 'node:child_process';
import * as path from 'node:path';
import type { PytorchOptions } from '../../protocol/data';
import { TRAINER_PACKAGE } from './trainerInputs.node';
import { CancelledError } from '../base/cancelled';
import { RunnerError } from '../training/sessionSetup';

/** What a Python offers the PyTorch engine (probe.py's line). */
export interface TorchEnv {
  readonly python: string;
  readonly executable: string;
  readonly torch: string;
  readonly cuda: boolean;
  readonly devices: readonly string[];
  readonly bf16: boolean;
  readonly gloo: boolean;
  readonly nccl: boolean;
  /** False where torchrun's default stream redirection crashes (torch 1.13 on Python 3.11). */
  readonly launcherDefaults: boolean;
}

/** The oldest torch the trainer is written for. */
export const MIN_TORCH: readonly [number, number] = [1, 13];

/** How to pick another interpreter, in both front doors. */
const CHOOSE = 'or choose another Python (--python PATH; in VS Code, attentionLab.pytorch.python)';

function fail(message: string): RunnerError {
  return new RunnerError('pytorch/launch', message);
}

/** [major, minor] of a torch version string ("1.13.0a0", "2.11.0+cu128"), or null. */
export function torchVersion(v: string): [number, number] | null {
  const m = /^(\d+)\.(\d+)/.exec(v);
  return m ? [Number(m[1]), Number(m[2])] : null;
}

/** How a probe waits: its limit, a way to stop it, and what to say while it waits. */
export interface ProbeOptions {
  /** Most it waits for the interpreter's answer (default 120 s: a first `import torch` can take a minute). */
  readonly timeoutMs?: number;
  /** Aborting it ends the interpreter and rejects at once. */
  readonly signal?: AbortSignal;
  /**
   * Told what is awaited once the probe has waited a moment (2 s, or `noticeMs` when shorter:
   * a Python that answers at once says nothing), and again every `noticeMs` it still waits.
   */
  readonly onWait?: (message: string) => void;
  /** How often `onWait` hears that the probe still waits (default 10 s). */
  readonly noticeMs?: number;
}

/**
 * Runs the probe.py of `trainerDir`'s trainer package with `python`; rejects with one line when that is
 * impossible or when it does not answer within the limit, and with a CancelledError when
 * `opts.signal` stops it.
 * While it waits, `opts.onWait` hears what it waits for (the interpreter importing torch).
 */
export function probeTorch(python: string, trainerDir: string, opts: ProbeOptions = {}): Promise<TorchEnv> {
  const timeoutMs = opts.timeoutMs ?? 120_000;
  const waiting =
    `Waiting for "${python}" to import torch and report what it runs on (at most ` +
    `${Math.round(timeoutMs / 1000)} s; stop to cancel)`;
  // An empty path would make execFile throw a TypeError rather than call back.
  if (python.trim() === '')
    return Promise.reject(
      fail(
        'No Python given (the path is empty); name the Python 3 that has PyTorch (--python PATH; in ' +
          'VS Code, attentionLab.pytorch.python).',
      ),
    );
  return new Promise((resolve, reject) => {
    if (opts.signal?.aborted) return reject(new CancelledError(`asking "${python}" what torch it has`));
    const started = Date.now();
    const noticeMs = opts.noticeMs ?? 10_000;
    const first = opts.onWait ? setTimeout(() => opts.onWait?.(`${waiting}…`), Math.min(2_000, noticeMs)) : null;
    const notice = opts.onWait
      ? setInterval(
          () =>
            opts.onWait?.(
              `Still ${waiting.charAt(0).toLowerCase()}${waiting.slice(1)}: ` +
                `${Math.round((Date.now() - started) / 1000)} s so far…`,
            ),
          noticeMs,
        )
      : null;
    const onAbort = (): void => {
      child.kill('SIGKILL');
    };
    const child = execFile(
      python,
      [path.join(trainerDir, TRAINER_PACKAGE, 'probe.py')],
      { timeout: timeoutMs, killSignal: 'SIGKILL', windowsHide: true },
      (err, stdout, stderr) => {
        if (first) clearTimeout(first);
        if (notice) clearInterval(notice);
        opts.signal?.removeEventListener('abort', onAbort);
        if (opts.signal?.aborted) return reject(new CancelledError(`waiting for "${python}" to import torch`));
        const code = (err as NodeJS.ErrnoException | null)?.code;
        if (code === 'ENOENT' || code === 'EACCES')
          return reject(
            fail(`No Python at "${python}": install Python 3 with PyTorch (pip install torch), ${CHOOSE}.`),
          );
        if ((err as { killed?: boolean } | null)?.killed) {
          return reject(
            fail(
              `"${python}" did not report its torch within ${Math.round(timeoutMs / 1000)} s ` +
                `(importing torch hung, or the interpreter waits for input); check that \`${python} ` +
                `-c "import torch"\` ends, ${CHOOSE}.`,
            ),
          );
        }
        const line = stdout.trim().split('\n').at(-1) ?? '';
        let raw: Record<string, unknown>;
        try {
          raw = JSON.parse(line) as Record<string, unknown>;
        } catch {
          const why = (stderr.trim().split('\n').at(-1) ?? '') || (err ? err.message : 'no output');
          return reject(
            fail(`"${python}" did not run as a Python 3 interpreter (${why}); ${CHOOSE.replace(/^or /, '')}.`),
          );
        }
        const exe = typeof raw.executable === 'string' ? raw.executable : python;
        if (typeof raw.torch !== 'string')
          return reject(fail(`Python at ${exe} has no torch: install it (pip install torch) ${CHOOSE}.`));
        const v = torchVersion(raw.torch);
        if (!v || v[0] < MIN_TORCH[0] || (v[0] === MIN_TORCH[0] && v[1] < MIN_TORCH[1])) {
          return reject(
            fail(
              `Python at ${exe} has torch ${raw.torch}; the PyTorch engine needs torch ≥ ` +
                `${MIN_TORCH.join('.')}: upgrade it (pip install -U torch) ${CHOOSE}.`,
            ),
          );
        }
        if (typeof raw.error === 'string')
          return reject(
            fail(
              `torch ${raw.torch} at ${exe} could not say what it runs on (${raw.error}); reinstall ` +
                `it (pip install -U torch) ${CHOOSE}.`,
            ),
          );
        resolve({
          python: String(raw.python),
          executable: exe,
          torch: raw.torch,
          cuda: raw.cuda === true,
          devices: Array.isArray(raw.devices) ? raw.devices.map(String) : [],
          bf16: raw.bf16 === true,
          gloo: raw.gloo === true,
          nccl: raw.nccl === true,
          launcherDefaults: raw.launcherDefaults !== false,
        });
      },
    );
    opts.signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** The device a session trains on: `auto` is CUDA where torch sees a GPU. */
export function resolvedDevice(env: TorchEnv, device: PytorchOptions['device']): 'cpu' | 'cuda' {
  return device === 'auto' ? (env.cuda ? 'cuda' : 'cpu') : device;
}

/** Throws (one line) when `opts` cannot run on `env`. */
export function checkOptions(env: TorchEnv, opts: Pick<PytorchOptions, 'nproc' | 'device' | 'bf16'>): void {
  const where = `torch ${env.torch} at ${env.executable}`;
  const device = resolvedDevice(env, opts.device);
  if (opts.device === 'cuda' && !env.cuda)
    throw fail(
      `--device cuda, but ${where} sees no GPU (torch.cuda.is_available() is False); use --device cpu or auto.`,
    );
  if (opts.bf16 && device !== 'cuda')
    throw fail(`--bf16 autocasts on CUDA, and this run trains on the CPU (${where} sees no GPU); drop --bf16.`);
  if (opts.bf16 && !env.bf16)
    throw fail(
      `--bf16, but the GPU that ${where} sees (${env.devices[0] ?? 'unknown'}) has no bf16 support; drop --bf16.`,
    );
  if (device === 'cuda' && opts.nproc > env.devices.length) {
    throw fail(
      `--nproc ${opts.nproc} needs one GPU per process, but ${where} sees ${env.devices.length}; ` +
        `pass --nproc ${env.devices.length} (or --device cpu).`,
    );
  }
  if (opts.nproc > 1 && device === 'cpu' && !env.gloo)
    throw fail(
      `--nproc ${opts.nproc} on the CPU needs torch.distributed with gloo, which ${where} lacks; pass --nproc 1.`,
    );
  if (opts.nproc > 1 && device === 'cuda' && !env.nccl)
    throw fail(
      `--nproc ${opts.nproc} on GPUs needs torch.distributed with NCCL, which ${where} lacks; pass --nproc 1.`,
    );
}

/** One line for people: "torch 2.3.1 · CUDA: 2 × NVIDIA H100" or "torch 1.13.0 · CPU only". */
export function describeEnv(env: TorchEnv): string {
  if (!env.cuda) return `torch ${env.torch} (Python ${env.python}) · CPU only`;
  const names = [...new Set(env.devices)];
  return (
    `torch ${env.torch} (Python ${env.python}) · CUDA: ` +
    `${names.map((n) => `${env.devices.filter((d) => d === n).length} × ${n}`).join(', ')}` +
    `${env.bf16 ? ' (bf16)' : ''}`
  );
}
