import { describe, expect, it } from 'vitest';
import { stopsRun } from '../../../../src/lab/base/errorCodes';
import { resumeActionFor } from '../../../../src/extension/training/stopActions';

describe("a stopped run's notification", () => {
  it('offers Resume after a full disk and Resume on WebAssembly after a lost GPU', () => {
    expect(resumeActionFor('disk/full')).toEqual({ title: 'Resume', backend: null });
    expect(resumeActionFor('gpu/lost')).toEqual({ title: 'Resume on WebAssembly', backend: 'wasm' });
  });

  it('offers a resume exactly for the errors that stop a run rather than fail it', () => {
    for (const code of ['disk/full', 'gpu/lost', 'train/nonFinite', 'config/invalid', 'internal', 'cancelled'])
      expect([code, resumeActionFor(code) !== null]).toEqual([code, stopsRun(code)]);
  });
});
