// Bundles the VS Code extension with esbuild into dist/ (CommonJS, Node 20, `vscode` external):
//   dist/extension.js     activation and VS Code glue only; must not contain the engine
//   dist/extensionLab.js  the engine and lab pieces the host needs, required on first use
//   dist/modelWorker.js   the worker that decodes, scores, draws attention, exports
// (dist/worker.js, the training worker, comes from scripts/build.mjs.) Fails if the
// activation bundle pulls in src/engine, so activation stays fast. Run directly or import.
import { build } from 'esbuild';
import { fileURLToPath } from 'node:url';
import { metaUrlBanner as metaUrl, nodeBundle } from './esbuildCommon.mjs';

// Dawn's binding stays external here too: bundled, it looks for its dawn.node beside dist/modelWorker.js.
const common = { ...nodeBundle, external: [...nodeBundle.external, 'vscode'] };

/** Builds the three extension bundles; returns the activation bundle's inputs. */
export async function buildExtension() {
  const [main] = await Promise.all([
    build({
      ...common,
      entryPoints: ['src/extension/extension.ts'],
      outfile: 'dist/extension.js',
      metafile: true,
      // Less to read and parse while VS Code activates it (the sourcemap keeps it debuggable).
      minify: true,
      // When evaluation of the bundle started and ended (extension.ts reports the difference).
      banner: { js: `const __attentionLabBundleStart = performance.now();\nvar __attentionLabBundleEnd;\n${metaUrl}` },
      footer: { js: '__attentionLabBundleEnd = performance.now();' },
    }),
    build({
      ...common,
      entryPoints: ['src/lab/editor/extensionLab.node.ts'],
      outfile: 'dist/extensionLab.js',
      banner: { js: metaUrl },
      minify: true,
    }),
    build({
      ...common,
      entryPoints: ['src/lab/workers/modelWorker.node.ts'],
      outfile: 'dist/modelWorker.js',
      banner: { js: metaUrl },
      minify: true,
    }),
  ]);
  const inputs = Object.keys(main.metafile.inputs);
  // Small lab files are light enough: hosting the training worker (and starting Node workers), the error-code
  // classification, the defaults of a run (protocol only), the file system the extension reads runs through
  // (with the engine's error class, 50 lines and no imports, that its refusals of special files throw),
  // the run folders' locks (which merge a web-written log's parts when a session ends), and paths as people read them.
  const light = new Set([
    'src/engine/errors.ts',
    'src/lab/workers/trainingClient.ts',
    'src/lab/workers/startWorker.node.ts',
    'src/lab/base/errorCodes.ts',
    'src/lab/runs/runSpec.ts',
    'src/lab/files/labFs.ts',
    'src/lab/files/fs.node.ts',
    'src/lab/files/fileErrors.ts',
    'src/lab/files/atomicFile.node.ts',
    'src/lab/runs/runLock.ts',
    'src/lab/files/logParts.ts',
    'src/lab/runs/lockIdentity.node.ts',
    'src/lab/files/slashPaths.ts',
  ]);
  const heavy = inputs.filter((f) => (f.startsWith('src/engine/') || f.startsWith('src/lab/')) && !light.has(f));
  if (heavy.length)
    throw new Error(
      `dist/extension.js must not bundle the engine or the lab (load them through dist/extensionLab.js); it includes ${heavy.join(', ')}`,
    );
  return inputs;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await buildExtension();
