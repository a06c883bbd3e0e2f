import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { encodeSafetensors } from '../../../src/engine/io/safetensors';
import { cli, tempDir } from './cliHarness';

const GOLDEN = path.resolve(__dirname, '../../golden/import');
const TORCH = path.resolve(__dirname, '../../golden/torch-pickle');
const { dir, cleanup } = tempDir('al-import-cli-');
afterAll(cleanup);

/** A copy of golden folder `name` under `dir`, with `edit` applied. */
function copyOf(name: string, as: string, edit: (folder: string) => void = () => undefined): string {
  const folder = path.join(dir, as);
  fs.cpSync(path.join(GOLDEN, name), folder, { recursive: true });
  edit(folder);
  return folder;
}

/** Nothing but the inputs under `dir`: no run folder, no temporary folder. */
function nothingWritten(out: string): void {
  expect(fs.existsSync(path.join(dir, out))).toBe(false);
  expect(fs.readdirSync(dir).filter((n) => n.includes('importing'))).toEqual([]);
}

describe('attention-lab import (Hugging Face GPT-2 with its vocab.json + merges.txt)', () => {
  const doc = path.join(dir, 'notes.txt');
  fs.writeFileSync(doc, 'the rain in the east ran at the station; the artist returned.\n'.repeat(8));
  const run = path.join(dir, 'gpt2-run');
  const imported = cli(
    ['import', '--from', path.join(GOLDEN, 'hf-gpt2'), '--out', run, '--data', doc, '--steps', '2', '--json'],
    dir,
  );

  it('writes a run folder and says what it imported', () => {
    expect(imported.stderr).toBe('');
    expect(imported.code).toBe(0);
    const res = JSON.parse(imported.stdout) as {
      layout: string;
      params: number;
      ignored: string[];
      notes: string[];
      tokenizer: string;
    };
    expect(res.layout).toBe('hf-gpt2');
    expect(res.ignored).toHaveLength(4); // attn.bias and attn.masked_bias of both blocks
    expect(res.tokenizer).toMatch(/vocab\.json \+ merges\.txt/);
    expect(res.notes.join(' ')).toMatch(/fine-tunes for 2 steps at a peak learning rate of 0\.00003/);
    expect(fs.readdirSync(run).sort()).toEqual(['model.safetensors', 'run.json', 'tokenizer.json']);
  });

  it('looks inside without snapshots: heads on the diagnostic sequences and on a text; a prompt 10× the context is cut and said', () => {
    const heads = cli(['heads', '--run', run, '--json'], dir);
    expect(heads.code, heads.stderr).toBe(0);
    const j = JSON.parse(heads.stdout) as {
      step: number;
      measuredOn: string;
      heads: { stack: string; layer: number; head: number; scores: Record<string, number> }[];
    };
    expect(j.measuredOn).toBe('diagnostic');
    expect(j.heads.map((h) => `${h.stack} ${h.layer}.${h.head}`)).toEqual(
      [1, 2].flatMap((l) => [1, 2, 3, 4].map((h) => `decoder.self ${l}.${h}`)),
    );
    for (const h of j.heads) for (const v of Object.values(h.scores)) expect(Number.isFinite(v)).toBe(true);
    const onText = cli(['heads', '--run', run, '--text', 'the rain in the east', '--json'], dir);
    expect(onText.code, onText.stderr).toBe(0);
    const t = JSON.parse(onText.stdout) as typeof j;
    expect(t.measuredOn).toBe('text');
    expect(t.heads.map((h) => h.scores.induction)).toEqual(j.heads.map((h) => h.scores.induction)); // induction: the diagnostic sequences either way
    expect(t.heads.map((h) => h.scores.entropy)).not.toEqual(j.heads.map((h) => h.scores.entropy));
    const table = cli(['heads', '--run', run], dir);
    expect(table.stdout).toMatch(
      /Head scores at step 0 on the run's diagnostic sequences \(no snapshots: measured now\)/,
    );
    const prompt = 'the rain in the east ran at the station. '.repeat(4); // 164 characters: over 10 contexts of 16
    const decode = cli(['decode', '--run', run, '--prompt', prompt, '--max-tokens', '5', '--json'], dir);
    expect(decode.code, decode.stderr).toBe(0);
    const d = JSON.parse(decode.stdout) as { tokens: number[]; context_note: string };
    // 5 tokens, and up to 3 more when the fifth leaves a character unfinished (this random model writes stray byte tokens).
    expect(d.tokens.length).toBeGreaterThanOrEqual(5);
    expect(d.tokens.length).toBeLessThanOrEqual(8);
    expect(d.context_note).toMatch(
      /^The prompt of \d+ tokens is longer than the model's context of 16: continued from its last 16\./,
    );
  });

  it('is opened by score, decode, lens and export', () => {
    const score = cli(['score', '--run', run, '--text', 'the station!', '--json'], dir);
    expect(score.code, score.stderr).toBe(0);
    const scored = JSON.parse(score.stdout) as { ids: number[]; logprobs: number[] };
    expect(scored.ids.length).toBeGreaterThan(2);
    expect(scored.logprobs.every((x) => Number.isFinite(x) && x <= 0)).toBe(true);
    const decode = cli(['decode', '--run', run, '--prompt', 'the', '--max-tokens', '5', '--json'], dir);
    expect(decode.code, decode.stderr).toBe(0);
    expect(JSON.parse(decode.stdout).tokens.length).toBeGreaterThan(0);
    const lens = cli(['lens', '--run', run, '--prompt', 'the rain', '--json'], dir);
    expect(lens.code, lens.stderr).toBe(0);
    const exp = cli(['export', '--run', run, '--out', path.join(dir, 'gpt2-export')], dir);
    expect(exp.code, exp.stderr).toBe(0);
    // The export folder (<out>/<run>/ with weights, config.json, tokenizer) imports back as the same model.
    const again = path.join(dir, 'gpt2-again');
    const back = cli(['import', '--from', path.join(dir, 'gpt2-export', 'gpt2-run'), '--out', again, '--json'], dir);
    expect(back.code, back.stderr).toBe(0);
    expect(JSON.parse(back.stdout).layout).toBe('attention-lab');
    const scoreAgain = cli(['score', '--run', again, '--text', 'the station!', '--json'], dir);
    expect(scoreAgain.stdout).toBe(score.stdout);
  });

  it('fine-tunes with train --resume on the documents named at import', () => {
    const train = cli(['train', '--resume', run, '--json'], dir, 300_000);
    expect(train.code, train.stderr).toBe(0);
    const runJson = JSON.parse(fs.readFileSync(path.join(run, 'run.json'), 'utf8')) as {
      step: number;
      spec: { training: { lr: number } };
    };
    expect(runJson.step).toBe(2);
    expect(runJson.spec.training.lr).toBe(3e-5);
  });
});

describe('attention-lab import refuses bad input with exit 2 and one line, writing nothing', () => {
  const cases: [string, () => string | string[], RegExp][] = [
    [
      'a cut-off pickle',
      () => {
        const f = path.join(dir, 'ckpt.pt');
        fs.writeFileSync(f, Uint8Array.of(0x80, 2, 0x7d));
        return ['--from', f];
      },
      /ckpt\.pt ends inside its pickle \(byte 3\); the file was cut off/,
    ],
    [
      'a hostile pytorch_model.bin (its pickle calls os.system)',
      () => {
        const f = path.join(dir, 'hostile');
        fs.mkdirSync(f);
        fs.copyFileSync(path.join(TORCH, 'hostile.bin'), path.join(f, 'pytorch_model.bin'));
        return f;
      },
      /^attention-lab: pytorch_model\.bin: its pickle refers to (posix|os)\.system, which is not a tensor.*runs nothing in it/,
    ],
    [
      'a truncated safetensors file',
      () =>
        copyOf('nanogpt-bias', 'trunc', (f) => {
          const m = path.join(f, 'model.safetensors');
          fs.truncateSync(m, fs.statSync(m).size - 100);
        }),
      /model\.safetensors: tensor ".*" ends at data byte \d+ but the data section has only/,
    ],
    [
      'a shape that does not match config.json',
      () =>
        copyOf('nanogpt-bias', 'shape', (f) => {
          fs.writeFileSync(
            path.join(f, 'config.json'),
            JSON.stringify({ n_layer: 1, n_head: 4, n_embd: 32, block_size: 16, vocab_size: 270, bias: true }),
          );
          const bytes = encodeSafetensors([
            { name: 'transformer.wte.weight', dtype: 'F32', shape: [270, 32], data: new Float32Array(270 * 32) },
            {
              name: 'transformer.h.0.attn.c_attn.weight',
              dtype: 'F32',
              shape: [96, 32],
              data: new Float32Array(96 * 32),
            },
            {
              name: 'transformer.h.0.mlp.c_fc.weight',
              dtype: 'F32',
              shape: [128, 32],
              data: new Float32Array(128 * 32),
            },
            { name: 'transformer.wpe.weight', dtype: 'F32', shape: [16, 33], data: new Float32Array(16 * 33) },
          ]);
          fs.writeFileSync(path.join(f, 'model.safetensors'), bytes);
        }),
      /Tensor transformer\.wpe\.weight: expected shape \[16, 32\] .*found \[16, 33\]/,
    ],
    [
      'no heads anywhere',
      () => copyOf('nanogpt-bias', 'noheads', (f) => fs.rmSync(path.join(f, 'config.json'))),
      /number of attention heads cannot be read .*--heads N/,
    ],
    [
      'no tokenizer',
      () => copyOf('nanogpt-bias', 'notok'),
      /No tokenizer beside model\.safetensors .*--tokenizer PATH/,
    ],
    [
      'a NaN weight',
      () => [
        '--json',
        '--from',
        copyOf('hf-gpt2', 'nan', (f) => {
          const m = path.join(f, 'model.safetensors');
          const b = fs.readFileSync(m);
          const n = Number(b.readBigUInt64LE(0));
          const header = JSON.parse(b.subarray(8, 8 + n).toString('utf8')) as Record<
            string,
            { data_offsets: [number, number] }
          >;
          const name = Object.keys(header).find((k) => k.endsWith('h.0.mlp.c_fc.weight')) as string;
          b.writeFloatLE(Number.NaN, 8 + n + (header[name]?.data_offsets[0] ?? 0) + 4 * 5);
          fs.writeFileSync(m, b);
        }),
      ],
      /model\.safetensors: tensor ".*h\.0\.mlp\.c_fc\.weight" holds NaN at index 5 of \d+/,
    ],
    [
      'a merges file that does not match the vocabulary',
      () => copyOf('hf-gpt2', 'badmerges', (f) => fs.writeFileSync(path.join(f, 'merges.txt'), '#version: 0.2\nq z\n')),
      /merges\.txt/,
    ],
  ];
  it.each(cases)('%s', (name, setup, pattern) => {
    const out = `out-${name.replace(/\W+/g, '-')}`;
    const from = setup();
    const r = cli(['import', ...(Array.isArray(from) ? from : ['--from', from]), '--out', path.join(dir, out)], dir);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(pattern);
    nothingWritten(out);
    expect(fs.existsSync(path.join(dir, 'hostile-bin-ran.marker'))).toBe(false); // the CLI's cwd: nothing ran
  });
});

describe("attention-lab import of nanoGPT's ckpt.pt (a torch.save pickle, sized by its model_args)", () => {
  it('writes a run whose weights decode, and says where the state dict and the sizes came from', () => {
    const run = path.join(dir, 'ckpt-run');
    const tokenizer = path.join(GOLDEN, 'hf-gpt2');
    const r = cli(
      ['import', '--from', path.join(TORCH, 'nanogpt-ckpt'), '--out', run, '--tokenizer', tokenizer, '--json'],
      dir,
    );
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const res = JSON.parse(r.stdout) as { layout: string; modelFile: string; notes: string[] };
    expect(res.layout).toBe('nanogpt');
    expect(path.basename(res.modelFile)).toBe('ckpt.pt');
    expect(res.notes.slice(0, 2)).toEqual([
      'read a torch.save zip: the state dict under "model"',
      'no config.json: the checkpoint\'s "model_args" serves as one',
    ]);
    const decoded = cli(['decode', '--run', run, '--prompt', 'the', '--max-tokens', '4'], dir);
    expect(decoded.code, decoded.stderr).toBe(0);
  });
});

describe('attention-lab import: the next command it prints', () => {
  it('runs as printed (decode takes its text through --prompt, not as an argument)', () => {
    const run = path.join(dir, 'ckpt-next');
    const tokenizer = path.join(GOLDEN, 'hf-gpt2');
    const r = cli(['import', '--from', path.join(TORCH, 'nanogpt-ckpt'), '--out', run, '--tokenizer', tokenizer], dir);
    expect(r.code, r.stderr).toBe(0);
    const next = /^Next: attention-lab (decode --run \S+ --prompt) "…", /m.exec(r.stdout);
    expect(next, r.stdout).not.toBeNull();
    const args = [...(next?.[1] ?? '').split(' '), 'the', '--max-tokens', '2'];
    const decoded = cli(args, dir);
    expect(decoded.code, decoded.stderr).toBe(0);
  });
});

describe('attention-lab import and export --format hf (Hugging Face Llama)', () => {
  const llama = path.resolve(__dirname, '../../golden/llama-export/tiny');
  const run = path.join(dir, 'llama-run');
  it('imports the Llama export as layout hf-llama and exports it back to the same weights', () => {
    const imported = cli(['import', '--from', llama, '--out', run, '--json'], dir);
    expect(imported.stderr).toBe('');
    expect(imported.code).toBe(0);
    expect((JSON.parse(imported.stdout) as { layout: string }).layout).toBe('hf-llama');
    const out = path.join(dir, 'llama-out');
    const exported = cli(['export', '--run', run, '--out', out, '--format', 'hf'], dir);
    expect(exported.code).toBe(0);
    const again = fs.readFileSync(path.join(out, 'llama-run', 'model.safetensors'));
    expect(again.equals(fs.readFileSync(path.join(llama, 'model.safetensors')))).toBe(true);
  });

  it('refuses --format hf for a model Llama cannot express, in one line, writing nothing', () => {
    const gpt = path.join(dir, 'gpt2-run'); // the Hugging Face GPT-2 import above
    const out = path.join(dir, 'gpt2-hf');
    const r = cli(['export', '--run', gpt, '--out', out, '--format', 'hf'], dir);
    expect(r.code).not.toBe(0);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(
      /LlamaForCausalLM cannot express this run \(.*normType layernorm.*activation geluTanh.*--format pytorch/,
    );
    expect(fs.existsSync(out) ? fs.readdirSync(out) : []).toEqual([]);
  });
});
