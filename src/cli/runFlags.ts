/**
 * The flags of the commands that use a trained run, declared and read once: `--run DIR`
 * (the run folder, resolved against the working directory; a missing one is a one-line
 * usage error naming the command) and `--backend auto|wasm|reference|webgpu` (which kernels
 * run the model; `train`, `decode`, `score` and `lens` take webgpu, the other commands on a trained run
 * refuse it in one line until they are built on the GPU), and opening the run with them.
 *
 * Leaves out: the commands' own flags (each command's file) and opening a run folder
 * (lab/inference/openRun.ts).
 */

import * as path from 'node:path';
import type { Backend } from '../engine/backend';
import { createBackend } from '../engine/backends/select';
import { createWebGpuBackend } from '../engine/backends/webgpu/webgpuBackend';
import { EngineError } from '../engine/errors';
import { openNodeGpu } from '../lab/platform/webgpu.node';
import { NODE_FS } from '../lab/files/fs.node';
import type { OpenRun } from '../lab/inference/openRun';
import type { InferenceRequest } from '../lab/inference/requestPlan';
import { openForRequest } from '../lab/inference/requestPlan';
import { readCheckpointConfig } from '../lab/runs/checkpoint';
import type { ModelKind } from '../engine/config';
import type { BackendKind } from '../protocol/data';
import { BACKEND_KINDS } from '../protocol/data';
import type { Flags } from './args';
import { UsageError } from './args';
import type { CommandContext } from './context';

/** `--run DIR`, for parseFlags. */
export const RUN_FLAG = { run: { type: 'string' } } as const;
/** `--backend auto|wasm|reference`, for parseFlags. */
export const BACKEND_FLAG = { backend: { type: 'string' } } as const;

function missingRun(command: string): UsageError {
  return new UsageError(`\`${command}\` needs --run DIR (a folder that \`attention-lab train\` created).`);
}

/** The run folder `--run` names, absolute; throws a UsageError saying `command` needs it. */
export function runDirOf(f: Flags, ctx: CommandContext, command: string): string {
  const run = f.str('run');
  if (!run) throw missingRun(command);
  return path.resolve(ctx.cwd, run);
}

/** Every run folder of a repeated `--run`, absolute; throws a UsageError when there is none. */
export function runDirsOf(f: Flags, ctx: CommandContext, command: string): string[] {
  const runs = f.list('run').map((r) => path.resolve(ctx.cwd, r));
  if (runs.length === 0) throw missingRun(command);
  return runs;
}

/** What `--backend webgpu` answers on a command that uses a trained run and is not built on the GPU. */
export const WEBGPU_NOT_BUILT =
  '--backend webgpu runs train, decode, score and lens; this command does not run on the GPU yet; ' +
  'use --backend auto or wasm.';

/** The backend kind `--backend` names for `train` (default auto: WebAssembly where it loads; WebGPU only by name). */
export function trainBackendKindOf(f: Flags): BackendKind {
  return f.choice('backend', BACKEND_KINDS, 'auto');
}

/** The backend kind `--backend` names on a trained run (default auto); webgpu is refused in one line. */
export function backendKindOf(f: Flags): Exclude<BackendKind, 'webgpu'> {
  const kind = trainBackendKindOf(f);
  if (kind === 'webgpu') throw new UsageError(WEBGPU_NOT_BUILT);
  return kind;
}

/** The backend `--backend` names, created. */
export function backendOf(f: Flags): Backend {
  return createBackend(backendKindOf(f));
}

/**
 * The backend `--backend` names for a command built on the GPU too (decode, score, lens): `webgpu`
 * opens the platform's device (refused in one line, saying why, when none opens).
 */
export async function deviceBackendOf(f: Flags): Promise<Backend> {
  if (trainBackendKindOf(f) !== 'webgpu') return backendOf(f);
  const opened = await openNodeGpu();
  if (!opened.ok) throw new EngineError('config/invalid', opened.reason);
  return createWebGpuBackend(opened.device);
}

/**
 * Opens the run of `--run` on the backend of `--backend`, its model planned for the request
 * `request` makes of its model's kind (lab/inference/requestPlan.ts: the rule the editor's
 * model worker plans by too).
 */
export async function openRunFor(
  f: Flags,
  ctx: CommandContext,
  command: string,
  request: (kind: ModelKind) => InferenceRequest,
  onDevice = false,
): Promise<OpenRun> {
  const runDir = runDirOf(f, ctx, command);
  const { config } = await readCheckpointConfig(NODE_FS, runDir);
  return openForRequest(NODE_FS, runDir, onDevice ? await deviceBackendOf(f) : backendOf(f), request(config.kind));
}
