import { describe, it, expect } from 'vitest';
import { EngineError } from '../../../../src/engine/errors';
import { parseSafetensorsHeader } from '../../../../src/engine/io/safetensorsHeader';

/** Builds a file by hand: u64 LE length (or `lengthField`), header bytes, data. */
function fileFrom(
  header: string | Uint8Array,
  data: ArrayLike<number> = [],
  lengthField?: [number, number],
): Uint8Array {
  const h = typeof header === 'string' ? new TextEncoder().encode(header) : header;
  const out = new Uint8Array(8 + h.length + data.length);
  const view = new DataView(out.buffer);
  view.setUint32(0, lengthField ? lengthField[0] : h.length, true);
  view.setUint32(4, lengthField ? lengthField[1] : 0, true);
  out.set(h, 8);
  out.set(Array.from(data), 8 + h.length);
  return out;
}

const f32 = (name: string, shape: number[], begin: number, end: number): string =>
  `${JSON.stringify(name)}:{"dtype":"F32","shape":${JSON.stringify(shape)},"data_offsets":[${begin},${end}]}`;

function errorOf(bytes: Uint8Array): EngineError {
  try {
    parseSafetensorsHeader(bytes, 'model.safetensors');
  } catch (e) {
    if (EngineError.is(e)) return e;
    throw e;
  }
  throw new Error('expected parseSafetensorsHeader to throw');
}

describe('parseSafetensorsHeader accepts', () => {
  it('tensors tiling the data section, padded header, metadata', () => {
    const bytes = fileFrom(
      `{"__metadata__":{"format":"pt"},${f32('b', [2], 8, 16)},${f32('a', [1, 2], 0, 8)}}   `,
      new Uint8Array(16),
    );
    const h = parseSafetensorsHeader(bytes, 'x');
    expect(h.metadata).toEqual({ format: 'pt' });
    expect(h.entries.map((e) => [e.name, e.begin, e.end])).toEqual([
      ['b', 8, 16],
      ['a', 0, 8],
    ]);
    expect(h.dataStart).toBe(8 + bytes.length - 8 - 16);
  });

  it('an empty file with no tensors, scalars and zero-size tensors', () => {
    expect(parseSafetensorsHeader(fileFrom('{}'), 'x').entries).toEqual([]);
    const h = parseSafetensorsHeader(
      fileFrom(`{${f32('s', [], 0, 4)},${f32('z', [3, 0], 4, 4)}}`, new Uint8Array(4)),
      'x',
    );
    expect(h.entries.map((e) => e.shape)).toEqual([[], [3, 0]]);
  });

  it('a metadata key named __proto__ as plain data', () => {
    const h = parseSafetensorsHeader(fileFrom('{"__metadata__":{"__proto__":"x"}}'), 'x');
    expect(Object.keys(h.metadata)).toEqual(['__proto__']);
    expect(Object.getPrototypeOf(h.metadata)).toBe(Object.prototype);
  });
});

describe('parseSafetensorsHeader rejects with checkpoint/invalid', () => {
  const big = new TextEncoder().encode(`{${f32('a', [2], 0, 8)}}`);
  const cases: [string, Uint8Array, RegExp][] = [
    ['a file shorter than 8 bytes', new Uint8Array(5), /5 bytes long.*8-byte header length/],
    ['an absurd header length', fileFrom('{}', [], [0, 1]), /4294967296 bytes, more than/],
    ['a header length over the limit', fileFrom('{}', [], [100_000_001, 0]), /limit/],
    ['a zero header length', fileFrom('', []), /too small/],
    [
      'a header longer than the file',
      fileFrom(new Uint8Array(800).fill(0x20), [], [1200, 0]),
      /truncated: its header says 1200 bytes but only 800 follow/,
    ],
    ['invalid UTF-8', fileFrom(Uint8Array.from([0x7b, 0xff, 0x7d])), /UTF-8/],
    ['a byte-order mark', fileFrom(Uint8Array.from([0xef, 0xbb, 0xbf, 0x7b, 0x7d])), /start with "\{"/],
    ['a non-object header', fileFrom('[1,2]'), /start with "\{"/],
    ['leading spaces', fileFrom(' {}'), /start with/],
    ['invalid JSON', fileFrom('{"a":'), /not valid JSON/],
    ['an entry that is not an object', fileFrom('{"a":5}'), /tensor "a" must be an object/],
    ['a null entry', fileFrom('{"a":null}'), /tensor "a" must be an object/],
    ['missing data_offsets', fileFrom('{"a":{"dtype":"F32","shape":[1]}}'), /missing data_offsets/],
    ['missing dtype and shape', fileFrom('{"a":{"data_offsets":[0,0]}}'), /missing dtype, shape/],
    [
      'a non-string dtype',
      fileFrom('{"a":{"dtype":4,"shape":[1],"data_offsets":[0,4]}}', new Uint8Array(4)),
      /dtype that is not a string/,
    ],
    [
      'an unknown dtype',
      fileFrom('{"a":{"dtype":"Q7","shape":[1],"data_offsets":[0,4]}}', new Uint8Array(4)),
      /unknown dtype "Q7"/,
    ],
    [
      'an unsupported dtype',
      fileFrom('{"a":{"dtype":"I8","shape":[4],"data_offsets":[0,4]}}', new Uint8Array(4)),
      /I8, which Attention Lab does not read.*convert/,
    ],
    ['a negative dim', fileFrom(`{${f32('a', [-2], 0, 8)}}`, new Uint8Array(8)), /shape \[-2\]/],
    ['a fractional dim', fileFrom(`{${f32('a', [1.5], 0, 8)}}`, new Uint8Array(8)), /shape \[1.5\]/],
    [
      'a string dim',
      fileFrom('{"a":{"dtype":"F32","shape":["2"],"data_offsets":[0,8]}}', new Uint8Array(8)),
      /shape \["2"\]/,
    ],
    [
      'a shape that is not a list',
      fileFrom('{"a":{"dtype":"F32","shape":2,"data_offsets":[0,8]}}', new Uint8Array(8)),
      /shape 2/,
    ],
    ['fractional offsets', fileFrom(`{${f32('a', [2], 0, 7.5)}}`, new Uint8Array(8)), /data_offsets \[0,7.5\]/],
    [
      'three offsets',
      fileFrom('{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,4,8]}}', new Uint8Array(8)),
      /two whole numbers/,
    ],
    [
      'end before begin',
      fileFrom(`{${f32('a', [2], 8, 0)}}`, new Uint8Array(8)),
      /ends \(byte 0\) before it begins \(byte 8\)/,
    ],
    [
      'an end past the data',
      fileFrom(`{${f32('a', [2], 0, 8)}}`, new Uint8Array(4)),
      /ends at data byte 8 but the data section has only 4 bytes/,
    ],
    [
      'a size that does not match the shape',
      fileFrom(`{${f32('a', [3], 0, 8)}}`, new Uint8Array(8)),
      /needs 12 bytes.*hold 8/,
    ],
    [
      'overlapping tensors',
      fileFrom(`{${f32('a', [2], 0, 8)},${f32('b', [2], 4, 12)}}`, new Uint8Array(12)),
      /"a" \[0, 8\) and "b" \[4, 12\) overlap/,
    ],
    [
      'a tensor with the same range twice',
      fileFrom(`{${f32('a', [2], 0, 8)},${f32('b', [2], 0, 8)}}`, new Uint8Array(8)),
      /overlap/,
    ],
    [
      'a hole between tensors',
      fileFrom(`{${f32('a', [1], 0, 4)},${f32('b', [1], 8, 12)}}`, new Uint8Array(12)),
      /data bytes \[4, 8\) belong to no tensor/,
    ],
    ['a hole at the start', fileFrom(`{${f32('a', [1], 4, 8)}}`, new Uint8Array(8)), /\[0, 4\) belong to no tensor/],
    [
      'bytes after the last tensor',
      fileFrom(`{${f32('a', [1], 0, 4)}}`, new Uint8Array(6)),
      /\[4, 6\) after the last tensor/,
    ],
    ['data but no tensors', fileFrom('{}', new Uint8Array(3)), /\[0, 3\) after the last tensor/],
    ['a non-string metadata value', fileFrom('{"__metadata__":{"step":5}}'), /metadata value "step" must be a string/],
    ['metadata that is not an object', fileFrom('{"__metadata__":["a"]}'), /"__metadata__" must be an object/],
    ['a valid header over a truncated data section', fileFrom(big, new Uint8Array(7)), /ends at data byte 8/],
  ];
  it.each(cases)('%s', (_name, bytes, pattern) => {
    const err = errorOf(bytes);
    expect(err.code).toBe('checkpoint/invalid');
    expect(err.message.startsWith('model.safetensors: ')).toBe(true);
    expect(err.message).toMatch(pattern);
  });

  it('tells the user what to do', () => {
    expect(errorOf(fileFrom(`{${f32('a', [1], 0, 4)}}`, new Uint8Array(6))).message).toMatch(
      /restore it from a backup or retrain/,
    );
    expect(errorOf(fileFrom(new Uint8Array(800).fill(0x20), [], [1200, 0])).message).toMatch(/cut off/);
  });
});
