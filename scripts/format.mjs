/**
 * `npm run format` / `npm run format:check`: Prettier (settings in .prettierrc.json, files left
 * out in .prettierignore) over the TypeScript, JavaScript and CSS git knows, and Ruff's
 * formatter over the Python (scripts/ruff.mjs). `--check` changes nothing, prints each file
 * that differs and exits 1 when one does.
 *
 * `--check` also holds src/ and webview/ (generated files aside) to 120 columns: Prettier does
 * not break a long string, template literal or comment, so such a line is listed as
 * `file:line: N columns` and fails the check too; split it by hand (string pieces joined with
 * `+` keep a message's text). `--widths` only lists those lines and exits 0.
 *
 * The AssemblyScript kernels (src/engine/backends/wasm/assembly/) are TypeScript but for one
 * thing: `@inline` stands before functions, where TypeScript allows no decorator. They are
 * formatted with that word hidden in a comment and put back after, so Prettier lays them out
 * like the rest.
 *
 * Leaves out: the width of lines outside src/ and webview/ (tests, scripts), where a long
 * fixture line may stay.
 */

import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import * as prettier from 'prettier';

const check = process.argv.includes('--check');
const widths = process.argv.includes('--widths');
const ASSEMBLY = 'src/engine/backends/wasm/assembly/';
const WIDTH = 120;

const files = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard'], { encoding: 'utf8' })
  .split('\n')
  .filter((f) => /\.(ts|mts|cts|js|mjs|cjs|css)$/.test(f));

/** Lists the lines of src/ and webview/ (generated files aside) wider than WIDTH; returns how many. */
function listWide() {
  let wide = 0;
  for (const f of files.filter((f) => /^(src|webview)\//.test(f) && !f.includes('.generated.'))) {
    readFileSync(f, 'utf8')
      .split('\n')
      .forEach((line, i) => {
        if (line.length > WIDTH) {
          console.log(`${f}:${i + 1}: ${line.length} columns`);
          wide++;
        }
      });
  }
  console.log(`${wide} line${wide === 1 ? '' : 's'} wider than ${WIDTH} columns in src/ and webview/`);
  return wide;
}

if (widths) {
  listWide();
  process.exit(0);
}

const hide = (text) => text.replace(/^(\s*)@inline /gm, '$1/*@inline*/ ');
const show = (text) => text.replace(/^(\s*)\/\*@inline\*\/ /gm, '$1@inline ');

let differ = 0;
for (const file of files) {
  const assembly = file.startsWith(ASSEMBLY);
  // .prettierignore names the kernels so editors leave them alone, and Prettier infers no parser
  // for an ignored file: ask about them without it.
  const info = await prettier.getFileInfo(file, assembly ? {} : { ignorePath: '.prettierignore' });
  if (info.ignored || info.inferredParser === null) continue;
  const text = readFileSync(file, 'utf8');
  const options = { ...(await prettier.resolveConfig(file)), filepath: file };
  const formatted = assembly ? show(await prettier.format(hide(text), options)) : await prettier.format(text, options);
  if (formatted === text) continue;
  differ++;
  if (check) console.log(`${file}: not formatted as Prettier formats it (npm run format)`);
  else writeFileSync(file, formatted);
}
if (check) {
  console.log(`prettier ${prettier.version}: ${files.length} files, ${differ} to format`);
  const wide = listWide();
  process.exitCode = differ || wide ? 1 : 0;
} else if (differ) console.log(`prettier ${prettier.version}: formatted ${differ} files`);
