/**
 * Hostile `attentionLab.model.overrides` on the extension host's path: the Configuration
 * view sizes the model from the settings on the host thread (readSettings → draftSize →
 * hostLab's estimateSpec). dModel 1e15 with 7 heads looped 1e15 times there before (the
 * head-count suggestion), freezing the host; now the sizes are refused in O(1), so these
 * tests end at once — a loop over dModel would never end within the test's timeout. In
 * Restricted Mode a workspace's overrides are not read at all.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { draftFromSettings, draftSize } from '../../../../src/extension/configure/configureDraft';
import { RESTRICTED_SETTINGS, readSettings, trustedReader } from '../../../../src/extension/base/settings';
import type { SettingLevels } from '../../../../src/extension/base/settings';
import { estimateSpec } from '../../../../src/lab/editor/extensionLab';

const HOSTILE = { dModel: 1e15, nHeads: 7 };
const KEY = 'attentionLab.model.overrides';

/** A configuration whose workspace sets the hostile overrides (user level: `user`). */
function levels(user?: unknown): {
  get: (key: string) => unknown;
  inspect: (key: string) => SettingLevels | undefined;
} {
  const workspace: Record<string, unknown> = { [KEY]: HOSTILE };
  const global: Record<string, unknown> = user === undefined ? {} : { [KEY]: user };
  return {
    get: (key) => workspace[key] ?? global[key],
    inspect: (key) => ({ defaultValue: key === KEY ? {} : undefined, globalValue: global[key] }),
  };
}

describe('hostile model overrides on the host path', () => {
  it("sizes the trusted workspace's dModel 1e15 × 7 heads as a one-line problem, without looping over dModel", () => {
    const { get, inspect } = levels();
    const { settings } = readSettings(trustedReader(true, get, inspect));
    expect(settings.model.overrides).toEqual(HOSTILE);
    let estimates = 0;
    const sized = draftSize(settings, draftFromSettings(settings), (spec, chars) => {
      estimates++;
      return estimateSpec(spec, chars);
    });
    expect(estimates).toBe(1);
    expect(sized).toEqual({
      ok: false,
      error: expect.stringMatching(
        /^dModel 1000000000000000 is larger than the 65536 Attention Lab allows; set dModel to at most 65536\.$/,
      ),
    });
  });

  it("ignores the workspace's overrides in Restricted Mode and reads the user's", () => {
    const none = levels();
    expect(readSettings(trustedReader(false, none.get, none.inspect)).settings.model.overrides).toEqual({});
    const user = levels({ nDecoderLayers: 3 });
    expect(readSettings(trustedReader(false, user.get, user.inspect)).settings.model.overrides).toEqual({
      nDecoderLayers: 3,
    });
    // Other settings still read through the workspace.
    expect(
      trustedReader(
        false,
        (k) => (k === 'attentionLab.training.steps' ? 7 : undefined),
        () => undefined,
      )('attentionLab.training.steps'),
    ).toBe(7);
  });

  it('restricts the same settings package.json declares for Restricted Mode', () => {
    const pkg = JSON.parse(readFileSync(new URL('../../../../package.json', import.meta.url), 'utf8')) as {
      capabilities: { untrustedWorkspaces: { restrictedConfigurations: string[] } };
    };
    expect([...pkg.capabilities.untrustedWorkspaces.restrictedConfigurations].sort()).toEqual(
      [...RESTRICTED_SETTINGS].sort(),
    );
  });
});
