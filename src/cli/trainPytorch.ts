/**
 * The PyTorch side of `attention-lab train`: the engine flags (--engine pytorch, --nproc,
 * --device, --python, --bf16), and --print-launch, which prepares the run folder without
 * training and prints the exact torchrun command of every node (--nnodes, --rdzv-endpoint)
 * for a cluster or a scheduler, with the run folder on storage every node reads.
 *
 * Leaves out: the training itself (the training worker runs src/lab/pytorch/pytorchSession.node.ts,
 * and train.ts shows its progress as for our engine).
 */

import * as os from 'node:os';
import * as path from 'node:path';
import type { EngineKind, PytorchOptions, TrainSpec } from '../protocol/data';
import { ENGINE_KINDS, engineNamed, oldEngineNotice, TORCH_DEVICES } from '../protocol/data';
import { NODE_FS } from '../lab/files/fs.node';
import { clusterCommands, splitEndpoint } from '../lab/pytorch/launch.node';
import { batchShareProblem, preparePytorchRun } from '../lab/pytorch/pytorchSession.node';
import { SessionControl } from '../lab/training/sessionControl';
import { NOT_OWNED, SetupFailure, reportFailure } from '../lab/training/sessionSetup';
import type { Flags } from './args';
import { UsageError } from './args';
import type { CommandContext } from './context';
import { PrepareLine } from './progress';

export const PYTORCH_HELP = `Engine (default builtin: ours, WebAssembly on this machine's CPU):
  --engine builtin|pytorch
                         pytorch trains the same run folder with PyTorch (needs torch ≥ 1.13);
                         a run moves between engines with --resume
  --nproc N              PyTorch processes on this machine (torchrun; default 1); each takes
                         its share of every batch (one GPU each on CUDA, gloo on the CPU)
  --device auto|cpu|cuda (default auto: CUDA when torch sees a GPU)    --bf16  bf16 autocast (CUDA)
  --accumulate K         split each process's share into K micro-batches (gradient accumulation:
                         a batch larger than a GPU holds; the same run, to float rounding)
  --python PATH          the Python with torch (default: python3 on PATH)
  --print-launch         prepare the run folder, do not train, and print the command of every
                         node: --nnodes M (default 1), --rdzv-endpoint HOST[:PORT] (node 0's
                         address, default this machine's name:29500); the folder must be on
                         storage every node reads`;

/** The flags of this part of `train`. */
export const PYTORCH_FLAGS = {
  engine: { type: 'string' },
  nproc: { type: 'string' },
  device: { type: 'string' },
  python: { type: 'string' },
  bf16: { type: 'boolean' },
  accumulate: { type: 'string' },
  'print-launch': { type: 'boolean' },
  nnodes: { type: 'string' },
  'rdzv-endpoint': { type: 'string' },
} as const;

/** These choose how a session trains, not what the run is: they go with --resume too. */
export const ENGINE_FLAGS: readonly string[] = Object.keys(PYTORCH_FLAGS);

/** The shipped trainer beside the CLI's bundles (dist/pytorch/). */
export function trainerDirOf(ctx: CommandContext): string {
  return path.join(path.dirname(ctx.workerScript), 'pytorch');
}

/**
 * --engine, its old value `wasm` included: that trains with `builtin` and says so in one line
 * on stderr. Without the flag: pytorch with --print-launch, else builtin.
 */
function engineFlag(f: Flags, ctx: CommandContext): EngineKind {
  const given = f.str('engine');
  const named = engineNamed(given);
  if (given === undefined || !named)
    return f.choice('engine', ENGINE_KINDS, f.bool('print-launch') ? 'pytorch' : 'builtin');
  if (named.renamed) ctx.err(oldEngineNotice('--engine', given, named.engine, `write --engine ${named.engine}`));
  return named.engine;
}

/** The PyTorch options of the flags, or null for our engine (PyTorch-only flags then refused). */
export function pytorchFlags(f: Flags, ctx: CommandContext): PytorchOptions | null {
  const engine = engineFlag(f, ctx);
  if (engine !== 'pytorch') {
    const given = ENGINE_FLAGS.filter((k) => k !== 'engine' && f.has(k));
    if (given.length)
      throw new UsageError(
        `${given.map((k) => `--${k}`).join(', ')} ${given.length === 1 ? 'goes' : 'go'} with --engine pytorch.`,
      );
    return null;
  }
  const launchOnly = ['nnodes', 'rdzv-endpoint'].filter((k) => f.has(k));
  if (launchOnly.length && !f.bool('print-launch'))
    throw new UsageError(
      `${launchOnly.map((k) => `--${k}`).join(' and ')} go with ` +
        `--print-launch (the lab starts one machine's processes itself).`,
    );
  const python = f.str('python') ?? 'python3';
  if (python.trim() === '')
    throw new UsageError(
      '--python is empty; pass the path of the Python 3 that has PyTorch, or leave the flag out for python3 on PATH.',
    );
  return {
    python,
    nproc: f.int('nproc', 1, 1, 1024),
    accumulate: f.int('accumulate', 1, 1, 1024),
    device: f.choice('device', TORCH_DEVICES, 'auto'),
    bf16: f.bool('bf16'),
    trainerDir: trainerDirOf(ctx),
  };
}

/**
 * `--print-launch`: prepares `runDir` here (data, tokenizer, step-0 weights, the trainer's
 * inputs and its copy of the trainer) and prints each node's command. Nothing is probed: the
 * nodes have the torch, this machine may not. Returns the exit code.
 */
export async function printLaunch(
  f: Flags,
  ctx: CommandContext,
  runDir: string,
  spec: TrainSpec,
  resume: boolean,
  stopAt: number | null,
  extendTo: number | null,
  opts: PytorchOptions,
): Promise<number> {
  const json = f.bool('json');
  const nnodes = f.int('nnodes', 1, 1, 100_000);
  const endpoint = f.str('rdzv-endpoint') ?? `${os.hostname()}:29500`;
  if (!/^[^\s:]+(:\d{1,5})?$/.test(endpoint))
    throw new UsageError(`--rdzv-endpoint takes HOST[:PORT] (node 0's address), got "${endpoint}".`);
  const share = batchShareProblem(spec, opts.nproc * nnodes, opts.accumulate);
  if (share)
    throw new UsageError(nnodes > 1 ? `${share} (--nnodes ${nnodes} × --nproc ${opts.nproc} processes in all)` : share);
  const preparing = json ? null : new PrepareLine(ctx.stderr);
  try {
    await preparePytorchRun({
      runDir,
      spec,
      resume,
      stopAt,
      extendTo,
      control: new SessionControl(),
      emit: (m) => {
        if (m.type === 'train/didProgress') preparing?.update(m);
        if (m.type === 'train/didLog' && !json) {
          preparing?.end();
          ctx.err(m.message);
        }
      },
      trainerDir: opts.trainerDir,
    });
  } catch (e) {
    // As a training session would: a new folder with nothing worth keeping is removed.
    await reportFailure(NODE_FS, runDir, NOT_OWNED, e, 0, () => undefined);
    throw SetupFailure.errorOf(e);
  } finally {
    preparing?.end();
  }
  const commands = clusterCommands(runDir, {
    nnodes,
    nproc: opts.nproc,
    device: opts.device,
    bf16: opts.bf16,
    accumulate: opts.accumulate,
    endpoint,
  });
  if (json) {
    ctx.out(
      JSON.stringify({
        runDir,
        status: 'prepared',
        nnodes,
        nprocPerNode: opts.nproc,
        endpoint: nnodes > 1 ? endpoint : null,
        commands,
      }),
    );
    return 0;
  }
  const [host, port] = splitEndpoint(endpoint);
  ctx.err(
    `Prepared ${runDir} for PyTorch (${nnodes * opts.nproc} ` +
      `${nnodes * opts.nproc === 1 ? 'process' : 'processes'}` +
      `${nnodes > 1 ? ` on ${nnodes} nodes; node 0 listens on ${host}:${port}` : ''}` +
      `). It trains wherever this folder is readable and torch ≥ 1.13 is ` +
      `installed.`,
  );
  commands.forEach((c, i) => ctx.out(nnodes > 1 ? `# node ${i}\n${c}` : c));
  ctx.err(
    `Stop it with Ctrl-C, a scheduler's cancel or \`touch ${path.join(runDir, 'pytorch', 'stop')}\` ` +
      `(a checkpoint is saved); open the folder in the dashboard, or continue it here with ` +
      `\`attention-lab train --resume ${runDir}\`.`,
  );
  return 0;
}
