import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FAST, cli, metricLines, tempDir } from './cliHarness';

const tmp = tempDir();
afterAll(tmp.cleanup);

describe('attention-lab train', () => {
  it('trains a task into a run folder and reports one JSON object with --json', () => {
    const out = path.join(tmp.dir, 'run-a');
    const r = cli(
      ['train', '--task', 'copy', '--steps', '12', '--eval-every', '6', '--out', out, '--json', ...FAST],
      tmp.dir,
    );
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const j = JSON.parse(r.stdout) as {
      runDir: string;
      status: string;
      step: number;
      eval: { loss: number; exact_match: number };
      samples: unknown[];
    };
    expect(j.runDir).toBe(out);
    expect(j.status).toBe('completed');
    expect(j.step).toBe(12);
    expect(j.eval.loss).toBeGreaterThan(0);
    expect(j.samples.length).toBe(3);
    for (const f of ['run.json', 'metrics.jsonl', 'tokenizer.json', 'model.safetensors', 'optimizer.safetensors'])
      expect(fs.existsSync(path.join(out, f)), f).toBe(true);
    const steps = metricLines(out, 'step');
    expect(steps.map((s) => s.step)).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
    for (const s of steps)
      for (const k of ['loss', 'lr', 'gradNorm', 'tokensPerSec', 'elapsedMs'])
        expect(Number.isFinite(s[k]), k).toBe(true);
    expect(metricLines(out, 'eval').map((e) => e.step)).toEqual([6, 12]);
    const run = JSON.parse(fs.readFileSync(path.join(out, 'run.json'), 'utf8')) as {
      status: string;
      step: number;
      version: number;
    };
    expect([run.status, run.step, run.version]).toEqual(['completed', 12, 1]);
    expect(fs.readdirSync(path.join(out, 'snapshots')).length).toBeGreaterThan(0);
  });

  it('resumes exactly: N steps then --resume for N more gives the same losses as 2N steps', () => {
    const a = path.join(tmp.dir, 'straight');
    const b = path.join(tmp.dir, 'resumed');
    const common = ['--task', 'reverse', '--steps', '16', '--seed', '7', '--set', 'dropout=0.1', '--json', ...FAST];
    expect(cli(['train', ...common, '--out', a], tmp.dir).code).toBe(0);
    const first = cli(['train', ...common, '--out', b, '--until', '8'], tmp.dir);
    expect(first.code).toBe(0);
    expect((JSON.parse(first.stdout) as { status: string }).status).toBe('stopped');
    const second = cli(['train', '--resume', b, '--json'], tmp.dir);
    expect(second.stderr).toBe('');
    expect(second.code).toBe(0);
    const la = metricLines(a, 'step').map((s) => s.loss);
    const lb = metricLines(b, 'step').map((s) => s.loss);
    expect(la.length).toBe(16);
    expect(lb).toEqual(la);
  });

  it('extends a finished run: --steps beyond its plan, stopped with --until and resumed, equals an uninterrupted extension', () => {
    const a = path.join(tmp.dir, 'extend-straight');
    const b = path.join(tmp.dir, 'extend-until');
    const common = ['--task', 'reverse', '--steps', '10', '--seed', '7', '--set', 'dropout=0.1', '--json', ...FAST];
    for (const dir of [a, b]) expect(cli(['train', ...common, '--out', dir], tmp.dir).code).toBe(0);
    const straight = cli(['train', '--resume', a, '--steps', '24', '--json'], tmp.dir);
    expect(straight.stderr).toBe('');
    expect(straight.code).toBe(0);
    expect(JSON.parse(straight.stdout)).toMatchObject({ status: 'completed', step: 24 });
    const stopped = cli(['train', '--resume', b, '--steps', '24', '--until', '17', '--json'], tmp.dir);
    expect(stopped.code, stopped.stderr).toBe(0);
    expect(JSON.parse(stopped.stdout)).toMatchObject({ status: 'stopped', step: 17 });
    const resumed = cli(['train', '--resume', b, '--json'], tmp.dir);
    expect(resumed.code, resumed.stderr).toBe(0);
    const sa = metricLines(a, 'step');
    const sb = metricLines(b, 'step');
    expect(sa.map((s) => s.step)).toEqual(Array.from({ length: 24 }, (_, i) => i + 1));
    expect(sb.map((s) => s.loss)).toEqual(sa.map((s) => s.loss));
    expect(sb.map((s) => s.lr)).toEqual(sa.map((s) => s.lr));
    expect(metricLines(b, 'eval').map((e) => e.loss)).toEqual(metricLines(a, 'eval').map((e) => e.loss));
    const run = JSON.parse(fs.readFileSync(path.join(b, 'run.json'), 'utf8')) as {
      status: string;
      step: number;
      spec: { training: { steps: number } };
      segments: unknown;
    };
    expect([run.status, run.step, run.spec.training.steps]).toEqual(['completed', 24, 24]);
    expect(run.segments).toEqual([
      { fromStep: 0, toStep: 10, schedule: 'cosine' },
      { fromStep: 10, toStep: 24, schedule: 'restart' },
    ]);
  });

  it.each(['adamw', 'paper', 'muon'])('trains a single step with the %s optimizer', (opt) => {
    const r = cli(
      [
        'train',
        '--task',
        'sort',
        '--steps',
        '1',
        '--optimizer',
        opt,
        '--out',
        path.join(tmp.dir, `one-${opt}`),
        '--json',
        ...FAST,
      ],
      tmp.dir,
    );
    expect(r.stderr).toBe('');
    expect((JSON.parse(r.stdout) as { step: number }).step).toBe(1);
  });
});

describe('--schedule', () => {
  it('trains with wsd (run.json plans a wsd segment); --optimizer paper with --schedule is refused in one line', () => {
    const out = path.join(tmp.dir, 'wsd');
    const r = cli(
      [
        'train',
        '--task',
        'sort',
        '--steps',
        '10',
        '--optimizer',
        'muon',
        '--schedule',
        'wsd',
        '--out',
        out,
        '--json',
        ...FAST,
      ],
      tmp.dir,
    );
    expect(r.stderr).toBe('');
    const run = JSON.parse(fs.readFileSync(path.join(out, 'run.json'), 'utf8')) as {
      spec: { training: { optimizer: string; schedule: string } };
      segments: unknown;
    };
    expect(run.spec.training).toMatchObject({ optimizer: 'muon', schedule: 'wsd' });
    expect(run.segments).toEqual([{ fromStep: 0, toStep: 10, schedule: 'wsd' }]);
    const bad = cli(['train', '--task', 'sort', '--optimizer', 'paper', '--schedule', 'wsd', ...FAST], tmp.dir);
    expect(bad.code).toBe(2);
    expect(bad.stderr.trim().split('\n')).toHaveLength(1);
    expect(bad.stderr).toMatch(/--optimizer paper follows the paper's own schedule \(noam\); leave out --schedule/);
    const unknown = cli(['train', '--task', 'sort', '--schedule', 'linear', ...FAST], tmp.dir);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/--schedule must be one of cosine, wsd/);
  });
});

describe('--engine', () => {
  it('trains with builtin; the old value wasm still does, saying so in one stderr line', () => {
    const now = path.join(tmp.dir, 'engine-builtin');
    const a = cli(
      ['train', '--task', 'copy', '--steps', '2', '--engine', 'builtin', '--out', now, '--json', ...FAST],
      tmp.dir,
    );
    expect([a.code, a.stderr]).toEqual([0, '']);
    const old = path.join(tmp.dir, 'engine-wasm');
    const b = cli(
      ['train', '--task', 'copy', '--steps', '2', '--engine', 'wasm', '--out', old, '--json', ...FAST],
      tmp.dir,
    );
    expect(b.code, b.stderr).toBe(0);
    expect(b.stderr).toBe(
      '--engine "wasm" is now "builtin" (wasm names a kernel backend); training with builtin: write --engine builtin.\n',
    );
    expect((JSON.parse(b.stdout) as { status: string; step: number }).step).toBe(2);
    expect(metricLines(old, 'step').map((s) => s.loss)).toEqual(metricLines(now, 'step').map((s) => s.loss));
  });

  it('refuses a name that is neither an engine nor an old one, listing the engines', () => {
    const out = path.join(tmp.dir, 'engine-bad');
    const r = cli(['train', '--task', 'copy', '--steps', '2', '--engine', 'reference', '--out', out, ...FAST], tmp.dir);
    expect(r.code).toBe(2);
    expect(r.stderr.trim()).toBe('attention-lab: --engine must be one of builtin, pytorch, got "reference".');
    expect(fs.existsSync(out)).toBe(false);
  });
});
