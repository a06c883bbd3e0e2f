import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Worker } from 'node:worker_threads';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import type { HostedWorker } from '../../../../src/lab/workers/workerHandle';
import { startNodeWorker } from '../../../../src/lab/workers/startWorker.node';
import type { RequestHooks } from '../../../../src/extension/workers/modelClient';
import { ModelClient } from '../../../../src/extension/workers/modelClient';
import type { OpenRun } from '../../../../src/lab/inference/openRun';
import type { DecodeParams } from '../../../../src/protocol/model';
import type { EvalFilesData } from '../../../../src/protocol/modelWorker';
import { validateFromModelWorker } from '../../../../src/protocol/modelWorker';
import { tinyDocuments, tinySpec, trainTiny } from '../../lab/tinyRuns';
import { preparePytorchRun } from '../../../../src/lab/pytorch/pytorchSession.node';
import { trainSpecOf } from '../../../../src/lab/runs/runSpec';
import { SessionControl } from '../../../../src/lab/training/sessionControl';
import { readSnapshots } from '../../../../src/lab/runs/snapshotFiles';
import { NODE_FS } from '../../../../src/lab/files/fs.node';

// The real model worker bundle (npm test builds dist/ first).
const SCRIPT = path.resolve(__dirname, '../../../../dist/modelWorker.js');
const WORKER = (): HostedWorker => startNodeWorker(SCRIPT, 'model worker');
/** Evaluates `runDir` on `data`, ten pairs at most, greedy. */
const evaluate = (client: ModelClient, runDir: string, data: EvalFilesData, hooks: RequestHooks = {}) =>
  client.request(
    'evaluateFiles',
    { runDir, data, maxPairs: 10, decoding: { strategy: 'greedy' }, tokenize: null },
    hooks,
  );
const greedy: DecodeParams = {
  input: 'the ',
  strategy: 'greedy',
  beam: 4,
  lengthPenalty: 0.6,
  temperature: 1,
  topK: 0,
  topP: 1,
  maxTokens: 8,
  seed: 1,
};

let lm: OpenRun;
beforeAll(async () => {
  lm = await trainTiny(tinySpec(await tinyDocuments()));
});

describe('ModelClient with the model worker', () => {
  it('decodes, streaming each token first, and scores, attends and exports', async () => {
    const logs: string[] = [];
    const client = new ModelClient(WORKER, (m) => logs.push(m));
    const streamed: string[] = [];
    const out = await client.request(
      'decode',
      { runDir: lm.runDir, params: greedy },
      { onToken: (t) => streamed.push(t) },
    );
    expect(out.tokens.length).toBeGreaterThan(0);
    expect(streamed).toEqual(out.tokens);
    const score = await client.request('score', { runDir: lm.runDir, source: null, text: 'the hand' });
    expect(score.logprobs).toHaveLength(8);
    const snap = await client.request('attend', { runDir: lm.runDir, text: 'the hand' });
    expect(snap.maps[0]?.data).toBeInstanceOf(Uint8Array); // 8-bit codes of the probabilities
    const layer = await client.request('attendLayer', {
      runDir: lm.runDir,
      text: 'the hand',
      stack: 'decoder.self',
      layer: 1,
    });
    expect([layer.stack, layer.layer, ...layer.shape]).toEqual(['decoder.self', 1, ...(snap.maps[1]?.shape ?? [])]);
    expect(layer.data).toEqual(snap.maps[1]?.data); // a short text's maps come whole at once, and its layers agree
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'al-exp-'));
    const exp = await client.request('export', { runDir: lm.runDir, outDir: dir, force: false });
    expect(exp.dir).toBe(path.join(dir, path.basename(lm.runDir)));
    expect(exp.files.map((f) => path.basename(f))).toEqual(
      expect.arrayContaining(['config.json', 'model.safetensors', 'tokenizer.json', 'README.md']),
    );
    await expect(client.request('export', { runDir: lm.runDir, outDir: dir, force: false })).rejects.toThrow(
      /already exists and is not empty; pass --force/,
    );
    expect((await client.request('export', { runDir: lm.runDir, outDir: dir, force: true })).dir).toBe(exp.dir);
    const cal = await client.request('calibrate', { spec: tinySpec({ kind: 'task', task: 'copy' }), vocabSize: 300 });
    expect(cal.secondsPerStep).toBeGreaterThan(0);
    expect(logs).toEqual([]);
    client.dispose();
  });

  it('draws the snapshots a PyTorch run left as weights (a run no lab followed)', async () => {
    const runDir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'al-pending-')), 'run');
    const spec = trainSpecOf({ kind: 'task', task: 'induction' }, { steps: 10, snapshotEvery: 5 });
    await preparePytorchRun({
      runDir,
      spec,
      resume: false,
      stopAt: null,
      extendTo: null,
      control: new SessionControl(),
      emit: () => undefined,
      trainerDir: path.resolve(__dirname, '../../../../python'),
    });
    // What the trainer writes at a snapshot step: the model's weights in the checkpoint format.
    fs.copyFileSync(
      path.join(runDir, 'model.safetensors'),
      path.join(runDir, 'snapshots', 'step-0000005.weights.safetensors'),
    );
    const client = new ModelClient(WORKER, () => undefined);
    expect(await client.request('drawSnapshots', { runDir })).toBe(1);
    expect(fs.readdirSync(path.join(runDir, 'snapshots')).sort()).toEqual([
      'step-0000000.safetensors',
      'step-0000005.safetensors',
    ]);
    const [first, drawn] = await readSnapshots(NODE_FS, runDir);
    // The same weights as step 0 give the same maps and head scores as the lab's own step-0 snapshot.
    expect(drawn?.headScores).toEqual(first?.headScores);
    expect(drawn?.maps[0]?.data).toEqual(first?.maps[0]?.data);
    expect(await client.request('drawSnapshots', { runDir })).toBe(0);
    client.dispose();
  });

  it('passes the worker’s errors on, with their codes, and keeps serving', async () => {
    const client = new ModelClient(WORKER, () => undefined);
    await expect(
      client.request('decode', { runDir: path.join(os.tmpdir(), 'no-such-run'), params: greedy }),
    ).rejects.toMatchObject({
      code: 'input/invalid',
      message: expect.stringMatching(/not a run folder/),
    });
    await expect(client.request('score', { runDir: lm.runDir, source: null, text: '' })).rejects.toMatchObject({
      code: 'input/invalid',
    });
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'al-exp-'));
    fs.mkdirSync(path.join(dir, path.basename(lm.runDir)));
    fs.writeFileSync(path.join(dir, path.basename(lm.runDir), 'run.json'), '{}');
    await expect(client.request('export', { runDir: lm.runDir, outDir: dir, force: true })).rejects.toThrow(
      /is a run folder; choose another --out folder/,
    );
    expect((await client.request('score', { runDir: lm.runDir, source: null, text: 'the' })).tokens).toHaveLength(3);
    client.dispose();
  });

  it('fails what is in flight when disposed, and refuses new requests', async () => {
    const client = new ModelClient(WORKER, () => undefined);
    const pending = client.request('decode', { runDir: lm.runDir, params: { ...greedy, maxTokens: 4 } });
    client.dispose();
    await expect(pending).rejects.toMatchObject({ code: 'disposed' });
    await expect(client.request('score', { runDir: lm.runDir, source: null, text: 'x' })).rejects.toMatchObject({
      code: 'disposed',
    });
  });

  it('the worker answers a malformed request with model/didFail naming the field', async () => {
    const w = new Worker(SCRIPT);
    const replies: unknown[] = [];
    await new Promise<void>((resolve) => {
      w.on('message', (m: unknown) => {
        replies.push(validateFromModelWorker(m));
        if (replies.length === 2) resolve();
      });
      w.postMessage({ type: 'model/score', id: 7, runDir: lm.runDir, source: null });
    });
    await w.terminate();
    expect(replies[0]).toEqual({ type: 'worker/ready' });
    expect(replies[1]).toMatchObject({
      type: 'model/didFail',
      id: 7,
      error: { code: 'protocol', message: expect.stringMatching(/text: expected a string/) },
    });
  });

  describe('evaluation on files', () => {
    // Characters of both training documents, whichever one validation held out.
    const text = 'the hand sat on the sand. that hat. '.repeat(4);
    let data: EvalFilesData;
    beforeAll(() => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'al-evalfiles-'));
      fs.writeFileSync(path.join(dir, 'test.txt'), text);
      data = { kind: 'documents', paths: [path.join(dir, 'test.txt')], cwd: dir, glob: false };
    });

    it('runs in the worker and reports its progress', async () => {
      const client = new ModelClient(WORKER, () => undefined);
      const seen: [number, number][] = [];
      const out = await evaluate(client, lm.runDir, data, { onProgress: (done, total) => seen.push([done, total]) });
      expect(out).toMatchObject({
        kind: 'documents',
        documents: 1,
        tokens: text.length + 1,
        unseenChars: 0,
        skipped: [],
      });
      expect(Number.isFinite(out.loss)).toBe(true);
      const total = seen[0]?.[1] as number;
      expect(total).toBeGreaterThan(1);
      expect(seen.at(-1)).toEqual([total, total]);
      await expect(
        evaluate(client, lm.runDir, { kind: 'documents', paths: [], cwd: os.tmpdir(), glob: false }),
      ).rejects.toMatchObject({ code: 'input/invalid' });
      client.dispose();
    });

    it('cancels before sending and mid-flight, then keeps serving', async () => {
      const client = new ModelClient(WORKER, () => undefined);
      const before = new AbortController();
      before.abort();
      await expect(evaluate(client, lm.runDir, data, { signal: before.signal })).rejects.toMatchObject({
        code: 'cancelled',
      });
      const during = new AbortController();
      await expect(
        evaluate(client, lm.runDir, data, { signal: during.signal, onProgress: () => during.abort() }),
      ).rejects.toMatchObject({ code: 'cancelled' });
      expect((await client.request('score', { runDir: lm.runDir, source: null, text: 'the' })).tokens).toHaveLength(3);
      client.dispose();
    });

    it('without SharedArrayBuffer (a page that is not cross-origin isolated) cancels by ending the worker, then serves from a fresh one', async () => {
      const logs: string[] = [];
      const client = new ModelClient(WORKER, (m) => logs.push(m));
      vi.stubGlobal('SharedArrayBuffer', undefined);
      try {
        const during = new AbortController();
        await expect(
          evaluate(client, lm.runDir, data, { signal: during.signal, onProgress: () => during.abort() }),
        ).rejects.toMatchObject({ code: 'cancelled' });
      } finally {
        vi.unstubAllGlobals();
      }
      expect(logs.join('\n')).toMatch(/Evaluating was cancelled; restarting the model worker/);
      expect((await client.request('score', { runDir: lm.runDir, source: null, text: 'the' })).tokens).toHaveLength(3);
      client.dispose();
    });

    it('the worker stops an evaluation whose shared flag is set, answering model/didFail "cancelled"', async () => {
      const w = new Worker(SCRIPT);
      const cancel = new Int32Array(new SharedArrayBuffer(4));
      Atomics.store(cancel, 0, 1);
      const replies: unknown[] = [];
      await new Promise<void>((resolve) => {
        w.on('message', (m: unknown) => {
          replies.push(validateFromModelWorker(m));
          if (replies.length === 2) resolve();
        });
        w.postMessage({
          type: 'model/evaluateFiles',
          id: 3,
          runDir: lm.runDir,
          data,
          maxPairs: 10,
          decoding: { strategy: 'greedy' },
          tokenize: null,
          cancel,
        });
      });
      await w.terminate();
      expect(replies[1]).toEqual({
        type: 'model/didFail',
        id: 3,
        error: { code: 'cancelled', message: 'The evaluation was cancelled.' },
      });
    });
  });

  describe('import of a PyTorch checkpoint', () => {
    const golden = path.resolve(__dirname, '../../../golden/import/hf-gpt2');

    it('runs in the worker with progress in bytes, writes a run the worker then decodes with, and cancels', async () => {
      const client = new ModelClient(WORKER, () => undefined);
      const root = fs.mkdtempSync(path.join(os.tmpdir(), 'al-import-worker-'));
      try {
        const seen: [number, number][] = [];
        const out = await client.request(
          'import',
          { from: golden, outDir: path.join(root, 'gpt2') },
          {
            onProgress: (done, total) => seen.push([done, total]),
          },
        );
        expect(out.layout).toBe('hf-gpt2');
        expect(out.runDir).toBe(path.join(root, 'gpt2'));
        expect(seen.length).toBeGreaterThan(0);
        expect(seen[seen.length - 1]?.[0]).toBe(seen[seen.length - 1]?.[1]);
        const decoded = await client.request('decode', { runDir: out.runDir, params: greedy });
        expect(decoded.ids.length).toBeGreaterThan(0);
        const abort = new AbortController();
        abort.abort(); // mid-flight cancellation of a file this small races its end; the lab test covers it (safetensorsReader.test.ts)
        await expect(
          client.request('import', { from: golden, outDir: path.join(root, 'again') }, { signal: abort.signal }),
        ).rejects.toMatchObject({ code: 'cancelled' });
        // Requests run in order: once this one is answered, the cancelled one has finished.
        await expect(
          client.request('import', { from: path.join(root, 'nothing'), outDir: path.join(root, 'x') }),
        ).rejects.toMatchObject({
          code: 'input/invalid',
        });
        expect(fs.readdirSync(root)).toEqual(['gpt2']);
      } finally {
        client.dispose();
        fs.rmSync(root, { recursive: true, force: true });
      }
    });
  });
});
