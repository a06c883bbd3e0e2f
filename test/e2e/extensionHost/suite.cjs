// Tests that run INSIDE the real VS Code extension host (VS Code loads this file as
// `extensionTestsPath` and awaits `run()`; a rejection makes the host exit with code 1).
// They drive the installed .vsix through its commands and check files, editors and tabs.
// The same file runs in both extension hosts: desktop VS Code's Node host and the browser's
// web-worker host (where `require` knows only 'vscode'), so it uses VS Code's API alone —
// files through `workspace.fs`, paths in the host's spelling through the extension's API —
// and its own small `assert`. What it needs from outside (a PyTorch checkpoint, run folders
// the command line trained, a folder for exports, the host it expects) the harness names in
// the user setting `attentionLabE2e` (run.mjs). CommonJS, no mocha, no build step.
const vscode = require('vscode');

const EXT_ID = 'attention-lab.attention-lab';
const tests = [];
const test = (name, fn) => tests.push({ name, fn });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const config = () => vscode.workspace.getConfiguration('attentionLab');
const fixtures = () => vscode.workspace.getConfiguration().get('attentionLabE2e');

const show = (v) => JSON.stringify(v);
const assert = {
  ok: (v, msg) => {
    if (!v) throw new Error(msg || `expected a true value, got ${show(v)}`);
  },
  equal: (a, b, msg) => {
    if (a !== b) throw new Error(`${msg ? `${msg}: ` : ''}expected ${show(b)}, got ${show(a)}`);
  },
  notEqual: (a, b, msg) => {
    if (a === b) throw new Error(`${msg ? `${msg}: ` : ''}expected anything but ${show(b)}`);
  },
  deepEqual: (a, b, msg) => {
    if (show(a) !== show(b)) throw new Error(`${msg ? `${msg}: ` : ''}expected ${show(b)}, got ${show(a)}`);
  },
  match: (s, re, msg) => {
    if (!re.test(s)) throw new Error(`${msg ? `${msg}: ` : ''}${show(s)} does not match ${re}`);
  },
};

async function until(what, fn, timeoutMs = 30_000) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

let api;
let runDir;

// Paths in the host's spelling (a file path on desktop, a URI on the web), and files through workspace.fs.
const wsUri = () => vscode.workspace.workspaceFolders[0].uri;
const uri = (p) => api.paths.uri(p);
const pathOf = (u) => api.paths.of(u);
const workspace = () => pathOf(wsUri());
const join = (p, ...names) => pathOf(vscode.Uri.joinPath(uri(p), ...names));
const basename = (p) => uri(p).path.split('/').pop();
const dirname = (p) => pathOf(vscode.Uri.joinPath(uri(p), '..'));
/** A path on the server's disk (what the harness names), in the host's spelling. */
const serverPath = (p) => pathOf(wsUri().with({ path: p }));
const readText = async (p) => new TextDecoder().decode(await vscode.workspace.fs.readFile(uri(p)));
const readBytes = (p) => vscode.workspace.fs.readFile(uri(p));
const list = async (p) => (await vscode.workspace.fs.readDirectory(uri(p))).map(([name]) => name);
const exists = (p) =>
  Promise.resolve(vscode.workspace.fs.stat(uri(p))).then(
    () => true,
    () => false,
  );
const writeText = (p, text) => vscode.workspace.fs.writeFile(uri(p), new TextEncoder().encode(text));
const stepsOf = async (p) =>
  (await readText(join(p, 'metrics.jsonl')))
    .split('\n')
    .filter((l) => l.includes('"type":"step"'))
    .map((l) => JSON.parse(l));

test('activates in the extension host the harness expects (the web one has no Node), lazily', async () => {
  const ext = vscode.extensions.getExtension(EXT_ID);
  assert.ok(ext, `${EXT_ID} is not installed`);
  assert.ok(!ext.packageJSON.activationEvents.includes('*'), 'activation must not be "*"');
  assert.equal(ext.isActive, false, 'nothing should have activated the extension yet');
  const t0 = performance.now();
  api = await ext.activate(); // loads dist/extension.js (desktop) or dist/web/extension.js (web) and runs activate()
  const wall = performance.now() - t0;
  const { moduleMs, activateMs } = api.activation;
  console.log(
    `    activation: ${wall.toFixed(1)} ms wall (bundle evaluation ${moduleMs.toFixed(1)} ms, activate() ${activateMs.toFixed(1)} ms)`,
  );
  console.log(`    host: ${show(api.host)}; typeof process in the suite: ${typeof process}`);
  const expected = fixtures().host;
  assert.equal(api.host.kind, expected === 'node' ? 'node' : 'web', 'the extension host kind');
  assert.equal(typeof process === 'undefined', expected !== 'node', 'typeof process in this host');
  assert.equal(api.host.hasProcess, expected === 'node', 'the extension sees a Node process');
  if (expected !== 'node') {
    assert.equal(api.host.crossOriginIsolated, expected === 'web-isolated', 'the page is cross-origin isolated');
    assert.match(
      api.host.threads,
      expected === 'web-isolated'
        ? /^\d+ threads \(the page is cross-origin isolated\)$/
        : /^1 thread \(the page is not cross-origin isolated\)$/,
    );
  }
  // Times are logged, not asserted (shared, noisy CI cores): what keeps activation fast on
  // desktop is structural — no "*" activation, and the engine bundle is not loaded until
  // first needed (scripts/buildExtension.mjs fails the build if the engine lands in
  // extension.js). The web host can load one file only, so there the engine is in it.
  assert.ok(Number.isFinite(moduleMs) && Number.isFinite(activateMs), 'the extension reports its activation timings');
  if (api.host.kind === 'node')
    assert.equal(api.engineLoadedAtActivation, false, 'the engine bundle was loaded during activation');
});

test('registers every contributed command', async () => {
  const all = new Set(await vscode.commands.getCommands(true));
  const contributed = vscode.extensions.getExtension(EXT_ID).packageJSON.contributes.commands.map((c) => c.command);
  assert.ok(contributed.length >= 10);
  for (const c of contributed) assert.ok(all.has(c), `${c} is not registered`);
});

test('trains on the workspace documents, honoring .gitignore, in extension storage', async () => {
  await config().update('training.steps', 40, vscode.ConfigurationTarget.Global);
  await vscode.commands.executeCommand('attentionLab.train');
  const runs = api.runs();
  assert.equal(runs.length, 1, `runs: ${show(runs.map((r) => r.name))}`);
  const r = runs[0];
  runDir = r.runDir;
  assert.equal(r.status, 'completed');
  assert.equal(r.step, 40);
  assert.equal(r.hasModel, true);
  assert.equal(r.kind, 'decoder-only');
  assert.ok(!runDir.startsWith(workspace()), `runs must not be written into the workspace by default: ${runDir}`);
  assert.equal(r.data.documents, 4, show(r.data));
  const skipped = Object.fromEntries(r.data.skipped.map((s) => [s.path, s.reason]));
  assert.equal(skipped['notes/blob.bin.txt'], 'binary');
  assert.equal(skipped['build/generated.txt'], 'ignored');
  const steps = await stepsOf(runDir);
  assert.equal(steps.length, 40);
  const losses = steps.map((s) => s.loss);
  assert.ok(
    losses.slice(-5).reduce((a, b) => a + b) < losses.slice(0, 5).reduce((a, b) => a + b),
    `loss did not go down: ${losses.join(' ')}`,
  );
  assert.ok((await list(join(runDir, 'snapshots'))).length >= 4);
});

test('trains the reverse task (an encoder-decoder on a built-in task)', async () => {
  const settings = {
    'data.source': 'task',
    'data.task': 'reverse',
    'model.kind': 'encoder-decoder',
    'training.seqLen': 0,
    'training.steps': 30,
  };
  try {
    for (const [k, v] of Object.entries(settings)) await config().update(k, v, vscode.ConfigurationTarget.Global);
    const known = new Set(api.runs().map((r) => r.runDir));
    await vscode.commands.executeCommand('attentionLab.train');
    const run = api.runs().find((r) => !known.has(r.runDir));
    assert.ok(run, show(api.runs().map((r) => r.name)));
    assert.deepEqual([run.status, run.step, run.kind], ['completed', 30, 'encoder-decoder']);
    const json = JSON.parse(await readText(join(run.runDir, 'run.json')));
    assert.deepEqual(json.spec.data, { kind: 'task', task: 'reverse' });
    assert.ok(['wasm', 'reference'].includes(json.backendUsed), `backend ${json.backendUsed}`);
    const decoded = await vscode.commands.executeCommand('attentionLab.decode', run.runDir, 'abcde');
    assert.equal(typeof decoded.text, 'string');
  } finally {
    for (const k of Object.keys(settings)) await config().update(k, undefined, vscode.ConfigurationTarget.Global);
    await config().update('training.steps', 40, vscode.ConfigurationTarget.Global);
  }
});

test('decodes a prompt into an editor, saying how many tokens came and why it stopped', async () => {
  const out = await vscode.commands.executeCommand('attentionLab.decode', runDir, 'The model ');
  assert.equal(typeof out.text, 'string');
  assert.ok(out.text.length > 0, 'empty decode');
  const doc = await until('the output editor', () =>
    vscode.window.visibleTextEditors
      .map((e) => e.document)
      .find((d) => d.isUntitled && d.getText().startsWith('The model ')),
  );
  assert.equal(doc.getText(), `The model ${out.text}`);
  // The sessions' settings ask for 24 tokens: the message shown says how many came and why.
  if (out.stopReason === 'maxTokens') assert.equal(out.tokens, 24);
  else assert.equal(out.stopReason, 'eos', `greedy decoding slides past the context: ${out.message}`);
  assert.ok(out.message.startsWith(`Decoded ${out.tokens} token(s) with `), out.message);
});

test('samples 200 tokens from a model with a 32-token context: a sliding window, and the message says so', async () => {
  const { config: model } = JSON.parse(await readText(join(runDir, 'run.json')));
  assert.equal(model.maxLen, 32, 'the run trained above has a 32-token context');
  const decode = { strategy: 'sample', maxTokens: 200, topK: 8 };
  for (const [k, v] of Object.entries(decode))
    await config().update(`decode.${k}`, v, vscode.ConfigurationTarget.Global);
  try {
    // Top-8 sampling: the end-of-text token, rare in the training text, is never among the
    // likeliest eight mid-sentence, so the decode runs to the 200 asked for.
    const out = await vscode.commands.executeCommand('attentionLab.decode', runDir, 'The model ');
    assert.deepEqual([out.tokens, out.stopReason], [200, 'maxTokens'], out.message);
    assert.equal(
      out.message.replace(/ with .+? — /, ' with RUN — '),
      "Decoded 200 token(s) with RUN — as many as asked for (max tokens); the setting attentionLab.decode.maxTokens asks for more. Generated 200 tokens past the model's context of 32 with a sliding window: each token was chosen from the last 16–32 tokens before it.",
    );
    const doc = await until('the sampled text in an editor', () =>
      vscode.window.visibleTextEditors
        .map((e) => e.document)
        .find((d) => d.isUntitled && d.getText() === `The model ${out.text}`),
    );
    assert.ok(
      doc.getText().length > 'The model '.length + 100,
      `200 sampled tokens give more than 100 characters: ${show(doc.getText())}`,
    );
  } finally {
    for (const k of Object.keys(decode))
      await config().update(`decode.${k}`, undefined, vscode.ConfigurationTarget.Global);
  }
});

test('scores the selection token by token', async () => {
  const doc = await vscode.workspace.openTextDocument(vscode.Uri.joinPath(wsUri(), 'notes/attention.txt'));
  const editor = await vscode.window.showTextDocument(doc);
  const line = doc.lineAt(0);
  editor.selection = new vscode.Selection(line.range.start, line.range.end);
  const tokens = await vscode.commands.executeCommand('attentionLab.scoreSelection', runDir);
  // One token per character (char tokenizer, ASCII text), the line being longer than the
  // 32-token context: the sliding window scores all of it.
  assert.ok(line.text.length > 32);
  assert.equal(tokens.length, line.text.length);
  let at = 0;
  for (const t of tokens) {
    assert.equal(t.start, at);
    assert.equal(t.end, at + 1);
    assert.ok(Number.isFinite(t.surprise) && t.surprise >= 0);
    assert.ok(t.bucket >= 0 && t.bucket <= 4);
    at = t.end;
  }
  await vscode.commands.executeCommand('attentionLab.clearScores');
});

test('shows the attention of a selection in the dashboard', async () => {
  const ok = await vscode.commands.executeCommand('attentionLab.showAttention', runDir, 'attention heads');
  assert.equal(ok, true);
  await until('the dashboard tab', () =>
    vscode.window.tabGroups.all
      .flatMap((g) => g.tabs)
      .find((t) => t.input instanceof vscode.TabInputWebview && t.input.viewType.includes('attentionLab.dashboard')),
  );
});

test('exports the model for PyTorch: a folder named after the run (nanoGPT names, tokenizer, README)', async () => {
  const parent = serverPath(fixtures().exports);
  const files = await vscode.commands.executeCommand('attentionLab.export', runDir, parent);
  const out = join(parent, basename(runDir));
  assert.ok(
    files.every((f) => dirname(f) === out),
    `files outside ${out}: ${files.join(', ')}`,
  );
  for (const f of ['config.json', 'model.safetensors', 'tokenizer.json', 'README.md'])
    assert.ok(
      files.some((p) => basename(p) === f),
      `no ${f}`,
    );
  assert.match(await readText(join(out, 'README.md')), /score_export\.py/);
  const cfg = JSON.parse(await readText(join(out, 'config.json')));
  assert.equal(cfg.attention_lab.format, 'attention-lab-export');
  assert.equal(cfg.n_layer, 2);
  assert.equal(cfg.n_embd, 64);
  const bytes = await readBytes(join(out, 'model.safetensors'));
  const n = new DataView(bytes.buffer, bytes.byteOffset, 8).getUint32(0, true);
  const header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + n)));
  assert.ok(header['transformer.wte.weight'], 'no transformer.wte.weight');
  assert.deepEqual(header['transformer.wte.weight'].shape, [cfg.vocab_size, 64]);
});

test('evaluates a run on files it never saw', async () => {
  const out = await vscode.commands.executeCommand('attentionLab.evaluateFiles', runDir, [
    join(workspace(), 'notes/masks.md'),
  ]);
  assert.ok(out, 'the evaluation returned nothing');
  assert.equal(out.kind, 'documents');
  assert.equal(out.documents, 1);
  assert.ok(Number.isFinite(out.loss) && out.loss > 0, `loss ${out.loss}`);
  // What the notification and the dashboard show: the folder as a person reads it, never the web host's URI.
  assert.ok(
    !/[a-z-]+:\/\//.test(out.source) && out.record.source === out.source,
    `the evaluation's source reads ${out.source}`,
  );
});

test('pauses, resumes and stops a long run; resumes it from its checkpoint', async () => {
  await config().update('training.steps', 100000, vscode.ConfigurationTarget.Global);
  await config().update('training.checkpointEvery', 25, vscode.ConfigurationTarget.Global);
  const done = vscode.commands.executeCommand('attentionLab.train');
  await until('30 steps', () => (api.training()?.step ?? 0) >= 30, 60_000);
  // The WebAssembly threads it trains on: one where the page is not cross-origin isolated, helpers where it is.
  const { threads } = api.training();
  const host = fixtures().host;
  if (host === 'web') assert.equal(threads, 1, 'threads in a page that is not cross-origin isolated');
  else assert.ok(threads >= (host === 'web-isolated' ? 2 : 1), `threads: ${threads}`);
  console.log(`    trains on ${threads} thread(s)`);
  assert.equal(await vscode.commands.executeCommand('attentionLab.togglePause'), true);
  const paused = await until('paused', () => api.training()?.paused && api.training());
  await sleep(600);
  assert.equal(api.training().step, paused.step, 'steps went on while paused');
  assert.equal(await vscode.commands.executeCommand('attentionLab.togglePause'), false);
  await until('more steps after resuming', () => (api.training()?.step ?? 0) > paused.step + 5);
  assert.equal(await vscode.commands.executeCommand('attentionLab.stop'), true);
  await done;
  const stopped = api.runs().find((r) => r.status === 'stopped');
  assert.ok(stopped, show(api.runs().map((r) => [r.name, r.status])));
  assert.ok(stopped.step > paused.step && stopped.step < 100000);
  const resumed = vscode.commands.executeCommand('attentionLab.run.resume', stopped.runDir);
  const first = await until('the resumed run', () => api.training());
  assert.equal(first.runDir, stopped.runDir);
  await until('steps past the checkpoint', () => (api.training()?.step ?? 0) > stopped.step + 3, 60_000);
  await vscode.commands.executeCommand('attentionLab.stop');
  await resumed;
  const again = api.runs().find((r) => r.runDir === stopped.runDir);
  assert.equal(again.status, 'stopped');
  assert.ok(again.step > stopped.step);
  const lines = (await stepsOf(stopped.runDir)).map((s) => s.step);
  assert.deepEqual(
    lines,
    Array.from({ length: lines.length }, (_, i) => i + 1),
    'metrics steps must be 1..n with no gap or repeat across the resume',
  );
});

test('opens a run folder the command line trained, and decodes with it', async () => {
  const out = serverPath(fixtures().copyRun);
  const opened = await vscode.commands.executeCommand('attentionLab.openRun', out);
  assert.equal(opened, out);
  const run = api.runs().find((x) => x.runDir === out);
  assert.ok(run, 'the opened run is not listed');
  assert.equal(run.kind, 'encoder-decoder');
  assert.equal(run.status, 'completed');
  const decoded = await vscode.commands.executeCommand('attentionLab.decode', out, 'abc');
  assert.equal(typeof decoded.text, 'string');
  assert.equal(
    await vscode.commands.executeCommand('attentionLab.openRun', serverPath(fixtures().exports)),
    undefined,
    'a folder without run.json is not a run',
  );
});

test('evaluates a run on test files in the model worker and records it in the run (evaluations.jsonl)', async () => {
  const run = api.runs().find((x) => x.kind === 'encoder-decoder' && x.name === 'copy-run');
  assert.ok(run, 'the copy run of the previous test is not listed');
  const tsv = join(serverPath(fixtures().exports), 'test.tsv');
  await writeText(tsv, 'abc\tabc\nbca\tbca\ncab\tcab\n');
  const out = await vscode.commands.executeCommand('attentionLab.evaluateFiles', run.runDir, [tsv]);
  assert.ok(out, 'the evaluation did not finish');
  assert.equal(out.kind, 'pairs');
  assert.ok(!/[a-z-]+:\/\//.test(out.source), `the evaluation's source reads ${out.source}`);
  assert.equal(out.translation.decoded, 3);
  assert.match(out.translation.bleuSignature, /^nrefs:1\|case:mixed\|eff:no\|tok:13a\|smooth:exp\|version:2\.6\.0$/);
  assert.ok(
    Number.isFinite(out.bpb) && Math.abs(out.bpb - (out.loss * out.tokens) / (out.bytes * Math.LN2)) < 1e-9,
    `bits per byte ${out.bpb}`,
  );
  const lines = (await readText(join(run.runDir, 'evaluations.jsonl'))).trim().split('\n');
  const recorded = JSON.parse(lines[lines.length - 1]);
  assert.deepEqual(recorded, out.record);
  assert.equal(recorded.files[0].path, tsv);
  assert.equal(recorded.files[0].bytes, (await vscode.workspace.fs.stat(uri(tsv))).size);
});

test('opens a PyTorch checkpoint (Hugging Face GPT-2 layout), shows its attention and scores a selection', async () => {
  const out = await vscode.commands.executeCommand('attentionLab.openPytorchCheckpoint', serverPath(fixtures().hfGpt2));
  assert.ok(out, 'the import returned nothing');
  assert.equal(out.layout, 'hf-gpt2');
  assert.ok(await exists(join(out.runDir, 'run.json')));
  const run = await until('the imported run in the Runs view', () => api.runs().find((x) => x.runDir === out.runDir));
  assert.equal(run.kind, 'decoder-only');
  assert.equal(
    await vscode.commands.executeCommand('attentionLab.showAttention', out.runDir, 'the rain in the east'),
    true,
  );
  await until('the dashboard tab', () =>
    vscode.window.tabGroups.all
      .flatMap((g) => g.tabs)
      .find((t) => t.input instanceof vscode.TabInputWebview && t.input.viewType.includes('attentionLab.dashboard')),
  );
  const doc = await vscode.workspace.openTextDocument({ content: 'the artist returned to the station\n' });
  const editor = await vscode.window.showTextDocument(doc);
  editor.selection = new vscode.Selection(doc.lineAt(0).range.start, doc.lineAt(0).range.end);
  const tokens = await vscode.commands.executeCommand('attentionLab.scoreSelection', out.runDir);
  assert.ok(
    tokens.length > 3 && tokens.length < doc.lineAt(0).text.length,
    `GPT-2 BPE tokens, fewer than characters: ${tokens.length}`,
  );
  for (const t of tokens) assert.ok(Number.isFinite(t.surprise) && t.surprise >= 0);
  // Byte-level BPE on ASCII text: tokens read as text (a space as ·), never as raw bytes like <0x20>.
  for (const t of tokens) assert.ok(!t.token.includes('<0x'), `token ${show(t.token)} shown as raw bytes`);
  assert.ok(
    tokens.some((t) => t.token.startsWith('·')),
    `no token shows its leading space as ·: ${tokens.map((t) => t.token).join(' ')}`,
  );
  await vscode.commands.executeCommand('attentionLab.clearScores');
  // A pickle is refused (shown as an error), and nothing is written.
  const pt = join(serverPath(fixtures().exports), 'ckpt.pt');
  await vscode.workspace.fs.writeFile(uri(pt), new Uint8Array([0x80, 2]));
  assert.equal(await vscode.commands.executeCommand('attentionLab.openPytorchCheckpoint', pt), undefined);
});

/**
 * A file system of VS Code's own in memory (a FileSystemProvider, as github.dev's repository
 * files are): what the web host reads and writes through `workspace.fs` alone.
 */
function memoryFileSystem() {
  const entries = new Map([['/', { type: vscode.FileType.Directory, data: null, mtime: Date.now() }]]);
  const changes = new vscode.EventEmitter();
  const get = (uri) => {
    const e = entries.get(uri.path);
    if (!e) throw vscode.FileSystemError.FileNotFound(uri);
    return e;
  };
  const parentOf = (p) => p.slice(0, p.lastIndexOf('/')) || '/';
  const under = (p) => [...entries.keys()].filter((k) => k !== p && k.startsWith(p === '/' ? '/' : `${p}/`));
  return {
    onDidChangeFile: changes.event,
    watch: () => new vscode.Disposable(() => undefined),
    stat: (uri) => {
      const e = get(uri);
      return { type: e.type, ctime: 0, mtime: e.mtime, size: e.data ? e.data.length : 0 };
    },
    readDirectory: (uri) =>
      under(uri.path)
        .filter((k) => parentOf(k) === uri.path)
        .map((k) => [k.slice(k.lastIndexOf('/') + 1), entries.get(k).type]),
    createDirectory: (uri) => {
      get(uri.with({ path: parentOf(uri.path) }));
      entries.set(uri.path, { type: vscode.FileType.Directory, data: null, mtime: Date.now() });
    },
    readFile: (uri) => {
      const e = get(uri);
      if (!e.data) throw vscode.FileSystemError.FileIsADirectory(uri);
      return e.data;
    },
    writeFile: (uri, data) => {
      get(uri.with({ path: parentOf(uri.path) }));
      entries.set(uri.path, { type: vscode.FileType.File, data: new Uint8Array(data), mtime: Date.now() });
    },
    delete: (uri) => {
      get(uri);
      for (const k of [uri.path, ...under(uri.path)]) entries.delete(k);
    },
    rename: (from, to, { overwrite }) => {
      if (entries.has(to.path) && !overwrite) throw vscode.FileSystemError.FileExists(to);
      for (const k of [from.path, ...under(from.path)]) {
        entries.set(to.path + k.slice(from.path.length), entries.get(k));
        entries.delete(k);
      }
    },
  };
}

test('reads and writes a virtual file system: evaluates, exports and imports there (web hosts)', async () => {
  if (fixtures().host === 'node') {
    console.log(
      "    (the Node host reads files from disk in its workers: a virtual file system is the web hosts' case)",
    );
    return;
  }
  const registration = vscode.workspace.registerFileSystemProvider('attentionlab-mem', memoryFileSystem(), {
    isCaseSensitive: true,
  });
  let imported;
  try {
    const root = vscode.Uri.from({ scheme: 'attentionlab-mem', authority: 'e2e', path: '/' });
    const at = (...names) => vscode.Uri.joinPath(root, ...names);
    await vscode.workspace.fs.createDirectory(at('repo'));
    await vscode.workspace.fs.writeFile(
      at('repo', 'held-out.md'),
      new TextEncoder().encode('Attention weighs every token against the others.\n'),
    );
    const evaluated = await vscode.commands.executeCommand('attentionLab.evaluateFiles', runDir, [
      pathOf(at('repo', 'held-out.md')),
    ]);
    assert.ok(evaluated, 'the evaluation of a virtual file returned nothing');
    assert.deepEqual([evaluated.kind, evaluated.documents], ['documents', 1]);
    assert.ok(Number.isFinite(evaluated.loss) && evaluated.loss > 0, `loss ${evaluated.loss}`);
    const files = await vscode.commands.executeCommand('attentionLab.export', runDir, pathOf(at('repo', 'exports')));
    assert.ok(
      files.some((f) => basename(f) === 'model.safetensors'),
      show(files),
    );
    const exported = await vscode.workspace.fs.readFile(at('repo', 'exports', basename(runDir), 'model.safetensors'));
    assert.ok(exported.length > 1000, `model.safetensors of ${exported.length} bytes`);
    // A checkpoint picked in the virtual workspace opens as a run.
    await vscode.workspace.fs.createDirectory(at('repo', 'gpt2'));
    const hf = serverPath(fixtures().hfGpt2);
    for (const name of ['config.json', 'model.safetensors', 'vocab.json', 'merges.txt'])
      await vscode.workspace.fs.writeFile(at('repo', 'gpt2', name), await readBytes(join(hf, name)));
    imported = await vscode.commands.executeCommand(
      'attentionLab.openPytorchCheckpoint',
      pathOf(at('repo', 'gpt2', 'model.safetensors')),
    );
    assert.ok(imported, 'the import from the virtual file system returned nothing');
    assert.equal(imported.layout, 'hf-gpt2');
    assert.ok(await exists(join(imported.runDir, 'model.safetensors')));
  } finally {
    registration.dispose();
    // The later tests tell runs apart by their scores: a second copy of the GPT-2 run goes.
    if (imported) await vscode.workspace.fs.delete(uri(imported.runDir), { recursive: true });
    await vscode.commands.executeCommand('attentionLab.refreshRuns');
  }
});

test('continues a finished run for more steps, as a new schedule segment', async () => {
  const out = serverPath(fixtures().continuedRun);
  assert.equal(await vscode.commands.executeCommand('attentionLab.openRun', out), out);
  // The Runs view's "Continue Training…" asks how many more steps; a test passes them.
  await vscode.commands.executeCommand('attentionLab.continueTraining', out, 4);
  const run = api.runs().find((x) => x.runDir === out);
  assert.ok(run, 'the continued run is not listed');
  assert.deepEqual([run.status, run.step, run.totalSteps], ['completed', 10, 10]);
  const json = JSON.parse(await readText(join(out, 'run.json')));
  assert.deepEqual(
    json.segments.map((s) => [s.fromStep, s.toStep, s.schedule]),
    [
      [0, 6, 'cosine'],
      [6, 10, 'restart'],
    ],
  );
  const steps = (await stepsOf(out)).map((s) => s.step);
  assert.deepEqual(
    steps,
    Array.from({ length: 10 }, (_, i) => i + 1),
    'metrics steps must be 1..n with no gap across the extension',
  );
});

test('commands without a run use the active run; the Runs view, the status bar and the dashboard share it', async () => {
  const decoders = api.runs().filter((r) => r.kind === 'decoder-only' && r.hasModel);
  assert.ok(decoders.length >= 2, show(api.runs().map((r) => [r.name, r.kind])));
  const [a, b] = decoders;
  const doc = await vscode.workspace.openTextDocument(vscode.Uri.joinPath(wsUri(), 'notes/attention.txt'));
  const editor = await vscode.window.showTextDocument(doc);
  editor.selection = new vscode.Selection(doc.lineAt(0).range.start, doc.lineAt(0).range.end);
  const surprises = (tokens) => tokens.map((t) => t.surprise.toFixed(6)).join(' ');
  const withA = surprises(await vscode.commands.executeCommand('attentionLab.scoreSelection', a.runDir));
  const withB = surprises(await vscode.commands.executeCommand('attentionLab.scoreSelection', b.runDir));
  assert.notEqual(withA, withB, 'two different runs scored the text alike');
  for (const [run, expected] of [
    [a, withA],
    [b, withB],
    [a, withA],
  ]) {
    assert.equal(await vscode.commands.executeCommand('attentionLab.run.setActive', run.runDir), run.runDir);
    assert.equal(api.activeRun(), run.runDir);
    const tokens = await vscode.commands.executeCommand('attentionLab.scoreSelection');
    assert.equal(surprises(tokens), expected, `Score Selection without a run did not use the active run ${run.name}`);
  }
  await vscode.commands.executeCommand('attentionLab.clearScores');
});

test('renames a run and notes on it in run.json, keeping its folder', async () => {
  // The run trained above (not the imported checkpoint, which no backend trained).
  const run = api.runs().find((r) => r.runDir === runDir);
  assert.equal(
    await vscode.commands.executeCommand('attentionLab.run.rename', run.runDir, 'wide context'),
    'wide context',
  );
  assert.equal(
    await vscode.commands.executeCommand('attentionLab.run.editNote', run.runDir, 'seqLen 32, 40 steps'),
    'seqLen 32, 40 steps',
  );
  const renamed = api.runs().find((r) => r.runDir === run.runDir);
  assert.deepEqual([renamed.name, renamed.note], ['wide context', 'seqLen 32, 40 steps']);
  assert.ok(await exists(join(run.runDir, 'run.json')), 'the folder must keep its name');
  const json = JSON.parse(await readText(join(run.runDir, 'run.json')));
  assert.deepEqual([json.displayName, json.note], ['wide context', 'seqLen 32, 40 steps']);
  assert.notEqual(json.backendUsed, undefined, 'run.json records the backend that ran');
  assert.notEqual(renamed.backend, 'auto');
  // A name on two lines is refused; the old name stays.
  await vscode.commands.executeCommand('attentionLab.run.rename', run.runDir, 'two\nlines');
  assert.equal(api.runs().find((r) => r.runDir === run.runDir).name, 'wide context');
});

test('announces a run that was training when the window went away, once, at its last checkpoint', async () => {
  const run = api.runs().find((r) => r.status === 'completed' && r.hasModel);
  const file = join(run.runDir, 'run.json');
  const saved = await readText(file);
  // What a reload leaves behind: run.json still says "training", nothing trains it.
  await writeText(file, JSON.stringify({ ...JSON.parse(saved), status: 'training' }, null, 2));
  try {
    await vscode.commands.executeCommand('attentionLab.refreshRuns');
    const shown = api.runs().find((r) => r.runDir === run.runDir);
    assert.deepEqual([shown.status, shown.step], ['interrupted', run.step]);
    const msgs = await api.announceInterrupted();
    assert.deepEqual(msgs, [`Training of run ${run.name} was interrupted at step ${run.step} (last checkpoint).`]);
    assert.deepEqual(await api.announceInterrupted(), [], 'the same interruption was announced twice');
  } finally {
    await writeText(file, saved);
    await vscode.commands.executeCommand('attentionLab.refreshRuns');
  }
});

test('refuses a model kind that does not fit the data, without training', async () => {
  await config().update('model.kind', 'encoder-decoder', vscode.ConfigurationTarget.Global);
  const before = api.runs().length;
  await vscode.commands.executeCommand('attentionLab.train');
  assert.equal(api.training(), null);
  assert.equal(api.runs().length, before);
  await config().update('model.kind', undefined, vscode.ConfigurationTarget.Global);
});

test('the PyTorch engine is desktop-only: in the web host, Train with it set starts nothing', async () => {
  if (api.host.kind === 'node') return; // the e2e scenario 'pytorch' trains with it in the Node host
  await config().update('training.engine', 'pytorch', vscode.ConfigurationTarget.Global);
  try {
    const before = api.runs().length;
    await vscode.commands.executeCommand('attentionLab.train');
    assert.equal(api.training(), null);
    assert.equal(api.runs().length, before);
  } finally {
    await config().update('training.engine', undefined, vscode.ConfigurationTarget.Global);
  }
});

test("trains the built-in induction task with the command line's default run (decoder-only, dFF 4, sinusoidal, context 32)", async () => {
  // Steps and context at 0 take the task's own; the model kind must fit the task (refused first, then set).
  const settings = {
    'data.source': 'task',
    'data.task': 'induction',
    'model.kind': 'encoder-decoder',
    'training.seqLen': 0,
    'training.steps': 6,
  };
  const saved = Object.fromEntries(Object.keys(settings).map((k) => [k, config().inspect(k).globalValue]));
  try {
    for (const [k, v] of Object.entries(settings)) await config().update(k, v, vscode.ConfigurationTarget.Global);
    const known = new Set(api.runs().map((r) => r.runDir));
    await vscode.commands.executeCommand('attentionLab.train');
    assert.equal(api.runs().length, known.size, 'an encoder-decoder trained on the induction task');
    await config().update('model.kind', 'decoder-only', vscode.ConfigurationTarget.Global);
    await vscode.commands.executeCommand('attentionLab.train');
    const run = api.runs().find((r) => !known.has(r.runDir));
    assert.ok(run, show(api.runs().map((r) => r.name)));
    assert.deepEqual([run.status, run.step, run.kind], ['completed', 6, 'decoder-only']);
    const json = JSON.parse(await readText(join(run.runDir, 'run.json')));
    const { kind, dFF, positional, maxLen, tieEmbeddings, dropout, labelSmoothing } = json.config;
    assert.deepEqual(
      { kind, dFF, positional, maxLen, tieEmbeddings, dropout, labelSmoothing },
      {
        kind: 'decoder-only',
        dFF: 4,
        positional: 'sinusoidal',
        maxLen: 32,
        tieEmbeddings: false,
        dropout: 0,
        labelSmoothing: 0,
      },
    );
    assert.deepEqual(json.spec.data, { kind: 'task', task: 'induction' });
    assert.deepEqual([json.spec.training.seqLen, json.spec.training.lr, json.spec.tokenizer.type], [32, 3e-3, 'char']);
    assert.ok((await list(join(run.runDir, 'snapshots'))).length > 0, 'no attention snapshot for the Heads tab');
  } finally {
    for (const [k, v] of Object.entries(saved)) await config().update(k, v, vscode.ConfigurationTarget.Global);
  }
});

exports.run = async function run() {
  let failed = 0;
  for (const t of tests) {
    const t0 = Date.now();
    try {
      await t.fn();
      console.log(`  ok    ${t.name} (${Date.now() - t0} ms)`);
    } catch (e) {
      failed++;
      console.error(`  FAIL  ${t.name}: ${(e && e.stack) || e}`);
    }
  }
  for (const key of ['training.steps', 'training.checkpointEvery', 'model.kind'])
    await config().update(key, undefined, vscode.ConfigurationTarget.Global);
  console.log(`${tests.length - failed}/${tests.length} extension-host tests passed`);
  if (failed) throw new Error(`${failed} extension-host test(s) failed`);
};
