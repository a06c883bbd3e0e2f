/**
 * The restricted pickle reader on hand-assembled pickles: what torch.save writes builds the
 * right values; every global outside the allow-list, and every opcode that could construct an
 * arbitrary object, is refused by name; damaged pickles give one line.
 */

import { describe, expect, it } from 'vitest';
import { EngineError } from '../../../../src/engine/errors';
import type { TorchTensorRef } from '../../../../src/engine/io/torchPickle';
import { PickleDict, PickleEndError, PickleTuple, unpickle } from '../../../../src/engine/io/torchPickle';
import { findStateDict, gatherF32, toJson, viewSpan } from '../../../../src/engine/io/torchStateDict';

/** Bytes of a pickle from opcode characters, strings (as latin-1) and byte arrays. */
function pk(...parts: (string | number[])[]): Uint8Array {
  const out: number[] = [0x80, 2];
  for (const p of parts) {
    if (typeof p === 'string') for (const ch of p) out.push(ch.charCodeAt(0));
    else out.push(...p);
  }
  return Uint8Array.from(out);
}

/** BINUNICODE of an ASCII string. */
function str(s: string): string {
  return `X${String.fromCharCode(s.length, 0, 0, 0)}${s}`;
}

const int = (n: number): string => `K${String.fromCharCode(n)}`;
const global = (m: string, n: string): string => `c${m}\n${n}\n`;

/** `_rebuild_tensor_v2((storage, FloatStorage, key, cpu, numel), offset, shape, stride, False, OrderedDict())`. */
function tensor(key: string, numel: number, offset: number, shape: number[], stride: number[]): string {
  const tup = (xs: number[]): string => `(${xs.map(int).join('')}t`;
  return (
    global('torch._utils', '_rebuild_tensor_v2') +
    `((${str('storage')}${global('torch', 'FloatStorage')}${str(key)}${str('cpu')}${int(numel)}tQ` +
    `${int(offset)}${tup(shape)}${tup(stride)}\x89${global('collections', 'OrderedDict')})RtR`
  );
}

function refused(bytes: Uint8Array): string {
  try {
    unpickle(bytes, 'f.bin');
  } catch (e) {
    if (EngineError.is(e, 'checkpoint/invalid')) return e.message;
    throw e;
  }
  throw new Error('not refused');
}

describe('what torch.save writes', () => {
  it('an ordered dict of tensors, a parameter, plain values and memo references', () => {
    const bytes = pk(
      `}q\x00(${str('model')}${global('collections', 'OrderedDict')})Rq\x01(`,
      `${str('w')}${tensor('0', 6, 0, [2, 3], [3, 1])}`,
      `${str('p')}${global('torch._utils', '_rebuild_parameter')}(${tensor('0', 6, 1, [2], [3])}\x88${global('collections', 'OrderedDict')})RtR`,
      'u',
      `${str('args')}}(${str('n_head')}${int(4)}${str('lr')}G`,
      [0x3f, 0xd0, 0, 0, 0, 0, 0, 0], // 0.25, big-endian
      `${str('big')}\x8a\x06`,
      [0, 0, 0, 0, 0, 1], // 2^40
      `${str('neg')}J`,
      [0xfd, 0xff, 0xff, 0xff],
      `${str('betas')}h\x01N\x86u`, // memo 1 (the state dict) and None as a tuple
      'u.',
    );
    const { value, end } = unpickle(bytes, 'f.bin');
    expect(end).toBe(bytes.length);
    const found = findStateDict(value, 'f.bin');
    expect(found.key).toBe('model');
    expect(found.tensors.map((t) => t.name)).toEqual(['w', 'p']);
    const p = found.tensors[1]?.tensor as TorchTensorRef;
    expect(p).toMatchObject({ offset: 1, shape: [2], stride: [3], storage: { key: '0', dtype: 'F32', numel: 6 } });
    expect(found.config).toBeNull(); // "args" is not a config key
    const root = value as PickleDict;
    expect(toJson(root.map.get('args'))).toEqual({ n_head: 4, lr: 0.25, big: 2 ** 40, neg: -3, betas: [{}, null] });
    // The memo gives the same dict back, not a copy.
    const betas = (root.map.get('args') as PickleDict).map.get('betas') as PickleTuple;
    expect(betas.items[0]).toBe(root.map.get('model'));
  });

  it('a tensor that reads past its storage is refused', () => {
    expect(refused(pk(`}(${str('w')}${tensor('0', 5, 0, [2, 3], [3, 1])}u.`))).toMatch(
      /a tensor of shape \[2, 3\] reads past the end of storage 0; the file is damaged/,
    );
  });
});

describe('anything else is refused by name before it is used', () => {
  const cases: [string, Uint8Array, RegExp][] = [
    [
      'os.system via GLOBAL',
      pk(`${global('os', 'system')}(${str('touch x')}tR.`),
      /refers to os\.system, which is not/,
    ],
    ['posix.system', pk(`}(${str('w')}${global('posix', 'system')}(${str('id')}tRu.`), /refers to posix\.system/],
    ['builtins.eval', pk(`${global('builtins', 'eval')}(${str('1')}tR.`), /refers to builtins\.eval/],
    ['builtins.getattr', pk(`${global('builtins', 'getattr')}.`), /refers to builtins\.getattr/],
    ['a module class', pk(`${global('__main__', 'GPT')})R.`), /refers to __main__\.GPT/],
    ['torch.load itself', pk(`${global('torch', 'load')}.`), /refers to torch\.load/],
    [
      'subprocess via STACK_GLOBAL (protocol 4)',
      pk(`\x8c\x0asubprocess\x8c\x0ccheck_output\x93.`),
      /refers to subprocess\.check_output/,
    ],
    ['INST', pk(`(iposix\nsystem\n.`), /opcode 0x69 at byte 3, which torch\.save does not write/],
    ['OBJ', pk(`(o.`), /opcode 0x6f/],
    ['NEWOBJ', pk(`N)\x81.`), /opcode 0x81/],
    ['EXT1', pk(`\x82\x01.`), /opcode 0x82/],
    [
      'calling a storage class',
      pk(`${global('torch', 'FloatStorage')})R.`),
      /calls torch\.FloatStorage, which is not a function/,
    ],
    ['BUILD on a list', pk(`]}b.`), /sets the state of an object that is not a dict or tensor/],
    ['a persistent id that is not a storage', pk(`(${str('module')}tQ.`), /persistent id that is not a storage/],
    [
      'a storage of an unknown class',
      pk(`(${str('storage')}${global('torch', 'QInt8Storage')}`),
      /refers to torch\.QInt8Storage/,
    ],
  ];
  it.each(cases)('%s', (_label, bytes, re) => {
    const msg = refused(bytes);
    expect(msg).toMatch(/^f\.bin: /);
    expect(msg).toMatch(re);
  });

  it('the refusal comes at the global, before the rest is decoded', () => {
    // After os.system comes a damaged tail (an unknown opcode): the global is what is named.
    expect(refused(pk(`${global('os', 'system')}\xff`))).toMatch(/os\.system/);
  });
});

describe('damaged pickles', () => {
  it('cut off: a PickleEndError naming where', () => {
    const bytes = pk(`}(${str('w')}`).subarray(0, 6);
    expect(() => unpickle(bytes, 'f.bin')).toThrow(PickleEndError);
    expect(() => unpickle(bytes, 'f.bin')).toThrow(/^f\.bin ends inside its pickle \(byte 6\); the file was cut off/);
  });
  it.each([
    ['an empty stack', pk('t.'), /closes a MARK it never opened/],
    ['STOP on an empty stack', pk('.'), /pops an empty stack/],
    ['a memo never stored', pk('h\x07.'), /reads memo 7, never stored/],
    ['an odd SETITEMS', pk(`}(${str('a')}u.`), /sets a dict item without a value/],
    ['a newer protocol', Uint8Array.of(0x80, 9, 0x2e), /protocol is newer than 5/],
  ] as const)('%s', (_label, bytes, re) => {
    expect(refused(bytes)).toMatch(re);
  });
});

describe('views of a storage', () => {
  const ref = (offset: number, shape: number[], stride: number[]): TorchTensorRef => ({
    kind: 'tensor',
    storage: { kind: 'storage', key: '0', dtype: 'F32', numel: 24 },
    offset,
    shape,
    stride,
  });
  const storage = new Float32Array(Array.from({ length: 24 }, (_, i) => i));
  const bytesFrom = (first: number, count: number): Uint8Array => new Uint8Array(storage.buffer, first * 4, count * 4);

  it.each([
    ['contiguous', ref(2, [2, 3], [3, 1]), [2, 3, 4, 5, 6, 7], true],
    ['transposed', ref(0, [3, 2], [1, 3]), [0, 3, 1, 4, 2, 5], false],
    ['sliced rows of a wider matrix', ref(8, [2, 2], [6, 1]), [8, 9, 14, 15], false],
    ['expanded (stride 0)', ref(5, [2, 3], [0, 1]), [5, 6, 7, 5, 6, 7], false],
    ['a scalar', ref(7, [], []), [7], true],
    ['empty', ref(3, [0, 4], [4, 1]), [], true],
  ] as const)('%s', (_label, t, want, contiguous) => {
    const span = viewSpan(t);
    expect(span.contiguous).toBe(contiguous);
    expect(Array.from(gatherF32(t, bytesFrom(span.first, span.count)))).toEqual(want);
  });
});

describe('finding the state dict', () => {
  const t: TorchTensorRef = {
    kind: 'tensor',
    storage: { kind: 'storage', key: '0', dtype: 'F32', numel: 1 },
    offset: 0,
    shape: [],
    stride: [],
  };
  const dict = (entries: [string | number, unknown][]): PickleDict => {
    const d = new PickleDict();
    for (const [k, v] of entries) d.map.set(k, v as never);
    return d;
  };
  it('a lone state dict, several candidates and none are told apart', () => {
    expect(findStateDict(dict([['only', dict([['w', t]])]]), 'f').key).toBe('only');
    expect(
      findStateDict(
        dict([
          ['ema', dict([['w', t]])],
          ['state_dict', dict([['w', t]])],
        ]),
        'f',
      ).key,
    ).toBe('state_dict');
    expect(() =>
      findStateDict(
        dict([
          ['a', dict([['w', t]])],
          ['b', dict([['w', t]])],
        ]),
        'f',
      ),
    ).toThrow(/^f: it holds several state dicts \(a, b\) and none under "model"/);
    expect(() =>
      findStateDict(
        dict([
          ['step', 3],
          ['opt', dict([[0, t]])],
        ]),
        'f',
      ),
    ).toThrow(/^f: it holds no state dict \(a dict of name → tensor\) at its top or under its keys \(step, opt\)/);
    expect(() => findStateDict([t], 'f')).toThrow(/^f: it holds a list, not a state dict/);
  });
});

describe('hostile shapes of plain values', () => {
  it('a list that holds itself, as model_args, becomes JSON with the cycle cut', () => {
    // {'model': {'w': tensor}, 'model_args': l} where l = []; l.append(l)
    const bytes = pk(
      `}(${str('model')}}(${str('w')}${tensor('0', 1, 0, [], [])}u`,
      `${str('model_args')}]q\x05h\x05au.`,
    );
    const found = findStateDict(unpickle(bytes, 'f.bin').value, 'f.bin');
    expect(found.key).toBe('model');
    expect(found.config).toBeNull(); // a list is not a config object
    const nested = toJson((unpickle(bytes, 'f.bin').value as PickleDict).map.get('model_args'));
    let depth = 0;
    for (let x = nested; Array.isArray(x); x = x[0] as unknown) depth++;
    expect(depth).toBe(32);
  });
});

describe('large plain values', () => {
  it('APPENDS of 300,000 items (more than a call takes as arguments)', () => {
    const n = 300_000;
    const body = new Array<string>(n).fill('N').join('');
    const { value } = unpickle(pk(`](${body}e.`), 'f.bin');
    expect((value as unknown[]).length).toBe(n);
  });
});
