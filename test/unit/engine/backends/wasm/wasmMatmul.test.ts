/**
 * Randomized equivalence of the WebAssembly matmul with the reference over many shapes —
 * odd sizes that are not multiples of the 4 × 8 register block, fewer than 4 rows (the
 * unpacked path), K beyond one 256-deep block, all four transpose variants, accumulate on
 * and off — plus the fallback for arrays outside wasm memory.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { createReferenceBackend } from '../../../../../src/engine/backends/reference';
import { createWasmBackend } from '../../../../../src/engine/backends/wasm/wasmBackend';
import { WASM_BUILDS } from './wasmBuilds';
import { Rng } from '../../../../../src/engine/rng';
import { expectClose } from '../../ops/opTestUtils';

let wasm = createWasmBackend();
const ref64 = createReferenceBackend({ dtype: 'f64' });

function randomArray(rng: Rng, n: number): Float64Array {
  const x = new Float64Array(n);
  for (let i = 0; i < n; i++) x[i] = Math.fround(rng.normal());
  return x;
}

for (const [label, fma] of WASM_BUILDS) {
  describe(`wasm matmul — ${label}`, () => {
    beforeAll(() => {
      wasm = createWasmBackend({ fma })!;
    });

    it('is available in this runtime (Node 20 has SIMD and shared memory)', () => {
      expect(wasm).not.toBeNull();
    });

    const rng = new Rng(404);
    const shapes: [number, number, number][] = [
      [1, 1, 1],
      [1, 7, 5],
      [2, 9, 13],
      [3, 33, 17],
      [4, 8, 4],
      [5, 3, 2],
      [7, 11, 19],
      [8, 16, 64],
      [13, 29, 300],
      [17, 8, 1],
      [36, 70, 33],
      [64, 64, 64],
      [65, 9, 513],
    ];
    for (let s = 0; s < 12; s++) shapes.push([1 + rng.int(40), 1 + rng.int(40), 1 + rng.int(80)]);

    it.each(shapes)(
      'matches the float64 reference for M=%i N=%i K=%i in every variant, accumulate on and off',
      (M, N, K) => {
        const be = wasm!;
        for (const transA of [false, true]) {
          for (const transB of [false, true]) {
            for (const accumulate of [false, true]) {
              const a = randomArray(rng, M * K);
              const b = randomArray(rng, K * N);
              const c0 = randomArray(rng, M * N + 3);
              const want = Float64Array.from(c0);
              ref64.matmul(want, a, b, M, N, K, transA, transB, accumulate);
              const ca = be.alloc(M * N + 3);
              ca.set(c0);
              const aa = be.alloc(M * K);
              aa.set(a);
              const ba = be.alloc(K * N);
              ba.set(b);
              be.matmul(ca, aa, ba, M, N, K, transA, transB, accumulate);
              expectClose(
                ca,
                want,
                { rtol: 1e-4, atol: 2e-5 * Math.sqrt(K) },
                `M=${M} N=${N} K=${K} tA=${transA} tB=${transB} acc=${accumulate}`,
              );
              // The three elements past M·N are untouched.
              for (let i = M * N; i < M * N + 3; i++) expect(ca[i]).toBe(Math.fround(c0[i] as number));
            }
          }
        }
      },
    );
  });
}
