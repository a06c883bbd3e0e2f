import { describe, expect, it } from 'vitest';
import type { EngineErrorCode } from '../../../../src/engine/errors';
import type { ErrorCode } from '../../../../src/lab/base/errorCodes';
import { EngineError } from '../../../../src/engine/errors';
import { errorKind, isUserFixable, stopsRun } from '../../../../src/lab/base/errorCodes';

describe('error codes', () => {
  it('classifies every code once: what the user can fix, a cancellation, or a failure', () => {
    const kinds: Record<ErrorCode, ReturnType<typeof errorKind>> = {
      'config/invalid': 'fixable',
      'input/invalid': 'fixable',
      'tokenizer/invalid': 'fixable',
      'checkpoint/invalid': 'fixable',
      'shape/mismatch': 'failed',
      'train/nonFinite': 'failed',
      cancelled: 'cancelled',
      internal: 'failed',
      protocol: 'failed',
      'pytorch/launch': 'fixable',
      'disk/full': 'fixable',
      'file/unusable': 'fixable',
      'gpu/lost': 'fixable',
    };
    for (const [code, kind] of Object.entries(kinds)) expect([code, errorKind(code)]).toEqual([code, kind]);
  });

  it('says which errors stop a run at its last checkpoint (it resumes) instead of failing it', () => {
    expect(['disk/full', 'gpu/lost'].map(stopsRun)).toEqual([true, true]);
    expect(['train/nonFinite', 'config/invalid', 'internal', 'cancelled'].map(stopsRun)).toEqual([
      false,
      false,
      false,
      false,
    ]);
  });

  it('says a cancellation and an internal error are not for the user to fix', () => {
    expect(isUserFixable('cancelled')).toBe(false);
    expect(isUserFixable('internal')).toBe(false);
    expect(isUserFixable('input/invalid')).toBe(true);
    expect(isUserFixable('checkpoint/invalid')).toBe(true);
  });

  it('treats a code it does not know (a newer worker, a request timeout) as a failure', () => {
    expect(errorKind('timeout')).toBe('failed');
    expect(errorKind('toString')).toBe('failed'); // not an inherited property
    expect(errorKind('')).toBe('failed');
  });

  it('keeps the code of an EngineError as data', () => {
    const code: EngineErrorCode = 'config/invalid';
    const e = new EngineError(code, 'dModel must be divisible by nHeads; got 30 and 4. Change dModel.');
    expect(EngineError.is(e, code)).toBe(true);
    expect(isUserFixable(e.toData().code)).toBe(true);
  });
});
