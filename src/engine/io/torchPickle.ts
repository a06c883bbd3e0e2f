/**
 * A restricted reader of the pickle inside a PyTorch checkpoint (`data.pkl` of `torch.save`'s
 * zip, or the pickles of the legacy format): it builds values and executes nothing. Python's
 * pickle calls whatever global a file names (`os.system`, `builtins.eval` …); here a global
 * is only a name looked up in {@link ALLOWED_GLOBALS}, the ones `torch.save` writes for a
 * state dict — tensors, parameters, storages, ordered dicts — and each is rebuilt by our own
 * code. Any other global is refused, naming it, the moment its opcode is read, so nothing
 * after it is even decoded. (PyTorch's own `torch.load(weights_only=True)` draws the same
 * line.)
 *
 * Opcodes: the protocol-2 set `torch.save` emits (PROTO, the BIN* numbers and strings, MARK,
 * tuples, lists, dicts, BINPUT/BINGET memo, GLOBAL, REDUCE, BUILD on an ordered dict,
 * BINPERSID for storages, STOP) plus the data opcodes of protocols 3–4 (bytes, FRAME, MEMOIZE,
 * STACK_GLOBAL) for a file saved with a higher `pickle_protocol`. The rest (INST, OBJ, NEWOBJ,
 * EXT*, text-mode opcodes …) is refused naming the opcode.
 *
 * Pure: bytes in, a value tree out, whose tensors are references into storages (key, dtype,
 * offset, shape, strides) that the caller reads (src/lab/interop/torchCheckpoint.ts).
 * Leaves out: quantized, sparse and meta tensors, and tensor subclasses (their rebuild
 * functions are not allowed, so they are refused by name).
 */

import { EngineError } from '../errors';
import { decodeUtf8Strict } from './utf8';

/** The storage element types read, by the storage class `torch.save` names. */
export const TORCH_STORAGES = {
  FloatStorage: 'F32',
  HalfStorage: 'F16',
  BFloat16Storage: 'BF16',
  DoubleStorage: 'F64',
  LongStorage: 'I64',
  IntStorage: 'I32',
  ShortStorage: 'I16',
  CharStorage: 'I8',
  ByteStorage: 'U8',
  BoolStorage: 'BOOL',
} as const;

/** A storage element type ({@link TORCH_STORAGES}). */
export type TorchDtype = (typeof TORCH_STORAGES)[keyof typeof TORCH_STORAGES];

/** Bytes per element of each {@link TorchDtype}. */
export const TORCH_DTYPE_SIZE: Readonly<Record<TorchDtype, number>> = {
  F32: 4,
  F16: 2,
  BF16: 2,
  F64: 8,
  I64: 8,
  I32: 4,
  I16: 2,
  I8: 1,
  U8: 1,
  BOOL: 1,
};

/** A storage as a persistent id names it: `data/<key>` in the zip, `numel` elements of `dtype`. */
export interface TorchStorageRef {
  readonly kind: 'storage';
  readonly key: string;
  readonly dtype: TorchDtype;
  readonly numel: number;
}

/** A tensor: a strided view of a storage (`_rebuild_tensor_v2`), offset and strides in elements. */
export interface TorchTensorRef {
  readonly kind: 'tensor';
  readonly storage: TorchStorageRef;
  readonly offset: number;
  readonly shape: readonly number[];
  readonly stride: readonly number[];
}

/** A dict (plain or ordered), in insertion order. */
export class PickleDict {
  readonly map = new Map<PickleValue, PickleValue>();
}

/** A tuple (lists are plain arrays). */
export class PickleTuple {
  constructor(readonly items: readonly PickleValue[]) {}
}

/** An allowed global (`key` is "module name"): a rebuild function, a storage class or a dtype (`torch float32`). */
export class PickleGlobal {
  constructor(readonly key: string) {}
}

/** Any value a restricted pickle builds. Integers past ±2^53 are bigints. */
export type PickleValue =
  | null
  | boolean
  | number
  | bigint
  | string
  | Uint8Array
  | PickleValue[]
  | PickleTuple
  | PickleDict
  | PickleGlobal
  | TorchStorageRef
  | TorchTensorRef;

/** The rebuild a REDUCE of an allowed global performs. */
type Rebuild = (args: readonly PickleValue[], fail: (msg: string) => never) => PickleValue;

const TORCH_DTYPE_NAMES = ['float32', 'float', 'float16', 'half', 'bfloat16', 'float64', 'double', 'int64', 'long'];
const TORCH_DTYPE_NAMES_MORE = ['int32', 'int', 'int16', 'int8', 'uint8', 'bool', 'complex64', 'strided'];

/** Every global a checkpoint may name, `module name` as GLOBAL spells it; null: a value, never called. */
export const ALLOWED_GLOBALS: ReadonlyMap<string, Rebuild | null> = new Map<string, Rebuild | null>([
  ['collections OrderedDict', orderedDict],
  ['torch._utils _rebuild_tensor_v2', rebuildTensor],
  ['torch._utils _rebuild_parameter', rebuildParameter],
  ['torch._utils _rebuild_parameter_with_state', rebuildParameter],
  ['torch Size', (args) => new PickleTuple(args[0] instanceof PickleTuple ? args[0].items : [])],
  ['torch device', (args) => (typeof args[0] === 'string' ? args[0] : null)],
  ['_codecs encode', latin1],
  ...Object.keys(TORCH_STORAGES).map((s): [string, null] => [`torch ${s}`, null]),
  ...[...TORCH_DTYPE_NAMES, ...TORCH_DTYPE_NAMES_MORE].map((d): [string, null] => [`torch ${d}`, null]),
]);

/** Why an unpickling stopped: the file's bytes ran out (perhaps only the part read so far) or it is refused. */
export class PickleEndError extends EngineError {}

/** A finished unpickling: the value and the byte after STOP (the legacy format chains pickles). */
export interface Unpickled {
  readonly value: PickleValue;
  readonly end: number;
}

const MARK = Symbol('mark');
type Slot = PickleValue | typeof MARK;

/**
 * Unpickles `bytes` from `start` to its STOP. `source` names the file in messages. Throws
 * EngineError('checkpoint/invalid') naming a refused global or opcode, and {@link PickleEndError}
 * when the bytes end before STOP.
 */
export function unpickle(bytes: Uint8Array, source: string, start = 0): Unpickled {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const fail = (msg: string): never => {
    throw new EngineError('checkpoint/invalid', `${source}: ${msg}`);
  };
  let pos = start;
  const need = (n: number): number => {
    if (pos + n > bytes.length)
      throw new PickleEndError(
        'checkpoint/invalid',
        `${source} ends inside its pickle (byte ${bytes.length}); the file was cut off — copy or download it again.`,
      );
    const at = pos;
    pos += n;
    return at;
  };
  const u8 = (): number => bytes[need(1)] as number;
  const u32 = (): number => view.getUint32(need(4), true);
  const take = (n: number): Uint8Array => bytes.subarray(need(n), pos);
  const text = (n: number): string => {
    try {
      return decodeUtf8Strict(take(n));
    } catch {
      return fail(`a string at byte ${pos - n} is not UTF-8; the file is damaged.`);
    }
  };
  const stack: Slot[] = [];
  const marks: number[] = [];
  const memo = new Map<number, PickleValue>();
  const pop = (): PickleValue => {
    const v = stack.pop();
    if (v === undefined || v === MARK) return fail(`its pickle pops an empty stack at byte ${pos - 1}; it is damaged.`);
    return v;
  };
  const top = (): PickleValue => {
    const v = stack[stack.length - 1];
    if (v === undefined || v === MARK)
      return fail(`its pickle reads an empty stack at byte ${pos - 1}; it is damaged.`);
    return v;
  };
  const popMark = (): PickleValue[] => {
    const m = marks.pop();
    if (m === undefined) return fail(`its pickle closes a MARK it never opened (byte ${pos - 1}); it is damaged.`);
    const items = stack.splice(m) as PickleValue[];
    items.shift(); // the MARK itself
    return items;
  };
  const global = (module: string, name: string): PickleValue => {
    const key = `${module} ${name}`;
    if (!ALLOWED_GLOBALS.has(key))
      fail(
        `its pickle refers to ${module}.${name}, which is not a tensor, storage or ordered dict; a state dict ` +
          `never holds it, so Attention Lab refuses the file and runs nothing in it (save only model.state_dict()).`,
      );
    return new PickleGlobal(key);
  };
  for (;;) {
    const at = pos;
    const op = u8();
    switch (op) {
      case 0x80: // PROTO
        if (u8() > 5) fail('its pickle protocol is newer than 5; save it with a current PyTorch.');
        break;
      case 0x95: // FRAME: a length prefix, nothing to do
        need(8);
        break;
      case 0x2e: // STOP
        return { value: pop(), end: pos };
      case 0x28: // MARK
        marks.push(stack.length);
        stack.push(MARK);
        break;
      case 0x4e: // NONE
        stack.push(null);
        break;
      case 0x88: // NEWTRUE
      case 0x89: // NEWFALSE
        stack.push(op === 0x88);
        break;
      case 0x4b: // BININT1
        stack.push(u8());
        break;
      case 0x4d: // BININT2
        stack.push(view.getUint16(need(2), true));
        break;
      case 0x4a: // BININT
        stack.push(view.getInt32(need(4), true));
        break;
      case 0x8a: // LONG1
        stack.push(longLE(take(u8())));
        break;
      case 0x8b: // LONG4
        stack.push(longLE(take(u32())));
        break;
      case 0x47: // BINFLOAT (big-endian)
        stack.push(view.getFloat64(need(8), false));
        break;
      case 0x58: // BINUNICODE
        stack.push(text(u32()));
        break;
      case 0x8c: // SHORT_BINUNICODE
        stack.push(text(u8()));
        break;
      case 0x8d: // BINUNICODE8
        stack.push(text(u64(view, need(8), fail)));
        break;
      case 0x43: // SHORT_BINBYTES
        stack.push(take(u8()).slice());
        break;
      case 0x42: // BINBYTES
        stack.push(take(u32()).slice());
        break;
      case 0x8e: // BINBYTES8
        stack.push(take(u64(view, need(8), fail)).slice());
        break;
      case 0x29: // EMPTY_TUPLE
        stack.push(new PickleTuple([]));
        break;
      case 0x85: // TUPLE1
      case 0x86: // TUPLE2
      case 0x87: {
        // TUPLE3
        const n = op - 0x84;
        const items: PickleValue[] = [];
        for (let i = 0; i < n; i++) items.unshift(pop());
        stack.push(new PickleTuple(items));
        break;
      }
      case 0x74: // TUPLE
        stack.push(new PickleTuple(popMark()));
        break;
      case 0x5d: // EMPTY_LIST
        stack.push([]);
        break;
      case 0x6c: // LIST
        stack.push(popMark());
        break;
      case 0x61: {
        // APPEND
        const v = pop();
        asList(top(), fail).push(v);
        break;
      }
      case 0x65: {
        // APPENDS
        const items = popMark();
        const list = asList(top(), fail);
        for (const x of items) list.push(x); // not push(...items): a list may have more items than a call has arguments
        break;
      }
      case 0x7d: // EMPTY_DICT
        stack.push(new PickleDict());
        break;
      case 0x64: {
        // DICT
        const d = new PickleDict();
        setItems(d, popMark(), fail);
        stack.push(d);
        break;
      }
      case 0x73: {
        // SETITEM
        const v = pop();
        const k = pop();
        setItems(asDict(top(), fail), [k, v], fail);
        break;
      }
      case 0x75: {
        // SETITEMS
        const items = popMark();
        setItems(asDict(top(), fail), items, fail);
        break;
      }
      case 0x71: // BINPUT
        memo.set(u8(), top());
        break;
      case 0x72: // LONG_BINPUT
        memo.set(u32(), top());
        break;
      case 0x94: // MEMOIZE
        memo.set(memo.size, top());
        break;
      case 0x68: // BINGET
      case 0x6a: {
        // LONG_BINGET
        const i = op === 0x68 ? u8() : u32();
        if (!memo.has(i)) fail(`its pickle reads memo ${i}, never stored (byte ${at}); it is damaged.`);
        stack.push(memo.get(i) as PickleValue);
        break;
      }
      case 0x30: // POP
        if (stack.pop() === MARK) marks.pop();
        break;
      case 0x31: // POP_MARK
        popMark();
        break;
      case 0x32: // DUP
        stack.push(top());
        break;
      case 0x63: {
        // GLOBAL: "module\nname\n"
        const module = line(bytes, need, fail);
        stack.push(global(module, line(bytes, need, fail)));
        break;
      }
      case 0x93: {
        // STACK_GLOBAL
        const name = pop();
        const module = pop();
        if (typeof module !== 'string' || typeof name !== 'string') fail(`STACK_GLOBAL without names (byte ${at}).`);
        stack.push(global(module as string, name as string));
        break;
      }
      case 0x51: // BINPERSID
        stack.push(storage(pop(), fail));
        break;
      case 0x52: {
        // REDUCE
        const args = pop();
        const fn = pop();
        if (!(fn instanceof PickleGlobal) || !(args instanceof PickleTuple))
          return fail(`its pickle calls something that is not an allowed global (byte ${at}); it is damaged.`);
        const rebuild = ALLOWED_GLOBALS.get(fn.key);
        if (!rebuild) return fail(`its pickle calls ${fn.key.replace(' ', '.')}, which is not a function.`);
        stack.push(rebuild(args.items, fail));
        break;
      }
      case 0x62: {
        // BUILD: only an ordered dict's attributes (state_dict()'s `_metadata`), which are dropped
        pop();
        if (!(top() instanceof PickleDict) && !isTensor(top()))
          fail(`its pickle sets the state of an object that is not a dict or tensor (byte ${at}).`);
        break;
      }
      default:
        fail(
          `its pickle uses opcode 0x${op.toString(16).padStart(2, '0')} at byte ${at}, which torch.save does ` +
            `not write for a state dict; save model.state_dict() with torch.save and import that.`,
        );
    }
  }
}

function isTensor(v: PickleValue | undefined): v is TorchTensorRef {
  return typeof v === 'object' && v !== null && 'kind' in v && v.kind === 'tensor';
}

function asList(v: PickleValue, fail: (msg: string) => never): PickleValue[] {
  return Array.isArray(v) ? v : fail('its pickle appends to something that is not a list; it is damaged.');
}

function asDict(v: PickleValue, fail: (msg: string) => never): PickleDict {
  return v instanceof PickleDict ? v : fail('its pickle sets an item of something that is not a dict; it is damaged.');
}

function setItems(d: PickleDict, items: readonly PickleValue[], fail: (msg: string) => never): void {
  if (items.length % 2 !== 0) fail('its pickle sets a dict item without a value; it is damaged.');
  for (let i = 0; i < items.length; i += 2) d.map.set(items[i] as PickleValue, items[i + 1] as PickleValue);
}

/** One "\n"-terminated ASCII line (GLOBAL's module and name). */
function line(bytes: Uint8Array, need: (n: number) => number, fail: (msg: string) => never): string {
  let s = '';
  for (let i = 0; i < 256; i++) {
    const c = bytes[need(1)] as number;
    if (c === 0x0a) return s;
    s += String.fromCharCode(c);
  }
  return fail('its pickle names a global longer than 256 characters; it is damaged.');
}

function u64(view: DataView, at: number, fail: (msg: string) => never): number {
  const n = view.getUint32(at, true) + view.getUint32(at + 4, true) * 2 ** 32;
  return Number.isSafeInteger(n) ? n : fail('its pickle holds a string longer than the file.');
}

/** A little-endian two's-complement integer (LONG1/LONG4), a number when safe. */
function longLE(b: Uint8Array): number | bigint {
  let n = 0n;
  for (let i = b.length - 1; i >= 0; i--) n = (n << 8n) | BigInt(b[i] as number);
  if (b.length > 0 && ((b[b.length - 1] as number) & 0x80) !== 0) n -= 1n << BigInt(8 * b.length);
  return n >= BigInt(Number.MIN_SAFE_INTEGER) && n <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(n) : n;
}

/** A persistent id: ('storage', <storage class>, key, location, numel[, view metadata]). */
function storage(pid: PickleValue, fail: (msg: string) => never): TorchStorageRef {
  const t = pid instanceof PickleTuple ? pid.items : [];
  const [tag, type, key, , numel] = t;
  if (tag !== 'storage' || (t.length !== 5 && t.length !== 6))
    return fail('its pickle has a persistent id that is not a storage; it was not written by torch.save.');
  if (!(type instanceof PickleGlobal) || !type.key.startsWith('torch ') || typeof key !== 'string')
    return fail('its pickle has a storage without a storage class; it is damaged.');
  const storages: Readonly<Record<string, TorchDtype>> = TORCH_STORAGES;
  const dtype = Object.hasOwn(storages, type.key.slice(6)) ? storages[type.key.slice(6)] : undefined;
  if (dtype === undefined) return fail(`its storage class ${type.key.replace(' ', '.')} is not a tensor storage.`);
  if (typeof numel !== 'number' || !Number.isSafeInteger(numel) || numel < 0)
    return fail(`storage ${key} has ${String(numel)} elements; it is damaged.`);
  if (t.length === 6 && t[5] !== null)
    fail(`storage ${key} is a view of another storage (PyTorch before 0.4); re-save it with a current PyTorch.`);
  return { kind: 'storage', key, dtype, numel };
}

function ints(v: PickleValue, what: string, fail: (msg: string) => never): number[] {
  const items = v instanceof PickleTuple ? v.items : null;
  if (!items || !items.every((x) => typeof x === 'number' && Number.isSafeInteger(x) && x >= 0))
    return fail(`a tensor's ${what} is not a tuple of whole numbers; the file is damaged.`);
  return items as number[];
}

/** _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, backward_hooks[, metadata]). */
function rebuildTensor(args: readonly PickleValue[], fail: (msg: string) => never): TorchTensorRef {
  const [st, offset, size, stride] = args;
  if (typeof st !== 'object' || st === null || !('kind' in st) || st.kind !== 'storage')
    return fail('a tensor is rebuilt from something that is not a storage; the file is damaged.');
  if (typeof offset !== 'number' || !Number.isSafeInteger(offset) || offset < 0)
    return fail('a tensor has a bad storage offset; the file is damaged.');
  const shape = ints(size ?? null, 'size', fail);
  const strides = ints(stride ?? null, 'stride', fail);
  if (shape.length !== strides.length) fail('a tensor has a size and a stride of different lengths; it is damaged.');
  // The last element the view reads must lie in the storage.
  let last = offset;
  for (let i = 0; i < shape.length; i++) last += ((shape[i] as number) - 1) * (strides[i] as number);
  const empty = shape.some((d) => d === 0);
  if (!empty && last >= st.numel)
    fail(`a tensor of shape [${shape.join(', ')}] reads past the end of storage ${st.key}; the file is damaged.`);
  return { kind: 'tensor', storage: st, offset, shape, stride: strides };
}

/** _rebuild_parameter(data, requires_grad, backward_hooks[, state]): the tensor itself. */
function rebuildParameter(args: readonly PickleValue[], fail: (msg: string) => never): PickleValue {
  const t = args[0];
  return isTensor(t) ? t : fail('a parameter is rebuilt from something that is not a tensor; the file is damaged.');
}

/** OrderedDict(): torch.save writes it with no arguments and fills it with SETITEMS. */
function orderedDict(args: readonly PickleValue[], fail: (msg: string) => never): PickleDict {
  if (args.length > 0) fail('an OrderedDict is built with arguments, which torch.save never writes.');
  return new PickleDict();
}

/** _codecs.encode(text, 'latin1'): how protocol 2 writes Python 3 bytes. */
function latin1(args: readonly PickleValue[], fail: (msg: string) => never): Uint8Array {
  const [s, enc] = args;
  if (typeof s !== 'string' || (enc !== 'latin1' && enc !== 'latin-1'))
    return fail('_codecs.encode is called with other than (text, "latin1").');
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i) & 0xff;
  return out;
}
