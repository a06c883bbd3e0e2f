/**
 * `attention-lab train --engine pytorch` through the built binary, with Debian's torch
 * (/usr/bin/python3): a run moves between engines both ways through its checkpoint files and
 * `eval` (recorded in evaluations.jsonl, bits per byte as training logged them), `decode`,
 * `heads` and `report` open the result; Ctrl-C stops a PyTorch run with a
 * loadable checkpoint, and a lab that goes away (a window reload) leaves it interrupted with Resume; every bad input exits 2 with one line and leaves no run folder behind;
 * `--print-launch` prints commands that train the prepared folder as printed.
 *
 * The interpreters a user may have are made here as small wrappers around the real one: a
 * Python that cannot see its site packages (no torch), one that sees a torch 1.12 (a fake
 * module with only a version), one that sees no GPU, and one whose gloo cannot find its
 * network interface (torchrun then fails for real).
 */

import { execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createReferenceBackend } from '../../../src/engine/backends/reference';
import { MANIFEST_VERSION } from '../../../src/lab/pytorch/trainerInputs.node';
import { openRun } from '../../../src/lab/inference/openRun';
import { NODE_FS } from '../../../src/lab/files/fs.node';
import { cli, cliAsync, metricLines, tempDir } from './cliHarness';
import { announceInterrupted } from '../../../src/extension/runs/interrupted';
import type { RunItem } from '../../../src/extension/runs/runsModel';
import type { SavedRunStatus } from '../../../src/protocol/runStatus';
import { shownRunState } from '../../../src/protocol/runStatus';
import { Memento } from '../extension/memento';

const tmp = tempDir();
afterAll(tmp.cleanup);
const PY = '/usr/bin/python3';
const TORCH = ['--engine', 'pytorch', '--python', PY];
/** The induction task, small: 40 steps of 32 sequences, a snapshot every 10. */
const RUN = ['--task', 'induction', '--steps', '40', '--snapshot-every', '10', '--eval-every', '10'];

function wrapper(name: string, body: string): string {
  const file = path.join(tmp.dir, name);
  fs.writeFileSync(file, `#!/bin/sh\n${body}\n`, { mode: 0o755 });
  return file;
}

function losses(runDir: string): number[] {
  return metricLines(runDir, 'step').map((l) => l.loss as number);
}

function maxGap(a: readonly number[], b: readonly number[]): number {
  expect(a).toHaveLength(b.length);
  return Math.max(...a.map((x, i) => Math.abs(x - (b[i] as number))));
}

function runJson(runDir: string): {
  status: string;
  step: number;
  error: { code: string; message: string } | null;
  backendUsed?: string;
} {
  return JSON.parse(fs.readFileSync(path.join(runDir, 'run.json'), 'utf8')) as ReturnType<typeof runJson>;
}

describe('a run moves between engines through its checkpoint files', () => {
  const whole = path.join(tmp.dir, 'wasm-40');
  it('20 WebAssembly steps, then 20 PyTorch steps, train the run 40 WebAssembly steps train (1e-3), and the other way round', () => {
    expect(cli(['train', ...RUN, '--out', whole, '--json'], tmp.dir).code).toBe(0);
    const there = path.join(tmp.dir, 'wasm-then-pytorch');
    expect(cli(['train', ...RUN, '--until', '20', '--out', there, '--json'], tmp.dir).code).toBe(0);
    const on = cli(['train', '--resume', there, ...TORCH, '--json'], tmp.dir);
    expect(on.code, on.stderr).toBe(0);
    expect(runJson(there)).toMatchObject({ status: 'completed', step: 40, backendUsed: 'pytorch cpu' });
    expect(maxGap(losses(there), losses(whole))).toBeLessThan(1e-3);

    const back = path.join(tmp.dir, 'pytorch-then-wasm');
    const first = cli(['train', ...RUN, ...TORCH, '--until', '20', '--out', back, '--json'], tmp.dir);
    expect(first.code, first.stderr).toBe(0);
    expect(runJson(back)).toMatchObject({ status: 'stopped', step: 20 });
    const rest = cli(['train', '--resume', back, '--json'], tmp.dir);
    expect(rest.code, rest.stderr).toBe(0);
    expect(runJson(back)).toMatchObject({ status: 'completed', step: 40, backendUsed: 'wasm' });
    expect(maxGap(losses(back), losses(whole))).toBeLessThan(1e-3);
    // Attention over training: the lab drew a snapshot from every set of weights the trainer dropped.
    expect(fs.readdirSync(path.join(back, 'snapshots')).sort()).toEqual(
      [0, 10, 20, 30, 40].map((s) => `step-${String(s).padStart(7, '0')}.safetensors`),
    );
  });

  it('eval, decode, heads and report open the runs PyTorch trained', () => {
    for (const name of ['wasm-then-pytorch', 'pytorch-then-wasm']) {
      const dir = path.join(tmp.dir, name);
      const ev = cli(['eval', '--run', dir, '--json'], tmp.dir);
      expect(ev.code, ev.stderr).toBe(0);
      const result = JSON.parse(ev.stdout) as { loss: number; bpb: number };
      expect(Number.isFinite(result.loss)).toBe(true);
      // The evaluation is recorded with the run, at the step of the weights either engine left,
      // and its bits per byte are the training's last validation's (same split, same weights).
      const lines = fs
        .readFileSync(path.join(dir, 'evaluations.jsonl'), 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { step: number; loss: number; bpb: number });
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatchObject({ step: 40, loss: result.loss, bpb: result.bpb });
      const lastVal = metricLines(dir, 'eval').at(-1) as { step: number; loss: number; bpb: number };
      expect(lastVal.step).toBe(40);
      expect(Math.abs(lastVal.bpb - result.bpb)).toBeLessThan(1e-3);
      expect(metricLines(dir, 'step').every((l) => typeof l.bytes === 'number' && l.bytes > 0)).toBe(true);
      const dec = cli(['decode', '--run', dir, '--prompt', 'abcab', '--max-tokens', '4', '--json'], tmp.dir);
      expect(dec.code, dec.stderr).toBe(0);
      const heads = cli(['heads', '--run', dir, '--step', '20', '--json'], tmp.dir);
      expect(heads.code, heads.stderr).toBe(0);
      expect((JSON.parse(heads.stdout) as { heads: unknown[] }).heads).toHaveLength(8);
      const page = path.join(tmp.dir, `${name}.html`);
      const rep = cli(['report', '--run', dir, '--out', page], tmp.dir);
      expect(rep.code, rep.stderr).toBe(0);
      expect(fs.statSync(page).size).toBeGreaterThan(10_000);
    }
  });
});

describe('Ctrl-C during a PyTorch run', () => {
  it('stops after the current step with a loadable checkpoint, and the run resumes', async () => {
    const out = path.join(tmp.dir, 'interrupted');
    const { child, done } = cliAsync(
      [
        'train',
        '--task',
        'induction',
        '--steps',
        '100000',
        '--eval-every',
        '0',
        '--snapshot-every',
        '0',
        ...TORCH,
        '--out',
        out,
      ],
      tmp.dir,
    );
    const t0 = Date.now();
    while (!(fs.existsSync(path.join(out, 'metrics.jsonl')) && metricLines(out, 'step').length >= 3)) {
      if (Date.now() - t0 > 120_000) throw new Error('the PyTorch run did not start');
      await new Promise((r) => setTimeout(r, 100));
    }
    child.kill('SIGINT');
    const res = await done;
    expect(res.code, res.stderr).toBe(0);
    expect(res.stderr).toMatch(/Stopping after this step/);
    expect(res.stderr).toMatch(/Stopped at step \d+/);
    const run = runJson(out);
    expect(run.status).toBe('stopped');
    expect(run.step).toBeGreaterThanOrEqual(3);
    expect((await openRun(NODE_FS, out, createReferenceBackend())).step).toBe(run.step);
    expect(fs.existsSync(path.join(out, 'pytorch', 'stop'))).toBe(false);
    const more = cli(['train', '--resume', out, ...TORCH, '--until', String(run.step + 2), '--json'], tmp.dir);
    expect(more.code, more.stderr).toBe(0);
    expect(runJson(out).step).toBe(run.step + 2);
  });
});

describe('bad inputs exit 2 with one line and leave nothing half-written', () => {
  const fakeTorch = path.join(tmp.dir, 'fake-site', 'torch');
  fs.mkdirSync(fakeTorch, { recursive: true });
  fs.writeFileSync(path.join(fakeTorch, '__init__.py'), '__version__ = "1.12.1"\n');
  const cases: [string, string[], RegExp][] = [
    [
      'no Python',
      ['--engine', 'pytorch', '--python', path.join(tmp.dir, 'no-such-python')],
      /^attention-lab: No Python at ".*no-such-python": install Python 3 with PyTorch/,
    ],
    [
      'a Python without torch',
      ['--engine', 'pytorch', '--python', wrapper('python-without-torch', `exec ${PY} -S "$@"`)],
      /^attention-lab: Python at \/usr\/bin\/python3 has no torch: install it \(pip install torch\)/,
    ],
    [
      'a torch older than 1.13',
      [
        '--engine',
        'pytorch',
        '--python',
        wrapper('python-old-torch', `PYTHONPATH=${path.dirname(fakeTorch)} exec ${PY} -S "$@"`),
      ],
      /has torch 1\.12\.1; the PyTorch engine needs torch ≥ 1\.13: upgrade it/,
    ],
    [
      'CUDA without a GPU',
      [
        '--engine',
        'pytorch',
        '--device',
        'cuda',
        '--python',
        wrapper('python-no-gpu', `CUDA_VISIBLE_DEVICES= exec ${PY} "$@"`),
      ],
      /^attention-lab: --device cuda, but torch .* sees no GPU .*; use --device cpu or auto\.$/,
    ],
    [
      'more processes than the batch divides into',
      [...TORCH, '--batch', '6', '--nproc', '4'],
      /^attention-lab: --batch 6 does not divide among 4 processes; pass --nproc 2 or 3 or 6/,
    ],
    ['PyTorch flags without the engine', ['--nproc', '2'], /^attention-lab: --nproc goes with --engine pytorch\.$/],
  ];
  it.each(cases)('%s', (_name, flags, message) => {
    const out = path.join(tmp.dir, `bad-${_name.replace(/\W+/g, '-')}`);
    const r = cli(['train', '--task', 'induction', '--steps', '5', ...flags, '--out', out], tmp.dir);
    expect(r.code, r.stderr).toBe(2);
    // A slow torch import adds the probe's progress line ("Waiting for … to import torch …"),
    // which is not part of the refusal: the refusal is the one other line.
    const lines = r.stderr
      .trim()
      .split('\n')
      .filter((l) => !/^Waiting for ".*" to import torch/.test(l));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(message);
    expect(fs.existsSync(out)).toBe(false);
  });

  it("torchrun exiting non-zero: the failed process's exception, and the run marked failed with its step-0 checkpoint kept", async () => {
    const out = path.join(tmp.dir, 'bad-torchrun');
    const python = wrapper('python-bad-gloo', `GLOO_SOCKET_IFNAME=no-such-interface0 exec ${PY} "$@"`);
    const r = cli(
      [
        'train',
        '--task',
        'induction',
        '--steps',
        '5',
        '--engine',
        'pytorch',
        '--nproc',
        '2',
        '--python',
        python,
        '--out',
        out,
      ],
      tmp.dir,
    );
    expect(r.code, r.stderr).toBe(2);
    const last = r.stderr.trim().split('\n').at(-1) as string;
    expect(last).toMatch(
      /^attention-lab: The PyTorch trainer exited with code 1: RuntimeError: .*Unable to find address for: no-such-interface0$/,
    );
    expect(runJson(out)).toMatchObject({ status: 'failed', step: 0, error: { code: 'pytorch/launch' } });
    expect((await openRun(NODE_FS, out, createReferenceBackend())).step).toBe(0);
  });

  it('a run folder the trainer does not understand (another manifest version)', () => {
    const out = path.join(tmp.dir, 'other-version');
    expect(cli(['train', '--task', 'induction', '--steps', '5', '--print-launch', '--out', out], tmp.dir).code).toBe(0);
    const file = path.join(out, 'pytorch', 'manifest.json');
    fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace(`"version": ${MANIFEST_VERSION}`, '"version": 99'));
    const before = fs.readFileSync(path.join(out, 'run.json'), 'utf8');
    let code = 0;
    let stderr = '';
    try {
      execFileSync(PY, [path.join(out, 'pytorch', 'trainer', 'attention_lab_trainer'), '--run', out], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
      });
    } catch (e) {
      ({ status: code, stderr } = e as { status: number; stderr: string });
    }
    expect(code).toBe(2);
    expect(stderr.trim()).toMatch(
      /^attention-lab trainer: .*manifest\.json has version 99; this trainer reads version \d+: prepare the run again with this Attention Lab\.$/,
    );
    expect(stderr).toContain(`reads version ${MANIFEST_VERSION}:`);
    expect(fs.readFileSync(path.join(out, 'run.json'), 'utf8')).toBe(before);
  });
});

describe('a trainer that hangs on its way out', () => {
  it('is ended once the run has been saved for 30 s, and the run counts as finished', () => {
    const out = path.join(tmp.dir, 'stuck-at-exit');
    // Trains, then does not exit (as a process stuck in a library's shutdown would).
    const python = wrapper(
      'python-stuck-at-exit',
      `case "$*" in *attention_lab_trainer/probe.py*) exec ${PY} "$@";; esac\n${PY} "$@"\nsleep 600`,
    );
    const r = cli(
      [
        'train',
        '--task',
        'reverse',
        '--steps',
        '4',
        '--snapshot-every',
        '0',
        '--engine',
        'pytorch',
        '--python',
        python,
        '--out',
        out,
      ],
      tmp.dir,
      180_000,
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/Finished at step 4/);
    expect(runJson(out)).toMatchObject({ status: 'completed', step: 4 });
    expect(r.stderr).toMatch(/had not exited 30 s after the run was completed; ended it\./);
  }, 200_000);
});

describe('the lab going away during a PyTorch run (a window reload)', () => {
  it('leaves the run interrupted at the checkpoint the trainer saved, so the next window offers Resume, and it resumes', async () => {
    const out = path.join(tmp.dir, 'reloaded');
    const prepared = cli(
      [
        'train',
        '--task',
        'induction',
        '--steps',
        '100000',
        '--eval-every',
        '0',
        '--snapshot-every',
        '0',
        '--print-launch',
        '--out',
        out,
      ],
      tmp.dir,
    );
    expect(prepared.code, prepared.stderr).toBe(0);
    // The trainer as the lab launches it, watching its input; a reloading window's extension host
    // ends without a word, and the trainer sees that input close.
    const trainer = spawn(
      PY,
      [path.join(out, 'pytorch', 'trainer', 'attention_lab_trainer'), '--run-dir', out, '--stop-on-stdin-eof'],
      { stdio: ['pipe', 'ignore', 'ignore'] },
    );
    const exited = new Promise<number | null>((resolve) => trainer.on('close', resolve));
    const t0 = Date.now();
    while (!(fs.existsSync(path.join(out, 'metrics.jsonl')) && metricLines(out, 'step').length >= 3)) {
      if (Date.now() - t0 > 120_000) throw new Error('the PyTorch run did not start');
      await new Promise((r) => setTimeout(r, 100));
    }
    trainer.stdin.end();
    expect(await exited).toBe(0);
    const run = runJson(out);
    expect(run.status).toBe('training');
    expect(run.step).toBe(metricLines(out, 'step').at(-1)?.step);
    expect((await openRun(NODE_FS, out, createReferenceBackend())).step).toBe(run.step);
    const shown = shownRunState(run as { status: SavedRunStatus; step: number }, null);
    expect(shown).toEqual({ status: 'interrupted', step: run.step });
    const offered: string[][] = [];
    const item: RunItem = {
      runDir: out,
      name: 'reloaded',
      ...shown,
      kind: 'decoder-only',
      totalSteps: 100000,
      bestValLoss: null,
      hasModel: true,
      active: false,
      params: null,
      data: null,
      imported: null,
      error: null,
      note: null,
      backend: 'pytorch cpu',
    };
    await announceInterrupted(
      new Memento(),
      [item],
      (_m, ...a) => (offered.push(a), Promise.resolve(undefined)),
      () => undefined,
    );
    expect(offered).toEqual([['Resume']]);
    const more = cli(['train', '--resume', out, ...TORCH, '--until', String(run.step + 2), '--json'], tmp.dir);
    expect(more.code, more.stderr).toBe(0);
    expect(runJson(out)).toMatchObject({ status: 'stopped', step: run.step + 2 });
  });
});

describe('--print-launch', () => {
  it("prints every node's torchrun command (node rank, rendezvous endpoint) for a prepared folder", () => {
    const out = path.join(tmp.dir, 'cluster');
    const r = cli(
      [
        'train',
        '--task',
        'induction',
        '--steps',
        '5',
        '--print-launch',
        '--nnodes',
        '2',
        '--nproc',
        '4',
        '--device',
        'cuda',
        '--bf16',
        '--rdzv-endpoint',
        'node0.cluster:29600',
        '--out',
        out,
        '--json',
      ],
      tmp.dir,
    );
    expect(r.code, r.stderr).toBe(0);
    const j = JSON.parse(r.stdout) as { commands: string[]; nnodes: number; endpoint: string };
    const trainer = path.join(out, 'pytorch', 'trainer', 'attention_lab_trainer');
    expect(j.commands).toEqual(
      [0, 1].map(
        (rank) =>
          `torchrun --nnodes 2 --node_rank ${rank} --nproc_per_node 4 --master_addr node0.cluster --master_port 29600 ${trainer} --run-dir ${out} --device cuda --bf16`,
      ),
    );
    expect(runJson(out)).toMatchObject({ step: 0 });
    expect(fs.existsSync(path.join(out, 'pytorch', 'manifest.json'))).toBe(true);
  });

  it('the printed command trains the folder it prepared', () => {
    const out = path.join(tmp.dir, 'printed');
    const r = cli(
      ['train', '--task', 'reverse', '--steps', '6', '--snapshot-every', '3', '--print-launch', '--out', out],
      tmp.dir,
    );
    expect(r.code, r.stderr).toBe(0);
    const command = r.stdout.trim();
    expect(command).toBe(`python3 ${path.join(out, 'pytorch', 'trainer', 'attention_lab_trainer')} --run-dir ${out}`);
    execFileSync('/bin/sh', ['-c', command.replace(/^python3 /, `${PY} `)], { stdio: 'ignore' });
    expect(runJson(out)).toMatchObject({ status: 'completed', step: 6, backendUsed: 'pytorch cpu' });
    expect(metricLines(out, 'step')).toHaveLength(6);
    // Unfollowed, the trainer's snapshot weights wait for the lab: `heads` draws them.
    expect(fs.readdirSync(path.join(out, 'snapshots')).filter((f) => f.endsWith('.weights.safetensors'))).toHaveLength(
      2,
    );
    // A text is measured on the model now: the snapshot weights stay for later.
    const onText = cli(['heads', '--run', out, '--text', 'abcabc', '--json'], tmp.dir);
    expect(onText.code, onText.stderr).toBe(0);
    expect(JSON.parse(onText.stdout)).toMatchObject({ step: 6, measuredOn: 'text' });
    expect(fs.readdirSync(path.join(out, 'snapshots')).filter((f) => f.endsWith('.weights.safetensors'))).toHaveLength(
      2,
    );
    const heads = cli(['heads', '--run', out, '--step', '6', '--json'], tmp.dir);
    expect(heads.code, heads.stderr).toBe(0);
    expect(fs.readdirSync(path.join(out, 'snapshots')).filter((f) => f.endsWith('.weights.safetensors'))).toHaveLength(
      0,
    );
  });
});
