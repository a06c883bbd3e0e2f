// What the esbuild scripts share (build.mjs, buildExtension.mjs): the options of a
// CommonJS bundle for Node 20, and whether the dev-only TF.js packages (the benchmark's
// comparison) are installed.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));

/** Gives a CJS bundle a real import.meta.url (some dependencies ship ESM that reads it). */
export const metaUrlBanner = "const __importMetaUrl = require('url').pathToFileURL(__filename).href;";

/** esbuild options of every Node bundle here (add entryPoints / outfile, banner with metaUrlBanner). */
export const nodeBundle = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  sourcemap: true,
  logLevel: 'warning',
  // Dawn's native binding (optional): loaded from node_modules at run time, never bundled.
  external: ['webgpu'],
  define: { VERSION: JSON.stringify(pkg.version), 'import.meta.url': '__importMetaUrl' },
};

/** True when @tensorflow/tfjs-core and @tensorflow/tfjs-backend-wasm resolve from the project. */
export function hasTfjs() {
  const require = createRequire(new URL('../package.json', import.meta.url));
  try {
    require.resolve('@tensorflow/tfjs-core');
    require.resolve('@tensorflow/tfjs-backend-wasm');
    return true;
  } catch {
    return false;
  }
}
