/**
 * Writing an import's checkpoint holds its weights once: a model laid out in its model.safetensors' bytes
 * (layOutModelCheckpoint: every parameter a view into them), filled and saved with `laidOut`, writes the very bytes
 * saveCheckpoint encodes for a model with its own arrays; a parameter that left the bytes is refused. And a tensor
 * given as a typed array is copied into the parameters it is made of (the fused q/k/v split) as an element loop
 * copies it.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createReferenceBackend } from '../../../../src/engine/backends/reference';
import { setTorchTensor, torchTensors } from '../../../../src/engine/models/pytorchNames';
import { Transformer } from '../../../../src/engine/models/transformer';
import { Rng } from '../../../../src/engine/rng';
import { NODE_FS } from '../../../../src/lab/files/fs.node';
import { layOutModelCheckpoint, saveCheckpoint } from '../../../../src/lab/runs/checkpoint';
import { RUN_FILES } from '../../../../src/lab/runs/runFolder';
import { tinyConfig } from '../../engine/models/fixtures';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'attention-lab-release-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

function model(): Transformer {
  const m = new Transformer(tinyConfig('decoder-only'), { maxBatch: 1 }).bind(createReferenceBackend());
  m.initialize(new Rng(5));
  return m;
}

describe('layOutModelCheckpoint', () => {
  it('the weights filled in place are saved as the bytes saveCheckpoint encodes', async () => {
    const a = path.join(dir, 'a');
    const b = path.join(dir, 'b');
    fs.mkdirSync(a);
    fs.mkdirSync(b);
    const own = model();
    await saveCheckpoint(NODE_FS, a, own, null, 0);
    const laid = new Transformer(tinyConfig('decoder-only'), { maxBatch: 1 }); // unbound, as an import plans it
    const bytes = layOutModelCheckpoint(laid, 0);
    expect(bytes).not.toBeNull();
    laid.paramList.forEach((p, i) => {
      expect(p.data.buffer).toBe((bytes as Uint8Array).buffer);
      p.data.set((own.paramList[i] as (typeof own.paramList)[number]).data);
    });
    await saveCheckpoint(NODE_FS, b, laid, null, 0, { laidOut: bytes as Uint8Array });
    const written = fs.readFileSync(path.join(b, RUN_FILES.model));
    expect(written).toEqual(fs.readFileSync(path.join(a, RUN_FILES.model)));
    expect(written.length).toBe((bytes as Uint8Array).length);
    (laid.paramList[0] as (typeof laid.paramList)[number]).data = new Float32Array(1);
    await expect(saveCheckpoint(NODE_FS, b, laid, null, 0, { laidOut: bytes as Uint8Array })).rejects.toThrow(
      /view into it/,
    );
  });
});

describe('setTorchTensor', () => {
  it('copies a typed array into the parts of a fused tensor as it copies a plain array', () => {
    const m = new Transformer(tinyConfig('decoder-only'), { maxBatch: 1 }).bind(createReferenceBackend());
    const fused = torchTensors(m).find((t) => t.parts.length > 1);
    expect(fused?.name).toMatch(/c_attn\.weight$/);
    const t = fused as NonNullable<typeof fused>;
    const n = t.parts.reduce((s, p) => s + p.size, 0);
    const values = Float32Array.from({ length: n }, (_, i) => i * 0.5 - 3);
    setTorchTensor(t, values);
    const typed = t.parts.map((p) => Array.from(p.data));
    for (const p of t.parts) p.data.fill(0);
    setTorchTensor(t, Array.from(values));
    expect(t.parts.map((p) => Array.from(p.data))).toEqual(typed);
    expect(typed.flat()).toEqual(Array.from(values));
  });
});
