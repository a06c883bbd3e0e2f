/**
 * The PyTorch probe's refusals that need no Python: an empty interpreter path (a cleared
 * setting) is one line saying what to set, not Node's TypeError from execFile.
 */

import { describe, expect, it } from 'vitest';
import { probeTorch } from '../../../../src/lab/pytorch/probe';

describe('probeTorch', () => {
  it('refuses an empty Python path in one line naming the flag and the setting', async () => {
    for (const python of ['', '  ']) {
      const e = await probeTorch(python, '.').then(() => null, (err: unknown) => err as Error & { code?: string });
      expect(e?.code).toBe('pytorch/launch');
      expect(e?.message).toBe('No Python given (the path is empty); name the Python 3 that has PyTorch (--python PATH; in VS Code, attentionLab.pytorch.python).');
    }
  });
});
