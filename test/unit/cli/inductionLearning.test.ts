/**
 * A real learning run of `--task induction` through the built binary, with its defaults
 * (context 12, 3000 steps, seed 1; about 45 s for two layers and 30 s for one on 2 cores):
 * the two-layer model predicts the repeated half almost perfectly, a one-layer model with
 * the same budget does not (finding the earlier copy and reading the token after it takes
 * two composed layers). Measured: held-out loss 0.01 vs 0.89, from ln 26 ≈ 3.26.
 *
 * Not yet asserted (issue 12): that this shows up in the head scores as a layer-1
 * previous-token head and a layer-2 induction head ≥ 0.8. In a context of 12 the model
 * solves the task with position-routing heads instead (layer-2 induction ≈ 0.15), and in
 * longer contexts, where that stops working, it stays on the loss plateau past 2500 steps.
 * Tried since (3000-step runs, context 16–32): 62 letters instead of 26, the segment
 * repeated to fill the context with a random period, a random unrepeated prefix, 1, 2 or 4
 * heads, a tiny MLP (dFF 4), sinusoidal positions, lr 1e-3, batch 64, shortest period 2–5.
 * The best (62 letters, prefix 0–8, period 5 to fill, 2 heads, dFF 4; about 3.5 min) shows
 * the phase change in the loss on seeds 1, 2 and 3 (plateau ≈ 2.2, then a drop to 0.08–0.47
 * within 500–1000 steps) through a *shifted* induction circuit: two layer-1 heads attend a
 * fixed k and k+1 back (k = 3 or 4, never 1), and a layer-2 head matches the current token
 * against the (k+1)-back one and reads the k-back one. Previous-token stays ≤ 0.2 and
 * induction ≤ 0.06. With the shortest period at 2 or 3 no phase change came in 3000 steps.
 * The one-layer bound is at risk too: in the default run a layer-1 head scores induction
 * 0.72 on the diagnostic sequence, whose single repeat sits at fixed positions, so a
 * positional head reaches its targets; a diagnostic over several periods and offsets is needed.
 */
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cli, tempDir } from './cliHarness';

const tmp = tempDir();
afterAll(tmp.cleanup);

interface Heads {
  heads: { stack: string; layer: number; scores: Record<string, number> }[];
}

function train(name: string, extra: string[]): { loss: number; heads: Heads } {
  const out = path.join(tmp.dir, name);
  const r = cli(['train', '--task', 'induction', '--out', out, '--json', ...extra], tmp.dir, 300_000);
  expect(r.code, r.stderr).toBe(0);
  const j = JSON.parse(r.stdout) as { eval: { loss: number } };
  const h = cli(['heads', '--run', out, '--json'], tmp.dir);
  expect(h.code, h.stderr).toBe(0);
  return { loss: j.eval.loss, heads: JSON.parse(h.stdout) as Heads };
}

describe('attention-lab train --task induction', () => {
  it('two layers learn the repeat; one layer with the same budget does not', () => {
    const two = train('two', []);
    expect(two.loss).toBeLessThan(0.1);
    expect(two.heads.heads.filter((x) => x.layer === 2)).toHaveLength(4);
    const one = train('one', ['--set', 'nDecoderLayers=1']);
    expect(one.loss).toBeGreaterThan(0.5);
  }, 300_000);

  // Not reproduced yet on 2 cores within a few minutes: see the header for what was tried.
  it.todo('grows a layer-1 previous-token head (≥ 0.8) and a layer-2 induction head (≥ 0.8); one layer stays ≤ 0.3 induction');
});
