import { describe, expect, it } from 'vitest';
import { PendingRequests, RequestError } from '../../../../src/extension/workers/pendingRequests';

/** Timers that fire only when the test says so. */
function fakeTimers(): {
  timers: { set(fn: () => void, ms: number): unknown; clear(h: unknown): void };
  fire(): void;
  live(): number;
} {
  const pending = new Map<number, () => void>();
  let next = 0;
  return {
    timers: {
      set: (fn) => {
        pending.set(++next, fn);
        return next;
      },
      clear: (h) => void pending.delete(h as number),
    },
    fire: () => {
      const fns = [...pending.values()];
      pending.clear();
      fns.forEach((f) => f());
    },
    live: () => pending.size,
  };
}

describe('PendingRequests', () => {
  it('resolves each request once, by id, and clears its timer', async () => {
    const t = fakeTimers();
    const p = new PendingRequests(t.timers);
    const sent: number[] = [];
    const a = p.start<string>('A', 1000, (id) => sent.push(id));
    const b = p.start<string>('B', 1000, (id) => sent.push(id));
    expect(sent).toEqual([1, 2]);
    expect(p.resolve(2, 'two')).toBe(true);
    expect(p.resolve(2, 'again')).toBe(false);
    expect(p.resolve(1, 'one')).toBe(true);
    await expect(a).resolves.toBe('one');
    await expect(b).resolves.toBe('two');
    expect(p.size).toBe(0);
    expect(t.live()).toBe(0);
  });

  it('fails with the worker error code and message', async () => {
    const p = new PendingRequests(fakeTimers().timers);
    const r = p.start('Decoding', 1000, () => undefined);
    p.reject(1, 'input/invalid', 'Prompt too long; shorten it.');
    await expect(r).rejects.toMatchObject({
      name: 'RequestError',
      code: 'input/invalid',
      message: 'Prompt too long; shorten it.',
    });
  });

  it('times out with a message naming the request, then tells the owner', async () => {
    const t = fakeTimers();
    const timedOut: string[] = [];
    const p = new PendingRequests(t.timers, (what) => timedOut.push(what));
    const r = p.start('Scoring', 120_000, () => undefined);
    t.fire();
    await expect(r).rejects.toThrow('Scoring took longer than 120 s');
    await expect(r).rejects.toBeInstanceOf(RequestError);
    expect(timedOut).toEqual(['Scoring']);
    expect(p.resolve(1, 'late')).toBe(false);
  });

  it('fails everything in flight at once, and a send that throws', async () => {
    const p = new PendingRequests(fakeTimers().timers);
    const all = [p.start('A', 10, () => undefined), p.start('B', 10, () => undefined)];
    p.rejectAll('internal', 'worker died');
    for (const r of all) await expect(r).rejects.toThrow('worker died');
    const broken = p.start('C', 10, () => {
      throw new Error('closed port');
    });
    await expect(broken).rejects.toThrow('C could not be sent: closed port');
    expect(p.size).toBe(0);
  });
});
