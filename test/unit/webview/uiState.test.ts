import { describe, expect, it } from 'vitest';
import { defaultUiState, sanitizeUiState } from '../../../webview/uiState';

describe('uiState', () => {
  it('defaults anything that is not a version-1 state', () => {
    expect(sanitizeUiState(undefined)).toEqual(defaultUiState());
    expect(sanitizeUiState({ version: 2, tab: 'masks' })).toEqual(defaultUiState());
  });

  it('keeps valid fields and replaces invalid ones', () => {
    const s = sanitizeUiState({
      version: 1,
      tab: 'masks',
      runId: 'r1',
      curves: { x: 'time', log: 'yes', smoothing: 2, compare: ['a', 3, 'b'] },
      attention: { stack: 'decoder.cross', layer: 2, head: -1, snapshot: 4, scale: 'sqrt', view: 'text' },
      playground: { input: 'hi', strategy: 'beam', beam: 500, topP: 0.9, maxTokens: 0 },
      inspectTexts: { r1: 'the cat\nsat', r2: 7 },
    });
    expect(s.tab).toBe('masks');
    expect(s.runId).toBe('r1');
    expect(s.curves).toEqual({ x: 'time', log: true, smoothing: 0.6, compare: ['a', 'b'], per: 'token' });
    expect(sanitizeUiState({ version: 1, curves: { per: 'byte' } }).curves.per).toBe('byte');
    expect(sanitizeUiState({ version: 1, curves: { per: 'word' } }).curves.per).toBe('token');
    expect(s.attention).toEqual({
      stack: 'decoder.cross',
      layer: 2,
      head: 0,
      snapshot: 4,
      scale: 'sqrt',
      view: 'text',
    });
    expect(s.inspectTexts).toEqual({ r1: 'the cat\nsat' });
    expect(sanitizeUiState({ version: 1, attention: { view: 'sideways' } }).attention.view).toBe('training');
    expect(s.playground).toMatchObject({ input: 'hi', strategy: 'beam', beam: 4, topP: 0.9, maxTokens: 40 });
  });

  it("reads the attention tab's stack from a save that kept it as `family` in the older spelling", () => {
    const old = (family: unknown): unknown =>
      sanitizeUiState({ version: 1, attention: { family, layer: 1, head: 2, snapshot: -1, scale: 'linear' } })
        .attention;
    expect(old('encoder-self')).toEqual({
      stack: 'encoder.self',
      layer: 1,
      head: 2,
      snapshot: -1,
      scale: 'linear',
      view: 'training',
    });
    expect(old('decoder-self')).toMatchObject({ stack: 'decoder.self' });
    expect(old('cross')).toMatchObject({ stack: 'decoder.cross' });
    expect(old('constructor')).toMatchObject({ stack: 'decoder.self' });
    expect(old(7)).toMatchObject({ stack: 'decoder.self' });
    // A save with both keeps the current field; a current save is written back without `family`.
    expect(sanitizeUiState({ version: 1, attention: { stack: 'encoder.self', family: 'cross' } }).attention.stack).toBe(
      'encoder.self',
    );
    expect(
      sanitizeUiState({ version: 1, attention: { stack: 'encoder-self', family: 'encoder-self' } }).attention.stack,
    ).toBe('encoder.self');
    expect(Object.keys(sanitizeUiState({ version: 1, attention: { family: 'cross' } }).attention)).not.toContain(
      'family',
    );
  });

  it("keeps the Heads tab's score only where its stack has it", () => {
    expect(defaultUiState().heads).toEqual({
      stack: 'decoder.self',
      score: 'induction',
      threshold: 0.5,
      only: false,
      order: 'grid',
      mark: true,
    });
    const ok = sanitizeUiState({
      version: 1,
      tab: 'heads',
      heads: {
        stack: 'decoder.cross',
        score: 'antiDiagonal',
        threshold: 0.8,
        only: true,
        order: 'ranked',
        mark: false,
      },
    });
    expect(ok.tab).toBe('heads');
    expect(ok.heads).toEqual({
      stack: 'decoder.cross',
      score: 'antiDiagonal',
      threshold: 0.8,
      only: true,
      order: 'ranked',
      mark: false,
    });
    // Cross-attention has no induction score: the stack's first score instead; bad values default.
    const bad = sanitizeUiState({
      version: 1,
      heads: { stack: 'decoder.cross', score: 'induction', threshold: 'high', order: 'random', mark: 1 },
    });
    expect(bad.heads).toEqual({
      stack: 'decoder.cross',
      score: 'diagonal',
      threshold: 0.5,
      only: false,
      order: 'grid',
      mark: true,
    });
  });

  it('survives a JSON round trip unchanged', () => {
    const s = { ...defaultUiState(), tab: 'playground' as const };
    s.playground = { ...s.playground, input: 'abc' };
    s.playgroundInputs = { r1: 'abc', r2: 'ROMEO:' };
    expect(sanitizeUiState(JSON.parse(JSON.stringify(s)))).toEqual(s);
  });

  it('keeps the playground text per run, dropping entries that are not text', () => {
    const s = sanitizeUiState({ ...defaultUiState(), playgroundInputs: { r1: 'abc', r2: 7, r3: null } });
    expect(s.playgroundInputs).toEqual({ r1: 'abc' });
    expect(sanitizeUiState({ ...defaultUiState(), playgroundInputs: 'x' }).playgroundInputs).toEqual({});
  });

  it('keeps the lens target, the switched-off heads (well-formed keys only) and top-k per run', () => {
    const s = sanitizeUiState({
      ...defaultUiState(),
      playgroundTargets: { r1: 'cb', r2: 3 },
      playgroundOff: {
        r1: ['decoder.self:0:1', 'encoder.self:1:3'],
        r2: ['decoder.self:0'],
        r3: 'decoder.cross:0:0',
        r4: ['mlp:0:0'],
      },
      lensTopK: 7,
    });
    expect(s.playgroundTargets).toEqual({ r1: 'cb' });
    expect(s.playgroundOff).toEqual({ r1: ['decoder.self:0:1', 'encoder.self:1:3'] });
    expect(s.lensTopK).toBe(7);
    expect(sanitizeUiState({ ...defaultUiState(), lensTopK: 0 }).lensTopK).toBe(5);
    expect(sanitizeUiState({ ...defaultUiState(), lensTopK: 51 }).lensTopK).toBe(5);
    expect(sanitizeUiState({ version: 1 }).playgroundOff).toEqual({});
  });
});
