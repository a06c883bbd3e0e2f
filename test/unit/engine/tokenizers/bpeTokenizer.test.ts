/**
 * Byte-level BPE tokenizer: encoding agrees with a naive reference (naiveBpe.ts), real text
 * compresses and reaches the target size, random strings round-trip exactly, and bad options
 * or ids give EngineErrors. The merge learning itself is checked in bpeTrain.test.ts.
 */

import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { describe, it, expect } from 'vitest';
import { EngineError } from '../../../../src/engine/errors';
import { Rng } from '../../../../src/engine/rng';
import { trainBpeTokenizer } from '../../../../src/engine/tokenizers/bpeTokenizer';
import { BOS, EOS, UNK, byteId } from '../../../../src/engine/tokenizers/special';
import { encodeWtf8 } from '../../../../src/engine/tokenizers/wtf8';
import { naiveEncode, tinyAlphabetText } from './naiveBpe';
import { randomText } from './randomText';

/** Real English prose in the public domain, shipped with the tests (test/fixtures/text/README.md). */
const PROSE = path.resolve(__dirname, '../../../fixtures/text/state-of-the-union-1790-1809.txt');

function thrown(f: () => unknown): EngineError {
  try {
    f();
  } catch (e) {
    if (EngineError.is(e)) return e;
    throw e;
  }
  throw new Error('expected an EngineError, nothing was thrown');
}

describe('trainBpeTokenizer', () => {
  it('encodes exactly as the naive reference, including long runs', () => {
    const rng = new Rng(32);
    const tok = trainBpeTokenizer(
      Array.from({ length: 40 }, () => tinyAlphabetText(rng, 80)),
      { vocabSize: 360 },
    );
    const merges = tok.toJSON().merges;
    const texts = [
      ...Array.from({ length: 200 }, () => tinyAlphabetText(rng, 50)),
      'a'.repeat(3001),
      ' ' + 'ab'.repeat(999),
    ];
    for (const s of texts) expect(Array.from(tok.encode(s))).toEqual(naiveEncode(s, merges));
  });

  it('rejects a vocabSize below 260 (or not an integer) with config/invalid', () => {
    for (const bad of [259, 5, 1000.5, Number.NaN]) {
      const e = thrown(() => trainBpeTokenizer(['abc'], { vocabSize: bad }));
      expect(e.code).toBe('config/invalid');
      expect(e.message).toContain('260');
    }
  });

  it('is deterministic: the same corpus gives the same JSON', () => {
    const make = (): string => {
      const rng = new Rng(7);
      return JSON.stringify(
        trainBpeTokenizer(
          Array.from({ length: 80 }, () => randomText(rng)),
          { vocabSize: 500 },
        ).toJSON(),
      );
    };
    expect(make()).toBe(make());
  });
});

describe('BPE on real text (State of the Union addresses, 1790–1809)', () => {
  const text = readFileSync(PROSE, 'utf8');
  const train = text.slice(0, 200_000);
  const heldOut = text.slice(200_000, 260_000);
  const tok = trainBpeTokenizer([train], { vocabSize: 1000 });

  it('reaches the target vocabulary size', () => {
    expect(tok.vocabSize).toBe(1000);
    expect(tok.toJSON().merges.length).toBe(740);
  });

  it('compresses: well under one token per byte, on training and held-out text', () => {
    // Measured: ≈3.2 bytes per token on the training slice, ≈3.1 held out (ASCII: bytes = chars).
    for (const s of [train, heldOut]) {
      const ids = tok.encode(s);
      expect(encodeWtf8(s).length / ids.length).toBeGreaterThan(2.8);
    }
  });

  it('never produces UNK or any special, and round-trips exactly', () => {
    const ids = tok.encode(heldOut);
    let minId = Infinity,
      maxId = -Infinity;
    for (const id of ids) {
      minId = Math.min(minId, id);
      maxId = Math.max(maxId, id);
    }
    expect(minId).toBeGreaterThan(UNK);
    expect(maxId).toBeLessThan(1000);
    expect(tok.decode(ids)).toBe(heldOut);
  });

  it('byteLength: the tokens of any text add up to its UTF-8 size; specials count nothing', () => {
    const rng = new Rng(7);
    for (const s of [heldOut.slice(0, 5000), ...Array.from({ length: 200 }, () => randomText(rng))]) {
      const ids = tok.encode(s, { bos: true, eos: true });
      expect(Array.from(ids).reduce((n, id) => n + tok.byteLength(id), 0)).toBe(encodeWtf8(s).length);
    }
    expect([BOS, EOS, UNK].map((id) => tok.byteLength(id))).toEqual([0, 0, 0]);
    expect(() => tok.byteLength(1000)).toThrow(EngineError);
  });

  it('round-trips thousands of random strings (text it never saw) without UNK', () => {
    const rng = new Rng(41);
    let failures = 0,
      minId = Infinity,
      merged = 0;
    for (let n = 0; n < 3000; n++) {
      const s = randomText(rng);
      const ids = tok.encode(s);
      for (const id of ids) {
        minId = Math.min(minId, id);
        if (id >= 260) merged++;
      }
      if (tok.decode(ids) !== s) failures++;
    }
    expect(failures).toBe(0);
    expect(minId).toBeGreaterThan(UNK);
    expect(merged).toBeGreaterThan(100); // merges did apply, so the round-trip covered them
  });

  it('shows tokens for axes: spaces as ·, ASCII bytes as text, partial characters as bytes', () => {
    const ids = Array.from(tok.encode(' the'));
    expect(ids.length).toBe(1); // " the" is among the commonest chunks in English
    expect(tok.tokenText(ids[0] as number)).toBe('·the');
    expect(tok.tokenText(byteId(0x41))).toBe('A');
    expect(tok.tokenText(byteId(0x2e))).toBe('.');
    expect(tok.tokenText(byteId(0x0a))).toBe('↵');
    expect(tok.tokenText(byteId(0xe2))).toBe('<0xE2>');
    expect(tok.tokenText(EOS)).toBe('<eos>');
  });

  it('adds BOS/EOS on request, decodes specials as text or skips them, and rejects bad ids', () => {
    const ids = tok.encode('To be', { bos: true, eos: true });
    expect(ids[0]).toBe(BOS);
    expect(ids[ids.length - 1]).toBe(EOS);
    expect(tok.decode(ids)).toBe('<bos>To be<eos>');
    expect(tok.decode(ids, { skipSpecial: true })).toBe('To be');
    expect(tok.decode([byteId(0xf0), byteId(0x9f)])).toBe('\ufffd'); // truncated character: no throw
    for (const bad of [1000, -1, 2.5]) expect(thrown(() => tok.decode([bad])).code).toBe('tokenizer/invalid');
    expect(thrown(() => tok.tokenText(1000)).code).toBe('tokenizer/invalid');
  });
});
