// Records the dashboard's browser-test fixtures from two real training runs, trimmed to what
// the tests need, into test/browser/fixtures/:
//   encdec.json          RunState of an encoder-decoder run (all steps and evals, ≤ 6 snapshots)
//   decoder.json         RunState of a decoder-only run (maps cropped to the first 32 positions:
//                        exact for causal self-attention, whose row t only sees s ≤ t)
//   decode-encdec.json   a greedy playground decode (streamed tokens + DecodeOutput)
//   decode-decoder.json  the same for the decoder-only run
//   run-reverse/         a run folder (run.json, metrics.jsonl, tokenizer.json, 3 snapshots) for `report`
// Typed arrays are stored in the tagged base64 form of src/common/wireCodec.ts.
//
// Usage (after `npm run build`):
//   node dist/cli.js train --task reverse --steps 800 --set dModel=32 --set dFF=64 --out /tmp/enc
//   node dist/cli.js train --data input.txt --steps 200 --out /tmp/dec
//   node scripts/makeDashboardFixtures.mjs --encdec /tmp/enc --decoder /tmp/dec
import { build } from 'esbuild';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const { values } = parseArgs({
  options: { encdec: { type: 'string' }, decoder: { type: 'string' }, out: { type: 'string' } },
});
if (!values.encdec || !values.decoder) {
  console.error('usage: node scripts/makeDashboardFixtures.mjs --encdec RUN_DIR --decoder RUN_DIR [--out DIR]');
  process.exit(2);
}
const outDir = path.resolve(values.out ?? path.join(root, 'test/browser/fixtures'));

// The lab code is TypeScript: bundle the few entry points this script needs.
const bundled = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'al-fixtures-')), 'lab.mjs');
await build({
  stdin: {
    contents: [
      "export { loadRunState } from './src/lab/runs/runState';",
      "export { openRun } from './src/lab/inference/openRun';",
      "export { decodeText } from './src/lab/inference/decode';",
      "export { createBackend } from './src/engine/backends/select';",
      "export { encodeArrays } from './src/common/wireCodec';",
    ].join('\n'),
    resolveDir: root,
    loader: 'ts',
  },
  bundle: true,
  platform: 'node',
  format: 'esm',
  outfile: bundled,
  logLevel: 'warning',
  banner: { js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);" },
});
const lab = await import(pathToFileURL(bundled).href);

/** At most n items: the first, the last and evenly spaced ones between. */
function spread(items, n) {
  if (items.length <= n) return items;
  const out = [];
  for (let i = 0; i < n; i++) out.push(items[Math.round((i * (items.length - 1)) / (n - 1))]);
  return out;
}

/** Crops a snapshot to its first k query/key positions (decoder-only: exact under the causal mask). */
function cropSnapshot(s, k) {
  const maps = s.maps.map((m) => {
    const [H, R, C] = m.shape;
    const r = Math.min(R, k);
    const c = Math.min(C, k);
    const data = new Float32Array(H * r * c);
    for (let h = 0; h < H; h++)
      for (let t = 0; t < r; t++) data.set(m.data.subarray((h * R + t) * C, (h * R + t) * C + c), (h * r + t) * c);
    return { ...m, shape: [H, r, c], data };
  });
  const masks = s.masks.map((m) => {
    const [B, one, R, C] = m.shape;
    const r = R === 1 ? 1 : Math.min(R, k);
    const c = Math.min(C, k);
    const data = new Uint8Array(B * one * r * c);
    for (let b = 0; b < B; b++)
      for (let t = 0; t < r; t++) data.set(m.data.subarray((b * R + t) * C, (b * R + t) * C + c), (b * r + t) * c);
    return { ...m, shape: [B, one, r, c], data };
  });
  return { ...s, srcTokens: s.srcTokens.slice(0, k), tgtTokens: s.tgtTokens.slice(0, k), maps, masks };
}

/** Step metrics rounded to 6 significant digits (halves the fixture; the tests compare with what they load). */
function roundSteps(steps) {
  const r = (x) => (Number.isFinite(x) ? Number(x.toPrecision(6)) : x);
  return steps.map((m) => ({
    ...m,
    loss: r(m.loss),
    lr: r(m.lr),
    gradNorm: r(m.gradNorm),
    tokensPerSec: r(m.tokensPerSec),
  }));
}

function relabel(state, id, name) {
  return { ...state, steps: roundSteps(state.steps), run: { ...state.run, id, name, runDir: `/runs/${name}` } };
}

function write(name, value) {
  const file = path.join(outDir, name);
  fs.writeFileSync(file, `${JSON.stringify(lab.encodeArrays(value))}\n`);
  console.log(`${path.relative(root, file)}  ${(fs.statSync(file).size / 1024).toFixed(1)} KiB`);
}

function recordDecode(runDir, params) {
  const streamed = [];
  const onToken = (token, logprob) => streamed.push({ token, logprob });
  const { output } = lab.decodeText(lab.openRun(runDir, lab.createBackend('reference')), params, {
    attention: true,
    onToken,
  });
  return { params, streamed, output };
}

fs.mkdirSync(outDir, { recursive: true });
const enc = lab.loadRunState(values.encdec);
write('encdec.json', relabel({ ...enc, snapshots: spread(enc.snapshots, 6) }, 'run-encdec', 'reverse-encdec'));
const dec = lab.loadRunState(values.decoder);
write(
  'decoder.json',
  relabel(
    { ...dec, snapshots: spread(dec.snapshots, 3).map((s) => cropSnapshot(s, 32)) },
    'run-decoder',
    'shakespeare-gpt',
  ),
);

const base = { strategy: 'greedy', beam: 4, lengthPenalty: 0.6, temperature: 1, topK: 0, topP: 1, seed: 1 };
write('decode-encdec.json', recordDecode(values.encdec, { ...base, input: 'abcdhij', maxTokens: 12 }));
write('decode-decoder.json', recordDecode(values.decoder, { ...base, input: 'ROMEO:', maxTokens: 16 }));

// A small run folder for the `report` command's test.
const runOut = path.join(outDir, 'run-reverse');
fs.rmSync(runOut, { recursive: true, force: true });
fs.mkdirSync(path.join(runOut, 'snapshots'), { recursive: true });
for (const f of ['run.json', 'metrics.jsonl', 'tokenizer.json'])
  fs.copyFileSync(path.join(values.encdec, f), path.join(runOut, f));
const snaps = fs
  .readdirSync(path.join(values.encdec, 'snapshots'))
  .filter((n) => n.endsWith('.safetensors'))
  .sort();
for (const n of spread(snaps, 3))
  fs.copyFileSync(path.join(values.encdec, 'snapshots', n), path.join(runOut, 'snapshots', n));
console.log(`${path.relative(root, runOut)}/  ${fs.readdirSync(path.join(runOut, 'snapshots')).length} snapshots`);
fs.rmSync(path.dirname(bundled), { recursive: true, force: true });
