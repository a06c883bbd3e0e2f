// Bundles the CLI and the training worker with esbuild into dist/ (CommonJS, Node 20).
import { build } from 'esbuild';
import { readFileSync, chmodSync } from 'node:fs';
import { createRequire } from 'node:module';

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
const common = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  sourcemap: true,
  logLevel: 'warning',
  // Some dependencies ship ESM that reads import.meta.url; give the CJS bundle a real one.
  define: { VERSION: JSON.stringify(pkg.version), 'import.meta.url': '__importMetaUrl' },
  banner: { js: "const __importMetaUrl = require('url').pathToFileURL(__filename).href;" },
};
// `attention-lab bench` measures the event loop next to a training worker (benchWorker) and,
// where the dev-only TF.js packages are installed, TF.js's wasm backend (benchTfjs).
const require = createRequire(import.meta.url);
let tfjs = true;
try {
  require.resolve('@tensorflow/tfjs-core');
  require.resolve('@tensorflow/tfjs-backend-wasm');
} catch {
  tfjs = false;
}
await Promise.all([
  build({ ...common, entryPoints: ['src/cli/bin.ts'], outfile: 'dist/cli.js', banner: { js: `#!/usr/bin/env node\n${common.banner.js}` } }),
  build({ ...common, entryPoints: ['src/lab/worker.ts'], outfile: 'dist/worker.js' }),
  build({ ...common, entryPoints: ['src/lab/benchWorker.ts'], outfile: 'dist/benchWorker.js' }),
  ...(tfjs ? [build({ ...common, entryPoints: ['src/lab/benchTfjsMain.ts'], outfile: 'dist/benchTfjs.js' })] : []),
]);
chmodSync('dist/cli.js', 0o755);
// The dashboard bundle (dist/webview/), for the extension's webview and `attention-lab report`.
await (await import('./buildWebview.mjs')).buildWebview();
