/**
 * The body every WebAssembly helper thread runs, on Node (threads.node.ts) and in the browser
 * (threads.web.ts): instantiate the kernels on the shared memory, attach as helper `tid`, say
 * ready, serve until told to stop. On a trap it releases the waiting caller (see the engine's
 * parallel.ts), then rethrows. Source text, since a helper is started from a string.
 *
 * Leaves out: how the helper receives `module`, `memory`, `control`, `tid` and how it says
 * ready (`ready()`), which Node's and the browser's helpers define around it.
 */

/** The helper's program after `module`, `memory`, `control`, `tid` and `ready` are in scope. */
export const HELPER_BODY = `
const ex = new WebAssembly.Instance(module, { env: { memory } }).exports;
const seen = ex.helperAttach(control, tid);
ready();
try {
  ex.helperLoop(seen);
} catch (err) {
  const i32 = new Int32Array(memory.buffer);
  Atomics.store(i32, (control + ex.CTL_FAILED.value) >> 2, 1);
  Atomics.notify(i32, (control + ex.CTL_DONE.value) >> 2);
  throw err;
}
`;
