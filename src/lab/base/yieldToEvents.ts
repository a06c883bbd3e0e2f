/**
 * Letting a worker take in its messages between two pieces of work (a training step, a
 * file of a corpus) without the 4 ms clamp browsers put on nested `setTimeout`s: Node's
 * `setImmediate` where there is one, else a message to itself through a MessageChannel
 * (Web Workers), which runs after the messages already queued.
 *
 * Leaves out: scheduling priorities (the worker has one job).
 */

type Immediate = (fn: () => void) => unknown;

/** The part of a browser's MessageChannel this uses (the lab compiles against Node's types). */
interface BrowserChannel {
  readonly port1: { onmessage: (() => void) | null; close(): void };
  readonly port2: { postMessage(msg: null): void };
}

/** Resolves once the events queued before it have been handled. */
export function yieldToEvents(): Promise<void> {
  const immediate = (globalThis as { setImmediate?: Immediate }).setImmediate;
  if (typeof immediate === 'function') return new Promise((resolve) => immediate(resolve));
  return new Promise((resolve) => {
    const channel = new MessageChannel() as unknown as BrowserChannel;
    channel.port1.onmessage = () => {
      channel.port1.close();
      resolve();
    };
    channel.port2.postMessage(null);
  });
}
