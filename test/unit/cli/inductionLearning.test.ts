/**
 * A real learning run of `--task induction` through the built binary, with its defaults
 * (context 12, 3000 steps, seed 1; about 45 s for two layers and 30 s for one on 2 cores):
 * the two-layer model predicts the repeated half almost perfectly, a one-layer model with
 * the same budget does not (finding the earlier copy and reading the token after it takes
 * two composed layers). Measured: held-out loss 0.01 vs 0.89, from ln 26 ≈ 3.26.
 *
 * Not yet asserted (issue 12): that this shows up in the head scores as a layer-1
 * previous-token head and a layer-2 induction head ≥ 0.8. In a context of 12 the model
 * solves the task with position-routing heads instead (layer-2 induction ≈ 0.14, layer-1
 * previous-token ≈ 0.35), and there the diagnostic cannot tell a one-layer model apart: its
 * best head scores 0.42 induction even on the mean over eight periods and starts (a context
 * of 12 leaves periods 3–6 only; the single fixed-position repeat used to give 0.72).
 *
 * Two attempts, 3000-step runs in a context of 32 (about 45 s each on 2 quiet cores):
 * 1. The segment repeated to fill the context with a random period and prefix, 62 symbols,
 *    dFF 4, 2 heads: a loss phase change on seeds 1–3 (plateau ≈ 2.2, then 0.08–0.47 within
 *    500–1000 steps) through *shifted* circuits: layer-1 heads at fixed k and k+1 back
 *    (k = 3 or 4), previous-token ≤ 0.2, induction ≤ 0.06.
 * 2. A share of training sequences from a skip-bigram rule (each symbol, with probability
 *    3/4, a fixed random permutation of the one two back), so that a previous-token head
 *    pays off on its own. It does: a layer-1 head reaches previous-token 0.95–1.00 by step
 *    500–1000 with 2 heads, tied or untied embeddings, repeat filling the context or two
 *    copies, and the loss phase change follows (e.g. 3.8 → 0.57 between steps 750 and 1000).
 *    But the chain of the rule also makes 3-back predictive, the second layer-1 head sits at
 *    3 back, and the layer-2 head matches the query's previous token against the key's
 *    3-back token and reads its previous token: it attends s+2, not s+1 (induction ≤ 0.08).
 *    With ONE head per layer (no second layer-1 head to shift with), untied embeddings,
 *    dFF 4, 62 symbols and the repeat filling the context, the textbook circuit forms: the
 *    layer-2 head attends s+1 with induction 0.82 at step 1500–2000 (seed 1; 0.83 at step
 *    1250 on seed 2, while the loss falls 3.2 → 0.1 in 250 steps; seed 3 found another
 *    circuit, 0.09) — but the single layer-1 head splits its weight (≈ 0.5 one back, the
 *    rest 3 back, on itself and 2 back), so previous-token stays ≈ 0.5, and induction drifts
 *    to 0.64–0.77 by step 3000–4500. Not fixed by: a larger skip share (0.5), less noise in
 *    the rule (0.1), a rule without chains (only 1 back predictive), embedScale, lr 6e-3,
 *    dFF 16 or 256, no weight decay (seed 2: induction 0.84 at step 3000, previous-token
 *    0.53); with two heads and the chain-free rule no previous-token head formed at all.
 *    Closest so far: one head per layer, untied, dFF 4, 26 letters, sinusoidal positions,
 *    and half the repeat sequences as two copies (then random letters) instead of filling
 *    the context: seed 1 reaches previous-token 0.79 with induction 0.80 at step 2500 of
 *    4000 (0.77 / 0.84 at step 2000, as the loss falls 3.3 → 0.37 between 1500 and 2000),
 *    drifting to 0.73 / 0.71 by step 4000; 70% two copies keeps previous-token at 0.82 but
 *    leaves no phase change in 3000 steps; 60% reaches 0.82 previous-token at step 2000,
 *    then the phase change (3.3 → 0.55 by step 3000) pulls it back to 0.64 (induction 0.75);
 *    seed 2 at 50% had no phase change in 3000 steps. In every one-head run the layer-1
 *    head is sharpest just before the phase change and spreads (onto itself, 2 and 3 back)
 *    while the induction head forms. Filling the context drives the phase change; two
 *    copies keep the previous-token head sharp.
 * Other designs tried: pairs (trigger → follower) recurring in random context, which only
 * the textbook circuit solves, did not leave the plateau in 3000 steps (alone or with the
 * skip-bigram share); with the rule x(t+1) = x(t−1) (identity) no phase change.
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

  // Not reproduced yet on 2 cores within a few minutes: one head per layer grows the layer-2
  // induction head (0.82) but its layer-1 head stays at ≈ 0.5 previous-token; see the header.
  it.todo('grows a layer-1 previous-token head (≥ 0.8) and a layer-2 induction head (≥ 0.8); one layer stays ≤ 0.3 induction');
});
