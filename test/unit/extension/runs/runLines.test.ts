import { describe, expect, it } from 'vitest';
import {
  activeRunText,
  activeRunTooltip,
  endedRunStays,
  runChoiceDescription,
  trainingProgressMessage,
  trainingStatusText,
} from '../../../../src/extension/runs/runLines';
import type { RunItem } from '../../../../src/extension/runs/runsModel';

const item = (over: Partial<RunItem>): RunItem => ({
  runDir: '/r/a',
  name: 'tiny shakespeare',
  status: 'completed',
  kind: 'decoder-only',
  step: 60,
  totalSteps: 60,
  bestValLoss: 1.2345,
  hasModel: true,
  active: false,
  params: 1,
  data: null,
  imported: null,
  error: null,
  note: null,
  backend: 'wasm',
  ...over,
});

describe('run wording', () => {
  it('tells runs apart in a quick pick by kind, state, step and loss', () => {
    expect(runChoiceDescription(item({}))).toBe('decoder-only · completed · step 60/60 · val 1.2345');
    expect(
      runChoiceDescription(
        item({ kind: 'encoder-decoder', status: 'interrupted', step: 120, totalSteps: 200, bestValLoss: null }),
      ),
    ).toBe('encoder-decoder · interrupted · step 120/200');
  });

  it('shows the active run in the status bar with its name, kind and step, and the backend that ran in its tooltip', () => {
    expect(activeRunText(item({}))).toBe('$(star-full) tiny shakespeare · decoder-only · step 60');
    expect(activeRunText(undefined)).toBe('$(star-empty) No active run');
    const tip = activeRunTooltip(item({ note: 'lr 3e-4' }));
    expect(tip).toContain('wasm backend');
    expect(tip).toContain('Note: lr 3e-4');
    expect(tip).not.toContain('auto');
  });

  it('says an imported model is imported and was not trained here: no step, no training state', () => {
    const gpt2 = item({
      imported: 'Hugging Face GPT-2',
      status: 'stopped',
      step: 0,
      totalSteps: 200,
      bestValLoss: null,
    });
    expect(runChoiceDescription(gpt2)).toBe('decoder-only · imported (Hugging Face GPT-2) · not trained here');
    expect(activeRunText(gpt2)).toBe('$(star-full) tiny shakespeare · decoder-only · imported');
    const tip = activeRunTooltip(gpt2);
    expect(tip).toContain('imported (Hugging Face GPT-2) · not trained here · wasm backend');
    expect(tip).not.toMatch(/stopped|step 0/);
  });

  it('says paused while paused, not "resuming"', () => {
    const st = { step: 12, totalSteps: 100, loss: 2.5, paused: false, stopping: false };
    expect(trainingProgressMessage(st)).toBe('step 12/100 · loss 2.5000');
    expect(trainingProgressMessage({ ...st, paused: true })).toMatch(/^paused at step 12\/100 · loss 2\.5000 — /);
    expect(trainingProgressMessage({ ...st, paused: true })).not.toMatch(/resuming/i);
    // Not "stopping after step 12": the step in progress still ends first (it then said "stopped at 14").
    expect(trainingProgressMessage({ ...st, stopping: true })).toBe(
      'stopping at the end of the step in progress, with a checkpoint · step 12/100 · loss 2.5000…',
    );
  });

  it('the status bar says paused and stopping in words, not only by its icon', () => {
    const st = { step: 12, totalSteps: 100, loss: 2.5, tokensPerSec: 12_800, paused: false, stopping: false };
    expect(trainingStatusText(st)).toBe('$(sync~spin) Attention Lab: step 12/100 · loss 2.5000 · 12.8k tok/s');
    expect(trainingStatusText({ ...st, paused: true })).toBe(
      '$(debug-pause) Attention Lab: paused at step 12/100 · loss 2.5000',
    );
    expect(trainingStatusText({ ...st, stopping: true })).toBe(
      '$(loading~spin) Attention Lab: stopping · step 12/100 · loss 2.5000 · 12.8k tok/s',
    );
  });

  it("a run's end stays in the status bar only while no other run is the active one", () => {
    expect(endedRunStays('/r/a', '/r/a')).toBe(true);
    expect(endedRunStays('/r/a', null)).toBe(true);
    expect(endedRunStays('/r/a', '/r/b')).toBe(false);
  });
});
