/**
 * The flags of the commands over a trained run (src/cli/runFlags.ts): --run resolved against
 * the working directory, a missing one named with its command, repeated --run for report,
 * and --backend checked against the backend kinds; and every command that takes --run says
 * the same line when it is missing.
 */
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseFlags } from '../../../src/cli/args';
import type { CommandContext } from '../../../src/cli/context';
import {
  BACKEND_FLAG,
  RUN_FLAG,
  WEBGPU_NOT_BUILT,
  backendKindOf,
  trainBackendKindOf,
  backendOf,
  runDirOf,
  runDirsOf,
} from '../../../src/cli/runFlags';
import { cli } from './cliHarness';

const cwd = path.join(os.tmpdir(), 'project');
const ctx = { cwd } as CommandContext;

describe('--run and --backend', () => {
  it('resolve --run against the working directory, and name the command when it is missing', () => {
    expect(runDirOf(parseFlags('decode', ['--run', 'runs/a'], { ...RUN_FLAG }), ctx, 'decode')).toBe(
      path.join(cwd, 'runs', 'a'),
    );
    expect(runDirOf(parseFlags('decode', ['--run', path.join(os.tmpdir(), 'r')], { ...RUN_FLAG }), ctx, 'decode')).toBe(
      path.join(os.tmpdir(), 'r'),
    );
    expect(() => runDirOf(parseFlags('score', [], { ...RUN_FLAG }), ctx, 'score')).toThrow(
      '`score` needs --run DIR (a folder that `attention-lab train` created).',
    );
    const many = parseFlags('report', ['--run', 'a', '--run', 'b'], { run: { ...RUN_FLAG.run, multiple: true } });
    expect(runDirsOf(many, ctx, 'report')).toEqual([path.join(cwd, 'a'), path.join(cwd, 'b')]);
    expect(() =>
      runDirsOf(parseFlags('report', [], { run: { ...RUN_FLAG.run, multiple: true } }), ctx, 'report'),
    ).toThrow('`report` needs --run DIR');
  });

  it('read --backend as one of the backend kinds, auto by default', () => {
    expect(backendKindOf(parseFlags('lens', [], { ...BACKEND_FLAG }))).toBe('auto');
    expect(backendKindOf(parseFlags('lens', ['--backend', 'reference'], { ...BACKEND_FLAG }))).toBe('reference');
    expect(backendOf(parseFlags('lens', ['--backend', 'reference'], { ...BACKEND_FLAG })).name).toBe('reference');
    expect(() => backendKindOf(parseFlags('lens', ['--backend', 'gpu'], { ...BACKEND_FLAG }))).toThrow(
      '--backend must be one of auto, wasm, reference, webgpu, got "gpu".',
    );
  });

  it('take --backend webgpu for train; refuse it on a trained run in one line saying what is not built', () => {
    expect(trainBackendKindOf(parseFlags('train', ['--backend', 'webgpu'], { ...BACKEND_FLAG }))).toBe('webgpu');
    expect(() => backendKindOf(parseFlags('lens', ['--backend', 'webgpu'], { ...BACKEND_FLAG }))).toThrow(
      WEBGPU_NOT_BUILT,
    );
    expect(WEBGPU_NOT_BUILT).not.toMatch(/\n/);
    expect(WEBGPU_NOT_BUILT).toMatch(/use --backend auto or wasm/);
  });

  it.each(['eval', 'decode', 'score', 'lens', 'tokenize', 'heads', 'report'])(
    '`%s` without --run exits 2 with the one line',
    (command) => {
      const r = cli([command], process.cwd());
      expect(r.code).toBe(2);
      expect(r.stderr).toBe(
        `attention-lab: \`${command}\` needs --run DIR (a folder that \`attention-lab train\` created).\n`,
      );
      expect(r.stdout).toBe('');
    },
  );
});
