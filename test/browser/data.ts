/**
 * The data the browser tests load: the recorded fixtures (decoded: typed arrays revived) and
 * the synthetic padded run, with the dashboard/didLoadRuns message that lists all three, and
 * small page helpers shared by the test files.
 */

import type { Page } from 'playwright-core';
import { expect } from 'vitest';
import type { RunState } from '../../src/protocol/webview';
import { decodeArrays } from '../../src/common/wireCodec';
import { fixture, frames, pixel } from './harness';
import type { PageLog } from './harness';
import { paddedRun } from './synthetic';

export const enc = decodeArrays(fixture('encdec.json')) as RunState;
export const dec = decodeArrays(fixture('decoder.json')) as RunState;
export const padded = paddedRun();
export const load = { type: 'dashboard/didLoadRuns', runs: [enc, dec, padded], selectedId: enc.run.id };

/** An attribute of the first match. */
export async function attr(page: Page, selector: string, name: string): Promise<string | null> {
  return page.locator(selector).first().getAttribute(name);
}

/** Shows a tab. */
export async function tab(page: Page, id: string): Promise<void> {
  await page.click(`#tab-${id}`);
  await frames(page);
}

/** Selects a run in the header. */
export async function selectRun(page: Page, id: string): Promise<void> {
  await page.selectOption('#run-picker', id);
  await frames(page);
}

/** The legend's ramp colour for probability p (the legend paints x/(W−1) at column x). */
export async function legendColor(page: Page, p: number): Promise<number[]> {
  const w = Number(await attr(page, '.panel.attention .legend-ramp', 'width'));
  return pixel(page, '.panel.attention .legend-ramp', Math.round(p * (w - 1)), 5);
}

/** No request left the page and nothing was logged as an error. */
export function clean(log: PageLog): void {
  expect(log.blocked).toEqual([]);
  expect(log.errors).toEqual([]);
}
