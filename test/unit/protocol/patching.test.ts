/**
 * The Patching tab's message fields (protocol/patching.ts, webview.ts): a request's `top` is 0 to
 * MAX_PATCH_TOP, a map's and the output's top tokens are {token, p}, the page's model/cancel names a
 * request id, and the host's model/didProgress reaches the page validated.
 */
import { describe, expect, it } from 'vitest';
import { MAX_PATCH_TOP, patchOutputData, patchRequestData } from '../../../src/protocol/patching';
import { ProtocolError } from '../../../src/protocol/schema';
import { validateFromWebview, validateToWebview } from '../../../src/protocol/webview';

const request = { clean: 'a b', corrupted: 'a c', answer: 'b', wrong: 'c', metric: 'logit-diff', what: ['resid'] };
const output = {
  tokens: { clean: ['<bos>', 'a'], corrupted: ['<bos>', 'c'] },
  answer: 'a',
  wrong: 'c',
  metric: 'logit-diff',
  clean: 2,
  corrupted: -1,
  maps: [{ what: 'heads', rows: ['L1'], cols: ['H1'], values: [2], normalised: [1], top: [[{ token: 'a', p: 0.5 }]] }],
  top: { clean: [{ token: 'a', p: 0.5 }], corrupted: [{ token: 'c', p: 0.75 }] },
};

describe('patching messages', () => {
  it('takes 0 to MAX_PATCH_TOP top tokens a request, and refuses more naming the field', () => {
    for (const top of [0, 5, MAX_PATCH_TOP]) expect(patchRequestData.check({ ...request, top }, 'r').top).toBe(top);
    expect(() => patchRequestData.check({ ...request, top: MAX_PATCH_TOP + 1 }, 'r')).toThrow(
      new ProtocolError(`r.top: expected at most ${MAX_PATCH_TOP} top tokens, got number`),
    );
    expect(() => patchRequestData.check({ ...request, top: 2.5 }, 'r')).toThrow(/r\.top: expected an integer ≥ 0/);
  });

  it('checks each top token of a cell and of the clean and corrupted runs', () => {
    expect(patchOutputData.check(output, 'o')).toBe(output);
    const bad = { ...output, maps: [{ ...output.maps[0], top: [[{ token: 'a', p: '0.5' }]] }] };
    expect(() => patchOutputData.check(bad, 'o')).toThrow(/o\.maps\[0\]\.top\[0\]\[0\]\.p: expected a number/);
    const noToken = { ...output, top: { clean: [{ p: 0.5 }], corrupted: [] } };
    expect(() => patchOutputData.check(noToken, 'o')).toThrow(/o\.top\.clean\[0\]\.token/);
  });

  it("validates the page's model/cancel and the host's model/didProgress", () => {
    expect(validateFromWebview({ type: 'model/cancel', id: 3 })).toEqual({ type: 'model/cancel', id: 3 });
    expect(() => validateFromWebview({ type: 'model/cancel', id: -1 })).toThrow(/message\(model\/cancel\)\.id/);
    expect(() => validateFromWebview({ type: 'model/cancel' })).toThrow(/message\(model\/cancel\)\.id/);
    const p = { type: 'model/didProgress', id: 3, done: 5, total: 40 };
    expect(validateToWebview(p)).toBe(p);
    expect(() => validateToWebview({ ...p, total: 'many' })).toThrow(/message\(model\/didProgress\)\.total/);
  });
});
