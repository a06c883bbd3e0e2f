/**
 * What the editor offers when an error stopped a run rather than failed it (lab/base/errorCodes.ts's
 * `stopsRun`): a full disk's run resumes as it was, once there is space; a run a lost GPU device
 * stopped resumes on WebAssembly (the GPU may not come back until VS Code restarts, if at all).
 *
 * Leaves out: showing the notification and resuming (trainCommand.ts).
 */

import type { BackendKind } from '../../protocol/data';

/** The button on a stopped run's notification: its title, and the backend the resume asks for (null: the run's own). */
export interface ResumeAction {
  readonly title: string;
  readonly backend: BackendKind | null;
}

/** The resume a run stopped by an error of `code` is offered, or null when the code does not stop a run. */
export function resumeActionFor(code: string): ResumeAction | null {
  if (code === 'disk/full') return { title: 'Resume', backend: null };
  if (code === 'gpu/lost') return { title: 'Resume on WebAssembly', backend: 'wasm' };
  return null;
}
