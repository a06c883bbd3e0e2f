import { describe, it, expect } from 'vitest';
import { EngineError } from '../../../../src/engine/errors';
import { decodeSafetensors, encodeSafetensors, expectTensor } from '../../../../src/engine/io/safetensors';
import type { DecodedTensor, TensorToWrite } from '../../../../src/engine/io/safetensors';
import { Rng } from '../../../../src/engine/rng';
import { engineErrorOf as thrown } from '../../../engineErrorOf';

const hex = (s: string): number[] => (s.match(/../g) ?? []).map((b) => parseInt(b, 16));
const ascii = (s: string): number[] => Array.from(s, (c) => c.charCodeAt(0));

describe('encodeSafetensors follows the format byte for byte', () => {
  it('writes length, JSON header padded with spaces to 8, then little-endian data', () => {
    const bytes = encodeSafetensors(
      [
        { name: 'a', dtype: 'F32', shape: [2], data: Float32Array.from([1, -2]) },
        { name: 'b', dtype: 'U8', shape: [3], data: Uint8Array.from([1, 2, 255]) },
      ],
      { format: 'pt' },
    );
    const json =
      '{"__metadata__":{"format":"pt"},"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"U8","shape":[3],"data_offsets":[8,11]}}';
    const expected = [
      ...hex('9000000000000000'), // 144 = 138 bytes of JSON + 6 spaces
      ...ascii(json),
      ...ascii('      '),
      ...hex('0000803f000000c0'), // 1.0f, -2.0f
      ...hex('0102ff'),
    ];
    expect(Array.from(bytes)).toEqual(expected);
  });

  it("writes I64 as two's complement and F64 as IEEE doubles, little-endian", () => {
    const bytes = encodeSafetensors([
      { name: 'i', dtype: 'I64', shape: [2], data: [-5, 2 ** 40 + 3] },
      { name: 'd', dtype: 'F64', shape: [1], data: [0.1] },
      { name: 'n', dtype: 'I32', shape: [1], data: [-2] },
    ]);
    expect(Array.from(bytes.subarray(bytes.length - 28))).toEqual([
      ...hex('fbffffffffffffff'),
      ...hex('0300000000010000'),
      ...hex('9a9999999999b93f'),
      ...hex('feffffff'),
    ]);
    expect((bytes.length - 28) % 8).toBe(0); // data starts 8-aligned
  });

  it('is deterministic, keeps the given order even for numeric names, and writes an empty file', () => {
    const t: TensorToWrite[] = [
      { name: 'z', dtype: 'F32', shape: [1], data: [1] },
      { name: '10', dtype: 'F32', shape: [1], data: [2] },
      { name: '2', dtype: 'F32', shape: [1], data: [3] },
    ];
    const a = encodeSafetensors(t);
    expect(encodeSafetensors(t)).toEqual(a);
    expect([...decodeSafetensors(a).tensors.keys()].sort()).toEqual(['10', '2', 'z']);
    const text = new TextDecoder().decode(a.subarray(8, 8 + new DataView(a.buffer).getUint32(0, true)));
    expect(text.indexOf('"z"')).toBeLessThan(text.indexOf('"10"'));
    expect(text.indexOf('"10"')).toBeLessThan(text.indexOf('"2"'));
    expect(Array.from(encodeSafetensors([]))).toEqual([...hex('0800000000000000'), ...ascii('{}      ')]);
  });
});

describe('round trip', () => {
  it('keeps every dtype, shape and value', () => {
    const rng = new Rng(1);
    const big = Float32Array.from({ length: 3000 }, () => rng.normal());
    const tensors: TensorToWrite[] = [
      { name: 'f32', dtype: 'F32', shape: [3000], data: big },
      { name: 'f32.special', dtype: 'F32', shape: [2, 3], data: [0.1, Number.NaN, Infinity, -Infinity, -0, 3.4e38] },
      { name: 'f64', dtype: 'F64', shape: [2, 2], data: [0.1, -1e-300, Math.PI, Number.MAX_VALUE] },
      { name: 'i32', dtype: 'I32', shape: [4], data: Int32Array.from([-(2 ** 31), -1, 0, 2 ** 31 - 1]) },
      { name: 'i64', dtype: 'I64', shape: [2, 2], data: [-(2 ** 31), -7, 0, 2 ** 31 - 1] },
      { name: 'u8', dtype: 'U8', shape: [1, 1, 3], data: [0, 128, 255] },
      { name: 'scalar', dtype: 'F64', shape: [], data: [42] },
      { name: 'empty', dtype: 'I32', shape: [0, 5], data: [] },
      { name: 'ünï "quoted" ✓', dtype: 'U8', shape: [1], data: [9] },
    ];
    const file = decodeSafetensors(encodeSafetensors(tensors, { format: 'pt', config: '{"d":8}', '': 'é' }));
    expect(file.metadata).toEqual({ format: 'pt', config: '{"d":8}', '': 'é' });
    expect([...file.tensors.keys()].sort()).toEqual(tensors.map((t) => t.name).sort());
    const kinds = {
      F32: Float32Array,
      F64: Float64Array,
      I32: Int32Array,
      I64: Int32Array,
      U8: Uint8Array,
      F16: Float32Array,
      BF16: Float32Array,
    };
    for (const t of tensors) {
      const d = file.tensors.get(t.name) as DecodedTensor;
      expect(d.dtype).toBe(t.dtype);
      expect(d.shape).toEqual(t.shape);
      expect(d.data).toBeInstanceOf(kinds[t.dtype]);
      const want = t.dtype === 'F32' ? Array.from(t.data, Math.fround) : Array.from(t.data);
      expect(Array.from(d.data)).toEqual(want);
    }
  });

  it('gives each tensor its own aligned copy', () => {
    const bytes = encodeSafetensors([
      { name: 'u', dtype: 'U8', shape: [3], data: [1, 2, 3] },
      { name: 'f', dtype: 'F32', shape: [2], data: [5, 6] }, // at an odd offset in the file
    ]);
    const f = decodeSafetensors(bytes).tensors.get('f') as DecodedTensor;
    expect(f.data.byteOffset).toBe(0);
    bytes.fill(0);
    expect(Array.from(f.data)).toEqual([5, 6]);
  });

  it('reads from a Uint8Array that is a view into a larger buffer', () => {
    const inner = encodeSafetensors([{ name: 'x', dtype: 'F64', shape: [1], data: [1.25] }]);
    const outer = new Uint8Array(inner.length + 3);
    outer.set(inner, 3);
    const x = decodeSafetensors(outer.subarray(3)).tensors.get('x') as DecodedTensor;
    expect(Array.from(x.data)).toEqual([1.25]);
  });
});

describe('I64 narrowing', () => {
  it('errors clearly when a value does not fit in int32', () => {
    for (const v of [2 ** 31, -(2 ** 31) - 1, 2 ** 40]) {
      const bytes = encodeSafetensors([{ name: 'ids', dtype: 'I64', shape: [2], data: [1, v] }]);
      const err = thrown(() => decodeSafetensors(bytes, 'optimizer.safetensors'));
      expect(err.code).toBe('checkpoint/invalid');
      expect(err.message).toContain(`optimizer.safetensors: tensor "ids" (I64) holds ${v} at index 1`);
    }
  });
});

describe('encodeSafetensors rejects bad input', () => {
  const one = (patch: Partial<TensorToWrite>): TensorToWrite[] => [
    { name: 'a', dtype: 'F32', shape: [2], data: [1, 2], ...patch },
  ];
  const cases: [string, TensorToWrite[], RegExp][] = [
    ['duplicate names', [...one({}), ...one({})], /appears twice/],
    ['the reserved name', one({ name: '__metadata__' }), /reserved/],
    ['a length that is not the shape product', one({ shape: [3] }), /3 elements\) but 2 values/],
    ['a negative dim', one({ shape: [-2] }), /whole numbers/],
    ['a fractional I32', one({ dtype: 'I32', data: [1, 1.5] }), /1.5 at index 1/],
    ['an I32 overflow', one({ dtype: 'I32', data: [2 ** 31, 0] }), /I32 cannot store/],
    ['a U8 out of range', one({ dtype: 'U8', data: [256, 0] }), /U8 cannot store/],
    ['an unsafe I64', one({ dtype: 'I64', data: [2 ** 60, 0] }), /I64 cannot store/],
    ['an unknown dtype', one({ dtype: 'F8' as TensorToWrite['dtype'] }), /dtype F8/],
  ];
  it.each(cases)('%s', (_name, tensors, pattern) => {
    const err = thrown(() => encodeSafetensors(tensors));
    expect(err.code).toBe('input/invalid');
    expect(err.message).toMatch(pattern);
  });

  it('a non-string metadata value', () => {
    const meta = { step: 5 } as unknown as Record<string, string>;
    expect(thrown(() => encodeSafetensors([], meta)).message).toMatch(/metadata value "step"/);
  });
});

describe('expectTensor', () => {
  const file = decodeSafetensors(
    encodeSafetensors([{ name: 'wte', dtype: 'F32', shape: [4, 2], data: [1, 2, 3, 4, 5, 6, 7, 8] }]),
    'model.safetensors',
  );

  it('returns the typed data when name, dtype and shape match', () => {
    const w: Float32Array = expectTensor(file, 'wte', 'F32', [4, 2]);
    expect(Array.from(w)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
  });

  it.each([
    [
      'missing name',
      'x',
      'F32',
      [4, 2],
      /model.safetensors has no tensor "x"; it was written by a different model config/,
    ],
    ['wrong dtype', 'wte', 'F64', [4, 2], /"wte" is F32 but F64 was expected/],
    ['wrong shape', 'wte', 'F32', [2, 4], /"wte" has shape \[4, 2\] but \[2, 4\] was expected/],
    ['wrong rank', 'wte', 'F32', [8], /has shape \[4, 2\] but \[8\]/],
  ] as const)('rejects a %s', (_name, name, dtype, shape, pattern) => {
    const err = thrown(() => expectTensor(file, name, dtype, shape));
    expect(err.code).toBe('checkpoint/invalid');
    expect(err.message).toMatch(pattern);
  });
});

describe('fuzz: decoding mutated files', () => {
  const base = encodeSafetensors(
    [
      { name: 'w', dtype: 'F32', shape: [2, 3], data: [1, 2, 3, 4, 5, 6] },
      { name: 'b', dtype: 'F64', shape: [3], data: [0.5, -0.5, 2] },
      { name: 'ids', dtype: 'I32', shape: [4], data: [-1, 0, 7, 2 ** 31 - 1] },
      { name: 'pos', dtype: 'I64', shape: [2], data: [-5, 123456] },
      { name: 'mask', dtype: 'U8', shape: [5], data: [0, 1, 1, 0, 255] },
      { name: 's', dtype: 'F32', shape: [], data: [3.5] },
      { name: 'e', dtype: 'F32', shape: [0, 4], data: [] },
    ],
    { format: 'pt', config: '{"dModel":8}' },
  );
  const headerLength = new DataView(base.buffer).getUint32(0, true);
  const header = JSON.parse(new TextDecoder().decode(base.subarray(8, 8 + headerLength))) as Record<
    string,
    Record<string, unknown>
  >;
  const data = base.subarray(8 + headerLength);
  const SIZE = { F32: 4, F64: 8, I32: 4, I64: 8, U8: 1, F16: 2, BF16: 2 } as const;
  const KIND = {
    F32: Float32Array,
    F64: Float64Array,
    I32: Int32Array,
    I64: Int32Array,
    U8: Uint8Array,
    F16: Float32Array,
    BF16: Float32Array,
  };

  /** Re-serializes an edited header with a correct length field and padding. */
  function rebuild(h: unknown, d: Uint8Array = data): Uint8Array {
    const json = new TextEncoder().encode(JSON.stringify(h));
    const out = new Uint8Array(8 + json.length + d.length);
    new DataView(out.buffer).setUint32(0, json.length, true);
    out.set(json, 8);
    out.set(d, 8 + json.length);
    return out;
  }

  const pick = <T>(rng: Rng, xs: readonly T[]): T => xs[rng.int(xs.length)] as T;
  const WEIRD: readonly unknown[] = [
    -1,
    1.5,
    0,
    1,
    2,
    3,
    8,
    2 ** 53,
    1e300,
    '4',
    null,
    [],
    {},
    true,
    'F32',
    'F16',
    'XYZ',
  ];

  function editJson(rng: Rng): Uint8Array {
    const h = structuredClone(header) as Record<string, unknown>;
    const names = Object.keys(h).filter((k) => k !== '__metadata__');
    const t = h[pick(rng, names)] as Record<string, unknown>;
    const offsets = t['data_offsets'] as number[];
    switch (rng.int(12)) {
      case 0:
        offsets.reverse();
        break;
      case 1: {
        // swap offsets with another tensor
        const u = h[pick(rng, names)] as Record<string, unknown>;
        [t['data_offsets'], u['data_offsets']] = [u['data_offsets'], t['data_offsets']];
        break;
      }
      case 2:
        t['dtype'] = pick(rng, ['F32', 'F64', 'I32', 'I64', 'U8', 'F16', 'BF16', 'XYZ', 5, null]);
        break;
      case 3:
        (t['shape'] as unknown[]).push(pick(rng, WEIRD));
        break;
      case 4:
        (t['shape'] as unknown[]).pop();
        break;
      case 5:
        (t['shape'] as unknown[])[0] = pick(rng, WEIRD);
        break;
      case 6:
        delete t[pick(rng, ['dtype', 'shape', 'data_offsets'])];
        break;
      case 7:
        offsets[rng.int(2)] = (offsets[rng.int(2)] as number) + pick(rng, [-8, -4, -1, 1, 4, 8]);
        break;
      case 8:
        t['data_offsets'] = pick(rng, [[0], [0, 4, 8], ['0', '4'], null, [0.5, 4]]);
        break;
      case 9:
        h['__metadata__'] = pick(rng, [{ a: 1 }, { a: null }, ['x'], null, 'x', { a: 'ok' }]);
        break;
      case 10:
        h[pick(rng, ['extra', '__proto__', 'w'])] = pick(rng, [
          null,
          7,
          { dtype: 'U8', shape: [4], data_offsets: [0, 4] },
        ]);
        break;
      default:
        return rebuild(
          h,
          rng.next() < 0.5 ? data.subarray(0, rng.int(data.length)) : Uint8Array.from([...data, 0, 0, 0, 0]),
        );
    }
    return rebuild(h);
  }

  function mutate(rng: Rng): Uint8Array {
    const kind = rng.int(6);
    if (kind === 4) return editJson(rng);
    const b = Uint8Array.from(base);
    if (kind === 0 || kind === 1) {
      // bit flips anywhere, or only in the header
      const span = kind === 0 ? b.length : 8 + headerLength;
      for (let k = 1 + rng.int(3); k > 0; k--) {
        const i = rng.int(span);
        b[i] = (b[i] as number) ^ (1 << rng.int(8));
      }
      return b;
    }
    if (kind === 2) return b.subarray(0, rng.int(b.length));
    if (kind === 3) {
      // header-length tampering
      const view = new DataView(b.buffer);
      const lo = pick(rng, [
        0,
        1,
        2,
        headerLength - 1,
        headerLength + 1,
        headerLength + 8,
        b.length - 8,
        b.length,
        2 ** 32 - 1,
        rng.nextU32(),
      ]);
      view.setUint32(0, lo, true);
      view.setUint32(4, rng.next() < 0.8 ? 0 : rng.nextU32(), true);
      return b;
    }
    // Splice the header text: insert or delete one random character, keep the length right.
    const text = new TextDecoder().decode(b.subarray(8, 8 + headerLength)).trimEnd();
    const at = rng.int(text.length);
    const edited =
      rng.next() < 0.5
        ? text.slice(0, at) + text.slice(at + 1)
        : text.slice(0, at) + pick(rng, ['{', '}', '"', ',', ':', '0', '-', '\u00ff', '\ud800']) + text.slice(at);
    const json = new TextEncoder().encode(edited);
    const out = new Uint8Array(8 + json.length + data.length);
    new DataView(out.buffer).setUint32(0, json.length, true);
    out.set(json, 8);
    out.set(data, 8 + json.length);
    return out;
  }

  /** Decodes; a success must be self-consistent, a failure must be checkpoint/invalid. */
  function check(bytes: Uint8Array): 'ok' | 'rejected' {
    let file;
    try {
      file = decodeSafetensors(bytes, 'fuzz.safetensors');
    } catch (e) {
      expect(EngineError.is(e, 'checkpoint/invalid'), String(e)).toBe(true);
      expect((e as Error).message.startsWith('fuzz.safetensors: ')).toBe(true);
      return 'rejected';
    }
    let total = 0;
    for (const t of file.tensors.values()) {
      expect(t.data).toBeInstanceOf(KIND[t.dtype]);
      expect(t.data.length).toBe(t.shape.reduce((a, d) => a * d, 1));
      total += t.data.length * SIZE[t.dtype];
    }
    expect(total).toBeLessThanOrEqual(bytes.length);
    for (const v of Object.values(file.metadata)) expect(typeof v).toBe('string');
    return 'ok';
  }

  it('never throws anything but checkpoint/invalid over 3000 seeded mutations', () => {
    const rng = new Rng(2024);
    const counts = { ok: 0, rejected: 0 };
    for (let i = 0; i < 3000; i++) counts[check(mutate(rng))]++;
    expect(counts.ok).toBeGreaterThan(100); // data-section flips decode fine
    expect(counts.rejected).toBeGreaterThan(1500);
  });

  it('rejects every truncation, at every position', () => {
    for (let n = 0; n < base.length; n++) expect(check(base.subarray(0, n))).toBe('rejected');
    expect(check(base)).toBe('ok');
  });
});
