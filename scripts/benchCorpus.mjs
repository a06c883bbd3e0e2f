#!/usr/bin/env node
// `npm run bench:corpus`: a generated 50 MB corpus (50 files of seeded pseudo-English), collected,
// tokenized with the char and with the BPE tokenizer, and the first training step taken —
// `attention-lab train --data DIR --steps 1` as a user would run it. Prints, per tokenizer, the
// wall seconds, the process's peak resident memory, the token counts and the progress lines the
// CLI printed on the way (reading, tokenizer, encoding). Not a test: nothing is asserted.
//
// Usage: node scripts/benchCorpus.mjs [--mb 50] [--files 50] [--tokenizers char,bpe] [--keep]
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const argv = process.argv.slice(2);
const opt = (name, fallback) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : fallback);
const totalMb = Number(opt('--mb', '50'));
const nFiles = Number(opt('--files', '50'));
const tokenizers = opt('--tokenizers', 'char,bpe').split(',');
const cli = path.join(ROOT, 'dist', 'cli.js');
if (!fs.existsSync(cli)) spawnSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, stdio: 'inherit' });

/** xorshift32: the corpus is the same on every run. */
function rng(seed) {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s / 4294967296;
  };
}

function makeCorpus(dir) {
  const r = rng(42);
  const syll = [
    'ka',
    'lo',
    'mi',
    'ne',
    'ru',
    'sa',
    'te',
    'vo',
    'an',
    'el',
    'is',
    'or',
    'th',
    'st',
    'qu',
    'ing',
    'er',
    'ou',
  ];
  const words = Array.from({ length: 4000 }, () =>
    Array.from({ length: 1 + Math.floor(r() * 3) }, () => syll[Math.floor(r() * syll.length)]).join(''),
  );
  const perFile = Math.round((totalMb * 2 ** 20) / nFiles);
  for (let f = 0; f < nFiles; f++) {
    const parts = [];
    let size = 0;
    while (size < perFile) {
      const n = 5 + Math.floor(r() * 12);
      const sentence = Array.from({ length: n }, () => words[Math.floor(Math.pow(r(), 2) * words.length)]).join(' ');
      const line = `${sentence[0].toUpperCase()}${sentence.slice(1)}${r() < 0.2 ? '?' : '.'}${r() < 0.15 ? '\n\n' : '\n'}`;
      parts.push(line);
      size += line.length;
    }
    fs.writeFileSync(path.join(dir, `part-${String(f).padStart(3, '0')}.txt`), parts.join(''));
  }
}

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'al-bench-corpus-'));
const data = path.join(work, 'corpus');
fs.mkdirSync(data);
let t = Date.now();
makeCorpus(data);
const bytes = fs.readdirSync(data).reduce((n, f) => n + fs.statSync(path.join(data, f)).size, 0);
console.log(
  `corpus: ${nFiles} files, ${(bytes / 2 ** 20).toFixed(1)} MB (generated in ${((Date.now() - t) / 1000).toFixed(1)} s)`,
);
// Reports the whole process's peak memory (the training worker is a thread of it) on exit.
const preload = path.join(work, 'maxrss.cjs');
fs.writeFileSync(
  preload,
  "process.on('exit', () => require('fs').writeSync(2, `\\nmaxrss_kb ${process.resourceUsage().maxRSS}\\n`));\n",
);

for (const tokenizer of tokenizers) {
  const out = path.join(work, `run-${tokenizer}`);
  t = Date.now();
  const r = spawnSync(
    process.execPath,
    [
      '--require',
      preload,
      cli,
      'train',
      '--data',
      data,
      '--tokenizer',
      tokenizer,
      '--vocab',
      '2000',
      '--steps',
      '1',
      '--out',
      out,
    ],
    {
      cwd: work,
      encoding: 'utf8',
      maxBuffer: 1 << 26,
    },
  );
  const seconds = (Date.now() - t) / 1000;
  if (r.status !== 0) {
    console.log(`${tokenizer}: failed (exit ${r.status})\n${r.stderr}`);
    continue;
  }
  const rss = Number(/maxrss_kb (\d+)/.exec(r.stderr)?.[1] ?? 0) * 1024;
  const run = JSON.parse(fs.readFileSync(path.join(out, 'run.json'), 'utf8'));
  const progress = r.stderr.split('\n').filter((l) => /MB\s+\d+%$/.test(l.trim()));
  console.log(
    `${tokenizer}: ${seconds.toFixed(1)} s to the first step · peak memory ${(rss / 2 ** 20).toFixed(0)} MB · ${run.data.trainTokens.toLocaleString('en-US')} training / ${run.data.valTokens.toLocaleString('en-US')} validation tokens · vocabulary ${run.config.vocabSize}`,
  );
  console.log(`  validation: ${run.data.validation.text}`);
  for (const line of r.stderr.split('\n').filter((l) => /^BPE learned|^Skipped/.test(l))) console.log(`  ${line}`);
  console.log(
    `  progress lines: ${progress.length} (${progress
      .slice(0, 2)
      .concat(progress.slice(-1))
      .map((l) => l.trim())
      .join(' | ')})`,
  );
}
if (!argv.includes('--keep')) fs.rmSync(work, { recursive: true, force: true });
