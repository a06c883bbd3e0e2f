/**
 * Rotary position embeddings (Su et al. 2021) in Hugging Face's rotate-half layout, in
 * place; same contract as src/engine/ops/rope.ts: in each head the pairs (c, c + R/2),
 * c < R/2, turn by the angle whose cos/sin sit in row start + t of the tables [positions,
 * R/2]; `inverse` turns by −angle (the backward, on a gradient); channels R..D−1 are untouched.
 *
 * Chunks split the B·T·H head rows; each row is rotated by four pairs per step (the four
 * x1 lanes, the four x2 lanes and four table entries are contiguous), the R/2 mod 4 rest one
 * by one. Every row is written by one chunk only.
 *
 * Leaves out: building the tables (float64 math on the TypeScript side, ops/rope.ts).
 */

import { partStart } from './threads';

@inline function off(i: i32): usize {
  return (<usize>i) << 2;
}

/**
 * x1' = x1·cos − x2·sin, x2' = x2·cos + x1·sin (sin negated when inverse) for this
 * chunk's head rows; element (b, t, h, c) at b·batchStride + t·rowStride + h·D + c.
 */
export function ropePart(
  part: i32,
  parts: i32,
  x: usize,
  cos: usize,
  sin: usize,
  B: i32,
  T: i32,
  H: i32,
  D: i32,
  R: i32,
  start: i32,
  batchStride: i32,
  rowStride: i32,
  inverse: bool,
): void {
  const half = R >> 1;
  const rows = B * T * H;
  const r1 = partStart(rows, part + 1, parts);
  const sign: f32 = inverse ? -1 : 1;
  const flip = i32x4.splat(inverse ? i32.MIN_VALUE : 0);
  for (let r = partStart(rows, part, parts); r < r1; r++) {
    const h = r % H;
    const t = (r / H) % T;
    const b = r / (H * T);
    const p1 = x + off(b * batchStride + t * rowStride + h * D);
    const p2 = p1 + off(half);
    const pc = cos + off((start + t) * half);
    const ps = sin + off((start + t) * half);
    let i = 0;
    for (; i + 4 <= half; i += 4) {
      const co = v128.load(pc + off(i));
      const si = v128.xor(v128.load(ps + off(i)), flip);
      const x1 = v128.load(p1 + off(i));
      const x2 = v128.load(p2 + off(i));
      v128.store(p1 + off(i), f32x4.sub(f32x4.mul(x1, co), f32x4.mul(x2, si)));
      v128.store(p2 + off(i), f32x4.add(f32x4.mul(x2, co), f32x4.mul(x1, si)));
    }
    for (; i < half; i++) {
      const co = load<f32>(pc + off(i));
      const si = sign * load<f32>(ps + off(i));
      const x1 = load<f32>(p1 + off(i));
      const x2 = load<f32>(p2 + off(i));
      store<f32>(p1 + off(i), x1 * co - x2 * si);
      store<f32>(p2 + off(i), x2 * co + x1 * si);
    }
  }
}
