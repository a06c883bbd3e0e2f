/**
 * "Fine-tune…" on an imported run, the parts without VS Code: where its documents can come
 * from (the workspace's documents as Train finds them, or files chosen in a dialog, which in
 * the web and code-server's simple dialog picks one), and the confirmation that says how long
 * the fine-tuning will take on this machine, measured before it starts.
 *
 * Leaves out: the dialogs, the measuring (the model worker's calibrate) and the training
 * (trainCommand.ts).
 */

import { formatCount, formatDuration } from '../../common/format';

/** Where the documents of a fine-tuning come from. */
export type FineTuneSource = 'workspace' | 'files';

/** A choice of where the documents come from. */
export interface SourceItem {
  readonly label: string;
  readonly description: string;
  readonly value: FineTuneSource;
}

/**
 * The choices of documents: the workspace's (the `include` glob, as Train takes them) where a
 * trusted folder is open, then files picked by hand.
 */
export function fineTuneSources(include: string, workspaceFiles: boolean): SourceItem[] {
  return [
    ...(workspaceFiles
      ? [
          {
            label: '$(search) Documents in this workspace',
            description: `every file matching ${include}, as Train takes them`,
            value: 'workspace' as const,
          },
        ]
      : []),
    { label: '$(files) Choose files…', description: 'one or more text files', value: 'files' },
  ];
}

/** What was measured of one training step (the model worker's calibrate). */
export interface StepTime {
  readonly secondsPerStep: number;
  readonly threads: number;
  readonly backend: string;
}

/**
 * The confirmation's text: what is fine-tuned on how many files for how many steps, and how
 * long that takes here (or why it could not be measured).
 */
export function fineTuneEstimate(
  name: string,
  files: number,
  steps: number,
  time: StepTime | { readonly error: string },
): string {
  const what =
    `Fine-tune ${name} on ${formatCount(files)} ${files === 1 ? 'file' : 'files'} for ` +
    `${formatCount(steps)} ${steps === 1 ? 'step' : 'steps'}`;
  if ('error' in time) return `${what}? (The time per step could not be measured: ${time.error})`;
  const on = `${time.threads} ${time.threads === 1 ? 'thread' : 'threads'}, ${time.backend} backend`;
  return (
    `${what}: ≈ ${formatDuration(time.secondsPerStep * steps)} on this machine (≈ ` +
    `${formatDuration(time.secondsPerStep)} per step on ${on}, measured just now).`
  );
}
