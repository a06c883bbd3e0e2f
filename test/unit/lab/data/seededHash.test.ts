/**
 * Pins the seeded choices a run folder depends on: the pairs split, the document split, the
 * per-step random streams and the BPE sample. A run resumed after an upgrade must see the
 * same validation set and the same batches, so these numbers were computed with the code as
 * it stood before the seeded mixers were gathered into src/lab/data/seededHash.ts, and must never
 * change.
 */

import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { splitDocuments } from '../../../../src/lab/data/corpus';
import { STREAMS, stepRng } from '../../../../src/lab/data/dataset';
import { NODE_FS } from '../../../../src/lab/files/fs.node';
import { loadPairsText } from '../../../../src/lab/data/runData';
import { hashSeed, hashString, seededPermutation, stepSeed, unitInterval } from '../../../../src/lab/data/seededHash';
import type { TrainSpec } from '../../../../src/protocol/data';

let dir = '';
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'al-seeded-'));
});
afterAll(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

/** The pairs text of a .tsv of `n` pairs `s{i}\tt{i}`, split with `seed`. */
async function pairsSplit(n: number, seed: number): Promise<{ train: string[]; val: string[]; text: string }> {
  const file = path.join(dir, `p${n}.tsv`);
  fs.writeFileSync(file, `${Array.from({ length: n }, (_, i) => `s${i}\tt${i}`).join('\n')}\n`);
  const spec = { data: { kind: 'pairs', source: file, target: null }, training: { seed } } as unknown as TrainSpec;
  const t = await loadPairsText(NODE_FS, spec);
  return { train: t.trainPairs.map((p) => p.src), val: t.valPairs.map((p) => p.src), text: t.validation.text };
}

describe('seeded choices of existing run folders (bit-identical across versions)', () => {
  it('splits 20 pairs the same way for seeds 1 and 2', async () => {
    expect(await pairsSplit(20, 1)).toEqual({
      val: ['s13', 's9'],
      train: [
        's19',
        's4',
        's17',
        's7',
        's0',
        's16',
        's18',
        's2',
        's14',
        's15',
        's8',
        's12',
        's3',
        's5',
        's1',
        's11',
        's6',
        's10',
      ],
      text: '2 of 20 pairs held out (seeded)',
    });
    const two = await pairsSplit(20, 2);
    expect(two.val).toEqual(['s11', 's14']);
    expect(two.train.slice(0, 5)).toEqual(['s9', 's16', 's2', 's3', 's19']);
  });

  it('splits 1,234 pairs the same way for seed 3', async () => {
    const r = await pairsSplit(1234, 3);
    expect(r.val).toHaveLength(123);
    expect(r.val.slice(0, 10)).toEqual([
      's812',
      's643',
      's827',
      's1113',
      's1044',
      's1137',
      's805',
      's256',
      's838',
      's645',
    ]);
    expect(r.train.slice(0, 10)).toEqual([
      's342',
      's1201',
      's284',
      's848',
      's290',
      's489',
      's1084',
      's208',
      's350',
      's1003',
    ]);
  });

  it('holds out the same documents for given paths and seeds', () => {
    const docs = [
      ...Array.from({ length: 12 }, (_, i) => ({ path: `notes/doc${i}.md` })),
      { path: 'src/ü-λ.ts' },
      { path: 'README.md' },
    ];
    const val = (seed: number): string[] => splitDocuments(docs, 0.2, seed).val.map((d) => d.path);
    expect(val(1)).toEqual(['notes/doc1.md', 'notes/doc2.md', 'README.md']);
    expect(val(2)).toEqual(['notes/doc3.md', 'notes/doc6.md', 'notes/doc10.md', 'src/ü-λ.ts']);
    expect(val(7)).toEqual(['notes/doc10.md']);
  });

  it('gives each (seed, stream, step) the same random stream', () => {
    const first3 = (seed: number, stream: number, step: number): number[] => {
      const r = stepRng(seed, stream, step);
      return [r.nextU32(), r.nextU32(), r.nextU32()];
    };
    expect(first3(1, STREAMS.data, 0)).toEqual([2273775965, 2247777391, 3174013884]);
    expect(first3(1, STREAMS.data, 1)).toEqual([1763868682, 2718512114, 1282672189]);
    expect(first3(42, STREAMS.dropout, 7)).toEqual([2306749357, 1154963837, 2720345336]);
    expect(first3(0, STREAMS.init, 0)).toEqual([444241275, 4213555765, 1061461350]);
    expect(first3(-5, STREAMS.sample, 123456)).toEqual([1040895638, 3049540457, 3789839798]);
    expect(first3(2 ** 31 + 3, STREAMS.data, 99)).toEqual([3850881821, 3611580458, 3069714518]);
  });

  it('samples the same BPE pieces', () => {
    expect([hashSeed(1, 0, 0), hashSeed(7, 3, 12), hashSeed(-1, 2 ** 31, 5)]).toEqual([
      2317889555, 792061187, 1799727141,
    ]);
  });
});

describe('seededHash', () => {
  it('permutes 0 … n − 1, the same way for the same seed', () => {
    expect(seededPermutation(8, 1)).toEqual([3, 6, 0, 1, 7, 5, 4, 2]);
    expect(seededPermutation(0, 1)).toEqual([]);
    expect(seededPermutation(1, 1)).toEqual([0]);
    const p = seededPermutation(100, 9);
    expect([...p].sort((a, b) => a - b)).toEqual(Array.from({ length: 100 }, (_, i) => i));
    expect(seededPermutation(100, 10)).not.toEqual(p);
  });

  it('hashes strings by their UTF-8 bytes and the seed', () => {
    expect(hashString('', 0)).toBe(2872998923);
    expect(hashString('README.md', 1)).toBe(1693858);
    expect(hashString('README.md', 2)).not.toBe(hashString('README.md', 1));
    expect(hashString('é', 1)).not.toBe(hashString('\u00e9'.normalize('NFD'), 1));
  });

  it('seeds stepRng with stepSeed, and maps hashes into [0, 1)', () => {
    expect(stepSeed(1, STREAMS.data, 0)).toBe(1782464574);
    expect(unitInterval(0)).toBe(0);
    expect(unitInterval(0xffffffff)).toBeLessThan(1);
    expect(unitInterval(-1)).toBe(unitInterval(0xffffffff));
  });
});
