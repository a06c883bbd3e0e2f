import * as os from 'node:os';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { requireLab } from '../../../../src/extension/host/requireLab.node';

describe('requireLab', () => {
  it('loads dist/extensionLab.js once, on first use', () => {
    const l = requireLab(path.resolve(__dirname, '../../../../dist'));
    expect(l.isLoaded).toBe(false);
    const lab = l.get();
    expect(typeof lab.listRuns).toBe('function');
    // Desktop's bundle adds the PyTorch engine's host side (the web's bundle has none).
    expect(typeof lab.probeTorch).toBe('function');
    expect(typeof lab.pendingSnapshotWeights).toBe('function');
    expect(l.get()).toBe(lab);
    expect(l.isLoaded).toBe(true);
  });

  it('says to reinstall when the bundle is missing', () => {
    expect(() => requireLab(path.join(os.tmpdir(), 'nowhere')).get()).toThrow(
      /could not load .*extensionLab\.js.*reinstall the extension/,
    );
  });
});
