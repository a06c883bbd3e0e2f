/**
 * Steering by activation addition (Turner et al. 2023; ARENA 1.3.2): the one implementation
 * behind `attention-lab steer` and the playground's steering (model worker `model/steer`).
 *
 * The vector, at the stream entering decoder layer ℓ (resid_pre[ℓ], 0-based; ℓ = L is the final
 * norm's input): v = mean over positions of resid_pre[ℓ](plus) − mean over positions of
 * resid_pre[ℓ](minus), each prompt read as the lens reads one (promptIds.ts: BOS + its tokens where
 * the run's prompts start with BOS, whose stream is the same for both; the prompts may differ in
 * length). The prompt
 * is then decoded twice with the same settings (lab/inference/decode.ts: greedy, beam or seeded
 * sampling): unsteered, and with α·v added to resid_pre[ℓ] at every position, the prompt's and
 * each generated token's (the stepper's `residAdd`, engine/models/steering.ts).
 *
 * An encoder-decoder run: the plus and minus prompts are sources, each read as the lens reads a
 * source without a target (its decoder reading the model's own greedy translation, BOS first),
 * and v is the difference of the means of the DECODER's resid_pre[ℓ] over those target positions:
 * what the decoder's stream carries while it writes out one source rather than the other. The
 * decode's input is a source too; α·v is added to the decoder's resid_pre[ℓ] at every target
 * position (BOS, each generated token). The decoder, not the encoder: what it adds to is the
 * stream that writes the output, step by step as in a decoder-only run, and the same vector
 * reaches every generated token; a vector added to the encoder's output would reach the decoder
 * only through cross-attention's keys and values, computed once before decoding.
 *
 * Leaves out: flag parsing and posting (cli/steer.ts, the model worker).
 */

import { EngineError } from '../../engine/errors';
import type { ModelConfig } from '../../engine/config';
import type { ResidAdd } from '../../engine/models/steering';
import type { Tokenizer } from '../../engine/tokenizers/special';
import type { SteerOutputData, SteerRequestData, SteerVectorData } from '../../protocol/steering';
import { decodeText } from './decode';
import type { LensInput } from './lens';
import { inputBatch } from './lens';
import type { OpenRun, RunPlan } from './openRun';
import { planRequest } from './requestPlan';

/** The lens input of a steering prompt: an encoder-decoder's source (its decoder reading its greedy target). */
function promptInput(config: ModelConfig, text: string): LensInput {
  return config.kind === 'encoder-decoder' ? { src: text } : { prompt: text };
}

/** Refuses what steering cannot do with a model of `config` (see the file comment). */
function checkSteer(config: ModelConfig, v: SteerVectorData): void {
  const L = config.nDecoderLayers;
  if (!Number.isInteger(v.layer) || v.layer < 0 || v.layer > L)
    throw new EngineError(
      'input/invalid',
      `The layer is 0 to ${L} (the stream entering that layer; ${L}: the final norm's input); got ${v.layer}.`,
    );
  if (!Number.isFinite(v.alpha)) throw new EngineError('input/invalid', `α must be a finite number; got ${v.alpha}.`);
  if (v.plus === '' && v.minus === '')
    throw new EngineError('input/invalid', 'Give the two prompts whose difference steers (plus and minus).');
}

/** The vector's two means' difference and the mean stream norm (see the file comment). */
export function steeringVector(r: OpenRun, v: SteerVectorData): { vector: Float32Array; streamNorm: number } {
  checkSteer(r.model.config, v);
  const C = r.model.config.dModel;
  const mean = (prompt: string): { m: Float64Array; norm: number } => {
    const batch = inputBatch(r, promptInput(r.model.config, prompt));
    const m = new Float64Array(C);
    let norm = 0;
    r.model.forward(batch, {
      train: false,
      labelSmoothing: 0,
      loss: false, // only the stream is read
      hook: (site, data) => {
        if (site.point !== 'resid_pre' || site.layer !== v.layer) return;
        for (let t = 0; t < site.T; t++) {
          let sq = 0;
          for (let c = 0; c < C; c++) {
            const x = data[t * C + c] as number;
            m[c] = (m[c] as number) + x / site.T;
            sq += x * x;
          }
          norm += Math.sqrt(sq) / site.T;
        }
      },
    });
    return { m, norm };
  };
  const a = mean(v.plus);
  const b = mean(v.minus);
  return { vector: Float32Array.from(a.m, (x, c) => x - (b.m[c] as number)), streamNorm: (a.norm + b.norm) / 2 };
}

/** The plan a steering request needs: one forward of the longer prompt, and the decode's key/value cache. */
export function steerPlan(config: ModelConfig, tok: Tokenizer, req: SteerRequestData): RunPlan {
  const { plus, minus } = req.vector;
  const longer = tok.encode(plus).length >= tok.encode(minus).length ? plus : minus;
  const lens = planRequest(config, tok, { job: 'lens', input: promptInput(config, longer) });
  const decode = planRequest(config, tok, { job: 'decode', input: req.decode.input, beam: req.decode.beam });
  return { ...lens, decodeRows: decode.decodeRows ?? 1 };
}

/** Steers the request's decode on an opened run: both decodes, the vector's norm (the CLI's and the worker's entry). */
export function steerRun(r: OpenRun, req: SteerRequestData): SteerOutputData {
  const { layer, alpha } = req.vector;
  const { vector, streamNorm } = steeringVector(r, req.vector);
  let sq = 0;
  for (const x of vector) sq += x * x;
  const add: ResidAdd = { layer, vector: Float32Array.from(vector, (x) => alpha * x) };
  const unsteered = decodeText(r, req.decode).output;
  const steered = decodeText(r, req.decode, { residAdd: add }).output;
  return { layer, alpha, norm: Math.sqrt(sq), streamNorm, steered, unsteered };
}
