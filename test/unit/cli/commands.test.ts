/**
 * eval, decode, score, tokenize and export on real runs of both kinds.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeSafetensors } from '../../../src/engine/io/safetensors';
import { FAST, FAST_DEC, cli, tempDir } from './cliHarness';
import { readEvaluations } from '../../../src/lab/runs/evaluations';
import { NODE_FS } from '../../../src/lab/files/fs.node';

const tmp = tempDir();
const pairsRun = path.join(tmp.dir, 'pairs-run');
const docsRun = path.join(tmp.dir, 'docs-run');

beforeAll(() => {
  fs.writeFileSync(
    path.join(tmp.dir, 'pairs.tsv'),
    Array.from({ length: 40 }, (_, i) => `w${i % 7} x${i % 5}\tx${i % 5} w${i % 7}`).join('\n'),
  );
  fs.mkdirSync(path.join(tmp.dir, 'notes'));
  fs.writeFileSync(path.join(tmp.dir, 'notes', 'a.md'), 'the cat sat on the mat. '.repeat(20));
  fs.writeFileSync(path.join(tmp.dir, 'notes', 'b.md'), 'the dog sat on the log. '.repeat(20));
  fs.writeFileSync(path.join(tmp.dir, 'notes', 'c.bin'), Buffer.from([0, 1, 2, 3, 0, 255]));
  for (const [args, name] of [
    [['--pairs', 'pairs.tsv', ...FAST], pairsRun],
    [['--data', 'notes', ...FAST_DEC], docsRun],
  ] as const) {
    const r = cli(['train', ...args, '--steps', '6', '--out', name, '--json'], tmp.dir);
    if (r.code !== 0) throw new Error(`setup failed: ${r.stderr}`);
  }
});
afterAll(tmp.cleanup);

describe('attention-lab commands on a trained run', () => {
  it('eval --json gives loss, ppl, exact_match and bleu for pairs; loss and ppl for documents', async () => {
    const p = JSON.parse(cli(['eval', '--run', pairsRun, '--json'], tmp.dir).stdout) as Record<string, number>;
    expect(Object.keys(p).sort()).toEqual([
      'bleu',
      'bleu_signature',
      'bpb',
      'bytes',
      'chrf',
      'chrf_signature',
      'decoding',
      'exact_match',
      'loss',
      'ppl',
      'step',
      'tokens',
    ]);
    expect(p.bpb).toBeCloseTo(((p.loss as number) * (p.tokens as number)) / ((p.bytes as number) * Math.LN2), 12);
    expect(p.ppl).toBeCloseTo(Math.exp(p.loss as number), 6);
    expect(p.exact_match).toBeGreaterThanOrEqual(0);
    expect(p.bleu).toBeGreaterThanOrEqual(0);
    const d = JSON.parse(cli(['eval', '--run', docsRun, '--json'], tmp.dir).stdout) as Record<string, number>;
    expect(Object.keys(d).sort()).toEqual(['bpb', 'bytes', 'loss', 'ppl', 'step', 'tokens']);
    // Each eval is recorded in the run, the validation split named by a hash of the data and seed.
    const recorded = (await readEvaluations(NODE_FS, docsRun)).evaluations.at(-1);
    expect(recorded).toMatchObject({ data: 'validation', files: [], loss: d.loss, bpb: d.bpb, translation: null });
  });

  it('decode: greedy, beam and seeded sampling', () => {
    const g = JSON.parse(
      cli(['decode', '--run', docsRun, '--prompt', 'the ', '--max-tokens', '8', '--json'], tmp.dir).stdout,
    ) as { tokens: number[]; logprobs: number[]; strategy: string };
    expect(g.strategy).toBe('greedy');
    expect(g.tokens.length).toBeGreaterThan(0);
    expect(g.logprobs.every((l) => l <= 0)).toBe(true);
    const b = JSON.parse(
      cli(['decode', '--run', pairsRun, '--src', 'w1 x2', '--strategy', 'beam', '--beam', '3', '--json'], tmp.dir)
        .stdout,
    ) as { beams: { score: number }[] };
    expect(b.beams.length).toBeGreaterThan(0);
    expect(b.beams.length).toBeLessThanOrEqual(3);
    const s1 = cli(
      [
        'decode',
        '--run',
        docsRun,
        '--prompt',
        'the',
        '--strategy',
        'sample',
        '--temperature',
        '1.5',
        '--top-k',
        '5',
        '--seed',
        '3',
        '--json',
      ],
      tmp.dir,
    ).stdout;
    const s2 = cli(
      [
        'decode',
        '--run',
        docsRun,
        '--prompt',
        'the',
        '--strategy',
        'sample',
        '--temperature',
        '1.5',
        '--top-k',
        '5',
        '--seed',
        '3',
        '--json',
      ],
      tmp.dir,
    ).stdout;
    expect(s1).toBe(s2);
    const plain = cli(['decode', '--run', docsRun, '--prompt', 'the', '--max-tokens', '3'], tmp.dir);
    expect(plain.code).toBe(0);
    expect(plain.stdout.startsWith('the')).toBe(true);
  });

  it('decode refuses the wrong input flag for the model kind', () => {
    const r = cli(['decode', '--run', docsRun, '--src', 'x'], tmp.dir);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/decoder-only model: pass --prompt/);
  });

  it('score --text: logprobs[i] is log p(ids[i+1] | ids[0..i]) and agrees with greedy decoding', () => {
    const s = JSON.parse(cli(['score', '--run', docsRun, '--text', 'the cat', '--json'], tmp.dir).stdout) as {
      ids: number[];
      logprobs: number[];
    };
    expect(s.ids[0]).toBe(1); // BOS
    expect(s.logprobs.length).toBe(s.ids.length - 1);
    expect(s.logprobs.every((l) => l < 0)).toBe(true);
    // The first generated token's log-prob after "the cat" equals scoring that token appended.
    const d = JSON.parse(
      cli(['decode', '--run', docsRun, '--prompt', 'the cat', '--max-tokens', '1', '--json'], tmp.dir).stdout,
    ) as { token_text: string[]; logprobs: number[] };
    const next = d.token_text[0] as string;
    if (!next.startsWith('<')) {
      const s2 = JSON.parse(
        cli(['score', '--run', docsRun, '--text', `the cat${next.replace('·', ' ')}`, '--json'], tmp.dir).stdout,
      ) as { logprobs: number[] };
      expect(s2.logprobs[s2.logprobs.length - 1]).toBeCloseTo(d.logprobs[0] as number, 4);
    }
  });

  it('score --src --tgt: target ids carry BOS and EOS', () => {
    const s = JSON.parse(
      cli(['score', '--run', pairsRun, '--src', 'w1 x1', '--tgt', 'x1 w1', '--json'], tmp.dir).stdout,
    ) as { src_ids: number[]; tgt_ids: number[]; logprobs: number[] };
    expect(s.tgt_ids[0]).toBe(1);
    expect(s.tgt_ids[s.tgt_ids.length - 1]).toBe(2);
    expect(s.src_ids[s.src_ids.length - 1]).toBe(2);
    expect(s.logprobs.length).toBe(s.tgt_ids.length - 1);
  });

  it('tokenize shows ids and token strings that decode back', () => {
    const t = JSON.parse(cli(['tokenize', '--run', docsRun, '--text', 'the sat', '--json'], tmp.dir).stdout) as {
      ids: number[];
      tokens: string[];
    };
    expect(t.ids.length).toBe(7);
    expect(t.tokens.join('')).toBe('the·sat');
    const unseen = JSON.parse(cli(['tokenize', '--run', docsRun, '--text', 'é', '--json'], tmp.dir).stdout) as {
      tokens: string[];
      bytes: string[];
    };
    expect(unseen.tokens).toEqual(['é…', '…é']); // byte fallback (never UNK), read as the character it splits
    expect(unseen.bytes).toEqual(['C3', 'A9']);
  });

  it('export --format pytorch writes a folder named after the run: nanoGPT names with q, k, v stacked into c_attn, config, tokenizer, README', () => {
    const parent = path.join(tmp.dir, 'export-gpt');
    const r = cli(['export', '--run', docsRun, '--format', 'pytorch', '--out', parent, '--json'], tmp.dir);
    expect(r.code, r.stderr).toBe(0);
    const out = path.join(parent, path.basename(docsRun));
    const res = JSON.parse(r.stdout) as {
      dir: string;
      files: string[];
      example: { tokens: number; logprobSum: number };
    };
    expect(res.dir).toBe(out);
    expect(fs.readdirSync(parent)).toEqual([path.basename(docsRun)]); // no temporary folder left
    const written = fs.readdirSync(out).sort();
    expect(written).toEqual(res.files.map((f) => path.basename(f)).sort());
    expect(written).toEqual(
      expect.arrayContaining(['README.md', 'config.json', 'model.safetensors', 'tokenizer.json']),
    );
    const cfg = JSON.parse(fs.readFileSync(path.join(out, 'config.json'), 'utf8')) as Record<string, unknown> & {
      attention_lab: {
        config: Record<string, unknown>;
        example: { text: string; tokens: number; logprob_sum: number };
      };
    };
    expect(Object.keys(cfg).sort()).toEqual([
      'activation_function',
      'attention_lab',
      'bias',
      'block_size',
      'dropout',
      'n_embd',
      'n_head',
      'n_layer',
      'vocab_size',
    ]);
    expect(cfg['activation_function']).toBe('gelu');
    expect(cfg.attention_lab.config['dModel']).toBe(cfg['n_embd']);
    // The example's number is what `score` prints for the same text.
    const scored = JSON.parse(
      cli(
        ['score', '--run', docsRun, '--backend', 'reference', '--text', cfg.attention_lab.example.text, '--json'],
        tmp.dir,
      ).stdout,
    ) as { logprobs: number[] };
    expect(cfg.attention_lab.example.tokens).toBe(scored.logprobs.length);
    expect(cfg.attention_lab.example.logprob_sum).toBeCloseTo(
      scored.logprobs.reduce((a, b) => a + b, 0),
      9,
    );
    expect(fs.readFileSync(path.join(out, 'README.md'), 'utf8')).toContain(
      cfg.attention_lab.example.logprob_sum.toFixed(4).replace(/0+$/, ''),
    );
    const again = cli(['export', '--run', docsRun, '--out', parent], tmp.dir);
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/already exists and is not empty; pass --force to replace it/);
    expect(cli(['export', '--run', docsRun, '--out', parent, '--force', '--text', 'the hand'], tmp.dir).code).toBe(0);
    expect(
      (JSON.parse(fs.readFileSync(path.join(out, 'config.json'), 'utf8')) as typeof cfg).attention_lab.example.text,
    ).toBe('the hand');
    expect(cli(['export', '--run', docsRun, '--out', path.dirname(docsRun), '--force'], tmp.dir).stderr).toMatch(
      /is a run folder; choose another --out folder/,
    );
    const f = decodeSafetensors(new Uint8Array(fs.readFileSync(path.join(out, 'model.safetensors'))));
    const names = [...f.tensors.keys()];
    expect(names).toContain('transformer.h.0.attn.c_attn.weight');
    expect(names).toContain('lm_head.weight');
    expect(names.some((n) => n.includes('c_attn_q'))).toBe(false);
    expect(f.tensors.get('transformer.h.0.attn.c_attn.weight')?.shape).toEqual([48, 16]);
    // q, k, v stacked in order: rows 16..32 are the run's own k matrix.
    const run = decodeSafetensors(new Uint8Array(fs.readFileSync(path.join(docsRun, 'model.safetensors'))));
    const k = run.tensors.get('transformer.h.0.attn.c_attn_k.weight')?.data as Float32Array;
    const stacked = f.tensors.get('transformer.h.0.attn.c_attn.weight')?.data as Float32Array;
    expect(Array.from(stacked.subarray(16 * 16, 32 * 16))).toEqual(Array.from(k));
    const e = cli(['export', '--run', pairsRun, '--out', path.join(tmp.dir, 'export-ed')], tmp.dir);
    expect(e.code).toBe(0);
    const ed = decodeSafetensors(
      new Uint8Array(fs.readFileSync(path.join(tmp.dir, 'export-ed', path.basename(pairsRun), 'model.safetensors'))),
    );
    expect([...ed.tensors.keys()]).toEqual(
      expect.arrayContaining([
        'encoder_embedding.weight',
        'decoder_layers.0.cross_attn.W_q.weight',
        'fc.weight',
        'positional_encoding.pe',
      ]),
    );
  });

  it('export refuses to write into a run folder', () => {
    const r = cli(['export', '--run', docsRun, '--out', pairsRun], tmp.dir);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/is a run folder; export into another folder/);
  });
});
