/**
 * How the lab starts the PyTorch trainer and what it checks first, as pure functions: the
 * local command (one process directly; N through `python -m torch.distributed.run` with a
 * static rendezvous, and explicit stream redirection only where the probe found torchrun's
 * defaults broken), the per-node cluster commands, the probe's version and option checks,
 * and the batch shares. (The real launches are in parity.test.ts and the CLI's tests.)
 */

import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import {
  clusterCommands,
  localLaunch,
  shellWord,
  splitEndpoint,
  trainerArgs,
} from '../../../../src/lab/pytorch/launch.node';
import type { TorchEnv } from '../../../../src/lab/pytorch/probe.node';
import { checkOptions, describeEnv, resolvedDevice, torchVersion } from '../../../../src/lab/pytorch/probe.node';
import { batchShareProblem, engineLabel } from '../../../../src/lab/pytorch/pytorchSession.node';
import { trainSpecOf } from '../../../../src/lab/runs/runSpec';
import { PYTHON, torchOptions } from './torchRuns';

const cpuEnv: TorchEnv = {
  python: '3.11.2',
  executable: '/usr/bin/python3',
  torch: '1.13.0a0',
  cuda: false,
  devices: [],
  bf16: false,
  gloo: true,
  nccl: false,
  launcherDefaults: false,
};
const gpuEnv: TorchEnv = {
  ...cpuEnv,
  python: '3.12.3',
  torch: '2.11.0+cu128',
  cuda: true,
  devices: ['NVIDIA H100', 'NVIDIA H100'],
  bf16: true,
  nccl: true,
  launcherDefaults: true,
};

describe('the trainer flags torchrun passes on', () => {
  it("begin none of torchrun's own options, in either spelling (torch 2 accepts both - and _)", () => {
    const help = execFileSync(PYTHON, ['-m', 'torch.distributed.run', '--help'], { encoding: 'utf8' });
    const own = [...new Set(help.match(/--[a-z][a-z_-]*/g) ?? [])].flatMap((o) => [
      o.replace(/_/g, '-'),
      o.replace(/-/g, '_').replace(/^__/, '--'),
    ]);
    expect(own).toContain('--run-path');
    const flags = [...trainerArgs('/r', 'cuda', true, 2), '--stop-on-stdin-eof'].filter((a) => a.startsWith('--'));
    expect(flags).toEqual(['--run-dir', '--device', '--bf16', '--accumulate', '--stop-on-stdin-eof']);
    for (const f of flags)
      expect(
        own.filter((o) => o.startsWith(f)),
        f,
      ).toEqual([]);
  });
});

describe('localLaunch', () => {
  it('runs one process directly, watching its standard input', () => {
    const c = localLaunch('/r/run', torchOptions(1), cpuEnv, 29500, '/tmp/logs');
    expect([c.command, ...c.args]).toEqual([
      '/usr/bin/python3',
      '/r/run/pytorch/trainer/attention_lab_trainer',
      '--run-dir',
      '/r/run',
      '--device',
      'cpu',
      '--stop-on-stdin-eof',
    ]);
    expect(c.env).toEqual({});
  });

  it('runs N processes through torchrun of the same Python; explicit redirection only where the defaults crash', () => {
    const broken = localLaunch('/r/run', torchOptions(2, { accumulate: 2 }), cpuEnv, 41234, '/tmp/logs');
    expect(broken.args).toEqual([
      '-m',
      'torch.distributed.run',
      '--nnodes',
      '1',
      '--nproc_per_node',
      '2',
      '--master_addr',
      '127.0.0.1',
      '--master_port',
      '41234',
      '--log_dir',
      '/tmp/logs',
      '--redirects',
      '1',
      '--tee',
      '2',
      '/r/run/pytorch/trainer/attention_lab_trainer',
      '--run-dir',
      '/r/run',
      '--device',
      'cpu',
      '--accumulate',
      '2',
      '--stop-on-stdin-eof',
    ]);
    expect(Number(broken.env.OMP_NUM_THREADS)).toBeGreaterThanOrEqual(1);
    const fine = localLaunch('/r/run', torchOptions(2, { device: 'cuda', bf16: true }), gpuEnv, 41234, '/tmp/logs');
    expect(fine.args).not.toContain('--redirects');
    expect(fine.args.slice(-5)).toEqual(['/r/run', '--device', 'cuda', '--bf16', '--stop-on-stdin-eof']);
    expect(fine.env).toEqual({});
  });
});

describe('clusterCommands', () => {
  it('one torchrun per node with its rank and node 0 as the rendezvous; one process is plain python3', () => {
    const plan = { nnodes: 3, nproc: 8, device: 'cuda', bf16: true, accumulate: 1, endpoint: 'gpu-a:29600' } as const;
    const cmds = clusterCommands('/shared/runs/my run', plan);
    expect(cmds).toHaveLength(3);
    expect(cmds[2]).toBe(
      "torchrun --nnodes 3 --node_rank 2 --nproc_per_node 8 --master_addr gpu-a --master_port 29600 '/shared/runs/my run/pytorch/trainer/attention_lab_trainer' --run-dir '/shared/runs/my run' --device cuda --bf16",
    );
    expect(clusterCommands('/r', { ...plan, nnodes: 1, nproc: 1, device: 'auto', bf16: false })).toEqual([
      'python3 /r/pytorch/trainer/attention_lab_trainer --run-dir /r',
    ]);
    expect(splitEndpoint('host')).toEqual(['host', 29500]);
    expect(shellWord("it's")).toBe("'it'\\''s'");
  });
});

describe('the probe and the checks before a launch', () => {
  it('reads torch versions and says what each problem needs', () => {
    expect(torchVersion('1.13.0a0')).toEqual([1, 13]);
    expect(torchVersion('2.11.0+cu128')).toEqual([2, 11]);
    expect(torchVersion('nightly')).toBeNull();
    expect(resolvedDevice(gpuEnv, 'auto')).toBe('cuda');
    expect(resolvedDevice(cpuEnv, 'auto')).toBe('cpu');
    expect(() => checkOptions(cpuEnv, { nproc: 1, device: 'cuda', bf16: false })).toThrow(
      /--device cuda, but torch 1\.13\.0a0 at \/usr\/bin\/python3 sees no GPU/,
    );
    expect(() => checkOptions(cpuEnv, { nproc: 1, device: 'auto', bf16: true })).toThrow(/--bf16 autocasts on CUDA/);
    expect(() => checkOptions(gpuEnv, { nproc: 4, device: 'cuda', bf16: false })).toThrow(
      /--nproc 4 needs one GPU per process, but .* sees 2; pass --nproc 2/,
    );
    expect(() => checkOptions({ ...cpuEnv, gloo: false }, { nproc: 2, device: 'cpu', bf16: false })).toThrow(
      /needs torch\.distributed with gloo/,
    );
    expect(() => checkOptions(gpuEnv, { nproc: 2, device: 'auto', bf16: true })).not.toThrow();
    expect(describeEnv(gpuEnv)).toBe('torch 2.11.0+cu128 (Python 3.12.3) · CUDA: 2 × NVIDIA H100 (bf16)');
    expect(engineLabel('cuda', 8, true)).toBe('pytorch cuda ×8 bf16');
  });

  it('lets processes share a batch only when each gets rows', () => {
    const docs = trainSpecOf({ kind: 'documents', files: [], root: '/' }, { batchSize: 12 });
    expect(batchShareProblem(docs, 4)).toBeNull();
    expect(batchShareProblem(docs, 5)).toBe(
      '--batch 12 does not divide among 5 processes; pass --nproc 2 or 3 or 4 or 6 or 12, or a --batch that 5 divides (e.g. 15).',
    );
    expect(batchShareProblem(docs, 2, 4)).toMatch(/^--batch 12 does not divide among 2 processes × --accumulate 4/);
    const pairs = trainSpecOf({ kind: 'task', task: 'reverse' }, { batchSize: 4 });
    expect(batchShareProblem(pairs, 3)).toBeNull(); // rows vary, at least 4
    expect(batchShareProblem(pairs, 5)).toBe(
      '5 processes are more shares than the batch has rows (--batch 4); pass --nproc 4 or less, or a larger --batch.',
    );
  });
});
