// Draws the extension's icon, media/icon.png (256×256 RGBA): an 8×8 attention heatmap —
// a causal (lower-triangular) map whose rows peak on the diagonal and on the first token,
// as a trained decoder's heads often do — on a rounded dark tile, in a viridis-like ramp.
// Writes the PNG by hand (PNG spec, W3C 2003: signature, IHDR, one zlib IDAT, IEND, each
// chunk with its CRC-32), so nothing beyond Node is needed. Run: node scripts/makeIcon.mjs
import { writeFileSync, mkdirSync } from 'node:fs';
import { deflateSync } from 'node:zlib';

const SIZE = 256;
const N = 8;

/** CRC-32 (ISO 3309, polynomial 0xEDB88320) as PNG chunks use it. */
function crc32(bytes) {
  let c = ~0;
  for (const b of bytes) {
    c ^= b;
    for (let k = 0; k < 8; k++) c = (c >>> 1) ^ (0xedb88320 & -(c & 1));
  }
  return ~c >>> 0;
}

function chunk(type, data) {
  const out = Buffer.alloc(12 + data.length);
  out.writeUInt32BE(data.length, 0);
  out.write(type, 4, 'latin1');
  data.copy(out, 8);
  out.writeUInt32BE(crc32(out.subarray(4, 8 + data.length)), 8 + data.length);
  return out;
}

/** RGBA rows → PNG bytes (filter type 0 on every row). */
function encodePng(width, height, rgba) {
  const raw = Buffer.alloc(height * (1 + width * 4));
  for (let y = 0; y < height; y++) rgba.copy(raw, y * (1 + width * 4) + 1, y * width * 4, (y + 1) * width * 4);
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 6; // RGBA
  return Buffer.concat([
    Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(raw, { level: 9 })),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

/** A viridis-like ramp: t in [0, 1] → [r, g, b]. */
function ramp(t) {
  const stops = [
    [68, 1, 84],
    [59, 82, 139],
    [33, 145, 140],
    [94, 201, 98],
    [253, 231, 37],
  ];
  const x = Math.min(0.9999, Math.max(0, t)) * (stops.length - 1);
  const i = Math.floor(x);
  const f = x - i;
  return stops[i].map((a, k) => Math.round(a + (stops[i + 1][k] - a) * f));
}

/** Attention row i: causal softmax of a score that favours the diagonal and token 0. */
function attentionRow(i) {
  const scores = Array.from(
    { length: i + 1 },
    (_, j) => (j === i ? 2.2 : 0) + (j === 0 ? 1.4 : 0) + (j === i - 1 ? 0.9 : 0),
  );
  const m = Math.max(...scores);
  const e = scores.map((s) => Math.exp(s - m));
  const z = e.reduce((a, b) => a + b, 0);
  return e.map((v) => v / z);
}

const img = Buffer.alloc(SIZE * SIZE * 4);
const margin = 28;
const cell = (SIZE - 2 * margin) / N;
const gap = 3;
const radius = 44;
const maps = Array.from({ length: N }, (_, i) => attentionRow(i));
for (let y = 0; y < SIZE; y++) {
  for (let x = 0; x < SIZE; x++) {
    const o = (y * SIZE + x) * 4;
    // Rounded tile: distance outside the inner rectangle, against the corner radius.
    const dx = Math.max(radius - x, x - (SIZE - 1 - radius), 0);
    const dy = Math.max(radius - y, y - (SIZE - 1 - radius), 0);
    const d = Math.hypot(dx, dy);
    if (d > radius) continue; // transparent corner
    const edge = Math.min(1, radius + 0.5 - d); // anti-aliased rim
    let rgb = [27, 31, 42];
    const cx = Math.floor((x - margin) / cell);
    const cy = Math.floor((y - margin) / cell);
    const inCell =
      cx >= 0 && cy >= 0 && cx < N && cy < N && (x - margin) % cell < cell - gap && (y - margin) % cell < cell - gap;
    if (inCell) rgb = cx <= cy ? ramp(Math.sqrt(maps[cy][cx])) : [38, 44, 58];
    img[o] = rgb[0];
    img[o + 1] = rgb[1];
    img[o + 2] = rgb[2];
    img[o + 3] = Math.round(255 * edge);
  }
}
mkdirSync(new URL('../media/', import.meta.url), { recursive: true });
const file = new URL('../media/icon.png', import.meta.url);
writeFileSync(file, encodePng(SIZE, SIZE, img));
console.log(`wrote ${file.pathname} (${SIZE}×${SIZE})`);
