import { beforeAll, describe, expect, it } from 'vitest';
import { NODE_FS } from '../../../../src/lab/files/fs.node';
import { createReferenceBackend } from '../../../../src/engine/backends/reference';
import { allHeads } from '../../../../src/engine/models/heads';
import type { Batch } from '../../../../src/engine/models/inputs';
import {
  headImportance,
  lossWithHeadsOff,
  openRunWithValidation,
  predictWithHeadsOff,
} from '../../../../src/lab/inference/ablate';
import type { OpenRun } from '../../../../src/lab/inference/openRun';
import { tinySpec, trainTiny } from '../tinyRuns';

let mt: OpenRun;
let batches: readonly Batch[];

beforeAll(async () => {
  const trained = await trainTiny(tinySpec({ kind: 'task', task: 'reverse' }, 60, 24));
  ({ run: mt, batches } = await openRunWithValidation(NODE_FS, trained.runDir, createReferenceBackend()));
}, 240_000);

describe('head ablation on a trained reverse model', () => {
  it('ablating no head changes nothing, bit for bit', () => {
    for (const b of batches.slice(0, 4)) {
      mt.model.forward(b, { train: false, labelSmoothing: 0 });
      const plain = Float32Array.from(mt.model.logits());
      mt.model.forward(b, { train: false, labelSmoothing: 0, ablate: [] });
      expect(Float32Array.from(mt.model.logits())).toEqual(plain);
    }
    expect(predictWithHeadsOff(mt, { src: 'abc', tgt: 'cba' }, [])).toEqual(
      predictWithHeadsOff(mt, { src: 'abc', tgt: 'cba' }, []),
    );
  });

  it('ablating every head raises the validation loss', () => {
    const base = lossWithHeadsOff(mt.model, batches, []);
    const none = lossWithHeadsOff(mt.model, batches, allHeads(mt.model.config));
    expect(Number.isFinite(base)).toBe(true);
    expect(none).toBeGreaterThan(base);
    expect(lossWithHeadsOff(mt.model, batches, [])).toBe(base); // every head is back on
  });

  it('headImportance gives a finite Δloss per head of each stack', () => {
    const seen: number[] = [];
    const some = batches.slice(0, 2); // the CLI uses them all; two keep the test quick
    const r = headImportance(mt.model, some, (done) => seen.push(done));
    const heads = allHeads(mt.model.config);
    expect(r.heads.map(({ stack, layer, head }) => ({ stack, layer, head }))).toEqual(heads);
    expect(seen.length).toBe(heads.length);
    expect(r.heads.every((h) => Number.isFinite(h.deltaLoss))).toBe(true);
    expect(r.heads.some((h) => h.deltaLoss !== 0)).toBe(true);
    expect(r.baseLoss).toBe(lossWithHeadsOff(mt.model, some, []));
  });

  it('predictWithHeadsOff changes the next-token probabilities and loss', () => {
    const input = { src: 'abcd', tgt: 'dcb' };
    const on = predictWithHeadsOff(mt, input, [], 3);
    const off = predictWithHeadsOff(mt, input, allHeads(mt.model.config), 3);
    expect(on.next.length).toBe(3);
    expect(off.loss).not.toBe(on.loss);
    expect(off.next).not.toEqual(on.next);
  });
});
