/**
 * PyTorch's own checkpoint files (test/golden/torch-pickle, written by
 * scripts/pytorch/make_torch_pickle_golden.py with torch 1.13 and 2.x): real torch.save
 * state dicts, zip and legacy, load to PyTorch's exact values; hostile pickles are refused
 * naming their global, with nothing run; cut-off and damaged files give one line.
 */

import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { EngineError } from '../../../../src/engine/errors';
import { decodeSafetensors, encodeSafetensors } from '../../../../src/engine/io/safetensors';
import { NODE_FS } from '../../../../src/lab/files/fs.node';
import { TorchCheckpointReader } from '../../../../src/lab/interop/torchCheckpoint';
import { openWeightFile } from '../../../../src/lab/interop/weightFile';

const GOLDEN = path.resolve(__dirname, '../../../golden/torch-pickle');
const MARKER = 'hostile-bin-ran.marker';
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'al-torch-pickle-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

async function refusal(file: string): Promise<EngineError> {
  try {
    await TorchCheckpointReader.open(NODE_FS, file);
  } catch (e) {
    if (EngineError.is(e)) return e;
    throw e;
  }
  throw new Error(`${file} opened`);
}

/** A copy of golden `name` in the temporary folder, with `edit` applied to its bytes. */
function damagedCopy(name: string, as: string, edit: (b: Buffer) => Buffer): string {
  const f = path.join(tmp, as);
  fs.writeFileSync(f, edit(fs.readFileSync(path.join(GOLDEN, name))));
  return f;
}

const FILES = [
  ['state-torch1.pt', 'state-torch1', 'zip'],
  ['state-torch1-legacy.pt', 'state-torch1', 'legacy'],
  ['state-torch2.pt', 'state-torch2', 'zip'],
  ['state-torch2-legacy.pt', 'state-torch2', 'legacy'],
] as const;

describe('a real torch.save state dict loads to its exact values', () => {
  it.each(FILES)('%s', async (file, expectedName, format) => {
    const r = await TorchCheckpointReader.open(NODE_FS, path.join(GOLDEN, file), { chunkBytes: 8 });
    expect(r.format).toBe(format);
    expect(r.stateDictKey).toBe('model');
    expect(r.config).toEqual({
      key: 'model_args',
      values: { n_layer: 2, n_head: 4, bias: true, dropout: 0, name: 'x' },
    });
    expect(r.tensors.map((t) => `${t.name} [${t.shape.join(',')}]`)).toEqual([
      'f32 [3,5]',
      'f16 [2,7]',
      'bf16 [6]',
      'transposed [6,4]',
      'slice [2,3]',
      'expanded [2,3]',
      'param [2,2]',
      'scalar []',
      'buffer [5]',
    ]);
    const expected = decodeSafetensors(
      new Uint8Array(fs.readFileSync(path.join(GOLDEN, `${expectedName}.expected.safetensors`))),
    );
    expect(expected.tensors.size).toBe(8);
    const seen: number[] = [];
    for (const [name, t] of expected.tensors) {
      const got = await r.readF32(name, { onBytes: (done) => seen.push(done) });
      expect(Array.from(got), name).toEqual(Array.from(t.data)); // exact: widening and gathering lose nothing
    }
    expect(seen.at(-1)).toBe(r.dataBytes - r.bytesOf('buffer'));
    await expect(r.readF32('buffer')).rejects.toThrow(/tensor "buffer" is I64, but a weight must be F32/);
    await expect(r.readF32('nope')).rejects.toThrow(/has no tensor "nope"/);
  });

  it('the views really are views: the transposed and sliced tensors share one storage, read in place', async () => {
    const r = await TorchCheckpointReader.open(NODE_FS, path.join(GOLDEN, 'state-torch2.pt'));
    const t = await r.readF32('transposed'); // base.t(): [6, 4]
    const s = await r.readF32('slice'); // base[1:3, 2:5]
    // base[i][j] = t[j][i]; slice[a][b] = base[1 + a][2 + b]
    for (let a = 0; a < 2; a++) for (let b = 0; b < 3; b++) expect(s[a * 3 + b]).toBe(t[(2 + b) * 4 + (1 + a)]);
    expect(r.sameTensor('transposed', 'transposed')).toBe(true);
    expect(r.sameTensor('transposed', 'slice')).toBe(false); // one storage, different views
    const e = await r.readF32('expanded'); // stride 0 over its rows
    expect(Array.from(e.subarray(0, 3))).toEqual(Array.from(e.subarray(3, 6)));
  });
});

describe('hostile pickles are refused naming the global, and nothing runs', () => {
  it('hostile.bin (a torch.save zip whose state dict holds os.system(...) after a real tensor)', async () => {
    const cwd = process.cwd();
    process.chdir(tmp); // os.system would run `touch hostile-bin-ran.marker` here
    try {
      const e = await refusal(path.join(GOLDEN, 'hostile.bin'));
      expect(e.code).toBe('checkpoint/invalid');
      expect(e.message).toMatch(
        /^hostile\.bin: its pickle refers to (posix|os)\.system, which is not a tensor, storage or ordered dict; .* runs nothing in it/,
      );
      expect(e.message).not.toMatch(/\n/);
      const viaImport = await openWeightFile(NODE_FS, path.join(GOLDEN, 'hostile.bin')).catch((x: unknown) => x);
      expect(String(viaImport)).toMatch(/(posix|os)\.system/);
    } finally {
      process.chdir(cwd);
    }
    expect(fs.existsSync(path.join(tmp, MARKER))).toBe(false);
    expect(fs.existsSync(path.join(cwd, MARKER))).toBe(false);
  });

  it('hostile-legacy.pt (a bare pickle calling builtins.eval)', async () => {
    const e = await refusal(path.join(GOLDEN, 'hostile-legacy.pt'));
    expect(e.message).toMatch(
      /^hostile-legacy\.pt: its pickle refers to (__builtin__|builtins)\.eval, which is not a tensor/,
    );
    expect(fs.existsSync(path.join(tmp, MARKER))).toBe(false);
  });
});

describe('cut-off and damaged files give one line', () => {
  const cases: [string, string, (b: Buffer) => Buffer, RegExp][] = [
    [
      'zip cut in half',
      'state-torch2.pt',
      (b) => b.subarray(0, b.length >> 1),
      /is not a readable zip \(no end-of-central-directory record\); it was cut off or damaged/,
    ],
    ['zip without its last byte', 'state-torch1.pt', (b) => b.subarray(0, b.length - 1), /is not a readable zip/],
    [
      'a central directory entry overwritten',
      'state-torch1.pt',
      (b) => {
        const c = Buffer.from(b);
        const at = c.lastIndexOf(Buffer.from([0x50, 0x4b, 0x01, 0x02]));
        c.fill(0, at, at + 4);
        return c;
      },
      /is not a readable zip \(central directory entry \d+\)/,
    ],
    [
      'data.pkl overwritten with an unknown opcode',
      'state-torch1.pt',
      (b) => {
        const c = Buffer.from(b);
        const at = c.indexOf(Buffer.from('X\x05\x00\x00\x00model', 'latin1'));
        c[at] = 0xff;
        return c;
      },
      /its pickle uses opcode 0xff at byte \d+, which torch\.save does not write/,
    ],
    [
      'legacy cut inside a storage',
      'state-torch1-legacy.pt',
      (b) => b.subarray(0, b.length - 10),
      /storage \w+ runs past the end of the file/,
    ],
    [
      'legacy cut inside its pickle',
      'state-torch1-legacy.pt',
      (b) => b.subarray(0, 300),
      /ends inside its pickle \(byte 300\); the file was cut off/,
    ],
    [
      'neither zip nor pickle',
      'state-torch1.pt',
      (b) => Buffer.concat([Buffer.from('hello'), b]),
      /was not written by torch\.save/,
    ],
  ];
  it.each(cases)('%s', async (_label, name, edit, re) => {
    const f = damagedCopy(name, `${_label.replace(/\W+/g, '-')}.pt`, edit);
    const e = await refusal(f);
    expect(e.code).toBe('checkpoint/invalid');
    expect(e.message).toMatch(re);
    expect(e.message).not.toMatch(/\n/);
  });

  it('a zip whose storage entry is shorter than its tensors need', async () => {
    // Rename data/0 to data/9 in both headers: the state dict's first storage is then missing.
    const f = damagedCopy('state-torch1.pt', 'missing-storage.pt', (b) => {
      const c = Buffer.from(b.toString('latin1').replaceAll('/data/0', '/data/9'), 'latin1');
      return c;
    });
    expect((await refusal(f)).message).toMatch(/the zip has no state-torch1\/data\/0, a storage its tensors use/);
  });
});

describe('telling the formats apart', () => {
  it('a safetensors file whose 896-byte header length starts like pickle protocol 3 opens as safetensors', async () => {
    // Pad the metadata until the header is 896 = 0x380 bytes: the file starts 0x80 0x03, as a pickle does.
    let bytes: Uint8Array = new Uint8Array();
    for (let pad = 0; pad < 1000; pad++) {
      bytes = encodeSafetensors([{ name: 'w', dtype: 'F32', shape: [2], data: Float32Array.of(1.5, -2) }], {
        pad: 'x'.repeat(pad),
      });
      if (bytes[0] === 0x80 && bytes[1] === 0x03) break;
    }
    expect(Array.from(bytes.subarray(0, 2))).toEqual([0x80, 0x03]);
    const f = path.join(tmp, 'pickle-lookalike.safetensors');
    fs.writeFileSync(f, bytes);
    const w = await openWeightFile(NODE_FS, f);
    expect(w.tensors.map((t) => t.name)).toEqual(['w']);
    expect(Array.from(await w.readF32('w'))).toEqual([1.5, -2]);
  });
});
