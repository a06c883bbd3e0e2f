import * as path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { decodeSafetensors, encodeSafetensors } from '../../../../src/engine/io/safetensors';
import { listNames, writeFile } from '../../../../src/lab/files/labFs';
import { NODE_FS } from '../../../../src/lab/files/fs.node';
import { headsOfRun as heads } from '../../../../src/lab/inference/heads';
import type { OpenRun } from '../../../../src/lab/inference/openRun';
import { readSnapshots as read, snapshotSteps } from '../../../../src/lab/runs/snapshotFiles';
import { validateSnapshot } from '../../../../src/protocol/model';
import { FILE_SYSTEMS } from '../files/fileSystems';
import { tinyDocuments, tinySpec, trainTiny } from '../tinyRuns';

describe.each(FILE_SYSTEMS)('head scores of training snapshots on $name', ({ make }) => {
  const t = make();
  const { fs } = t;
  let lm: OpenRun;
  let mt: OpenRun;
  beforeAll(async () => {
    const every = (s: ReturnType<typeof tinySpec>): ReturnType<typeof tinySpec> => ({
      ...s,
      training: { ...s.training, snapshotEvery: 2 },
    });
    lm = await trainTiny(every(tinySpec(await tinyDocuments(t), 4)), t);
    mt = await trainTiny(every(tinySpec({ kind: 'task', task: 'reverse' }, 2, 24)), t);
  });
  const headsOfRun = (runDir: string, step: number | null): ReturnType<typeof heads> => heads(fs, runDir, step);
  const readSnapshots = (runDir: string): ReturnType<typeof read> => read(fs, runDir);
  const firstSnapshot = async (runDir: string): Promise<string> => {
    const dir = fs.join(runDir, 'snapshots');
    return fs.join(dir, (await listNames(fs, dir)).sort()[0] as string);
  };

  it('decoder-only: every head of every layer, scores in [0, 1] and entropy ≥ 0', async () => {
    expect(await snapshotSteps(fs, lm.runDir)).toEqual([0, 2, 4]);
    const r = await headsOfRun(lm.runDir, null);
    expect(r.step).toBe(4);
    expect(r.heads.map((h) => `${h.stack}.${h.layer}.${h.head}`)).toEqual(
      [0, 1].flatMap((l) => [0, 1, 2, 3].map((h) => `decoder.self.${l}.${h}`)),
    );
    for (const h of r.heads) {
      for (const [k, v] of Object.entries(h.scores)) {
        if (k === 'entropy') expect(v).toBeGreaterThanOrEqual(0);
        else {
          expect(v).toBeGreaterThanOrEqual(0);
          expect(v).toBeLessThanOrEqual(1);
        }
      }
    }
    // At step 0 the heads are near uniform: induction is no more than a few times 1/T.
    const start = await headsOfRun(lm.runDir, 0);
    for (const h of start.heads) if (h.stack !== 'decoder.cross') expect(h.scores.induction).toBeLessThan(0.3);
  });

  it('encoder-decoder: encoder and decoder self-attention and cross-attention alignment', async () => {
    const r = await headsOfRun(mt.runDir, 2);
    const stacks = new Set(r.heads.map((h) => h.stack));
    expect([...stacks].sort()).toEqual(['decoder.cross', 'decoder.self', 'encoder.self']);
    const cross = r.heads.find((h) => h.stack === 'decoder.cross');
    expect(Object.keys(cross?.scores ?? {})).toEqual(['diagonal', 'antiDiagonal', 'entropy']);
  });

  it('are stored in the snapshot file (version 2); a version 1 file without them still loads', async () => {
    const file = await firstSnapshot(lm.runDir);
    const f = decodeSafetensors(await fs.readFile(file), 'x');
    expect(f.metadata.version).toBe('2');
    expect(JSON.parse(f.metadata.headScores ?? '[]')).toHaveLength(8);
    const { headScores: _dropped, version: _v, ...old } = f.metadata;
    const tensors = [...f.tensors].map(([name, t]) => ({
      name,
      dtype: t.data instanceof Float32Array ? ('F32' as const) : ('U8' as const),
      shape: t.shape,
      data: t.data,
    }));
    await writeFile(fs, file, encodeSafetensors(tensors, { ...old, version: '1' }));
    const snaps = await readSnapshots(lm.runDir);
    expect(snaps).toHaveLength(3);
    expect(snaps[0]?.headScores).toBeUndefined();
    expect(snaps[1]?.headScores).toHaveLength(8);
    await expect(headsOfRun(lm.runDir, 0)).rejects.toThrow(/no head scores/);
  });

  it('names each map in the file by its stack and layer (map.<stack>.<layer>), and reads files of every version back', async () => {
    const f = decodeSafetensors(await fs.readFile(await firstSnapshot(mt.runDir)), 'x');
    const names = [...f.tensors.keys()].filter((n) => n.startsWith('map.'));
    expect(names).toEqual((await readSnapshots(mt.runDir))[0]?.maps.map((m) => `map.${m.stack}.${m.layer}`));
    expect(new Set(names.map((n) => n.split('.').slice(1, 3).join('.')))).toEqual(
      new Set(['encoder.self', 'decoder.self', 'decoder.cross']),
    );
    // A run folder written by an earlier version (format 1, no head scores), committed with the browser tests.
    const old = await read(NODE_FS, path.resolve(__dirname, '../../../browser/fixtures/run-reverse'));
    expect(old).toHaveLength(3);
    expect(old[0]?.maps.map((m) => `${m.stack}.${m.layer}`)).toEqual([
      'encoder.self.0',
      'encoder.self.1',
      'decoder.self.0',
      'decoder.cross.0',
      'decoder.self.1',
      'decoder.cross.1',
    ]);
  });

  it('says which steps exist when asked for another', async () => {
    await expect(headsOfRun(mt.runDir, 7)).rejects.toThrow(/no snapshot at step 7; pick --step from 0, 2/);
  });
});

describe('the AttentionSnapshot protocol', () => {
  it('validates head scores and rejects a cross head with self scores', () => {
    const base = { step: 1, srcTokens: [], tgtTokens: [], maps: [], masks: [] };
    const self = { previousToken: 1, firstToken: 0, diagonal: 0, induction: 0, entropy: 0 };
    expect(
      validateSnapshot({ ...base, headScores: [{ stack: 'decoder.self', layer: 0, head: 1, scores: self }] })
        .headScores,
    ).toHaveLength(1);
    expect(() =>
      validateSnapshot({ ...base, headScores: [{ stack: 'decoder.cross', layer: 0, head: 0, scores: self }] }),
    ).toThrow(/antiDiagonal/);
    expect(() =>
      validateSnapshot({ ...base, headScores: [{ stack: 'encoder.cross', layer: 0, head: 0, scores: self }] }),
    ).toThrow(/stack/);
  });
});
