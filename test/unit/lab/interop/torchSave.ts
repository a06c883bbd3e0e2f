/**
 * A torch.save zip of float32 tensors, written here for tests that need a `.bin`/`.pt`/`.pth`
 * of a given state dict: `archive/data.pkl` (protocol 2: an OrderedDict whose values are
 * `torch._utils._rebuild_tensor_v2` calls on persistent storages, as torch.save writes it),
 * one stored (uncompressed) entry per tensor under `archive/data/<i>`, and `archive/byteorder`.
 * CRCs are real, so the file is a valid zip for any reader.
 *
 * Leaves out: shared storages, strided views, other dtypes, the 64-byte alignment torch adds
 * (test/golden/torch-pickle has files PyTorch wrote for those).
 */

/** One tensor of the state dict: float32 values, row-major. */
export interface SavedTensor {
  readonly name: string;
  readonly shape: readonly number[];
  readonly data: Float32Array;
}

const enc = new TextEncoder();

function u32(n: number): number[] {
  return [n & 0xff, (n >>> 8) & 0xff, (n >>> 16) & 0xff, (n >>> 24) & 0xff];
}

function u16(n: number): number[] {
  return [n & 0xff, (n >>> 8) & 0xff];
}

/** The pickle of an OrderedDict of tensors, tensor i in storage "i". */
function statePickle(tensors: readonly SavedTensor[]): Uint8Array {
  const out: number[] = [0x80, 2];
  const op = (s: string): void => {
    for (const ch of s) out.push(ch.charCodeAt(0));
  };
  const str = (s: string): void => {
    const b = enc.encode(s);
    out.push(0x58, ...u32(b.length), ...b); // BINUNICODE
  };
  const int = (n: number): void => {
    out.push(0x4a, ...u32(n)); // BININT
  };
  const tuple = (xs: readonly number[]): void => {
    op('(');
    xs.forEach(int);
    op('t');
  };
  op('ccollections\nOrderedDict\n)R(');
  tensors.forEach((t, i) => {
    const numel = t.shape.reduce((a, d) => a * d, 1);
    if (numel !== t.data.length) throw new Error(`${t.name}: shape and data disagree`);
    const stride = t.shape.map((_, k) => t.shape.slice(k + 1).reduce((a, d) => a * d, 1));
    str(t.name);
    op('ctorch._utils\n_rebuild_tensor_v2\n((');
    str('storage');
    op('ctorch\nFloatStorage\n');
    str(String(i));
    str('cpu');
    int(numel);
    op('tQ'); // the persistent id tuple, BINPERSID
    int(0);
    tuple(t.shape);
    tuple(stride);
    out.push(0x89); // NEWFALSE: requires_grad
    op('ccollections\nOrderedDict\n)RtR');
  });
  op('u.');
  return Uint8Array.from(out);
}

let crcTable: Uint32Array | null = null;

function crc32(b: Uint8Array): number {
  if (!crcTable) {
    crcTable = new Uint32Array(256);
    for (let n = 0; n < 256; n++) {
      let c = n;
      for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
      crcTable[n] = c >>> 0;
    }
  }
  let c = 0xffffffff;
  for (const x of b) c = (crcTable[(c ^ x) & 0xff] as number) ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

/** The bytes of `torch.save(OrderedDict(tensors))` (zip format, as torch ≥ 1.6 writes it). */
export function torchSaveZip(tensors: readonly SavedTensor[]): Uint8Array {
  const entries: { name: string; data: Uint8Array }[] = [
    { name: 'archive/data.pkl', data: statePickle(tensors) },
    { name: 'archive/byteorder', data: enc.encode('little') },
    ...tensors.map((t, i) => ({
      name: `archive/data/${i}`,
      data: new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength),
    })),
    { name: 'archive/version', data: enc.encode('3\n') },
  ];
  const parts: Uint8Array[] = [];
  const central: number[] = [];
  let at = 0;
  for (const e of entries) {
    const name = enc.encode(e.name);
    const crc = crc32(e.data);
    const size = e.data.length;
    const common = [...u16(20), ...u16(0), ...u16(0), ...u16(0), ...u16(0), ...u32(crc), ...u32(size), ...u32(size)];
    const local = Uint8Array.from([...u32(0x04034b50), ...common, ...u16(name.length), ...u16(0), ...name]);
    central.push(
      ...u32(0x02014b50),
      ...u16(20),
      ...common,
      ...u16(name.length),
      ...u16(0),
      ...u16(0),
      ...u16(0),
      ...u16(0),
      ...u32(0),
      ...u32(at),
      ...name,
    );
    parts.push(local, e.data);
    at += local.length + size;
  }
  const n = entries.length;
  const end = [...u32(0x06054b50), ...u16(0), ...u16(0), ...u16(n), ...u16(n), ...u32(central.length), ...u32(at)];
  parts.push(Uint8Array.from(central), Uint8Array.from([...end, ...u16(0)]));
  const out = new Uint8Array(parts.reduce((a, p) => a + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}
