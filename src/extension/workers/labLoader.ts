/**
 * Loads the engine-side module (dist/extensionLab.js, bundled from src/lab/workers/hostLab.ts) on
 * first use, so activating the extension costs only this small bundle: the engine, the
 * tokenizers and the lab are parsed when the runs tree, the dashboard or a command first
 * needs them, not before.
 *
 * Leaves out: retrying a failed load (a broken install stays broken; the error says so).
 */

import * as path from 'node:path';

/** The lazily loaded module's exports. */
export type HostLab = typeof import('../../lab/workers/hostLab');

/** Loads dist/extensionLab.js once, on the first `get`. */
export class LabLoader {
  private loaded: HostLab | null = null;

  constructor(private readonly distDir: string) {}

  /** The module (loaded now if this is the first call). */
  get(): HostLab {
    if (!this.loaded) {
      const file = path.join(this.distDir, 'extensionLab.js');
      try {
        // A run-time require of a separate bundle: esbuild leaves it alone, so the
        // engine is not part of dist/extension.js.
        this.loaded = require(file) as HostLab;
      } catch (e) {
        throw new Error(`Attention Lab could not load ${file} (${String((e as Error).message).split('\n')[0]}); reinstall the extension.`, { cause: e });
      }
    }
    return this.loaded;
  }

  /** True once the module is loaded. */
  get isLoaded(): boolean {
    return this.loaded !== null;
  }
}
