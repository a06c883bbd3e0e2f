/**
 * The command lines that start the PyTorch trainer of a prepared run folder: the one the lab
 * runs on this machine, and the per-node ones `train --print-launch` prints for a cluster.
 *
 * On this machine: one process runs `python attention_lab_trainer` (the package folder) directly; N processes run
 * torchrun
 * as `python -m torch.distributed.run` of the same interpreter (so the launcher and the
 * trainer share one torch), with a static rendezvous on 127.0.0.1 and a free port, and, where
 * the probe found torchrun's default stream redirection broken (torch 1.13 on Python 3.11),
 * explicit values it can parse: every rank's output to files in the temporary log folder,
 * standard error also to the console (`--redirects 1 --tee 2`), which is where the trainer
 * and Python write errors. A failed rank's exception reaches torchrun's summary through the
 * trainer's `@record` (torch.distributed.elastic's error files). The trainer always runs from the run folder's own copy
 * (pytorch/trainer/), and watches its standard input (the lab gone: stop with a checkpoint).
 *
 * On a cluster: torchrun on every node with --nnodes, --node_rank and the rendezvous
 * endpoint (node 0's address), the run folder on storage every node reads.
 *
 * Leaves out: spawning and following (pytorchSession.node.ts, follow.node.ts).
 */

import * as os from 'node:os';
import * as path from 'node:path';
import type { PytorchOptions } from '../../protocol/data';
import type { TorchEnv } from './probe.node';
import { resolvedDevice } from './probe.node';
import { PYTORCH_DIR, TRAINER_PACKAGE } from './trainerInputs.node';

/** A process to start. */
export interface LaunchCommand {
  readonly command: string;
  readonly args: readonly string[];
  /** Variables set over the lab's environment. */
  readonly env: Readonly<Record<string, string>>;
}

/** The run folder's copy of the trainer: its package folder, which Python runs through its __main__.py. */
export function trainerScript(runDir: string): string {
  return path.join(runDir, PYTORCH_DIR, 'trainer', TRAINER_PACKAGE);
}

/**
 * The trainer's arguments. torchrun parses every `--` word, the script's included, as one of
 * its own options when it abbreviates one: since torch 2 spells `--run-path` and `--run_path`,
 * a trainer flag `--run` stops torchrun as an ambiguous option. No trainer flag begins any
 * torchrun option (launch.test.ts checks them against the installed torchrun's).
 */
export function trainerArgs(runDir: string, device: string, bf16: boolean, accumulate: number): string[] {
  return [
    trainerScript(runDir),
    '--run-dir',
    runDir,
    ...(device !== 'auto' ? ['--device', device] : []),
    ...(bf16 ? ['--bf16'] : []),
    ...(accumulate > 1 ? ['--accumulate', String(accumulate)] : []),
  ];
}

/**
 * How the lab starts the trainer on this machine. `port` is a free local port for the
 * rendezvous and `logDir` a temporary folder for torchrun's rank logs (used with N > 1).
 */
export function localLaunch(
  runDir: string,
  opts: PytorchOptions,
  env: TorchEnv,
  port: number,
  logDir: string,
): LaunchCommand {
  const device = resolvedDevice(env, opts.device);
  const trainer = [...trainerArgs(runDir, device, opts.bf16, opts.accumulate), '--stop-on-stdin-eof'];
  if (opts.nproc === 1) return { command: opts.python, args: trainer, env: {} };
  // torchrun gives each process 1 thread unless told otherwise; on the CPU share the cores.
  const threads: Record<string, string> =
    device === 'cpu'
      ? { OMP_NUM_THREADS: String(Math.max(1, Math.floor(os.availableParallelism() / opts.nproc))) }
      : {};
  // Rank logs and error files in a folder the lab removes (else torchrun leaves one in the temp folder).
  const redirect = ['--log_dir', logDir, ...(env.launcherDefaults ? [] : ['--redirects', '1', '--tee', '2'])];
  return {
    command: opts.python,
    args: [
      '-m',
      'torch.distributed.run',
      '--nnodes',
      '1',
      '--nproc_per_node',
      String(opts.nproc),
      '--master_addr',
      '127.0.0.1',
      '--master_port',
      String(port),
      ...redirect,
      ...trainer,
    ],
    env: threads,
  };
}

/** A word for a POSIX shell: quoted when it holds anything but safe characters. */
export function shellWord(w: string): string {
  return /^[\w@%+=:,./-]+$/.test(w) ? w : `'${w.replace(/'/g, `'\\''`)}'`;
}

/** What `--print-launch` needs. */
export interface ClusterPlan {
  readonly nnodes: number;
  readonly nproc: number;
  readonly device: PytorchOptions['device'];
  readonly bf16: boolean;
  readonly accumulate: number;
  /** node 0's HOST:PORT, reachable from every node. */
  readonly endpoint: string;
}

/** One command line per node (node 0 first), ready to paste or to put in a job script. */
export function clusterCommands(runDir: string, plan: ClusterPlan): string[] {
  const trainer = trainerArgs(runDir, plan.device, plan.bf16, plan.accumulate);
  if (plan.nnodes === 1 && plan.nproc === 1) return [['python3', ...trainer].map(shellWord).join(' ')];
  const [host, port] = splitEndpoint(plan.endpoint);
  return Array.from({ length: plan.nnodes }, (_, rank) =>
    [
      'torchrun',
      '--nnodes',
      String(plan.nnodes),
      '--node_rank',
      String(rank),
      '--nproc_per_node',
      String(plan.nproc),
      '--master_addr',
      host,
      '--master_port',
      String(port),
      ...trainer,
    ]
      .map(shellWord)
      .join(' '),
  );
}

/** HOST and PORT of "HOST[:PORT]" (torchrun's default port 29500). */
export function splitEndpoint(endpoint: string): [string, number] {
  const m = /^(.+?)(?::(\d+))?$/.exec(endpoint.trim());
  return [m?.[1] ?? endpoint, m?.[2] ? Number(m[2]) : 29500];
}
