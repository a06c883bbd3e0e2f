/**
 * Schemas: each message field is declared once as a value `Schema<T>`, from which both the
 * TypeScript type (`Infer<typeof s>`) and the runtime check (`s.check(v, path)`) come, so a
 * type and its validator cannot drift apart (CONTRIBUTING.md, "Declare once"). A failed check throws
 * `ProtocolError` naming the path and what was expected: "spec.training.steps: expected an
 * integer ≥ 1, got number" (a wrong string is quoted). A check returns the very value it was given (no copy, no
 * coercion), typed.
 *
 * Message tables give the discriminated union `{ readonly type: K } & fields` and its
 * validator from one object; adding a message is one entry:
 *
 *   export type FromTrainingWorker = Infer<typeof fromTrainingWorker>;
 *   export const fromTrainingWorker = messages({
 *     'train/didPause': { step: nonNegInt },
 *     'train/didFail': { step: nonNegInt, error: errorData },   // errorData = obj({ code: str, message: str })
 *   });
 *   validateFromTrainingWorker = (msg: unknown): FromTrainingWorker => fromTrainingWorker.check(msg, 'message');
 *
 * Requests answered once are declared together with their answer (`requests('model', { decode:
 * { params, answer, what, timeoutMs, streams, page } })`): the request and answer message tables,
 * and the types a client's `request(kind, params)` and a handler map are checked against, come
 * from that one entry (modelWorker.ts `modelRequests`).
 *
 * Shared shapes follow the same pattern: a JSDoc'd `export type X = Infer<typeof x>` above
 * `export const x = obj({ … })`, with each field's comment on the schema's field.
 *
 * Leaves out: transforms and defaults (a check never changes a value), and rejecting extra
 * fields (a newer sender may add one; receivers read only what they declared). Imports
 * nothing: the protocol layer runs in Node, in workers and in the dashboard's page.
 */

/** A message that does not match the protocol. */
export class ProtocolError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ProtocolError';
  }
}

/** A declared shape: `check` throws ProtocolError unless `v` is a T, and returns `v`. */
export interface Schema<T> {
  check(v: unknown, path: string): T;
}

/** A field that may be absent (`obj` makes it `?:`). */
export interface OptionalSchema<T> extends Schema<T | undefined> {
  readonly isOptional: true;
}

/** The TypeScript type a schema checks. */
export type Infer<S> = S extends Schema<infer T> ? T : never;

/** The fields of an object schema. */
export type Fields = { readonly [key: string]: Schema<unknown> };

/** `T` with its intersections merged, for readable hovers and errors. */
type Flat<T> = { [K in keyof T]: T[K] } & {};

/** The readonly object type of `fields`: optional schemas become `?:` fields. */
export type ObjOf<F extends Fields> = Flat<
  { readonly [K in keyof F as F[K] extends OptionalSchema<unknown> ? never : K]: Infer<F[K]> } & {
    readonly [K in keyof F as F[K] extends OptionalSchema<unknown> ? K : never]?: Exclude<Infer<F[K]>, undefined>;
  }
>;

/** Throws "path: expected WANT, got WHAT-IT-WAS" (strings quoted and cut at 40 characters). */
export function fail(path: string, want: string, v: unknown): never {
  const got = v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v;
  throw new ProtocolError(
    `${path}: expected ${want}, got ${got === 'string' ? JSON.stringify(String(v).slice(0, 40)) : got}`,
  );
}

/** A schema from a check that throws (with `fail`) or returns: the one place unknown becomes T. */
export function define<T>(check: (v: unknown, path: string) => void): Schema<T> {
  return {
    check(v: unknown, path: string): T {
      check(v, path);
      return v as T;
    },
  };
}

/** `base`, then a further check of the value it accepted (relations between fields, lengths). */
export function refine<T>(base: Schema<T>, check: (v: T, path: string) => void): Schema<T> {
  return {
    check(v: unknown, path: string): T {
      const t = base.check(v, path);
      check(t, path);
      return t;
    },
  };
}

/* ------------------------------------------------------------------ primitives */

/** A number, not NaN. */
export const num: Schema<number> = define((v, p) => {
  if (typeof v !== 'number' || Number.isNaN(v)) fail(p, 'a number', v);
});
/** Any number, NaN included (a loss the runner reports as a failure must still arrive). */
export const finiteOrNaN: Schema<number> = define((v, p) => {
  if (typeof v !== 'number') fail(p, 'a number', v);
});
export const int: Schema<number> = define((v, p) => {
  if (typeof v !== 'number' || !Number.isInteger(v)) fail(p, 'an integer', v);
});
export const nonNegInt: Schema<number> = define((v, p) => {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) fail(p, 'an integer ≥ 0', v);
});
export const posInt: Schema<number> = define((v, p) => {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1) fail(p, 'an integer ≥ 1', v);
});
export const str: Schema<string> = define((v, p) => {
  if (typeof v !== 'string') fail(p, 'a string', v);
});
export const bool: Schema<boolean> = define((v, p) => {
  if (typeof v !== 'boolean') fail(p, 'true or false', v);
});

/** Exactly `value`. */
export function literal<const V extends string | number | boolean>(value: V): Schema<V> {
  return define((v, p) => {
    if (v !== value) fail(p, JSON.stringify(value), v);
  });
}

/** One of a list of names; `values` is the list, for code that offers or iterates them. */
export interface OneOfSchema<V extends string> extends Schema<V> {
  readonly values: readonly V[];
}

/** One of `values` ("expected one of copy, reverse, …"). */
export function oneOf<const V extends string>(...values: readonly V[]): OneOfSchema<V> {
  const { check } = define<V>((v, p) => {
    if (typeof v !== 'string' || !(values as readonly string[]).includes(v)) fail(p, `one of ${values.join(', ')}`, v);
  });
  return { check, values };
}

/** Float32Array (attention maps; transferred, not copied). */
export const f32: Schema<Float32Array> = define((v, p) => {
  if (!(v instanceof Float32Array)) fail(p, 'a Float32Array', v);
});
/** Uint8Array (masks). */
export const u8: Schema<Uint8Array> = define((v, p) => {
  if (!(v instanceof Uint8Array)) fail(p, 'a Uint8Array', v);
});
/** Float32Array or Uint8Array (attention probabilities, or their 8-bit codes: src/common/attentionCodec.ts). */
export const f32OrU8: Schema<Float32Array | Uint8Array> = define((v, p) => {
  if (!(v instanceof Float32Array) && !(v instanceof Uint8Array)) fail(p, 'a Float32Array or a Uint8Array', v);
});
/**
 * At least one Int32 on a SharedArrayBuffer: a flag that one thread stores and another,
 * busy computing, reads (`SharedArrayBuffer` is looked up only when a value is checked, so
 * this module loads in pages without cross-origin isolation too).
 */
export const i32Shared: Schema<Int32Array> = define((v, p) => {
  if (!(v instanceof Int32Array) || v.length < 1 || !(v.buffer instanceof SharedArrayBuffer))
    fail(p, 'an Int32Array on a SharedArrayBuffer', v);
});

/* ------------------------------------------------------------------ combinators */

/** T or null. */
export function nullable<T>(s: Schema<T>): Schema<T | null> {
  return define((v, p) => {
    if (v !== null) s.check(v, p);
  });
}

/** A field that may be absent (or undefined); inside `obj` it becomes `?:`. */
export function optional<T>(s: Schema<T>): OptionalSchema<T> {
  const { check } = define<T | undefined>((v, p) => {
    if (v !== undefined) s.check(v, p);
  });
  return { check, isOptional: true };
}

/** A readonly array whose items are checked at `path[i]`. */
export function arrayOf<T>(s: Schema<T>): Schema<readonly T[]> {
  return define((v, p) => {
    if (!Array.isArray(v)) fail(p, 'an array', v);
    v.forEach((x: unknown, i) => s.check(x, `${p}[${i}]`));
  });
}

/** A fixed-length array; `what` names its parts for the error ("[heads, rows, cols]"). */
export function tuple<const T extends readonly Schema<unknown>[]>(
  what: string,
  ...items: T
): Schema<{ readonly [I in keyof T]: Infer<T[I]> }> {
  return define((v, p) => {
    if (!Array.isArray(v)) fail(p, 'an array', v);
    if (v.length !== items.length) fail(p, what, v);
    items.forEach((s, i) => s.check(v[i], `${p}[${i}]`));
  });
}

function isObject(v: unknown): v is { readonly [key: string]: unknown } {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** An object of string keys whose values are checked at `path.key`. */
export function record<T>(s: Schema<T>): Schema<{ readonly [key: string]: T }> {
  return define((v, p) => {
    if (!isObject(v)) fail(p, 'an object', v);
    for (const [k, x] of Object.entries(v)) s.check(x, `${p}.${k}`);
  });
}

/** An object schema; `fields` is kept so messages and other objects can reuse them. */
export interface ObjSchema<F extends Fields> extends Schema<ObjOf<F>> {
  readonly fields: F;
}

function checkFields(fields: Fields, v: { readonly [key: string]: unknown }, path: string): void {
  for (const [k, s] of Object.entries(fields)) s.check(v[k], `${path}.${k}`);
}

/** An object with these fields, each checked at `path.field` (extra fields are let through). */
export function obj<const F extends Fields>(fields: F): ObjSchema<F> {
  const { check } = define<ObjOf<F>>((v, p) => {
    if (!isObject(v)) fail(p, 'an object', v);
    checkFields(fields, v, p);
  });
  return { check, fields };
}

/* ------------------------------------------------------------------ unions by a key */

/** Variants: tag → the fields that go with it. */
export type Table = { readonly [tag: string]: Fields };

/** The union a table declares: `{ readonly [key]: tag } & fields`, one member per tag. */
export type UnionOf<K extends string, T extends Table> = {
  [V in keyof T & string]: Flat<{ readonly [P in K]: V } & ObjOf<T[V]>>;
}[keyof T & string];

/** A union schema keeps its table, so tests and handlers can list every tag. */
export interface UnionSchema<K extends string, T extends Table> extends Schema<UnionOf<K, T>> {
  readonly key: K;
  readonly table: T;
}

function ownFields(table: Table, tag: string): Fields | undefined {
  return Object.prototype.hasOwnProperty.call(table, tag) ? table[tag] : undefined;
}

/**
 * Data discriminated by `key` (`variants('kind', { task: {…}, pairs: {…} })`): an unknown
 * tag fails as "path.kind: expected one of task, pairs".
 */
export function variants<const K extends string, const T extends Table>(key: K, table: T): UnionSchema<K, T> {
  const tags = Object.keys(table);
  const { check } = define<UnionOf<K, T>>((v, p) => {
    if (!isObject(v)) fail(p, 'an object', v);
    const tag = v[key];
    const fields = typeof tag === 'string' ? ownFields(table, tag) : undefined;
    if (!fields) fail(`${p}.${key}`, `one of ${tags.join(', ')}`, tag);
    checkFields(fields, v, p);
  });
  return { check, key, table };
}

/**
 * Messages discriminated by `type`, one table entry each: adding a message is one entry,
 * and its type joins the union that handlers must exhaust (`satisfies never`). Fields are
 * checked at `path(type).field`; an unknown type fails listing the known ones.
 */
export function messages<const T extends Table>(table: T): UnionSchema<'type', T> {
  const { check } = define<UnionOf<'type', T>>((v, p) => {
    if (!isObject(v)) fail(p, 'a message object', v);
    const type = v.type;
    if (typeof type !== 'string') fail(`${p}.type`, 'a message type', type);
    const fields = ownFields(table, type);
    if (!fields)
      throw new ProtocolError(
        `${p}.type: unknown message type ${JSON.stringify(type)}; known: ${Object.keys(table).join(', ')}`,
      );
    checkFields(fields, v, `${p}(${type})`);
  });
  return { check, key: 'type', table };
}

/* ------------------------------------------------------------------ requests and their answers */

/** What a request sends before its answer, besides nothing: tokens as they are decoded, or progress. */
export type StreamKind = 'token' | 'progress';

/**
 * One request, declared once: its fields, the answer it resolves to, how long it may take,
 * what it streams before the answer, and whether the dashboard may ask it (the extension
 * forwards it as it came).
 */
export interface RequestSpec {
  readonly params: Fields;
  readonly answer: Schema<unknown>;
  /** What it does, for people: "Decoding" ("Decoding took longer than 300 s …", "Decoding was cancelled."). */
  readonly what: string;
  readonly timeoutMs: number;
  readonly streams: StreamKind | null;
  /** The dashboard may send it (its own id, the same fields) and gets its answer back. */
  readonly page: boolean;
}

/** Request kinds → their declarations. */
export type RequestTable = { readonly [kind: string]: RequestSpec };

/** The fields every request and answer message adds: the id the answer carries back. */
type IdField = { readonly id: Schema<number> };

/** The message table of the requests: `<prefix>/<kind>` → id and the request's fields. */
export type RequestMessages<P extends string, T extends RequestTable> = {
  readonly [K in keyof T & string as `${P}/${K}`]: IdField & T[K]['params'];
};
/** The message table of the answers: `<prefix>/did<Kind>` → id and `output`, the answer. */
export type AnswerMessages<P extends string, T extends RequestTable> = {
  readonly [K in keyof T & string as `${P}/did${Capitalize<K>}`]: IdField & { readonly output: T[K]['answer'] };
};
/** The kinds of `T` the dashboard may send. */
export type PageKinds<T extends RequestTable> = {
  [K in keyof T & string]: T[K]['page'] extends true ? K : never;
}[keyof T & string];

/** What request `K` sends (its message without `type` and `id`); a union of kinds gives the union of their fields. */
export type ParamsOf<T extends RequestTable, K extends keyof T> = K extends keyof T ? ObjOf<T[K]['params']> : never;
/** What request `K` resolves to. */
export type AnswerOf<T extends RequestTable, K extends keyof T> = K extends keyof T ? Infer<T[K]['answer']> : never;
/** The message that answers request `K`. */
export type AnswerMessageOf<P extends string, T extends RequestTable, K extends keyof T & string> = K extends string
  ? { readonly type: `${P}/did${Capitalize<K>}`; readonly id: number; readonly output: AnswerOf<T, K> }
  : never;
/** The request message of kind `K`. */
export type RequestMessageOf<P extends string, T extends RequestTable, K extends keyof T & string> = K extends string
  ? Flat<{ readonly type: `${P}/${K}`; readonly id: number } & ObjOf<T[K]['params']>>
  : never;

/** A table of requests, and the message tables and names derived from it. */
export interface Requests<P extends string, T extends RequestTable> {
  readonly prefix: P;
  readonly table: T;
  /** `<prefix>/<kind>` → `{ id, ...params }`, for `messages`. */
  readonly requests: RequestMessages<P, T>;
  /** `<prefix>/did<Kind>` → `{ id, output }`, for `messages`. */
  readonly answers: AnswerMessages<P, T>;
  /** The requests the dashboard may send, and their answers. */
  readonly pageRequests: Pick<RequestMessages<P, T>, `${P}/${PageKinds<T>}` & keyof RequestMessages<P, T>>;
  readonly pageAnswers: Pick<AnswerMessages<P, T>, `${P}/did${Capitalize<PageKinds<T>>}` & keyof AnswerMessages<P, T>>;
  /** The kind of a request message's type, or null when `type` is not one. */
  kindOf(type: string): (keyof T & string) | null;
  /** The kind an answer message's type answers, or null when `type` is not an answer. */
  answeredKind(type: string): (keyof T & string) | null;
  /** The request message of kind `kind`. */
  request<K extends keyof T & string>(kind: K, id: number, params: ParamsOf<T, K>): RequestMessageOf<P, T, K>;
  /** The message answering request `id` of kind `kind` with `output`. */
  answer<K extends keyof T & string>(kind: K, id: number, output: AnswerOf<T, K>): AnswerMessageOf<P, T, K>;
}

function capitalized(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}

/**
 * Requests answered exactly once, each declared once (`requests('model', { decode: { params,
 * answer, what, timeoutMs, streams, page } })`): the request messages (`model/decode` with an
 * `id` and the params' fields), the answer messages (`model/didDecode` with the `id` and
 * `output`), the client's typed `request(kind, params)`, the handlers' map and the time-outs
 * all come from it. Failures and streamed messages are the channel's own entries.
 */
export function requests<const P extends string, const T extends RequestTable>(prefix: P, table: T): Requests<P, T> {
  const req: { [type: string]: Fields } = {};
  const ans: { [type: string]: Fields } = {};
  const pageReq: { [type: string]: Fields } = {};
  const pageAns: { [type: string]: Fields } = {};
  const byAnswer = new Map<string, string>();
  for (const [kind, spec] of Object.entries(table)) {
    const answerType = `${prefix}/did${capitalized(kind)}`;
    req[`${prefix}/${kind}`] = { id: nonNegInt, ...spec.params };
    ans[answerType] = { id: nonNegInt, output: spec.answer };
    byAnswer.set(answerType, kind);
    if (spec.page) {
      pageReq[`${prefix}/${kind}`] = req[`${prefix}/${kind}`];
      pageAns[answerType] = ans[answerType];
    }
  }
  const own = (kind: string): (keyof T & string) | null =>
    Object.prototype.hasOwnProperty.call(table, kind) ? (kind as keyof T & string) : null;
  return {
    prefix,
    table,
    // The tables built above hold exactly the entries their types map (one per kind).
    requests: req as RequestMessages<P, T>,
    answers: ans as AnswerMessages<P, T>,
    pageRequests: pageReq as Requests<P, T>['pageRequests'],
    pageAnswers: pageAns as Requests<P, T>['pageAnswers'],
    kindOf: (type) => (type.startsWith(`${prefix}/`) ? own(type.slice(prefix.length + 1)) : null),
    answeredKind: (type) => own(byAnswer.get(type) ?? ''),
    request: (kind, id, params) => {
      // The declared fields only (a forwarded message may carry others), under the kind's type.
      const msg: { [field: string]: unknown } = { type: `${prefix}/${kind}`, id };
      const given = params as { readonly [field: string]: unknown };
      for (const field of Object.keys(table[kind].params)) if (given[field] !== undefined) msg[field] = given[field];
      return msg as RequestMessageOf<P, T, typeof kind>;
    },
    answer: (kind, id, output) =>
      ({ type: `${prefix}/did${capitalized(kind)}`, id, output }) as AnswerMessageOf<P, T, typeof kind>,
  };
}
