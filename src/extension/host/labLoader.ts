/**
 * Loading the engine-side module (src/lab/editor/extensionLab.ts: reading run folders, size
 * estimates, corpus previews) that the extension host calls. In desktop VS Code it is a
 * separate bundle (dist/extensionLab.js) required on first use, so activating the
 * extension costs only its small bundle (extensionHost.node.ts); on the web it is part of the one
 * browser bundle (extensionHost.web.ts), which cannot load a second file.
 *
 * Leaves out: retrying a failed load (a broken install stays broken; the error says so).
 */

/** The module's exports. */
export type HostLab = typeof import('../../lab/editor/extensionLab');

/** Desktop's module (dist/extensionLab.js): the same, plus the PyTorch engine's host side. */
export type NodeHostLab = typeof import('../../lab/editor/extensionLab.node');

/**
 * The PyTorch engine's host side: the torch probe and checks (Python in a child process), a run's pending snapshot
 * weights.
 */
export type PytorchLab = Pick<
  NodeHostLab,
  'probeTorch' | 'checkOptions' | 'describeEnv' | 'batchShareProblem' | 'pendingSnapshotWeights'
>;

/** Gives the module, loading it on the first `get` where it is separate. */
export interface LabLoader<T extends HostLab = HostLab> {
  /** The module (loaded now if this is the first call). */
  get(): T;
  /** True once the module is loaded. */
  readonly isLoaded: boolean;
}
