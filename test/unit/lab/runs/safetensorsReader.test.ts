import { beforeAll, describe, it, expect } from 'vitest';
import { EngineError } from '../../../../src/engine/errors';
import { encodeSafetensors } from '../../../../src/engine/io/safetensors';
import { CancelledError } from '../../../../src/lab/base/cancelled';
import { SafetensorsReader, pickleMessage } from '../../../../src/lab/runs/safetensorsReader';
import { FILE_SYSTEMS } from '../files/fileSystems';

const values = Float32Array.from({ length: 1000 }, (_, i) => Math.sin(i) * 3);

async function errorOf(p: Promise<unknown>): Promise<EngineError> {
  try {
    await p;
  } catch (e) {
    if (EngineError.is(e)) return e;
    throw e;
  }
  throw new Error('expected an EngineError');
}

describe.each(FILE_SYSTEMS)('SafetensorsReader on $name', ({ make }) => {
  const t = make();
  let dir = '';
  let file = '';
  const write = async (name: string, bytes: Uint8Array): Promise<string> =>
    (await t.put(dir, { [name]: bytes }))[0] as string;
  const open = (f: string, opts: { chunkBytes?: number } = {}): Promise<SafetensorsReader> =>
    SafetensorsReader.open(t.fs, f, opts);
  const bytes = encodeSafetensors(
    [
      { name: 'a', dtype: 'F32', shape: [10, 100], data: values },
      { name: 'h', dtype: 'F16', shape: [1000], data: values },
      { name: 'b', dtype: 'BF16', shape: [1000], data: values },
      { name: 'd', dtype: 'F64', shape: [1000], data: values },
      { name: 'i', dtype: 'I32', shape: [2], data: [1, 2] },
    ],
    { format: 'pt' },
  );
  beforeAll(async () => {
    dir = await t.dir();
    file = await write('m.safetensors', bytes);
  });

  it('reads each tensor in pieces, widened to float32, with progress up to the data size', async () => {
    const r = await open(file, { chunkBytes: 100 });
    const seen: number[] = [];
    const hooks = {
      onBytes: (done: number, total: number): void => {
        seen.push(done);
        expect(total).toBe(r.dataBytes);
      },
    };
    expect(r.names).toEqual(['a', 'h', 'b', 'd', 'i']);
    expect(r.header.metadata.format).toBe('pt');
    expect(await r.readF32('a', hooks)).toEqual(values);
    const h = await r.readF32('h', hooks);
    for (let i = 0; i < 1000; i++)
      expect(Math.abs((h[i] as number) - (values[i] as number))).toBeLessThanOrEqual(2 ** -11 * 4);
    const b = await r.readF32('b', hooks);
    for (let i = 0; i < 1000; i++)
      expect(Math.abs((b[i] as number) - (values[i] as number))).toBeLessThanOrEqual(2 ** -8 * 4);
    expect(await r.readF32('d', hooks)).toEqual(values);
    expect(seen.length).toBeGreaterThan(100); // 4000 bytes in 100-byte pieces, then the rest
    expect(seen[seen.length - 1]).toBe(4000 + 2000 + 2000 + 8000);
    await expect(r.readF32('i')).rejects.toThrow(/tensor "i" is I32, but a weight must be F32/);
  });

  it('refuses a NaN or infinite weight as it reads, naming the tensor and the index', async () => {
    const bad = Float32Array.from(values);
    bad[617] = Number.NaN;
    const inf = Float32Array.from(values);
    inf[3] = Number.NEGATIVE_INFINITY;
    const big = Float64Array.from(values);
    big[999] = 1e300; // finite in F64, infinite as float32
    const f = await write(
      'bad.safetensors',
      encodeSafetensors(
        [
          { name: 'ok', dtype: 'F32', shape: [1000], data: values },
          { name: 'nan', dtype: 'F32', shape: [1000], data: bad },
          { name: 'inf', dtype: 'F16', shape: [1000], data: inf },
          { name: 'big', dtype: 'F64', shape: [1000], data: big },
        ],
        {},
      ),
    );
    const r = await open(f, { chunkBytes: 64 });
    expect(await r.readF32('ok')).toEqual(values);
    const e = await errorOf(r.readF32('nan'));
    expect(e.code).toBe('checkpoint/invalid');
    expect(e.message).toBe(
      'bad.safetensors: tensor "nan" holds NaN at index 617 of 1000; the weights are damaged or come from a run whose loss diverged — import a checkpoint saved before that.',
    );
    await expect(r.readF32('inf')).rejects.toThrow(/tensor "inf" holds -Infinity at index 3 of 1000/);
    await expect(r.readF32('big')).rejects.toThrow(/tensor "big" holds Infinity at index 999 of 1000/);
  });

  it('stops when cancelled, between pieces', async () => {
    const r = await open(file, { chunkBytes: 400 });
    let n = 0;
    await expect(r.readF32('a', { isCancelled: () => ++n > 3 })).rejects.toBeInstanceOf(CancelledError);
  });

  it('refuses pickles by name and by content, with the three lines of Python', async () => {
    for (const ext of ['.pt', '.bin', '.pth', '.ckpt']) {
      const e = await errorOf(open(await write(`ckpt${ext}`, Uint8Array.of(0x80, 2, 0, 0))));
      expect(e.code).toBe('checkpoint/invalid');
      expect(e.message).not.toContain('\n');
      expect(e.message).toContain(`torch.load("ckpt${ext}"`);
      expect(e.message).toMatch(/import torch, safetensors\.torch as st ⏎ .* ⏎ st\.save_file/);
    }
    expect(
      (await errorOf(open(await write('zip.safetensors', Uint8Array.of(0x50, 0x4b, 3, 4, 0, 0, 0, 0, 0))))).message,
    ).toBe(pickleMessage('zip.safetensors'));
  });

  it('opens a safetensors file whose header length starts like a pickle (0x80 0x03: 896 bytes)', async () => {
    const names = (n: number): string => 'w'.repeat(n);
    // Grow one tensor name until the padded header is 896 bytes long.
    let f: Uint8Array = new Uint8Array(0);
    for (let n = 1; n < 1000; n++) {
      f = encodeSafetensors([{ name: names(n), dtype: 'F32', shape: [2], data: [1, 2] }]);
      if (f[0] === 0x80 && f[1] === 3) break;
    }
    expect([f[0], f[1]]).toEqual([0x80, 3]);
    const r = await open(await write('header896.safetensors', f));
    expect([...(await r.readF32(r.names[0] as string))]).toEqual([1, 2]);
  });

  it('refuses truncated files, headers past the end, overlaps and unknown dtypes, one line each', async () => {
    const good = bytes;
    const header = (json: string, data: number): Uint8Array => {
      const h = new TextEncoder().encode(json);
      const out = new Uint8Array(8 + h.length + data);
      new DataView(out.buffer).setUint32(0, h.length, true);
      out.set(h, 8);
      return out;
    };
    const cases: [string, Uint8Array, RegExp][] = [
      ['truncated data', good.subarray(0, good.length - 10), /ends at data byte \d+ but the data section has only/],
      ['a short file', good.subarray(0, 5), /5 bytes long/],
      ['a header past the end', good.subarray(0, 20), /truncated: its header says \d+ bytes but only 12 follow/],
      [
        'overlapping offsets',
        header(
          '{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}}',
          12,
        ),
        /"a" \[0, 8\) and "b" \[4, 12\) overlap/,
      ],
      ['an unknown dtype', header('{"a":{"dtype":"Q4","shape":[2],"data_offsets":[0,4]}}', 4), /unknown dtype "Q4"/],
    ];
    for (const [name, data, pattern] of cases) {
      const e = await errorOf(open(await write(`${name.replace(/ /g, '-')}.safetensors`, data)));
      expect(e.code, name).toBe('checkpoint/invalid');
      expect(e.message, name).toMatch(pattern);
      expect(e.message, name).not.toContain('\n');
    }
  });
});
