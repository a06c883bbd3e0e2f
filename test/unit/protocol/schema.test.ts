import { describe, expect, expectTypeOf, it } from 'vitest';
import type { Infer, Schema } from '../../../src/protocol/schema';
import {
  arrayOf,
  bool,
  define,
  f32,
  fail,
  finiteOrNaN,
  i32Shared,
  int,
  literal,
  messages,
  nonNegInt,
  nullable,
  num,
  obj,
  oneOf,
  optional,
  posInt,
  ProtocolError,
  record,
  refine,
  str,
  tuple,
  u8,
  variants,
} from '../../../src/protocol/schema';

/** The ProtocolError message `s.check(v, 'x')` throws. */
function error(s: Schema<unknown>, v: unknown, path = 'x'): string {
  try {
    s.check(v, path);
  } catch (e) {
    expect(e).toBeInstanceOf(ProtocolError);
    return (e as Error).message;
  }
  throw new Error(`accepted ${String(v)}`);
}

describe('schema primitives', () => {
  it.each<[string, Schema<unknown>, readonly unknown[], readonly [unknown, string][]]>([
    [
      'num',
      num,
      [0, -1.5, Infinity],
      [
        [Number.NaN, 'x: expected a number, got number'],
        ['1', 'x: expected a number, got "1"'],
      ],
    ],
    ['finiteOrNaN', finiteOrNaN, [0, Number.NaN, -Infinity], [[null, 'x: expected a number, got null']]],
    [
      'int',
      int,
      [0, -3, 2 ** 40],
      [
        [1.5, 'x: expected an integer, got number'],
        [undefined, 'x: expected an integer, got undefined'],
      ],
    ],
    [
      'nonNegInt',
      nonNegInt,
      [0, 7],
      [
        [-1, 'x: expected an integer ≥ 0, got number'],
        ['x', 'x: expected an integer ≥ 0, got "x"'],
      ],
    ],
    [
      'posInt',
      posInt,
      [1, 9],
      [
        [0, 'x: expected an integer ≥ 1, got number'],
        [[1], 'x: expected an integer ≥ 1, got array'],
      ],
    ],
    [
      'str',
      str,
      ['', 'a'],
      [
        [1, 'x: expected a string, got number'],
        [{}, 'x: expected a string, got object'],
      ],
    ],
    [
      'bool',
      bool,
      [true, false],
      [
        ['true', 'x: expected true or false, got "true"'],
        [0, 'x: expected true or false, got number'],
      ],
    ],
    ['literal', literal('v1'), ['v1'], [['v2', 'x: expected "v1", got "v2"']]],
    [
      'oneOf',
      oneOf('a', 'b'),
      ['a', 'b'],
      [
        ['c', 'x: expected one of a, b, got "c"'],
        ['constructor', 'x: expected one of a, b, got "constructor"'],
      ],
    ],
    [
      'f32',
      f32,
      [new Float32Array(2)],
      [
        [[0, 1], 'x: expected a Float32Array, got array'],
        [new Float64Array(1), 'x: expected a Float32Array, got object'],
      ],
    ],
    ['u8', u8, [Uint8Array.of(1)], [[new Int8Array(1), 'x: expected a Uint8Array, got object']]],
    [
      'i32Shared',
      i32Shared,
      [new Int32Array(new SharedArrayBuffer(4))],
      [
        [new Int32Array(1), 'x: expected an Int32Array on a SharedArrayBuffer, got object'],
        [new Int32Array(new SharedArrayBuffer(0)), 'x: expected an Int32Array on a SharedArrayBuffer, got object'],
      ],
    ],
  ])('%s accepts what it declares and names what it got otherwise', (_name, s, good, bad) => {
    for (const v of good) expect(s.check(v, 'x')).toBe(v);
    for (const [v, message] of bad) expect(error(s, v)).toBe(message);
  });

  it('quotes a wrong string, cut at 40 characters', () => {
    expect(error(num, 'y'.repeat(100))).toBe(`x: expected a number, got "${'y'.repeat(40)}"`);
  });

  it('keeps the list of a oneOf for code that offers the names', () => {
    expect(oneOf('copy', 'sort').values).toEqual(['copy', 'sort']);
  });

  it('defines a custom check with fail', () => {
    const even = define<number>((v, p) => {
      if (typeof v !== 'number' || v % 2 !== 0) fail(p, 'an even number', v);
    });
    expect(even.check(4, 'n')).toBe(4);
    expect(error(even, 3, 'n')).toBe('n: expected an even number, got number');
  });
});

describe('schema combinators', () => {
  it('nullable lets null through but not undefined; optional lets undefined through but not null', () => {
    expect(nullable(str).check(null, 'x')).toBeNull();
    expect(error(nullable(str), undefined)).toBe('x: expected a string, got undefined');
    expect(optional(str).check(undefined, 'x')).toBeUndefined();
    expect(error(optional(str), null)).toBe('x: expected a string, got null');
    expect(optional(str).isOptional).toBe(true);
  });

  it('arrayOf and record check every item at its path', () => {
    expect(error(arrayOf(nonNegInt), [0, 1, -2])).toBe('x[2]: expected an integer ≥ 0, got number');
    expect(error(arrayOf(str), 'abc')).toBe('x: expected an array, got "abc"');
    expect(error(record(posInt), { a: 1, b: 0 })).toBe('x.b: expected an integer ≥ 1, got number');
    expect(error(record(posInt), [1])).toBe('x: expected an object, got array');
  });

  it('tuple checks the length, then each item', () => {
    const shape = tuple('[rows, cols]', posInt, posInt);
    expect(shape.check([2, 3], 's')).toEqual([2, 3]);
    expect(error(shape, [2], 's')).toBe('s: expected [rows, cols], got array');
    expect(error(shape, [2, 0], 's')).toBe('s[1]: expected an integer ≥ 1, got number');
  });

  it('obj checks each declared field at path.field, lets extra fields through and returns the same object', () => {
    const point = obj({ x: num, label: optional(str) });
    const p = { x: 1, extra: true };
    expect(point.check(p, 'p')).toBe(p);
    expect(error(point, { label: 'a' }, 'p')).toBe('p.x: expected a number, got undefined');
    expect(error(point, { x: 1, label: 2 }, 'p')).toBe('p.label: expected a string, got number');
    expect(error(point, null, 'p')).toBe('p: expected an object, got null');
    expect(Object.keys(point.fields)).toEqual(['x', 'label']);
  });

  it('refine runs after the base check, with the value typed', () => {
    const range = refine(obj({ lo: int, hi: int }), (r, p) => {
      if (r.hi < r.lo) throw new ProtocolError(`${p}.hi: expected at least lo ${r.lo}, got ${r.hi}`);
    });
    expect(range.check({ lo: 1, hi: 2 }, 'r')).toEqual({ lo: 1, hi: 2 });
    expect(error(range, { lo: 3, hi: 2 }, 'r')).toBe('r.hi: expected at least lo 3, got 2');
    expect(error(range, { lo: 3 }, 'r')).toBe('r.hi: expected an integer, got undefined');
  });

  it('variants pick the fields by the key and name the known tags', () => {
    const shape = variants('kind', { circle: { r: num }, rect: { w: num, h: num } });
    expect(shape.check({ kind: 'circle', r: 1 }, 's')).toEqual({ kind: 'circle', r: 1 });
    expect(error(shape, { kind: 'rect', w: 1 }, 's')).toBe('s.h: expected a number, got undefined');
    expect(error(shape, { kind: 'blob' }, 's')).toBe('s.kind: expected one of circle, rect, got "blob"');
    expect(error(shape, { kind: 'toString' }, 's')).toBe('s.kind: expected one of circle, rect, got "toString"');
    expect(error(shape, 'circle', 's')).toBe('s: expected an object, got "circle"');
    expect(Object.keys(shape.table)).toEqual(['circle', 'rect']);
  });

  it('messages frame the fields by type and list the known types', () => {
    const m = messages({ 'a/ping': {}, 'a/didPong': { n: posInt } });
    const pong = { type: 'a/didPong', n: 1 };
    expect(m.check(pong, 'message')).toBe(pong);
    expect(error(m, 7, 'message')).toBe('message: expected a message object, got number');
    expect(error(m, { n: 1 }, 'message')).toBe('message.type: expected a message type, got undefined');
    expect(error(m, { type: 'a/bang' }, 'message')).toBe(
      'message.type: unknown message type "a/bang"; known: a/ping, a/didPong',
    );
    expect(error(m, { type: '__proto__' }, 'message')).toMatch(/unknown message type "__proto__"/);
    expect(error(m, { type: 'a/didPong', n: 0 }, 'event')).toBe(
      'event(a/didPong).n: expected an integer ≥ 1, got number',
    );
  });
});

describe('Infer', () => {
  it('gives readonly types, `?:` for optional fields and unions for oneOf, variants and messages', () => {
    const s = obj({
      a: num,
      b: optional(str),
      c: nullable(arrayOf(bool)),
      d: oneOf('x', 'y'),
      e: record(f32),
      t: tuple('[a, b]', int, str),
    });
    expectTypeOf<Infer<typeof s>>().toEqualTypeOf<{
      readonly a: number;
      readonly b?: string;
      readonly c: readonly boolean[] | null;
      readonly d: 'x' | 'y';
      readonly e: { readonly [key: string]: Float32Array };
      readonly t: readonly [number, string];
    }>();
    const v = variants('kind', { circle: { r: num }, rect: { w: num, h: optional(num) } });
    expectTypeOf<Infer<typeof v>>().toEqualTypeOf<
      | { readonly kind: 'circle'; readonly r: number }
      | { readonly kind: 'rect'; readonly w: number; readonly h?: number }
    >();
    const m = messages({ 'a/ping': {}, 'a/didPong': { n: posInt } });
    expectTypeOf<Infer<typeof m>>().toEqualTypeOf<
      { readonly type: 'a/ping' } | { readonly type: 'a/didPong'; readonly n: number }
    >();
    expectTypeOf(m.check).returns.toEqualTypeOf<Infer<typeof m>>();
  });

  it('makes a handler that misses a message fail to compile', () => {
    const m = messages({ 'a/ping': {}, 'a/didPong': { n: posInt } });
    const handle = (msg: Infer<typeof m>): number => {
      switch (msg.type) {
        case 'a/ping':
          return 0;
        case 'a/didPong':
          return msg.n;
        default:
          return msg satisfies never;
      }
    };
    expect(handle({ type: 'a/didPong', n: 3 })).toBe(3);
    const partial = (msg: Infer<typeof m>): number => {
      switch (msg.type) {
        case 'a/ping':
          return 0;
        default:
          // @ts-expect-error 'a/didPong' is not handled, so msg is not never
          return msg satisfies never;
      }
    };
    expect(partial({ type: 'a/ping' })).toBe(0);
    // @ts-expect-error a required field left out does not compile
    const missing: Infer<typeof m> = { type: 'a/didPong' };
    expect(missing.type).toBe('a/didPong');
  });
});
