/**
 * The model worker's requests, declared once (src/protocol/modelWorker.ts `modelRequests`): what is derived from the
 * declaration at run time (message names, the dashboard's subset, the fields a request carries), the client refusing
 * an answer of another kind, and — checked by `npm run typecheck`, which compiles this file — that a wrong answer or
 * params type at a call site or in a handler does not compile (each `@ts-expect-error` below fails the typecheck if
 * its line ever compiles).
 */

import { describe, expect, it } from 'vitest';
import type { HostedWorker } from '../../../src/lab/workers/workerHandle';
import { ModelClient } from '../../../src/extension/workers/modelClient';
import type { AttentionSnapshot, DecodeOutput, DecodeParams } from '../../../src/protocol/model';
import type {
  ModelAnswer,
  ModelHandlers,
  ModelRequestKind,
  FromModelWorker,
  PageRequestKind,
} from '../../../src/protocol/modelWorker';
import { toModelWorker, modelRequests, fromModelWorker } from '../../../src/protocol/modelWorker';
import { fromWebview, toWebview } from '../../../src/protocol/webview';

const params: DecodeParams = {
  input: 'ab',
  strategy: 'greedy',
  beam: 1,
  lengthPenalty: 0,
  temperature: 1,
  topK: 0,
  topP: 1,
  maxTokens: 4,
  seed: 1,
};

/* ------------------------------------------------------------------ compile-time checks (never called) */

/** Call sites of the client: the answer type comes from the declaration. */
export async function callSites(client: ModelClient): Promise<void> {
  const ok: DecodeOutput = await client.request('decode', { runDir: '/r', params });
  // @ts-expect-error a decode resolves to a DecodeOutput, not an attention snapshot
  const wrongAnswer: AttentionSnapshot = await client.request('decode', { runDir: '/r', params });
  // @ts-expect-error a score needs its `source` (null for a decoder-only run)
  await client.request('score', { runDir: '/r', text: 'x' });
  // @ts-expect-error `layer` is a number
  await client.request('attendLayer', { runDir: '/r', text: 'x', stack: 'decoder.self', layer: '1' });
  // @ts-expect-error there is no request `train`
  await client.request('train', { runDir: '/r' });
  const drawn: number = await client.request('drawSnapshots', { runDir: '/r' });
  void [ok, wrongAnswer, drawn];
}

/** Handlers: each answers its own kind's type, and every kind has one. */
export const wrongHandler: Pick<ModelHandlers<null>, 'drawSnapshots' | 'attend'> = {
  // @ts-expect-error drawSnapshots answers how many were drawn, not a text
  drawSnapshots: async () => 'three',
  // @ts-expect-error attend answers a snapshot, not a decode
  attend: async (): Promise<DecodeOutput> => ({}) as DecodeOutput,
};
export function missingHandler(allButDecode: Omit<ModelHandlers<null>, 'decode'>): ModelHandlers<null> {
  // @ts-expect-error a handler map without `decode` is not a handler map
  return allButDecode;
}

/** Answer messages: `output` is the answer of the kind the type names. */
export function answers(output: DecodeOutput): FromModelWorker[] {
  return [
    modelRequests.answer('decode', 1, output),
    // @ts-expect-error a lens answer carries lens output, not a decode's
    modelRequests.answer('lens', 1, output),
    // @ts-expect-error model/didDrawSnapshots carries a count
    { type: 'model/didDrawSnapshots', id: 1, output: 'three' },
  ];
}

/* ------------------------------------------------------------------ run time */

/** A model worker that answers every request with `reply(request)` (a list: those messages in order). */
function fakeWorker(reply: (req: { type: string; id: number }) => unknown): () => HostedWorker {
  return () => {
    let listener: (msg: unknown) => void = () => undefined;
    return {
      post: (msg) =>
        queueMicrotask(() => {
          const answer = reply(msg as { type: string; id: number });
          for (const m of Array.isArray(answer) ? answer : [answer]) listener(m);
        }),
      onMessage: (l) => {
        listener = l;
        queueMicrotask(() => l({ type: 'worker/ready' }));
      },
      onLost: () => undefined,
      terminate: async () => undefined,
    };
  };
}

describe('model worker requests, declared once (modelRequests)', () => {
  const kinds = Object.keys(modelRequests.table) as ModelRequestKind[];

  it('derives one request and one answer message per kind, and the channels hold them', () => {
    expect(kinds).toHaveLength(14);
    for (const kind of kinds) {
      const type = `model/${kind}`;
      const answer = `model/did${kind[0]?.toUpperCase()}${kind.slice(1)}`;
      expect(modelRequests.kindOf(type)).toBe(kind);
      expect(modelRequests.answeredKind(answer)).toBe(kind);
      expect(Object.keys(toModelWorker.table)).toContain(type);
      expect(Object.keys(fromModelWorker.table)).toContain(answer);
      expect(modelRequests.table[kind].timeoutMs).toBeGreaterThan(0);
    }
    expect(modelRequests.kindOf('model/didDecode')).toBeNull();
    expect(modelRequests.kindOf('model/toString')).toBeNull();
    expect(modelRequests.answeredKind('model/decode')).toBeNull();
  });

  it("gives the dashboard exactly the `page` kinds, with the model worker's messages", () => {
    const page: PageRequestKind[] = [
      'decode',
      'attend',
      'attendLayer',
      'lens',
      'ablate',
      'steer',
      'patch',
      'attribute',
    ];
    expect(kinds.filter((k) => modelRequests.table[k].page)).toEqual(expect.arrayContaining(page));
    expect(kinds.filter((k) => modelRequests.table[k].page)).toHaveLength(page.length);
    const sent = Object.keys(fromWebview.table).filter((t) => t.startsWith('model/'));
    // and model/cancel, which stops one of them (the host aborts it; it is no request of its own)
    expect(sent.sort()).toEqual([...page.map((k) => `model/${k}`), 'model/cancel'].sort());
    const got = Object.keys(toWebview.table).filter((t) => t.startsWith('model/'));
    expect(got.sort()).toEqual(
      [
        ...page.map((k) => `model/did${k[0]?.toUpperCase()}${k.slice(1)}`),
        'model/didToken',
        'model/didProgress',
        'model/didFail',
      ].sort(),
    );
    // Each is the model worker's own entry: one declaration, one validator.
    expect(fromWebview.table['model/lens']).toBe(toModelWorker.table['model/lens']);
  });

  it('a request message carries its declared fields only, under its type and id', () => {
    const forwarded = { type: 'model/attend', id: 7, runDir: '/r', text: 'x', extra: 'dropped' };
    expect(modelRequests.request('attend', 3, forwarded)).toEqual({
      type: 'model/attend',
      id: 3,
      runDir: '/r',
      text: 'x',
    });
  });

  it('the client passes on only what a request is declared to stream', async () => {
    const worker = (answer: string, output: unknown) =>
      fakeWorker((req) => [
        { type: 'model/didToken', id: req.id, token: 'a', logprob: -1 },
        { type: 'model/didProgress', id: req.id, done: 1, total: 2 },
        { type: answer, id: req.id, output },
      ]);
    const seen: string[] = [];
    const hooks = {
      onToken: (t: string) => seen.push(`token ${t}`),
      onProgress: (d: number) => seen.push(`done ${d}`),
    };
    const drawing = new ModelClient(worker('model/didDrawSnapshots', 0), () => undefined);
    await drawing.request('drawSnapshots', { runDir: '/r' }, hooks);
    expect(seen).toEqual([]); // declared `streams: null`
    drawing.dispose();
    const imported: ModelAnswer<'import'> = {
      runDir: '/w/runs/gpt2',
      layout: 'hf-gpt2',
      layoutText: 'Hugging Face GPT-2',
      modelFile: '/w/gpt2/model.safetensors',
      params: 10,
      tensors: 2,
      tokenizer: '/w/gpt2/vocab.json',
      notes: [],
    };
    const importing = new ModelClient(worker('model/didImport', imported), () => undefined);
    await expect(importing.request('import', { from: '/w/gpt2', outDir: '/w/runs/gpt2' }, hooks)).resolves.toEqual(
      imported,
    );
    expect(seen).toEqual(['done 1']); // declared `streams: 'progress'`
    importing.dispose();
    expect(modelRequests.table.decode.streams).toBe('token');
    expect(modelRequests.table.import.streams).toBe('progress');
  });

  it('the client resolves to the answer of the kind it asked, and refuses an answer of another kind', async () => {
    const output: ModelAnswer<'drawSnapshots'> = 2;
    const right = new ModelClient(
      fakeWorker((req) => ({ type: 'model/didDrawSnapshots', id: req.id, output })),
      () => undefined,
    );
    await expect(right.request('drawSnapshots', { runDir: '/r' })).resolves.toBe(2);
    right.dispose();
    const logs: string[] = [];
    const wrong = new ModelClient(
      fakeWorker((req) => ({ type: 'model/didDrawSnapshots', id: req.id, output })),
      (m) => logs.push(m),
    );
    await expect(wrong.request('score', { runDir: '/r', source: null, text: 'x' })).rejects.toMatchObject({
      code: 'protocol',
      message: 'The model worker answered model/score with model/didDrawSnapshots; try again.',
    });
    expect(logs.join('\n')).toMatch(/answered request 1 \(model\/score\) with model\/didDrawSnapshots/);
    wrong.dispose();
  });
});
