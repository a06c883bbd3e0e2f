/**
 * Desktop VS Code's way to load the engine-side module: dist/extensionLab.js, required on
 * first use (never at activation), so activating the extension costs only its small bundle.
 *
 * Leaves out: the web, whose one bundle holds the module (extensionHost.web.ts).
 */

import * as path from 'node:path';
import type { LabLoader, NodeHostLab } from './labLoader';

/** Requires dist/extensionLab.js once, on the first `get`. */
export function requireLab(distDir: string): LabLoader<NodeHostLab> {
  let loaded: NodeHostLab | null = null;
  return {
    get(): NodeHostLab {
      if (!loaded) {
        const file = path.join(distDir, 'extensionLab.js');
        try {
          // A run-time require of a separate bundle: esbuild leaves it alone, so the
          // engine is not part of dist/extension.js.
          loaded = require(file) as NodeHostLab;
        } catch (e) {
          throw new Error(
            `Attention Lab could not load ${file} (${String((e as Error).message).split('\n')[0]}); ` +
              `reinstall the extension.`,
            { cause: e },
          );
        }
      }
      return loaded;
    },
    get isLoaded(): boolean {
      return loaded !== null;
    },
  };
}
