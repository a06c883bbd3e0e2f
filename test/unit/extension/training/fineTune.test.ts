import { describe, expect, it } from 'vitest';
import { fineTuneEstimate, fineTuneSources } from '../../../../src/extension/training/fineTune';

describe('Fine-tune…', () => {
  it("offers the workspace's documents (many files at once) before a file dialog, where a trusted folder is open", () => {
    expect(fineTuneSources('**/*.{md,txt}', true).map((i) => i.value)).toEqual(['workspace', 'files']);
    expect(fineTuneSources('**/*.{md,txt}', true)[0]?.description).toBe(
      'every file matching **/*.{md,txt}, as Train takes them',
    );
    expect(fineTuneSources('**/*.md', false).map((i) => i.value)).toEqual(['files']);
  });

  it('says how long the fine-tuning takes on this machine, or why that could not be measured', () => {
    expect(fineTuneEstimate('gpt2', 12, 200, { secondsPerStep: 0.6, threads: 2, backend: 'wasm' })).toBe(
      'Fine-tune gpt2 on 12 files for 200 steps: ≈ 2m00s on this machine (≈ 600ms per step on 2 threads, wasm backend, measured just now).',
    );
    expect(fineTuneEstimate('gpt2', 1, 1, { error: 'out of memory' })).toBe(
      'Fine-tune gpt2 on 1 file for 1 step? (The time per step could not be measured: out of memory)',
    );
  });
});
