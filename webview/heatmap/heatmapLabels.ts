/**
 * How densely a heatmap's axes are labelled: every token while a cell is at least 7 px, the
 * label's font shrinking with the cell (7–12 px, one rule for rows and columns); below that
 * every n-th token, and the view says so. Pure, so the unit tests pin it.
 *
 * Leaves out: the labels themselves (heatmapView.ts).
 */

/** Smallest cell (px) that gets every token labelled, and the smallest label font. */
export const MIN_LABEL_PX = 7;

/** Font size of the labels of cells `cell` px tall/wide (the same rule for rows and columns). */
export function labelFontPx(cell: number): number {
  return Math.min(12, Math.max(MIN_LABEL_PX, cell - 1));
}

/** Label every how-many-th token for cells of `cell` px: 1 (all) from {@link MIN_LABEL_PX} on. */
export function labelEvery(cell: number): number {
  return cell >= MIN_LABEL_PX ? 1 : Math.ceil(MIN_LABEL_PX / cell);
}
