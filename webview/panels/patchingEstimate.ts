/**
 * Attribution patching's estimate beside each map of the Patching tab (patching.ts): the numbers of
 * an attribution answer (protocol/attribution.ts) in the shape and row order of a patching map
 * (lab/inference/patch.ts). Pure, so it is tested without a page.
 *
 * Leaves out: drawing (patching.ts).
 */

import type { AttributionOutputData } from '../../src/protocol/attribution';
import type { PatchMapData, PatchWhat } from '../../src/protocol/patching';

/**
 * The estimate of `what` in an attribution patching answer, row-major in the patch map's shape (null: none); an
 * encoder-decoder's map `m` (its `stack`) picks the encoder's estimates, or the decoder's with each layer's
 * cross-attention rows after its self-attention rows, as patch.ts lays out the maps.
 */
export function estimateOf(
  a: AttributionOutputData,
  what: PatchWhat,
  m: Pick<PatchMapData, 'stack'> = {},
): number[] | null {
  if (a.what !== 'attribution') return null;
  const enc = a.encoder;
  const cross = a.cross;
  if (enc && cross) {
    /** Per decoder layer: its self rows, then its cross rows. */
    const selfCross = <X>(self: readonly X[], crossRows: readonly X[]): X[] =>
      self.flatMap((x, l) => [x, crossRows[l] as X]);
    const encoder = m.stack === 'encoder';
    switch (what) {
      case 'resid':
        return (encoder ? enc.resid : a.resid).flat();
      case 'attn':
        return encoder ? enc.attnOut.flat() : selfCross(a.attnOut, cross.out).flat();
      case 'mlp':
        return (encoder ? enc.mlpOut : a.mlpOut).flat();
      case 'heads':
        return [...enc.head.flat(), ...selfCross(a.head, cross.head).flat()];
      case 'heads-pos':
        return encoder ? enc.headPos.flat(2) : selfCross(a.headPos, cross.headPos).flat(2);
      case 'path':
        return null;
    }
  }
  switch (what) {
    case 'resid':
      return a.resid.flat();
    case 'attn':
      return a.attnOut.flat();
    case 'mlp':
      return a.mlpOut.flat();
    case 'heads':
      return a.head.flat();
    case 'heads-pos':
      return a.headPos.flat(2);
    case 'path':
      return null;
  }
}
