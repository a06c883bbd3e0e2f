/**
 * `npm run lint:py`: Ruff's lint and format check over the repository's Python (the trainer
 * package in python/ and the developer scripts in scripts/), with the settings of ruff.toml,
 * through Ruff's WebAssembly build (the npm package @astral-sh/ruff-wasm-nodejs, so CI needs
 * no pip). Prints one line per finding (`file:row:col CODE message`) and a line per file whose
 * formatting differs, and exits 1 when there is any. `--fix-format` rewrites those files as
 * Ruff formats them (lint findings are for a person to fix).
 *
 * Leaves out: Ruff's automatic lint fixes (a native `ruff check --fix` reads the same ruff.toml).
 */

import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { PositionEncoding, Workspace } from '@astral-sh/ruff-wasm-nodejs';
import { parse } from 'smol-toml';

const fixFormat = process.argv.includes('--fix-format');
const settings = parse(readFileSync('ruff.toml', 'utf8'));
const workspace = new Workspace(settings, PositionEncoding.Utf16);
const files = execFileSync(
  'git',
  ['ls-files', '--cached', '--others', '--exclude-standard', '--', 'python', 'scripts'],
  { encoding: 'utf8' },
)
  .split('\n')
  .filter((f) => f.endsWith('.py'));

let problems = 0;
for (const file of files) {
  const text = readFileSync(file, 'utf8');
  for (const d of workspace.check(text)) {
    console.log(`${file}:${d.start_location.row}:${d.start_location.column} ${d.code ?? ''} ${d.message}`);
    problems++;
  }
  const formatted = workspace.format(text);
  if (formatted !== text) {
    if (fixFormat) writeFileSync(file, formatted);
    else {
      console.log(`${file}: not formatted as Ruff formats it (npm run lint:py -- --fix-format)`);
      problems++;
    }
  }
}
console.log(`ruff ${Workspace.version()}: ${files.length} files, ${problems} finding${problems === 1 ? '' : 's'}`);
process.exitCode = problems ? 1 : 0;
