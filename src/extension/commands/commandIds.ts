/**
 * The ids of every command package.json contributes, in one list: `commands.ts` must
 * register a handler for each (a mapped type), and a unit test checks the list against
 * the manifest, so the two cannot drift.
 *
 * Leaves out: titles and menus (package.json).
 */

/** Every contributed command. */
export const COMMAND_IDS = [
  'attentionLab.configure',
  'attentionLab.train',
  'attentionLab.stop',
  'attentionLab.togglePause',
  'attentionLab.decode',
  'attentionLab.openDashboard',
  'attentionLab.openRun',
  'attentionLab.findRuns',
  'attentionLab.export',
  'attentionLab.evaluateFiles',
  'attentionLab.openPytorchCheckpoint',
  'attentionLab.scoreSelection',
  'attentionLab.showAttention',
  'attentionLab.clearScores',
  'attentionLab.refreshRuns',
  'attentionLab.continueTraining',
  'attentionLab.run.openDashboard',
  'attentionLab.run.resume',
  'attentionLab.run.fineTune',
  'attentionLab.run.decode',
  'attentionLab.run.export',
  'attentionLab.run.reveal',
  'attentionLab.run.delete',
  'attentionLab.pickActiveRun',
  'attentionLab.run.setActive',
  'attentionLab.run.rename',
  'attentionLab.run.editNote',
] as const;

/** A contributed command id. */
export type CommandId = (typeof COMMAND_IDS)[number];
