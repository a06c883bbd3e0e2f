import { describe, it, expect } from 'vitest';
import { bf16ToF32, f16ToF32, f32ToBf16, f32ToF16, widenHalf } from '../../../../src/engine/io/halfFloat';
import { decodeSafetensors, encodeSafetensors } from '../../../../src/engine/io/safetensors';

const isNegZero = (x: number): boolean => x === 0 && 1 / x < 0;

describe('f16ToF32', () => {
  it('widens edge values exactly', () => {
    expect(f16ToF32(0x0000)).toBe(0);
    expect(isNegZero(f16ToF32(0x8000))).toBe(true);
    expect(f16ToF32(0x3c00)).toBe(1);
    expect(f16ToF32(0xc000)).toBe(-2);
    expect(f16ToF32(0x7bff)).toBe(65504); // largest finite
    expect(f16ToF32(0x0400)).toBe(2 ** -14); // smallest normal
    expect(f16ToF32(0x0001)).toBe(2 ** -24); // smallest subnormal
    expect(f16ToF32(0x03ff)).toBe(1023 * 2 ** -24); // largest subnormal
    expect(f16ToF32(0x8001)).toBe(-(2 ** -24));
    expect(f16ToF32(0x7c00)).toBe(Infinity);
    expect(f16ToF32(0xfc00)).toBe(-Infinity);
    expect(f16ToF32(0x7e00)).toBeNaN();
    expect(f16ToF32(0xfc01)).toBeNaN();
    expect(f16ToF32(0x3555)).toBeCloseTo(1 / 3, 3);
  });

  it('round-trips every one of the 65536 bit patterns (NaNs stay NaN)', () => {
    const wrong: number[] = [];
    for (let h = 0; h < 0x10000; h++) {
      const x = f16ToF32(h);
      const ok = Number.isNaN(x) ? Number.isNaN(f16ToF32(f32ToF16(x))) : f32ToF16(x) === h && Math.fround(x) === x;
      if (!ok) wrong.push(h);
    }
    expect(wrong).toEqual([]);
  });
});

describe('f32ToF16', () => {
  it('rounds to nearest, ties to even, and overflows to infinity', () => {
    expect(f32ToF16(1 + 2 ** -11)).toBe(0x3c00); // exactly half an ulp above 1: tie, to even (1)
    expect(f32ToF16(1 + 3 * 2 ** -11)).toBe(0x3c02); // tie between 0x3c01 and 0x3c02: to even
    expect(f32ToF16(1 + 2 ** -11 + 2 ** -20)).toBe(0x3c01); // just above the tie
    expect(f32ToF16(65504)).toBe(0x7bff);
    expect(f32ToF16(65519)).toBe(0x7bff); // below the rounding boundary 65520
    expect(f32ToF16(65520)).toBe(0x7c00); // rounds up to infinity
    expect(f32ToF16(1e10)).toBe(0x7c00);
    expect(f32ToF16(-1e10)).toBe(0xfc00);
    expect(f32ToF16(2 ** -25)).toBe(0); // half the smallest subnormal: tie, to even (0)
    expect(f32ToF16(2 ** -25 * 1.5)).toBe(1);
    expect(f32ToF16(2 ** -30)).toBe(0);
    expect(f32ToF16(-0)).toBe(0x8000);
    expect(f32ToF16(NaN) & 0x7c00).toBe(0x7c00);
    expect(f32ToF16(NaN) & 0x3ff).not.toBe(0);
    expect(f32ToF16(1023.5 * 2 ** -24)).toBe(0x0400); // largest subnormal + half: tie, carries into the smallest normal (even)
  });
});

describe('bf16', () => {
  it('widens edge values exactly', () => {
    expect(bf16ToF32(0x3f80)).toBe(1);
    expect(isNegZero(bf16ToF32(0x8000))).toBe(true);
    expect(bf16ToF32(0x7f80)).toBe(Infinity);
    expect(bf16ToF32(0xff80)).toBe(-Infinity);
    expect(bf16ToF32(0x7fc0)).toBeNaN();
    expect(bf16ToF32(0x0001)).toBe(2 ** -133); // smallest subnormal
    expect(bf16ToF32(0x7f7f)).toBeCloseTo(3.3895e38, -34);
  });

  it('narrows with ties to even and keeps NaN a NaN', () => {
    expect(f32ToBf16(1)).toBe(0x3f80);
    expect(f32ToBf16(1 + 2 ** -8)).toBe(0x3f80); // tie, to even
    expect(f32ToBf16(1 + 3 * 2 ** -8)).toBe(0x3f82); // tie, to even
    expect(f32ToBf16(1 + 2 ** -8 + 2 ** -20)).toBe(0x3f81);
    expect(f32ToBf16(-0)).toBe(0x8000);
    expect(f32ToBf16(Infinity)).toBe(0x7f80);
    expect(Number.isNaN(bf16ToF32(f32ToBf16(NaN)))).toBe(true);
    expect(f32ToBf16(3.4028234663852886e38)).toBe(0x7f80); // float32 max rounds up to infinity
    const wrong: number[] = [];
    for (let h = 0; h < 0x10000; h++) {
      const x = bf16ToF32(h);
      if (!Number.isNaN(x) && f32ToBf16(x) !== h) wrong.push(h);
    }
    expect(wrong).toEqual([]);
  });
});

describe('widenHalf and F16/BF16 tensors', () => {
  it('reads little-endian bytes at an element offset', () => {
    const out = new Float32Array(4).fill(7);
    widenHalf('F16', Uint8Array.of(0x00, 0x3c, 0x00, 0xc0), out, 1, 2);
    expect([...out]).toEqual([7, 1, -2, 7]);
    widenHalf('BF16', Uint8Array.of(0x80, 0x3f, 0x80, 0xff), out, 2, 2);
    expect([...out]).toEqual([7, 1, 1, -Infinity]);
  });

  it('encode and decode F16 and BF16 tensors as float32 within their precision', () => {
    const values = [0, -0, 1, -2.5, 0.1, 1e-6, 70000, -Infinity, NaN];
    const bytes = encodeSafetensors([
      { name: 'h', dtype: 'F16', shape: [values.length], data: values },
      { name: 'b', dtype: 'BF16', shape: [values.length], data: values },
    ]);
    const f = decodeSafetensors(bytes, 'x');
    const h = f.tensors.get('h');
    const b = f.tensors.get('b');
    expect(h?.dtype).toBe('F16');
    expect(h?.data).toBeInstanceOf(Float32Array);
    expect([...(h?.data ?? [])].slice(0, 5)).toEqual([0, -0, 1, -2.5, f16ToF32(f32ToF16(0.1))]);
    expect(h?.data[5]).toBeCloseTo(1e-6, 7); // a subnormal in F16
    expect(h?.data[6]).toBe(Infinity); // past 65504
    expect(h?.data[7]).toBe(-Infinity);
    expect(h?.data[8]).toBeNaN();
    expect(b?.data[4]).toBeCloseTo(0.1, 2);
    expect(b?.data[6]).toBe(70144); // 70000 to 8 significant bits
    expect(b?.data[8]).toBeNaN();
  });
});
