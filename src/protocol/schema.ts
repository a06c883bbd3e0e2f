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
 *   export type WorkerToHost = Infer<typeof workerToHost>;
 *   export const workerToHost = messages({
 *     'train/didPause': { step: nonNegInt },
 *     'train/didFail': { step: nonNegInt, error: errorData },   // errorData = obj({ code: str, message: str })
 *   });
 *   validateWorkerToHost = (msg: unknown): WorkerToHost => workerToHost.check(msg, 'message');
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
