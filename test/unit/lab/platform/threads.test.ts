/**
 * The worker-thread helpers of the WebAssembly backend: they start, serve kernels on the
 * shared memory, give results bit-identical to one thread (every kernel that splits work,
 * at sizes above the parallel threshold), and stop cleanly.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { build } from 'esbuild';
import { afterAll, describe, expect, it } from 'vitest';
import type { AttentionDims, Backend, FloatArray } from '../../../../src/engine/backend';
import { drawKeepMask } from '../../../../src/engine/ops/dropout';
import { ropeTables } from '../../../../src/engine/ops/rope';
import type { WasmBackend } from '../../../../src/engine/backends/wasm/wasmBackend';
import { createWasmBackend } from '../../../../src/engine/backends/wasm/wasmBackend';
import { Rng } from '../../../../src/engine/rng';
import { createWasmThreads } from '../../../../src/lab/platform/threads.node';
import { causalMask, paddingMask } from '../../engine/ops/attentionFixtures';

function filled(be: Backend, n: number, rng: Rng, std = 1): FloatArray {
  const x = be.alloc(n);
  for (let i = 0; i < n; i++) x[i] = rng.normal() * std;
  return x;
}

/** Runs a fixed sequence of large kernels on `be` and returns every output, concatenated. */
function workload(be: Backend): number[] {
  const rng = new Rng(3);
  const out: number[] = [];
  const keep = (x: FloatArray): void => {
    for (const v of x) out.push(v); // not push(...x): arrays this long overflow the call stack
  };
  const [M, N, K] = [130, 97, 75];
  for (const [tA, tB] of [
    [false, false],
    [false, true],
    [true, false],
    [true, true],
  ] as const) {
    const c = filled(be, M * N, rng);
    be.matmul(c, filled(be, M * K, rng), filled(be, K * N, rng), M, N, K, tA, tB, true);
    keep(c);
  }
  const c1 = be.alloc(3 * 700);
  be.matmul(c1, filled(be, 3 * 300, rng), filled(be, 700 * 300, rng), 3, 700, 300, false, true, false);
  keep(c1);
  const [B, T, H, D] = [4, 40, 4, 16];
  const C = H * D;
  const dims: AttentionDims = { B, T, S: T, H, D, qBatchStride: T * C, kvBatchStride: T * C, scale: 0.25 };
  const q = filled(be, B * T * C, rng),
    k = filled(be, B * T * C, rng),
    v = filled(be, B * T * C, rng);
  const att = be.alloc(B * T * C),
    probs = be.alloc(B * H * T * T);
  const drop = new Uint8Array(B * H * T * T);
  drawKeepMask(drop, drop.length, 0.1, new Rng(5));
  be.attentionForward(att, probs, q, k, v, dims, causalMask(T), drop, 0.1);
  const dq = be.alloc(B * T * C),
    dk = be.alloc(B * T * C),
    dv = be.alloc(B * T * C);
  be.attentionBackward(dq, dk, dv, filled(be, B * T * C, rng), probs, q, k, v, dims, drop, 0.1);
  [att, probs, dq, dk, dv].forEach(keep);
  // Again without dropout (probs read in place), under a padding mask whose tiles attend
  // different numbers of keys (scratch left by one tile is cleared for the next).
  const pad = paddingMask([T, 7, T - 1, 2], T);
  be.attentionForward(att, probs, q, k, v, dims, pad, null, 0);
  be.attentionBackward(dq, dk, dv, filled(be, B * T * C, rng), probs, q, k, v, dims, null, 0);
  [att, probs, dq, dk, dv].forEach(keep);
  const n = 70001;
  for (const p of [0.1, 0.5]) {
    // Odd lengths, in the backend's memory and in a plain array (staged out): chunks split the mask.
    for (const bytes of [be.allocBytes ? be.allocBytes(n) : new Uint8Array(n), new Uint8Array(n + 2)]) {
      be.dropoutMask(bytes, n, p, 0xdeadbeef, 12345);
      out.push(...Array.from(bytes));
    }
  }
  const x = filled(be, n, rng),
    y = be.alloc(n),
    dx = filled(be, n, rng);
  be.geluForward(y, x, n);
  be.geluBackward(dx, filled(be, n, rng), x, n);
  keep(y);
  keep(dx);
  const yt = be.alloc(n),
    dxt = filled(be, n, rng);
  be.geluTanhForward(yt, x, n);
  be.geluTanhBackward(dxt, filled(be, n, rng), x, n);
  keep(yt);
  keep(dxt);
  const [R, W] = [600, 130];
  const lnY = be.alloc(R * W),
    mean = be.alloc(R),
    rstd = be.alloc(R),
    w = filled(be, W, rng),
    bias = filled(be, W, rng);
  const lnX = filled(be, R * W, rng);
  be.layernormForward(lnY, mean, rstd, lnX, w, bias, R, W, 1e-5);
  const lnDx = be.alloc(R * W),
    dw = be.alloc(W),
    db = be.alloc(W);
  be.layernormBackward(lnDx, dw, db, filled(be, R * W, rng), lnX, mean, rstd, w, R, W);
  [lnY, lnDx, dw, db].forEach(keep);
  // Issue 29's kernels: RMSNorm (rows; dw by columns), RoPE (head rows), the element-wise ones.
  const rmsY = be.alloc(R * W),
    rmsRstd = be.alloc(R),
    rmsDx = filled(be, R * W, rng),
    rmsDw = filled(be, W, rng);
  be.rmsnormForward(rmsY, rmsRstd, lnX, w, R, W, 1e-6);
  be.rmsnormBackward(rmsDx, rmsDw, filled(be, R * W, rng), lnX, rmsRstd, w, R, W);
  be.rmsnormBackward(rmsDx, null, filled(be, R * W, rng), lnX, rmsRstd, null, R, W);
  [rmsY, rmsRstd, rmsDx, rmsDw].forEach(keep);
  const [rB, rT, rH, rD, rR] = [4, 91, 8, 64, 48];
  const rq = filled(be, rB * rT * rH * rD, rng);
  const { cos, sin } = ropeTables(10000, rR, rT + 2, (k) => be.alloc(k));
  be.rope(rq, cos, sin, rB, rT, rH, rD, rR, 2, rT * rH * rD, rH * rD, false);
  keep(rq);
  be.rope(rq, cos, sin, rB, rT, rH, rD, rR, 2, rT * rH * rD, rH * rD, true);
  keep(rq);
  const n2 = 140001;
  const a = filled(be, n2, rng, 3),
    b2 = filled(be, n2, rng),
    act = be.alloc(n2),
    dAct = filled(be, n2, rng);
  be.siluForward(act, a, n2);
  be.siluBackward(dAct, b2, a, n2);
  [act, dAct].forEach(keep);
  be.relu2Forward(act, a, n2);
  be.relu2Backward(dAct, b2, a, n2);
  [act, dAct].forEach(keep);
  be.mul(act, a, b2, n2, false);
  be.mul(dAct, a, b2, n2, true);
  [act, dAct].forEach(keep);
  be.softcapForward(act, a, n2, 2.5);
  be.softcapBackward(dAct, act, n2, 2.5);
  [act, dAct].forEach(keep);
  const [Nr, V] = [300, 257];
  const logits = filled(be, Nr * V, rng, 3),
    lse = be.alloc(Nr);
  const targets = Int32Array.from({ length: Nr }, (_, i) => (i % 7 === 0 ? -1 : (i * 31) % V));
  const ce = be.crossEntropyForward(lse, logits, targets, Nr, V, -1, 0.1);
  const dlog = be.alloc(Nr * V);
  be.crossEntropyBackward(dlog, logits, lse, targets, Nr, V, -1, 0.1, 1 / ce.count);
  out.push(ce.sum, ce.count);
  keep(dlog);
  const P = 90001;
  const params = filled(be, P, rng),
    grads = filled(be, P, rng),
    m = be.alloc(P),
    vv = be.alloc(P);
  out.push(be.sumSquares(grads, P));
  const mask = Uint8Array.from({ length: P }, (_, i) => (i % 3 === 0 ? 1 : 0));
  be.adamStep(
    params,
    grads,
    m,
    vv,
    P,
    { lr: 1e-3, beta1: 0.9, beta2: 0.98, eps: 1e-9, weightDecay: 0.1, step: 3 },
    mask,
  );
  keep(params);
  const bsum = be.alloc(W);
  be.biasBackward(bsum, lnDx, R, W);
  keep(bsum);
  return out;
}

describe('wasm helper threads', () => {
  const threads = createWasmThreads(1);
  const parallel = createWasmBackend({ runner: threads }) as WasmBackend;
  afterAll(() => parallel.dispose());

  it('start, report ready, and give bit-identical results to a single thread', async () => {
    await threads.whenReady();
    expect(parallel.threads).toBe(2);
    expect(parallel.threadsReady()).toBe(true);
    const alone = createWasmBackend() as WasmBackend;
    const single = workload(alone);
    const multi = workload(parallel);
    expect(alone.jobStats().parallel).toBe(0);
    expect(parallel.jobStats().parallel).toBeGreaterThanOrEqual(30); // the large kernels above were shared
    expect(multi.length).toBe(single.length);
    let firstDiff = -1;
    for (let i = 0; i < single.length && firstDiff < 0; i++) if (!Object.is(single[i], multi[i])) firstDiff = i;
    expect(firstDiff, `first differing output at ${firstDiff}`).toBe(-1);
  });

  it('stop on dispose; the backend keeps working on one thread', () => {
    parallel.dispose();
    parallel.dispose();
    expect(parallel.threadsReady()).toBe(false);
    const x = parallel.alloc(100000);
    parallel.fill(x, 100000, 2);
    expect(parallel.sumSquares(x, 100000)).toBe(400000);
  });
});

describe('wasm helper threads in a process of their own', () => {
  it('never keep the process alive: a script that never calls dispose still exits', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'wasm-threads-'));
    try {
      const entry = path.join(dir, 'entry.ts');
      const src = (p: string): string => JSON.stringify(path.resolve(__dirname, p));
      writeFileSync(
        entry,
        [
          `import { createWasmBackend } from ${src('../../../../src/engine/backends/wasm/wasmBackend')};`,
          `import { createWasmThreads } from ${src('../../../../src/lab/platform/threads.node')};`,
          'const threads = createWasmThreads(1);',
          'const be = createWasmBackend({ runner: threads })!;',
          'void threads.whenReady().then(() => {',
          '  const x = be.alloc(1 << 20);',
          '  be.fill(x, 1 << 20, 2);',
          '  console.log(`sum ${be.sumSquares(x, 1 << 20)} ready ${be.threadsReady()}`);',
          '});',
        ].join('\n'),
      );
      const out = path.join(dir, 'entry.js');
      await build({
        entryPoints: [entry],
        outfile: out,
        bundle: true,
        platform: 'node',
        format: 'cjs',
        logLevel: 'silent',
      });
      const r = spawnSync(process.execPath, [out], { timeout: 20_000, encoding: 'utf8' });
      expect(r.signal, 'the process had to be killed: a helper kept it alive').toBeNull();
      expect(r.status).toBe(0);
      expect(r.stdout.trim()).toBe('sum 4194304 ready true');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
