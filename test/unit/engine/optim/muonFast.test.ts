/**
 * Muon's Newton–Schulz products computed above the diagonal only (`symmetricProduct`) give the
 * full products' numbers, and the whole orthogonalisation equals the straightforward NS5 (full
 * products X·Xᵀ, A·A, then a·X + B·X, on the reference backend) to 1e-5, on wide, tall and
 * square matrices, on both backends.
 */
import { describe, expect, it } from 'vitest';
import type { Backend, FloatArray } from '../../../../src/engine/backend';
import { createReferenceBackend } from '../../../../src/engine/backends/reference';
import { createWasmBackend } from '../../../../src/engine/backends/wasm/wasmBackend';
import {
  NS_COEFFS,
  NS_STEPS,
  orthogonalize,
  symmetricBlockRows,
  symmetricProduct,
} from '../../../../src/engine/optim/optimizer';
import { Rng } from '../../../../src/engine/rng';

const BACKENDS: [string, () => Backend][] = [
  ['reference', () => createReferenceBackend()],
  ...(createWasmBackend({ fma: false })
    ? [['wasm', () => createWasmBackend({ fma: false }) as Backend] as [string, () => Backend]]
    : []),
];

/** NS5 as written in the papers, with full products on the reference backend (float32). */
function straightforward(g: ArrayLike<number>, rows: number, cols: number): Float32Array {
  const k = createReferenceBackend();
  const tall = rows > cols;
  const r = Math.min(rows, cols);
  const c = Math.max(rows, cols);
  let sq = 0;
  for (let i = 0; i < rows * cols; i++) sq += (g[i] as number) ** 2;
  let x = k.alloc(r * c);
  for (let i = 0; i < rows; i++)
    for (let j = 0; j < cols; j++)
      x[tall ? j * rows + i : i * cols + j] = (g[i * cols + j] as number) / (Math.sqrt(sq) + 1e-7);
  const [qa, qb, qc] = NS_COEFFS;
  const a = k.alloc(r * r);
  const aa = k.alloc(r * r);
  const bx = k.alloc(r * c);
  for (let it = 0; it < NS_STEPS; it++) {
    k.matmul(a, x, x, r, r, c, false, true, false);
    k.matmul(aa, a, a, r, r, r, false, false, false);
    for (let i = 0; i < r * r; i++) aa[i] = qb * (a[i] as number) + qc * (aa[i] as number);
    k.matmul(bx, aa, x, r, c, r, false, false, false);
    const next = k.alloc(r * c);
    for (let i = 0; i < r * c; i++) next[i] = qa * (x[i] as number) + (bx[i] as number);
    x = next;
  }
  const out = new Float32Array(rows * cols);
  for (let i = 0; i < rows; i++)
    for (let j = 0; j < cols; j++) out[i * cols + j] = x[tall ? j * rows + i : i * cols + j] as number;
  return out;
}

describe('Muon: symmetric products', () => {
  it('cuts an r × r result into blocks of a quarter (multiples of 8, at least 32 rows)', () => {
    expect(symmetricBlockRows(128)).toBe(32);
    expect(symmetricBlockRows(512)).toBe(128);
    expect(symmetricBlockRows(100)).toBe(32);
    expect(symmetricBlockRows(20)).toBe(32);
  });

  for (const [name, make] of BACKENDS) {
    it(`${name}: x·xᵀ above the diagonal, mirrored, is exactly the full product (r = 20, 72, 100, 128)`, () => {
      const k = make();
      const rng = new Rng(11);
      for (const [r, kk] of [
        [20, 36],
        [72, 72],
        [100, 260],
        [128, 512],
      ] as const) {
        const x = k.alloc(r * kk);
        for (let i = 0; i < r * kk; i++) x[i] = rng.normal();
        const full = k.alloc(r * r);
        k.matmul(full, x, x, r, r, kk, false, true, false);
        const out: FloatArray = k.alloc(r * r);
        out.fill(Number.NaN); // every element must be written
        symmetricProduct(k, out, x, r, kk, k.alloc(r * r));
        expect(Array.from(out), `${r}×${kk}`).toEqual(Array.from(full));
      }
    });
  }
});

describe('Muon: the orthogonalisation against the straightforward NS5', () => {
  for (const [name, make] of BACKENDS) {
    it(`${name}: equals full products to 1e-5 on wide, tall and square matrices`, () => {
      const k = make();
      const rng = new Rng(5);
      for (const [rows, cols] of [
        [48, 160],
        [160, 48],
        [100, 100],
        [128, 512],
        [512, 128],
      ] as const) {
        const g = Float32Array.from({ length: rows * cols }, () => rng.normal());
        const want = straightforward(g, rows, cols);
        const got = orthogonalize(k, g, rows, cols);
        let gap = 0;
        let size = 0;
        for (let i = 0; i < rows * cols; i++) {
          gap = Math.max(gap, Math.abs((got[i] as number) - (want[i] as number)));
          size = Math.max(size, Math.abs(want[i] as number));
        }
        expect(gap, `${rows}×${cols}`).toBeLessThan(1e-5);
        expect(size, `${rows}×${cols} is not all zeros`).toBeGreaterThan(0.01);
      }
    });
  }
});
