// What every end-to-end session starts from: a copy of fixtures/workspace (plus a file its
// .gitignore excludes, made here because git would not commit it), and settings for a short
// run of the tiny model so the suite takes minutes, not hours.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));

/** User settings of every session. */
export const FAST_TRAINING = {
  'attentionLab.model.kind': 'decoder-only',
  'attentionLab.model.preset': 'tiny',
  'attentionLab.data.source': 'documents',
  'attentionLab.data.include': '**/*.{md,txt}',
  'attentionLab.training.batchSize': 8,
  'attentionLab.training.seqLen': 32,
  'attentionLab.training.evalEvery': 20,
  'attentionLab.training.snapshotEvery': 10,
  'attentionLab.training.checkpointEvery': 20,
  'attentionLab.decode.maxTokens': 24,
};

/** Copies the sample workspace into `dir` and returns `dir`. */
export function prepareWorkspace(dir) {
  fs.cpSync(path.join(HERE, '../fixtures/workspace'), dir, { recursive: true });
  // Ignored by the workspace's .gitignore, so it must be reported as skipped, not trained on.
  fs.mkdirSync(path.join(dir, 'build'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'build/generated.txt'), 'generated output that .gitignore excludes\n');
  return dir;
}

/** The folder, name and run.json of the only run in the workspace's runs folder. */
export function onlyRun(workspace) {
  const root = path.join(workspace, '.attention-lab/runs');
  const [name] = fs.readdirSync(root).filter((n) => fs.existsSync(path.join(root, n, 'run.json')));
  if (!name) throw new Error(`no run under ${root}`);
  const dir = path.join(root, name);
  return { dir, name, run: JSON.parse(fs.readFileSync(path.join(dir, 'run.json'), 'utf8')) };
}
