import { describe, expect, it } from 'vitest';
import {
  WireCodecError,
  base64ToBytes,
  bytesToBase64,
  bytesToBase64Btoa,
  decodeArrays,
  encodeArrays,
} from '../../../src/common/wireCodec';

describe('wireCodec', () => {
  it('round-trips Float32Array and Uint8Array anywhere in a message', () => {
    const f = Float32Array.of(0, -1.5, 3.25, Number.NaN, 1e-30);
    const u = Uint8Array.of(0, 1, 255);
    const msg = { type: 'x', maps: [{ data: f, shape: [5] }], masks: { m: u }, n: 3, s: 'a' };
    const json = JSON.parse(JSON.stringify(encodeArrays(msg))) as unknown;
    const back = decodeArrays(json) as typeof msg;
    expect(back.maps[0]?.data).toBeInstanceOf(Float32Array);
    expect(Array.from(back.maps[0]?.data ?? [])).toEqual(Array.from(f));
    expect(back.masks.m).toBeInstanceOf(Uint8Array);
    expect(Array.from(back.masks.m)).toEqual([0, 1, 255]);
    expect(back.n).toBe(3);
    expect(back.s).toBe('a');
  });

  it('encodes a subarray view, not its whole buffer', () => {
    const whole = Float32Array.of(1, 2, 3, 4);
    const enc = encodeArrays(whole.subarray(1, 3)) as { $f32: string };
    expect(base64ToBytes(enc.$f32).length).toBe(8);
    expect(Array.from(decodeArrays(enc) as Float32Array)).toEqual([2, 3]);
  });

  it('base64 matches Node for large inputs (chunked conversion)', () => {
    const bytes = new Uint8Array(100_000).map((_, i) => (i * 7919) & 0xff);
    expect(bytesToBase64(bytes)).toBe(Buffer.from(bytes).toString('base64'));
    expect(bytesToBase64Btoa(bytes)).toBe(Buffer.from(bytes).toString('base64')); // the webview's path
    expect(bytesToBase64(bytes.subarray(3, 10))).toBe(bytesToBase64Btoa(bytes.subarray(3, 10)));
  });

  it('passes typed arrays through and rejects broken tags with the path', () => {
    const f = Float32Array.of(1);
    expect((decodeArrays({ a: f }) as { a: Float32Array }).a).toBe(f);
    expect(() => decodeArrays({ maps: [{ data: { $f32: 'AAA' } }] })).toThrow(
      /message\.maps\[0\]\.data\.\$f32: 2 bytes is not a whole number/,
    );
    expect(() => decodeArrays({ d: { $u8: '*not base64*' } })).toThrow(WireCodecError);
    expect(() => decodeArrays({ d: { $f32: 5 } })).toThrow(/expected a base64 string/);
  });

  it('copies only the containers on the path to a tag', () => {
    const plain = { steps: [{ step: 1 }, { step: 2 }], name: 'r' };
    expect(decodeArrays(plain)).toBe(plain);
    const mixed = { a: plain, b: [{ d: { $u8: 'AQ==' } }] };
    const out = decodeArrays(mixed) as { a: unknown; b: { d: Uint8Array }[] };
    expect(out).not.toBe(mixed);
    expect(out.a).toBe(plain);
    expect(Array.from(out.b[0]?.d ?? [])).toEqual([1]);
    expect((mixed.b[0] as { d: unknown }).d).toEqual({ $u8: 'AQ==' });
  });

  it('leaves objects that merely contain a $f32 key among others alone', () => {
    const v = decodeArrays({ $f32: 'AAAAAA==', other: 1 }) as Record<string, unknown>;
    expect(v.$f32).toBe('AAAAAA==');
  });
});

describe('encodeArrays (host → dashboard posts)', () => {
  it('leaves nothing a second delivery could find detached: the arrays survive their buffers being transferred away', () => {
    const map = Float32Array.from([0.25, 0.5, 0.125, 0.125]);
    const mask = Uint8Array.from([1, 0, 1, 1]);
    const view = new Float32Array(new Float32Array([9, 1, 2, 3]).buffer, 4, 3); // a view with an offset
    const msg = {
      type: 'dashboard/didLoadRuns',
      runs: [{ snapshots: [{ maps: [{ data: map }, { data: view }], masks: [{ data: mask }] }] }],
    };
    const encoded = encodeArrays(msg);
    // What VS Code does to a webview message's ArrayBuffers: moves them to the page.
    structuredClone(null, { transfer: [map.buffer, mask.buffer, view.buffer] });
    expect(map.length).toBe(0); // the originals are now detached...
    const first = decodeArrays(structuredClone(encoded)) as typeof msg;
    const again = decodeArrays(structuredClone(encoded)) as typeof msg; // ...but every delivery of the encoded one is whole
    for (const got of [first, again]) {
      const s = got.runs[0]!.snapshots[0]!;
      expect(Array.from(s.maps[0]!.data)).toEqual([0.25, 0.5, 0.125, 0.125]);
      expect(Array.from(s.maps[1]!.data)).toEqual([1, 2, 3]);
      expect(Array.from(s.masks[0]!.data)).toEqual([1, 0, 1, 1]);
    }
    expect(JSON.stringify(encoded)).not.toContain('"0":'); // no typed array left to serialize index by index
  });
});
