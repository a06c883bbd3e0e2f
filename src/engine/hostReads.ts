/**
 * Jobs that read the model's numbers on the host between kernel calls (a window's logits, a
 * layer's read-out), written once for every backend: a job is a generator that yields each view
 * just before it reads it. On a host backend the views are the memory and nothing waits
 * (`runReads`); on a device backend (WebGPU: `Backend.download`) each yielded view is read back
 * first (`runReadsAsync`), so the job waits only where it reads. A job that decodes yields its
 * stepper instead, which reads back its own outputs (`settle`; decode/stepperContract.ts).
 */

import type { Backend, FloatArray } from './backend';

/** What reads back its own outputs: a decode stepper (its `deferred` and `settle`). */
export interface Settles {
  readonly deferred?: boolean;
  settle?(): Promise<void>;
}

/** A job that yields every view it is about to read on the host, or a stepper to settle (see the file comment). */
export type ReadSteps<T> = Generator<FloatArray | Settles, T, void>;

/** Steps that yield after each call of `stepper` (a decode's `DecodeSteps`) as a job's steps that settle it. */
export function* settling<T>(stepper: Settles, steps: Generator<void, T, void>): ReadSteps<T> {
  for (;;) {
    const r = steps.next();
    if (r.done === true) return r.value;
    yield stepper;
  }
}

const isView = (x: FloatArray | Settles): x is FloatArray => ArrayBuffer.isView(x);

/** Runs `steps` on a host backend; a device backend is refused (stale views): use {@link runReadsAsync}. */
export function runReads<T>(k: Backend, steps: ReadSteps<T>): T {
  const refuse = (): never => {
    throw new Error(`The ${k.name} backend's memory is on a device: run this job with runReadsAsync.`);
  };
  if (k.download) refuse();
  for (;;) {
    const r = steps.next();
    if (r.done === true) return r.value;
    if (!isView(r.value) && r.value.deferred === true) refuse();
  }
}

/** Runs `steps` on any backend, reading each yielded view back from a device first. */
export async function runReadsAsync<T>(k: Backend, steps: ReadSteps<T>): Promise<T> {
  const download = k.download?.bind(k);
  for (;;) {
    const r = steps.next();
    if (r.done === true) return r.value;
    if (!isView(r.value)) await r.value.settle?.();
    else if (download) await download(r.value);
  }
}
