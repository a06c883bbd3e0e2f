/**
 * `attention-lab bench --json` through the built binary: the documented JSON shape,
 * with numbers that are measured (positive, finite), never asserted against a time.
 */
import { describe, expect, it } from 'vitest';
import { cli, tempDir } from './cliHarness';

describe('attention-lab bench', () => {
  it('prints {"configs": {…}, "matmul_gflops": {…}} with --json', () => {
    const tmp = tempDir();
    try {
      const r = cli(
        ['bench', '--quick', '--configs', 'tiny-decoder', '--threads', '1', '--no-pytorch', '--json'],
        tmp.dir,
        300_000,
      );
      expect(r.code, r.stderr).toBe(0);
      const j = JSON.parse(r.stdout) as {
        configs: Record<string, { train_tokens_per_s: number; decode_ms_per_token: number }>;
        matmul_gflops: Record<string, number>;
      };
      const c = j.configs['tiny-decoder'];
      expect(c?.train_tokens_per_s).toBeGreaterThan(0);
      expect(c?.decode_ms_per_token).toBeGreaterThan(0);
      expect(Object.keys(j.matmul_gflops).sort((a, b) => Number(a) - Number(b))).toEqual([
        '64',
        '128',
        '256',
        '512',
        '1024',
      ]);
      for (const v of Object.values(j.matmul_gflops)) expect(Number.isFinite(v) && v > 0).toBe(true);
      expect(r.stderr).toMatch(/matmul/);
    } finally {
      tmp.cleanup();
    }
  });

  it('rejects an unknown config with exit code 2', () => {
    const r = cli(['bench', '--configs', 'huge-model'], process.cwd());
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/unknown config "huge-model"; choose from tiny-decoder/);
  });
});

describe('bench --import names its model', () => {
  it('refuses an unknown model and a model name without --import, naming the choices', () => {
    const bad = cli(['bench', '--import', 'gpt5'], process.cwd());
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/unknown model "gpt5"; choose gpt2, smollm2, qwen2\.5/);
    const stray = cli(['bench', 'smollm2'], process.cwd());
    expect(stray.code).not.toBe(0);
    expect(stray.stderr).toMatch(/a model name goes after --import/);
  });
});
