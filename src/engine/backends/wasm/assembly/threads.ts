/**
 * The control block shared by the calling thread and the helper threads, and the job
 * protocol on it (WebAssembly threads: shared memory plus atomic wait/notify).
 *
 * Every instance of this module — the backend's own and one per helper thread — runs on the
 * same shared memory. A job is one kernel with its arguments (f64 slots in the control
 * block), cut into nChunks chunks. The caller writes the arguments, publishes the job (a new
 * generation in GEN, the chunk count in LIMIT, chunk 0 in TICKET) and notifies; then every
 * thread, the caller included, claims chunks one at a time until none is left, and the
 * caller waits until DONE counts them all.
 *
 * Claiming chunks dynamically, instead of handing each thread a fixed share, keeps a late
 * helper from stalling the caller: when the cores are busy with other processes (or a
 * helper is slow to wake), the caller simply runs more chunks itself. Results do not depend
 * on who runs which chunk (every kernel computes each output the same way in any chunk).
 *
 * A claim is a compare-and-swap on TICKET = generation (16 bits) · chunk (16 bits), so a
 * helper that wakes after its job was finished and replaced can never run a chunk of the
 * new job with the old kernel: its swap fails, since the generation moved on. Once a chunk
 * is claimed the job cannot change until the chunk is counted in DONE, so the arguments it
 * reads are the right ones.
 *
 * Waiting first spins (a job usually follows within microseconds; a futex wake costs tens
 * of them), then sleeps on the word.
 *
 * Leaves out: starting the helpers (the host's ParallelRunner) and how many chunks or
 * threads a kernel gets (the TypeScript side decides from the sizes).
 */

// Byte offsets inside the control block; words that threads write often sit on their own 64-byte lines.
export const CTL_GEN: usize = 0;
export const CTL_TICKET: usize = 64;
export const CTL_DONE: usize = 128;
export const CTL_LIMIT: usize = 192;
export const CTL_QUIT: usize = 256;
export const CTL_READY: usize = 260;
export const CTL_FAILED: usize = 264;
export const CTL_KERNEL: usize = 320;
/** Per-thread scratch pointers: usize[MAX_THREADS]. */
export const CTL_SCRATCH: usize = 384;
export const MAX_THREADS: i32 = 16;
/** Kernel arguments: f64[MAX_ARGS]. */
export const CTL_ARGS: usize = 448;
export const MAX_ARGS: i32 = 40;
/** Total size of the control block in bytes. */
export const CTL_BYTES: usize = 768;

/**
 * Spins before a helper sleeps waiting for a job (tens of µs): the caller never waits for a
 * helper to wake, it just runs more chunks, so spinning longer would only take cores from
 * other work.
 */
const JOB_SPIN: i32 = 30000;
/** Longest single sleep of an idle helper (50 ms), see waitJob. */
const IDLE_WAIT_NS: i64 = 50000000;
/** Spins before the caller sleeps waiting for helpers' last chunks. */
const DONE_SPIN: i32 = 30000;

/** This instance's control block and thread index (globals: per instance, never shared). */
let ctl: usize = 0;
let myTid: i32 = 0;

/** Binds this instance to its control block as thread `tid` (0 = the caller). */
export function setControl(control: usize, tid: i32): void {
  ctl = control;
  myTid = tid;
}

@inline export function argF(i: i32): f64 {
  return load<f64>(ctl + CTL_ARGS + ((<usize>i) << 3));
}

@inline export function argI(i: i32): i32 {
  return <i32>load<f64>(ctl + CTL_ARGS + ((<usize>i) << 3));
}

@inline export function argP(i: i32): usize {
  return <usize>load<f64>(ctl + CTL_ARGS + ((<usize>i) << 3));
}

/** This thread's scratch area (sized by the caller before the job). */
@inline export function myScratch(): usize {
  return load<usize>(ctl + CTL_SCRATCH + ((<usize>myTid) << 2));
}

/** Start of part `i` of `n` items split into `parts` near-equal contiguous parts. */
@inline export function partStart(n: i32, i: i32, parts: i32): i32 {
  return <i32>((<i64>n * <i64>i) / <i64>parts);
}

/** The posted job's kernel. */
@inline export function jobKernel(): i32 {
  return load<i32>(ctl + CTL_KERNEL);
}

/** Publishes a job of nChunks chunks and wakes the helpers. Returns its 16-bit generation. */
export function post(kernel: i32, nChunks: i32): i32 {
  const gen = (atomic.load<i32>(ctl + CTL_GEN) + 1) & 0xffff;
  store<i32>(ctl + CTL_KERNEL, kernel);
  atomic.store<i32>(ctl + CTL_DONE, 0);
  atomic.store<i32>(ctl + CTL_LIMIT, (gen << 16) | nChunks);
  atomic.store<i32>(ctl + CTL_TICKET, gen << 16);
  atomic.store<i32>(ctl + CTL_GEN, gen);
  atomic.notify(ctl + CTL_GEN, -1);
  return gen;
}

/** Claims the next chunk of job `gen`; −1 when none is left or the job is no longer current. */
export function claim(gen: i32): i32 {
  const limit = atomic.load<i32>(ctl + CTL_LIMIT);
  if (limit >>> 16 != gen) return -1;
  const n = limit & 0xffff;
  while (true) {
    const t = atomic.load<i32>(ctl + CTL_TICKET);
    if (t >>> 16 != gen) return -1;
    const c = t & 0xffff;
    if (c >= n) return -1;
    if (atomic.cmpxchg<i32>(ctl + CTL_TICKET, t, t + 1) == t) return c;
  }
}

/** Chunk count of job `gen` (valid while one of its chunks is held). */
@inline export function chunksOf(): i32 {
  return atomic.load<i32>(ctl + CTL_LIMIT) & 0xffff;
}

/** Counts one finished chunk; wakes the caller after the last. */
export function chunkDone(nChunks: i32): void {
  if (atomic.add<i32>(ctl + CTL_DONE, 1) + 1 == nChunks) atomic.notify(ctl + CTL_DONE, -1);
}

/** Waits until all nChunks chunks are done. Returns false if a helper failed meanwhile. */
export function waitDone(nChunks: i32): bool {
  let spins = 0;
  while (true) {
    const done = atomic.load<i32>(ctl + CTL_DONE);
    if (done >= nChunks) return true;
    if (atomic.load<i32>(ctl + CTL_FAILED) != 0) return false;
    if (spins < DONE_SPIN) spins++;
    else memory.atomic.wait32(ctl + CTL_DONE, done, 1000000);
  }
}

/** Waits for a job newer than `seen`; returns its generation, or −1 on QUIT. */
export function waitJob(seen: i32): i32 {
  let spins = 0;
  let gen = atomic.load<i32>(ctl + CTL_GEN);
  while (gen == seen) {
    if (atomic.load<i32>(ctl + CTL_QUIT) != 0) return -1;
    if (spins < JOB_SPIN) spins++;
    // A bounded sleep, re-armed in a loop: a thread blocked in an endless wasm wait cannot
    // be terminated (worker.terminate(), process exit), but one that loops back can.
    else memory.atomic.wait32(ctl + CTL_GEN, seen, IDLE_WAIT_NS);
    gen = atomic.load<i32>(ctl + CTL_GEN);
  }
  return atomic.load<i32>(ctl + CTL_QUIT) != 0 ? -1 : gen;
}

/** Marks this helper ready and returns the current generation. */
export function helperStart(): i32 {
  const seen = atomic.load<i32>(ctl + CTL_GEN);
  atomic.add<i32>(ctl + CTL_READY, 1);
  return seen;
}

/** Asks every helper to return from its loop. */
export function stopHelpers(control: usize): void {
  atomic.store<i32>(control + CTL_QUIT, 1);
  atomic.store<i32>(control + CTL_GEN, (atomic.load<i32>(control + CTL_GEN) + 1) & 0xffff);
  atomic.notify(control + CTL_GEN, -1);
}
