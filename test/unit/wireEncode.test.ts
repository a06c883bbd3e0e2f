import { describe, expect, it } from 'vitest';
import { encodeArraysForJson } from '../../src/wireEncode';
import { decodeArrays } from '../../webview/wireCodec';

describe('encodeArraysForJson (host → dashboard posts)', () => {
  it('leaves nothing a second delivery could find detached: the arrays survive their buffers being transferred away', () => {
    const map = Float32Array.from([0.25, 0.5, 0.125, 0.125]);
    const mask = Uint8Array.from([1, 0, 1, 1]);
    const view = new Float32Array(new Float32Array([9, 1, 2, 3]).buffer, 4, 3); // a view with an offset
    const msg = { type: 'dashboard/didLoadRuns', runs: [{ snapshots: [{ maps: [{ data: map }, { data: view }], masks: [{ data: mask }] }] }] };
    const encoded = encodeArraysForJson(msg);
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
