/**
 * After a window reload (or a crash) while a run trained: "Training of run X was interrupted
 * at step 120 (last checkpoint)." with a Resume button that continues it from there. Each
 * interruption is announced once (remembered per workspace by run folder and step), so a
 * run left interrupted does not nag at every start; resuming and being interrupted again
 * is a new interruption.
 *
 * No VS Code import: the caller passes how to show a warning with buttons.
 *
 * Leaves out: deciding that a run was interrupted (protocol/runStatus.ts) and resuming it
 * (training/trainCommand.ts).
 */

import type { RunItem } from './runsModel';
import type { StateStore } from './runStore';

const ANNOUNCED_KEY = 'attentionLab.announcedInterruptions';

/** What is remembered of an announced interruption. */
export function interruptionKey(r: RunItem): string {
  return `${r.runDir}@${r.step}`;
}

/** The notification's text for an interrupted run. */
export function interruptedMessage(r: RunItem): string {
  if (!r.hasModel)
    return (
      `Training of run ${r.name} was interrupted before its first checkpoint; there is nothing ` +
      `to resume — train it again.`
    );
  return `Training of run ${r.name} was interrupted at step ${r.step} (last checkpoint).`;
}

/** Shows a warning with buttons; resolves to the button pressed (VS Code's showWarningMessage). */
export type Warn = (message: string, ...actions: string[]) => Thenable<string | undefined>;

/**
 * Announces the interrupted runs in `runs` not announced before; `resume` runs when the user
 * presses Resume. Resolves to the messages shown (without waiting for the user).
 */
export async function announceInterrupted(
  state: StateStore,
  runs: readonly RunItem[],
  warn: Warn,
  resume: (r: RunItem) => unknown,
): Promise<string[]> {
  const interrupted = runs.filter((r) => r.status === 'interrupted' && r.error === null);
  const seen = new Set(state.get<string[]>(ANNOUNCED_KEY, []));
  const fresh = interrupted.filter((r) => !seen.has(interruptionKey(r)));
  // Only the interruptions that still stand are remembered (the list does not grow forever).
  await state.update(ANNOUNCED_KEY, interrupted.map(interruptionKey));
  const shown: string[] = [];
  for (const r of fresh) {
    const msg = interruptedMessage(r);
    shown.push(msg);
    const actions = r.hasModel ? ['Resume'] : [];
    void warn(msg, ...actions).then((a) => {
      if (a === 'Resume') void resume(r);
    });
  }
  return shown;
}
