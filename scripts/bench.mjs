// `npm run bench`: builds the CLI (dist/cli.js with dist/benchWorker.js and, when the dev-only
// @tensorflow packages are installed, dist/benchTfjs.js) and runs `attention-lab bench` with
// this script's arguments (e.g. --json, --quick, --configs tiny-decoder, --threads 1,2,
// --no-pytorch; `-- --help` lists them). The wasm kernels are built first by the prebench
// script. Progress goes to stderr, the tables (or the JSON object) to stdout.

import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildCli } from './build.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
process.chdir(root);
await buildCli();
const r = spawnSync(process.execPath, [join(root, 'dist/cli.js'), 'bench', ...process.argv.slice(2)], {
  cwd: root,
  stdio: 'inherit',
});
process.exit(r.status ?? 1);
