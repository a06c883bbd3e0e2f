/**
 * Test helper (not a test file): every number or string of a job's output, walked in order through arrays,
 * typed arrays and objects, so two outputs of one job (two backends, two plans) compare value for value.
 */

import { expect } from 'vitest';

/** The largest |a[i] − b[i]| of two lists of one length (a different length fails the test). */
export function worst(a: ArrayLike<number>, b: ArrayLike<number>): number {
  expect(a.length).toBe(b.length);
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs((a[i] as number) - (b[i] as number)));
  return m;
}

/** Every number in `x`, in order. */
export function numbersIn(x: unknown): number[] {
  if (typeof x === 'number') return [x];
  if (Array.isArray(x)) return x.flatMap(numbersIn);
  if (x && typeof x === 'object') return Object.values(x).flatMap(numbersIn);
  return [];
}

/** Every finite number in `x`, in order (NaN and ±∞ left out). */
export function finiteIn(x: unknown): number[] {
  return numbersIn(x).filter(Number.isFinite);
}

/** Every string in `x`, in order (token labels: the same tokens must come out). */
export function stringsIn(x: unknown): string[] {
  if (typeof x === 'string') return [x];
  if (Array.isArray(x)) return x.flatMap(stringsIn);
  if (x && typeof x === 'object') return Object.values(x).flatMap(stringsIn);
  return [];
}
