/**
 * Jobs that read the model's numbers on the host between kernel calls (a window's logits, a
 * layer's read-out), written once for every backend: a job is a generator that yields each view
 * just before it reads it. On a host backend the views are the memory and nothing waits
 * (`runReads`); on a device backend (WebGPU: `Backend.download`) each yielded view is read back
 * first (`runReadsAsync`), so the job waits only where it reads.
 *
 * Leaves out: decoding, whose steppers read back their own outputs (decode/stepperContract.ts `DecodeSteps`).
 */

import type { Backend, FloatArray } from './backend';

/** A job that yields every view it is about to read on the host (see the file comment). */
export type ReadSteps<T> = Generator<FloatArray, T, void>;

/** Runs `steps` on a host backend; a device backend is refused (stale views): use {@link runReadsAsync}. */
export function runReads<T>(k: Backend, steps: ReadSteps<T>): T {
  if (k.download) throw new Error(`The ${k.name} backend's memory is on a device: run this job with runReadsAsync.`);
  for (;;) {
    const r = steps.next();
    if (r.done === true) return r.value;
  }
}

/** Runs `steps` on any backend, reading each yielded view back from a device first. */
export async function runReadsAsync<T>(k: Backend, steps: ReadSteps<T>): Promise<T> {
  const download = k.download?.bind(k);
  for (;;) {
    const r = steps.next();
    if (r.done === true) return r.value;
    if (download) await download(r.value);
  }
}
