/**
 * The tail of a trainer's output kept for an error message: a process that prints megabytes
 * without a newline had every chunk joined to the whole line so far (quadratic, and all of
 * it kept); now a line keeps only its end, and the lines after it still arrive.
 */
import { describe, expect, it } from 'vitest';
import { TAIL_LINE_CHARS, Tail } from '../../../../src/lab/pytorch/trainerExit';

describe('Tail', () => {
  it('keeps the end of a line without end, and the lines after it', () => {
    const tail = new Tail();
    const chunk = Buffer.from('x'.repeat(1 << 16));
    for (let i = 0; i < 200; i++) tail.push(chunk); // 12.5 MB on one line
    tail.push(Buffer.from('y\nRuntimeError: boom\n'));
    const lines = tail.last();
    expect(lines).toHaveLength(2);
    expect(lines[0]).toBe(`…${'x'.repeat(TAIL_LINE_CHARS - 1)}y`);
    expect(lines[1]).toBe('RuntimeError: boom');
  });

  it('keeps short lines whole, across chunks and CRLF', () => {
    const tail = new Tail();
    tail.push(Buffer.from('first li'));
    tail.push(Buffer.from('ne\r\nsecond'));
    expect(tail.last()).toEqual(['first line', 'second']);
  });
});
