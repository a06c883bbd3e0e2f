/**
 * A Llama-shaped run (RoPE, RMSNorm, SwiGLU, two key/value heads, no biases, untied) through the
 * built binary with the PyTorch engine and Debian's torch: it trains the steps our engine trains
 * (per-step loss within 1e-3), our engine opens its checkpoint (decode, and training on with
 * `--resume`), and `export --format hf` of it loads as LlamaForCausalLM (a forward written out
 * for a machine without transformers, scripts/pytorch/minimal_llama.py) scoring the
 * example config.json stores to 1e-4. Skipped while our engine does not build an option it
 * uses (`unbuiltOptions`): the lab initializes and watches a PyTorch run with our model.
 */

import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { presetConfig, validateConfig } from '../../../src/engine/config';
import { unbuiltOptions } from '../../../src/engine/models/modelParts';
import { cli, metricLines, tempDir } from './cliHarness';

const tmp = tempDir();
afterAll(tmp.cleanup);
const PY = '/usr/bin/python3';
const TRAINER_DIR = path.resolve(__dirname, '../../../python');
const MINIMAL_LLAMA = path.resolve(__dirname, '../../../scripts/pytorch/minimal_llama.py');

const LLAMA = {
  positional: 'rope',
  normType: 'rmsnorm',
  activation: 'swiglu',
  nKvHeads: 2,
  tieEmbeddings: false,
  bias: false,
  qkvBias: false,
  attnOutBias: false,
  mlpBias: false,
  ropeTheta: 500,
} as const;
const SET = Object.entries(LLAMA).flatMap(([k, v]) => ['--set', `${k}=${String(v)}`]);
const unbuilt = unbuiltOptions(validateConfig({ ...presetConfig('decoder-only', 'tiny', 100), ...LLAMA }));

const TEXT = 'the cat sat on the mat. the dog sat on the log. a bird in the hand is worth two in the bush. ';

function train(out: string, extra: string[]): void {
  const docs = path.join(tmp.dir, 'docs.txt');
  if (!fs.existsSync(docs)) fs.writeFileSync(docs, TEXT.repeat(40));
  const r = cli(
    [
      'train',
      '--data',
      docs,
      '--steps',
      '6',
      '--batch',
      '8',
      '--seq',
      '32',
      '--eval-every',
      '3',
      ...SET,
      ...extra,
    ].concat(['--out', out, '--json']),
    tmp.dir,
    300_000,
  );
  expect(r.code, r.stderr).toBe(0);
}

describe.skipIf(unbuilt.length > 0)(
  `a Llama-shaped run with the PyTorch engine${unbuilt.length ? ` (our engine does not build ${unbuilt.join(', ')} yet)` : ''}`,
  () => {
    const ours = path.join(tmp.dir, 'ours');
    const torch = path.join(tmp.dir, 'torch');

    it('trains the steps our engine trains, and our engine opens, decodes and trains on its checkpoint', () => {
      train(ours, []);
      train(torch, ['--engine', 'pytorch', '--python', PY]);
      const [a, b] = [metricLines(ours, 'step'), metricLines(torch, 'step')];
      expect(b).toHaveLength(6);
      b.forEach((l, i) => expect(Math.abs((l.loss as number) - (a[i]?.loss as number))).toBeLessThan(1e-3));
      const run = JSON.parse(fs.readFileSync(path.join(torch, 'run.json'), 'utf8')) as {
        backendUsed: string;
        config: Record<string, unknown>;
      };
      expect(run.backendUsed).toBe('pytorch cpu');
      expect(run.config).toMatchObject(LLAMA);
      const dec = cli(['decode', '--run', torch, '--prompt', 'the cat', '--max-tokens', '6', '--json'], tmp.dir);
      expect(dec.code, dec.stderr).toBe(0);
      expect((JSON.parse(dec.stdout) as { text: string }).text.length).toBeGreaterThan(0);
      const on = cli(['train', '--resume', torch, '--steps', '8', '--json'], tmp.dir, 300_000);
      expect(on.code, on.stderr).toBe(0);
      expect(metricLines(torch, 'step').map((l) => l.step)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    }, 600_000);

    it("exports it with --format hf, which LlamaForCausalLM's forward scores as our engine does (1e-4)", () => {
      const out = path.join(tmp.dir, 'hf');
      const r = cli(
        ['export', '--run', torch, '--out', out, '--format', 'hf', '--text', 'the dog sat on the mat.', '--json'],
        tmp.dir,
      );
      expect(r.code, r.stderr).toBe(0);
      const dir = (JSON.parse(r.stdout) as { dir: string }).dir;
      const config = JSON.parse(fs.readFileSync(path.join(dir, 'config.json'), 'utf8')) as {
        architectures: string[];
        num_key_value_heads: number;
        attention_lab: { example: { ids: number[]; logprob_sum: number } };
      };
      expect(config.architectures).toEqual(['LlamaForCausalLM']);
      expect(config.num_key_value_heads).toBe(2);
      const { ids, logprob_sum: want } = config.attention_lab.example;
      const logits = (
        JSON.parse(
          execFileSync(PY, [MINIMAL_LLAMA, dir, TRAINER_DIR], {
            input: JSON.stringify([ids.slice(0, -1)]),
            encoding: 'utf8',
          }),
        ) as number[][][]
      )[0] as number[][];
      let sum = 0;
      logits.forEach((row, t) => {
        const m = Math.max(...row);
        sum += (row[ids[t + 1] as number] as number) - m - Math.log(row.reduce((s, x) => s + Math.exp(x - m), 0));
      });
      expect(Math.abs(sum - want)).toBeLessThan(1e-4);
      // A GPT-2-style run is refused in one line, and nothing is written.
      const gpt = path.join(tmp.dir, 'gpt');
      const g = cli(['train', '--data', path.join(tmp.dir, 'docs.txt'), '--steps', '1', '--out', gpt], tmp.dir);
      expect(g.code, g.stderr).toBe(0);
      const no = cli(['export', '--run', gpt, '--out', path.join(tmp.dir, 'none'), '--format', 'hf'], tmp.dir);
      expect(no.code).toBe(2);
      expect(no.stderr.trim().split('\n')).toHaveLength(1);
      expect(no.stderr).toMatch(/LlamaForCausalLM cannot express this run .*--format pytorch/);
      expect(fs.existsSync(path.join(tmp.dir, 'none', 'gpt'))).toBe(false);
    }, 300_000);
  },
);
