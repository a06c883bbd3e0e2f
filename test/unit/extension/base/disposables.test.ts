import { describe, expect, it } from 'vitest';
import { DisposableStore, toDisposable } from '../../../../src/extension/base/disposables';
import { Emitter } from '../../../../src/extension/base/emitter';

describe('DisposableStore', () => {
  it('disposes in reverse order, exactly once', () => {
    const order: string[] = [];
    const s = new DisposableStore();
    s.add(toDisposable(() => order.push('a')));
    s.add(toDisposable(() => order.push('b')));
    s.dispose();
    s.dispose();
    expect(order).toEqual(['b', 'a']);
    expect(s.isDisposed).toBe(true);
  });

  it('disposes what is added after it was disposed, at once', () => {
    const s = new DisposableStore();
    s.dispose();
    let n = 0;
    s.add(toDisposable(() => n++));
    expect(n).toBe(1);
  });

  it('runs every disposable even when some throw, then reports the errors', () => {
    const ran: string[] = [];
    const s = new DisposableStore();
    s.add(toDisposable(() => ran.push('first')));
    s.add(
      toDisposable(() => {
        throw new Error('x');
      }),
    );
    s.add(
      toDisposable(() => {
        throw new Error('y');
      }),
    );
    expect(() => s.dispose()).toThrow('2 disposables failed');
    expect(ran).toEqual(['first']);
  });

  it('delete disposes one item and forgets it', () => {
    let n = 0;
    const s = new DisposableStore();
    const d = s.add(toDisposable(() => n++));
    s.delete(d);
    s.dispose();
    expect(n).toBe(1);
  });
});

describe('Emitter', () => {
  it('delivers to listeners until they unsubscribe or it is disposed, isolating listener errors', () => {
    const errors: unknown[] = [];
    const e = new Emitter<number>((err) => errors.push(err));
    const got: number[] = [];
    const sub = e.event((v) => got.push(v));
    e.event(() => {
      throw new Error('bad listener');
    });
    e.fire(1);
    sub.dispose();
    e.fire(2);
    expect(got).toEqual([1]);
    expect(errors).toHaveLength(2);
    e.dispose();
    const late: number[] = [];
    e.event((v) => late.push(v));
    e.fire(3);
    expect(late).toEqual([]);
  });
});
