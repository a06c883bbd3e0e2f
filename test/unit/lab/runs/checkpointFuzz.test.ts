/**
 * Fuzz test of the checkpoint reader: thousands of mutated model.safetensors files (bit
 * flips, truncations, header edits, splices) — each load either succeeds with a model of
 * the right shapes or throws an EngineError; never any other exception.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { NODE_FS } from '../../../../src/lab/files/fs.node';
import { createReferenceBackend } from '../../../../src/engine/backends/reference';
import { EngineError } from '../../../../src/engine/errors';
import { Transformer } from '../../../../src/engine/models/transformer';
import { Rng } from '../../../../src/engine/rng';
import { loadModelCheckpoint, saveCheckpoint } from '../../../../src/lab/runs/checkpoint';
import { tinyConfig } from '../../engine/models/fixtures';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'attention-lab-fuzz-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

function mutate(good: Uint8Array, rng: Rng): Uint8Array {
  const b = Uint8Array.from(good);
  const headerLen = new DataView(good.buffer, good.byteOffset).getUint32(0, true);
  switch (rng.int(6)) {
    case 0: // bit flips anywhere
      for (let i = 0, n = 1 + rng.int(4); i < n; i++) b[rng.int(b.length)] ^= 1 << rng.int(8);
      return b;
    case 1: // bit flips in the header
      for (let i = 0, n = 1 + rng.int(3); i < n; i++) b[8 + rng.int(headerLen)] ^= 1 << rng.int(8);
      return b;
    case 2: // truncation
      return b.subarray(0, rng.int(b.length));
    case 3: // header length tampering
      new DataView(b.buffer).setUint32(0, rng.int(2) ? rng.nextU32() : headerLen + rng.int(16) - 8, true);
      return b;
    case 4: {
      // digit edits in the header (offsets, shapes)
      const text = new TextDecoder('latin1').decode(b.subarray(8, 8 + headerLen));
      const digits = [...text.matchAll(/\d/g)].map((m) => m.index as number);
      for (let i = 0, n = 1 + rng.int(3); i < n && digits.length; i++)
        b[8 + (digits[rng.int(digits.length)] as number)] = 48 + rng.int(10);
      return b;
    }
    default: {
      // splice a random chunk of the file elsewhere
      const from = rng.int(b.length);
      const to = rng.int(b.length);
      const len = rng.int(64);
      b.copyWithin(to, from, from + len);
      return b;
    }
  }
}

describe('checkpoint reader fuzz', () => {
  it('gives only clean EngineErrors on 3000 mutated checkpoints', async () => {
    const model = new Transformer(tinyConfig('decoder-only'), { maxBatch: 1 }).bind(createReferenceBackend());
    model.initialize(new Rng(1));
    const good = new Uint8Array(fs.readFileSync(await saveCheckpoint(NODE_FS, dir, model, null, 5)));
    const target = new Transformer(tinyConfig('decoder-only'), { maxBatch: 1 }).bind(createReferenceBackend());
    const rng = new Rng(2024);
    let rejected = 0;
    let loaded = 0;
    const file = path.join(dir, 'model.safetensors');
    for (let i = 0; i < 3000; i++) {
      fs.writeFileSync(file, mutate(good, rng));
      try {
        await loadModelCheckpoint(NODE_FS, dir, target);
        loaded++;
      } catch (e) {
        if (!EngineError.is(e)) throw new Error(`mutation ${i} raised a non-EngineError: ${String(e)}`);
        expect(e.message.length).toBeGreaterThan(20);
        rejected++;
      }
    }
    expect(rejected).toBeGreaterThan(1500);
    expect(loaded + rejected).toBe(3000);
  });
});
