/**
 * Where a run extended with more steps begins each new schedule segment, as markers for the
 * training curves: the x of the segment's first boundary (its `fromStep`, the last step of the
 * segment before) in the chart's x units, and a label saying what the learning rate does
 * there ("segment 2: +500 steps, warm restart").
 *
 * Leaves out: drawing the markers (panels/curves.ts) and the schedule formulas (the engine).
 */

import type { RunSegment, SegmentSchedule } from '../../src/protocol/data';
import { xColumnName } from './series';
import type { XMode } from './series';
import type { StepColumns } from './stepColumns';

/** One segment start on a chart. */
export interface SegmentMarker {
  /** The step the segment starts after. */
  readonly step: number;
  /** Its position in the chart's x units. */
  readonly x: number;
  readonly label: string;
  /** What it marks (default a segment start); a class of its own, so each can be styled and found. */
  readonly kind?: 'segment' | 'threshold';
}

/** What the learning rate does at the start of a segment with this schedule. */
const CONTINUATION: { readonly [S in SegmentSchedule]: string } = {
  restart: 'warm restart',
  noam: "paper's schedule continues",
  constant: 'constant rate continues',
  cosine: 'cosine decay',
  wsd: 'warmup–stable–decay',
};

/** "segment 2: +500 steps, warm restart" for the segment at `index` (0-based). */
export function segmentLabel(segment: RunSegment, index: number): string {
  const n = segment.toStep - segment.fromStep;
  return `segment ${index + 1}: +${n} step${n === 1 ? '' : 's'}, ${CONTINUATION[segment.schedule]}`;
}

/**
 * Markers of every segment after the first. In step mode a marker sits at its `fromStep`;
 * in tokens or time mode at that step's logged value, so a segment the run has not reached
 * yet has no marker there.
 */
export function segmentMarkers(segments: readonly RunSegment[], steps: StepColumns, mode: XMode): SegmentMarker[] {
  return segments.flatMap((segment, i) => {
    const m = i === 0 ? null : stepMarker(segment.fromStep, segmentLabel(segment, i), steps, mode);
    return m ? [m] : [];
  });
}

/**
 * A marker at `step`: in step mode at the step itself; in tokens or time mode at that step's
 * logged value, so a step not logged (yet) has no marker (null).
 */
export function stepMarker(
  step: number,
  label: string,
  steps: StepColumns,
  mode: XMode,
  kind?: SegmentMarker['kind'],
): SegmentMarker | null {
  const k = kind ? { kind } : {};
  if (mode === 'step') return { step, x: step, label, ...k };
  const row = steps.indexOfStep(step);
  if (row < steps.length && steps.at('step', row) === step)
    return { step, x: steps.column(xColumnName(mode))[row] as number, label, ...k };
  return null;
}
