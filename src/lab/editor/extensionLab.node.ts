/**
 * Desktop VS Code's engine-side module (bundled as dist/extensionLab.js): everything of
 * extensionLab.ts, plus the PyTorch engine's side the extension needs, which needs Node — the torch probe and
 * checks for Configure's review and Train (Python in a child process), the batch-share
 * check, and a run's pending snapshot weights (listed with Node's `fs`) for the dashboard.
 *
 * Leaves out: the web, whose bundle holds extensionLab.ts alone (the PyTorch engine is not offered there).
 */

export * from './extensionLab';
export { checkOptions, describeEnv, probeTorch } from '../pytorch/probe.node';
export { batchShareProblem } from '../pytorch/pytorchSession.node';
export { pendingSnapshotWeights } from '../pytorch/follow.node';
