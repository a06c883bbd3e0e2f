/**
 * The learning rate a run trains with when its settings say 0 ("the default"), declared
 * once for the lab that trains with it (lab/runs/specModel.ts) and the pages that show it
 * (the dashboard's compare table), so a table never shows "lr 0" for a rate of 1e-3.
 *
 * Leaves out: the schedules (engine/optim/schedule.ts) and the optimizer's other settings.
 */

/** AdamW's peak learning rate when `training.lr` is 0 (nanoGPT's small-model rate). */
export const DEFAULT_ADAMW_LR = 1e-3;
/** The 'paper' optimizer's noam factor when `training.lr` is 0 (the paper's schedule as written). */
export const DEFAULT_NOAM_FACTOR = 1;

/** The learning rate `training` trains with: its own, or the default when it says 0. */
export function learningRateUsed(training: { readonly optimizer: string; readonly lr: number }): number {
  if (training.lr > 0) return training.lr;
  return training.optimizer === 'paper' ? DEFAULT_NOAM_FACTOR : DEFAULT_ADAMW_LR;
}

/** The learning rate in words: "0.001 (default)"; for the paper's optimizer, its noam factor. */
export function learningRateText(training: { readonly optimizer: string; readonly lr: number }): string {
  const used = String(learningRateUsed(training));
  const text = training.optimizer === 'paper' ? `noam factor ${used}` : used;
  return training.lr > 0 ? text : `${text} (default)`;
}
