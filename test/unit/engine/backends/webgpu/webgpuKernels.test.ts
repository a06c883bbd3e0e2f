/**
 * Every WebGPU kernel against the reference backend on small shapes, in float32, to 1e-5
 * relative: |gpu − ref| ≤ 1e-5 · max(|ref|, rms(ref)) per element (the rms floor keeps an element
 * near zero from demanding more than float32 gives; a wrong index or formula is off by far more).
 * Runs on whatever adapter Dawn opens — here SwiftShader, found by test/setupWebGpu.ts — and
 * skips, naming why, only when none opens.
 */

import { afterAll, describe, expect, it } from 'vitest';
import type { AdamParams, MaskView } from '../../../../../src/engine/backend';
import { createReferenceBackend } from '../../../../../src/engine/backends/reference';
import type { Activation } from '../../../../../src/engine/backends/webgpu/webgpuKernels';
import { WebGpuKernels } from '../../../../../src/engine/backends/webgpu/webgpuKernels';
import { openNodeGpu } from '../../../../../src/lab/platform/webgpu.node';

const gpu = await openNodeGpu();
const ref = createReferenceBackend();

/** Deterministic values in [−s, s). */
function rand(n: number, seed: number, s = 1): Float32Array {
  const out = new Float32Array(n);
  let x = seed * 2654435761;
  for (let i = 0; i < n; i++) {
    x = (Math.imul(x ^ (x >>> 15), 2246822519) + 0x6d2b79f5) | 0;
    out[i] = ((x >>> 0) / 2 ** 32 - 0.5) * 2 * s;
  }
  return out;
}

function expectClose(got: Float32Array, want: Float32Array, what: string): void {
  expect(got.length).toBe(want.length);
  let ss = 0;
  for (const v of want) ss += v * v;
  const rms = Math.sqrt(ss / Math.max(1, want.length));
  let worst = 0;
  let at = -1;
  for (let i = 0; i < want.length; i++) {
    const err = Math.abs((got[i] as number) - (want[i] as number)) / Math.max(Math.abs(want[i] as number), rms, 1e-30);
    if (!(err <= worst)) {
      worst = err;
      at = i;
    }
  }
  expect(worst, `${what}: worst relative error at ${at}: got ${got[at]}, want ${want[at]}`).toBeLessThanOrEqual(1e-5);
}

describe.skipIf(!gpu.ok)(
  gpu.ok ? `WebGPU kernels on ${gpu.adapter.name}` : `WebGPU kernels (skipped: ${gpu.reason})`,
  () => {
    // Built only where an adapter opened: a skipped describe's body still runs to collect its tests.
    const k = gpu.ok ? new WebGpuKernels(gpu.device) : (null as unknown as WebGpuKernels);
    afterAll(() => {
      if (gpu.ok) gpu.device.destroy();
    });

    /** A GPU copy of `host` (allocated on the device, uploaded). */
    function dev(host: Float32Array): Float32Array {
      const d = k.mem.alloc(host.length);
      d.set(host);
      k.mem.upload(d);
      return d;
    }
    async function back(d: Float32Array): Promise<Float32Array> {
      await k.mem.download(d);
      return d.slice();
    }

    it('names the adapter with its API', () => {
      if (!gpu.ok) return;
      expect(gpu.adapter.name).toMatch(/ · (Vulkan|Metal|D3D12)( \(software\))?$/);
    });

    for (const [transA, transB] of [
      [false, false],
      [true, false],
      [false, true],
      [true, true],
    ] as const)
      it(`matmul transA ${transA} transB ${transB}, overwrite and accumulate, past one tile`, async () => {
        const M = 70;
        const N = 67;
        const K = 37; // not multiples of the 64×64 tile or the K step of 16
        const a = rand(M * K, 1);
        const b = rand(K * N, 2);
        const c0 = rand(M * N, 3);
        for (const acc of [false, true]) {
          const want = c0.slice();
          ref.matmul(want, a, b, M, N, K, transA, transB, acc);
          const c = dev(c0);
          k.matmul(c, dev(a), dev(b), M, N, K, transA, transB, acc);
          expectClose(await back(c), want, `matmul acc ${acc}`);
        }
      });

    it('matmul reads and writes views at offsets inside one buffer', async () => {
      const M = 5;
      const N = 9;
      const K = 3;
      const flat = dev(rand(200, 4));
      const a = flat.subarray(7, 7 + M * K);
      const b = flat.subarray(40, 40 + K * N);
      const c = flat.subarray(101, 101 + M * N);
      const host = flat.slice();
      ref.matmul(
        host.subarray(101, 101 + M * N),
        host.subarray(7, 7 + M * K),
        host.subarray(40, 40 + K * N),
        M,
        N,
        K,
        false,
        false,
        true,
      );
      k.matmul(c, a, b, M, N, K, false, false, true);
      expectClose(await back(flat), host, 'matmul views');
    });

    it('fill, scale, add, mul (overwrite and accumulate), addBias, biasBackward', async () => {
      const n = 1000;
      const a = rand(n, 5);
      const b = rand(n, 6);
      const o = rand(n, 7);
      const want = o.slice();
      ref.mul(want, a, b, n, true);
      const dO = dev(o);
      k.mul(dO, dev(a), dev(b), n, true);
      expectClose(await back(dO), want, 'mul acc');
      ref.mul(want, a, b, n, false);
      k.mul(dO, dev(a), dev(b), n, false);
      expectClose(await back(dO), want, 'mul');
      ref.add(want, a, b, n);
      k.add(dO, dev(a), dev(b), n);
      expectClose(await back(dO), want, 'add');
      ref.scale(want, 600, -1.5);
      k.scale(dO, 600, -1.5);
      expectClose(await back(dO), want, 'scale (a prefix)');
      ref.fill(want, 300, 0.25);
      k.fill(dO, 300, 0.25);
      expectClose(await back(dO), want, 'fill (a prefix)');

      const rows = 50;
      const cols = 20;
      const bias = rand(cols, 8);
      ref.addBias(want, bias, rows, cols);
      k.addBias(dO, dev(bias), rows, cols);
      expectClose(await back(dO), want, 'addBias');
      const db = rand(cols, 9);
      const wantDb = db.slice();
      ref.biasBackward(wantDb, a, rows, cols);
      const dDb = dev(db);
      k.biasBackward(dDb, dev(a), rows, cols);
      expectClose(await back(dDb), wantDb, 'biasBackward');
    });

    const acts: [Activation, 'relu' | 'gelu' | 'geluTanh' | 'silu' | 'relu2'][] = [
      ['relu', 'relu'],
      ['gelu', 'gelu'],
      ['geluTanh', 'geluTanh'],
      ['silu', 'silu'],
      ['relu2', 'relu2'],
    ];
    for (const [act, name] of acts)
      it(`${act} forward and backward, including large |x|`, async () => {
        const n = 600;
        const x = rand(n, 10, 6);
        x[0] = 40;
        x[1] = -40;
        x[2] = 0;
        const dy = rand(n, 11);
        const dx0 = rand(n, 12);
        const y = new Float32Array(n);
        ref[`${name}Forward`](y, x, n);
        const dY = dev(new Float32Array(n));
        k.activationForward(act, dY, dev(x), n);
        expectClose(await back(dY), y, `${act} forward`);
        const dx = dx0.slice();
        ref[`${name}Backward`](dx, dy, x, n);
        const dDx = dev(dx0);
        k.activationBackward(act, dDx, dev(dy), dev(x), n);
        expectClose(await back(dDx), dx, `${act} backward`);
      });

    it('soft-cap forward in place and backward', async () => {
      const n = 300;
      const x = rand(n, 13, 80);
      const want = x.slice();
      ref.softcapForward(want, want, n, 30);
      const d = dev(x);
      k.softcapForward(d, d, n, 30);
      expectClose(await back(d), want, 'softcap forward');
      const g = rand(n, 14);
      const wantG = g.slice();
      ref.softcapBackward(wantG, want, n, 30);
      const dg = dev(g);
      k.softcapBackward(dg, d, n, 30);
      expectClose(await back(dg), wantG, 'softcap backward');
    });

    it('embedding forward and backward (repeated ids, padding id skipped), positions', async () => {
      const V = 11;
      const C = 70;
      const N = 40;
      const ids = new Int32Array(N).map((_, i) => (i * 7) % V);
      const table = rand(V * C, 15);
      const out = new Float32Array(N * C);
      ref.embeddingForward(out, ids, table, N, C, 1.5);
      const dOut = dev(new Float32Array(N * C));
      k.embeddingForward(dOut, ids, dev(table), N, C, 1.5);
      expectClose(await back(dOut), out, 'embedding forward');

      const dtable0 = rand(V * C, 16);
      const g = rand(N * C, 17);
      const want = dtable0.slice();
      ref.embeddingBackward(want, g, ids, N, C, 1.5, 3);
      const dT = dev(dtable0);
      k.embeddingBackward(dT, dev(g), ids, N, C, 1.5, 3);
      expectClose(await back(dT), want, 'embedding backward');

      const B = 2;
      const T = N / B;
      const pe = rand(30 * C, 18);
      const x = out.slice();
      ref.positionalForward(x, pe, B, T, C, 4);
      const dX = dev(out);
      k.positionalForward(dX, dev(pe), B, T, C, 4);
      expectClose(await back(dX), x, 'positional forward');
      const wantPe = pe.slice();
      ref.positionalBackward(wantPe, g, B, T, C, 4);
      const dPe = dev(pe);
      k.positionalBackward(dPe, dev(g), B, T, C, 4);
      expectClose(await back(dPe), wantPe, 'positional backward');
    });

    for (const C of [48, 200])
      it(`layernorm (with and without bias) and rmsnorm (with and without weight), C ${C}`, async () => {
        const N = 9;
        const x = rand(N * C, 19, 3);
        for (let i = 0; i < C; i++) x[i] = (x[i] as number) + 5; // a row far from zero mean
        const w = rand(C, 20);
        const b = rand(C, 21);
        const dy = rand(N * C, 22);
        for (const withB of [true, false]) {
          const y = new Float32Array(N * C);
          const mean = new Float32Array(N);
          const rstd = new Float32Array(N);
          ref.layernormForward(y, mean, rstd, x, w, withB ? b : null, N, C, 1e-5);
          const [gy, gm, gr, gx, gw] = [dev(y.fill(0)), dev(mean), dev(rstd), dev(x), dev(w)];
          ref.layernormForward(y, mean, rstd, x, w, withB ? b : null, N, C, 1e-5);
          k.layernormForward(gy, gm, gr, gx, gw, withB ? dev(b) : null, N, C, 1e-5);
          expectClose(await back(gy), y, 'layernorm y');
          expectClose(await back(gm), mean, 'layernorm mean');
          expectClose(await back(gr), rstd, 'layernorm rstd');
          const dx = rand(N * C, 23);
          const dw = rand(C, 24);
          const db = rand(C, 25);
          const [gdx, gdw, gdb] = [dev(dx), dev(dw), dev(db)];
          ref.layernormBackward(dx, dw, withB ? db : null, dy, x, mean, rstd, w, N, C);
          k.layernormBackward(gdx, gdw, withB ? gdb : null, dev(dy), gx, gm, gr, gw, N, C);
          expectClose(await back(gdx), dx, 'layernorm dx');
          expectClose(await back(gdw), dw, 'layernorm dw');
          expectClose(await back(gdb), db, 'layernorm db');
        }
        for (const withW of [true, false]) {
          const y = new Float32Array(N * C);
          const rstd = new Float32Array(N);
          ref.rmsnormForward(y, rstd, x, withW ? w : null, N, C, 1e-6);
          const [gy, gr, gx] = [dev(new Float32Array(N * C)), dev(new Float32Array(N)), dev(x)];
          const gw = withW ? dev(w) : null;
          k.rmsnormForward(gy, gr, gx, gw, N, C, 1e-6);
          expectClose(await back(gy), y, 'rmsnorm y');
          expectClose(await back(gr), rstd, 'rmsnorm rstd');
          const dx = rand(N * C, 26);
          const dw = rand(C, 27);
          const [gdx, gdw] = [dev(dx), dev(dw)];
          ref.rmsnormBackward(dx, withW ? dw : null, dy, x, rstd, withW ? w : null, N, C);
          k.rmsnormBackward(gdx, withW ? gdw : null, dev(dy), gx, gr, gw, N, C);
          expectClose(await back(gdx), dx, 'rmsnorm dx');
          expectClose(await back(gdw), dw, 'rmsnorm dw');
        }
      });

    it('softmax with a causal-and-padding mask (a fully masked row gives zeros) and backward', async () => {
      const B = 2;
      const T = 6;
      const rows = B * T;
      const cols = T;
      const data = k.mem.allocBytes(B * T * T);
      for (let b = 0; b < B; b++)
        for (let t = 0; t < T; t++)
          for (let s = 0; s < T; s++) data[b * T * T + t * T + s] = s <= t && s < 4 - b ? 1 : 0;
      data.fill(0, T * T + 3 * T, T * T + 4 * T); // batch 1, row 3: fully masked
      const mask: MaskView = { data, batchStride: T * T, rowStride: T };
      const x = rand(rows * cols, 28, 4);
      const y = new Float32Array(rows * cols);
      ref.softmaxForward(y, x, rows, cols, mask, T);
      const gy = dev(new Float32Array(rows * cols).fill(7));
      k.softmaxForward(gy, dev(x), rows, cols, mask, T);
      const got = await back(gy);
      expectClose(got, y, 'softmax');
      expect(Array.from(got.subarray((T + 3) * cols, (T + 4) * cols))).toEqual([0, 0, 0, 0, 0, 0]);

      const wide = 300; // more columns than threads per row
      const xw = rand(3 * wide, 29, 10);
      const yw = new Float32Array(3 * wide);
      ref.softmaxForward(yw, xw, 3, wide, null, 3);
      const gyw = dev(yw.map(() => 0));
      k.softmaxForward(gyw, dev(xw), 3, wide, null, 3);
      expectClose(await back(gyw), yw, 'softmax unmasked');

      const dy = rand(3 * wide, 30);
      const dx = rand(3 * wide, 31);
      const gdx = dev(dx);
      ref.softmaxBackward(dx, dy, yw, 3, wide);
      k.softmaxBackward(gdx, dev(dy), gyw, 3, wide);
      expectClose(await back(gdx), dx, 'softmax backward');
    });

    for (const smoothing of [0, 0.1])
      it(`cross-entropy forward (loss on the device) and backward, smoothing ${smoothing}, an ignored row`, async () => {
        const N = 10;
        const V = 130;
        const logits = rand(N * V, 32, 5);
        const targets = new Int32Array(N).map((_, i) => (i * 37) % V);
        targets[4] = -100;
        const lse = new Float32Array(N);
        const { sum, count } = ref.crossEntropyForward(lse, logits, targets, N, V, -100, smoothing);
        const [gOut, gRows, gLse, gz] = [
          dev(new Float32Array(2)),
          dev(new Float32Array(2 * N)),
          dev(lse.map(() => 0)),
          dev(logits),
        ];
        k.crossEntropyForward(gOut, gRows, gLse, gz, targets, N, V, -100, smoothing);
        expectClose(await back(gLse), lse, 'lse');
        expectClose(await back(gOut), new Float32Array([sum, count]), 'loss sum and count');
        expect(count).toBe(N - 1);

        const d0 = rand(N * V, 33);
        const want = d0.slice();
        ref.crossEntropyBackward(want, logits, lse, targets, N, V, -100, smoothing, 1 / count);
        const gd = dev(d0);
        k.crossEntropyBackward(gd, gz, gLse, targets, N, V, -100, smoothing, 1 / count);
        expectClose(await back(gd), want, 'dlogits');
      });

    it('cross-entropy marks a target outside the vocabulary with a NaN loss', async () => {
      const gOut = dev(new Float32Array(2));
      k.crossEntropyForward(
        gOut,
        dev(new Float32Array(4)),
        dev(new Float32Array(2)),
        dev(rand(10, 34)),
        new Int32Array([1, 9]),
        2,
        5,
        -1,
        0,
      );
      expect(Number.isNaN((await back(gOut))[0])).toBe(true);
    });

    it('sumSquares on the device', async () => {
      const x = rand(5000, 35);
      const out = dev(new Float32Array(1));
      k.sumSquares(out, dev(x), x.length);
      expectClose(await back(out), new Float32Array([ref.sumSquares(x, x.length)]), 'sumSquares');
    });

    it('adamStep with and without the decay mask, three steps', async () => {
      const n = 700;
      const p = rand(n, 36);
      const decay = new Uint8Array(n).map((_, i) => (i % 3 === 0 ? 1 : 0));
      for (const mask of [decay, null]) {
        const [wp, wm, wv] = [p.slice(), new Float32Array(n), new Float32Array(n)];
        const [gp, gm, gv] = [dev(p), dev(wm), dev(wv)];
        for (let step = 1; step <= 3; step++) {
          const g = rand(n, 40 + step);
          const opts: AdamParams = { lr: 1e-2, beta1: 0.9, beta2: 0.95, eps: 1e-8, weightDecay: 0.1, step };
          ref.adamStep(wp, g, wm, wv, n, opts, mask);
          k.adamStep(gp, dev(g), gm, gv, n, opts, mask);
        }
        expectClose(await back(gp), wp, 'adam params');
        expectClose(await back(gm), wm, 'adam m');
        expectClose(await back(gv), wv, 'adam v');
      }
    });

    it('rope forward and inverse on strided rows (partial rotation R < D)', async () => {
      const [B, T, H, D, R, start] = [2, 3, 2, 8, 6, 2];
      const rowStride = H * D + 4; // q inside a wider fused row
      const batchStride = T * rowStride + 3;
      const x = rand(B * batchStride, 50);
      const half = R / 2;
      const cos = rand((start + T) * half, 51);
      const sin = rand((start + T) * half, 52);
      for (const inverse of [false, true]) {
        const want = x.slice();
        ref.rope(want, cos, sin, B, T, H, D, R, start, batchStride, rowStride, inverse);
        const gx = dev(x);
        k.rope(gx, dev(cos), dev(sin), B, T, H, D, R, start, batchStride, rowStride, inverse);
        expectClose(await back(gx), want, `rope inverse ${inverse}`);
      }
    });

    it("dropout's mask is bit-identical to the reference's, at an unaligned view; forward and backward", async () => {
      const n = 1001;
      const keys: [number, number][] = [
        [0x12345678, 0x9abcdef0],
        [-5, 2 ** 32 + 7],
      ];
      for (const p of [0.1, 0.5, 1]) {
        for (const [key0, key1] of keys) {
          const want = new Uint8Array(n);
          ref.dropoutMask(want, n, p, key0, key1);
          const flat = k.mem.allocBytes(n + 6);
          flat.fill(9);
          k.mem.upload(flat);
          const keep = flat.subarray(3, 3 + n);
          k.dropoutMask(keep, n, p, key0, key1);
          await k.mem.download(flat);
          expect(Array.from(flat.subarray(0, 3)), 'bytes before the view untouched').toEqual([9, 9, 9]);
          expect(Array.from(flat.subarray(3 + n)), 'bytes after the view untouched').toEqual([9, 9, 9]);
          expect(keep.every((b, i) => b === want[i])).toBe(true);
        }
      }
      const keep = k.mem.allocBytes(n);
      ref.dropoutMask(keep, n, 0.3, 11, 12);
      k.dropoutMask(keep, n, 0.3, 11, 12);
      const x = rand(n, 53);
      for (const p of [0.3, 0]) {
        const y = new Float32Array(n);
        ref.dropoutForward(y, x, keep, n, p);
        const gy = dev(new Float32Array(n));
        k.dropoutForward(gy, dev(x), keep, n, p);
        expectClose(await back(gy), y, `dropout forward p ${p}`);
        const dx = rand(n, 54);
        const gdx = dev(dx);
        ref.dropoutBackward(dx, x, keep, n, p);
        k.dropoutBackward(gdx, dev(x), keep, n, p);
        expectClose(await back(gdx), dx, `dropout backward p ${p}`);
      }
    });
  },
);
