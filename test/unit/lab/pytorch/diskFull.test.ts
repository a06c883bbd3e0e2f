/**
 * A full disk stops a PyTorch run as it stops ours, and loses nothing: whichever write finds
 * no room — the trainer's checkpoint, metrics line or snapshot weights, or the lab's snapshot —
 * the run stops with our one line ("Disk full while saving … in DIR; the checkpoint of step M
 * is kept — free space and `train --resume DIR`."), run.json says stopped with that reason and
 * the kept step, no temporary file is left, the kept checkpoint loads, and with room again
 * the run resumes to the losses of a run the disk never interrupted. With two processes the
 * full disk on rank 0 stops both at the same step (no process is left waiting).
 *
 * The trainer's disk fills through fault injection: an interpreter wrapper whose
 * sitecustomize.py makes the n-th write of a picked file short and then fail with ENOSPC (and,
 * for a disk that stays full, every later write of the run folder), below the trainer's files.py,
 * so the trainer's own handling is what is tested. The Python writers are also checked on
 * their own (the old file intact, no temporary file, a log cut back, a torn line skipped).
 */

import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createReferenceBackend } from '../../../../src/engine/backends/reference';
import { openRun } from '../../../../src/lab/inference/openRun';
import { readMetrics, readRunJson } from '../../../../src/lab/runs/runFolder';
import { trainSpecOf } from '../../../../src/lab/runs/runSpec';
import { runPytorchSession } from '../../../../src/lab/pytorch/pytorchSession.node';
import { SessionControl } from '../../../../src/lab/training/sessionControl';
import type { PytorchOptions } from '../../../../src/protocol/data';
import type { FromTrainingWorker } from '../../../../src/protocol/trainingWorker';
import { NODE_FS } from '../../../../src/lab/files/fs.node';
import { failingIo, tempFilesUnder } from '../fullDisk';
import { PYTHON, lossGap, python, runPath, stepLines, torchOptions, trainSession, weightGap } from './torchRuns';

const TIMEOUT = 300_000;
const SPEC = trainSpecOf(
  { kind: 'task', task: 'induction' },
  { steps: 40, evalEvery: 0, snapshotEvery: 10, checkpointEvery: 10, seed: 3 },
);
const root = path.dirname(runPath());
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

/** The fault: the `nth` write of a file whose name matches `match` fails; with `after`, so does every later write of a path matching it. */
interface Fault {
  readonly match: string;
  readonly nth: number;
  readonly after?: string;
}

const SITECUSTOMIZE = String.raw`
import builtins, errno, json, os, re
_spec = json.loads(os.environ["AL_TEST_FULL_DISK"])
_match, _nth = re.compile(_spec["match"]), _spec["nth"]
_after = re.compile(_spec["after"]) if _spec.get("after") else None
_state = {"hits": 0, "full": False}

def _fails(path):
    path = os.fsdecode(path)
    if _state["full"]:
        return bool(_after and _after.search(path))
    if _match.search(os.path.basename(path)):
        _state["hits"] += 1
        if _state["hits"] == _nth:
            _state["full"] = True
            return True
    return False

def _no_space(path):
    return OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), os.fsdecode(path))

class _File:
    def __init__(self, f, path):
        self._f, self._path = f, path
    def write(self, data):
        if _fails(self._path):  # the bytes that fit land, then no room
            self._f.write(data[: len(data) // 2])
            self._f.flush()
            raise _no_space(self._path)
        return self._f.write(data)
    def __getattr__(self, name):
        return getattr(self._f, name)
    def __enter__(self):
        return self
    def __exit__(self, *exc):
        return self._f.__exit__(*exc)

_open = builtins.open
def _opener(file, mode="r", *args, **kwargs):
    f = _open(file, mode, *args, **kwargs)
    return _File(f, file) if isinstance(file, (str, bytes, os.PathLike)) and any(c in mode for c in "wax") else f
builtins.open = _opener

_os_open, _os_write, _os_close, _fds = os.open, os.write, os.close, {}
def _os_open_(path, flags, *args, **kwargs):
    fd = _os_open(path, flags, *args, **kwargs)
    if flags & os.O_APPEND:
        _fds[fd] = path
    return fd
def _os_write_(fd, data):
    if fd in _fds and _fails(_fds[fd]):
        _os_write(fd, bytes(data[: len(data) // 2]))
        raise _no_space(_fds[fd])
    return _os_write(fd, data)
def _os_close_(fd):
    _fds.pop(fd, None)
    return _os_close(fd)
os.open, os.write, os.close = _os_open_, _os_write_, _os_close_
`;

/** An interpreter whose disk fills as `fault` says (Debian's Python, with the fault loaded at start). */
function fullPython(name: string, fault: Fault): string {
  const dir = path.join(root, `python-${name}`);
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'sitecustomize.py'), SITECUSTOMIZE);
  const file = path.join(dir, 'python3');
  fs.writeFileSync(
    file,
    `#!/bin/sh\nPYTHONPATH='${dir}' AL_TEST_FULL_DISK='${JSON.stringify(fault)}' exec ${PYTHON} "$@"\n`,
    { mode: 0o755 },
  );
  return file;
}

const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Trains `runDir` in PyTorch and returns the notifications (a failure is one of them). */
async function train(
  runDir: string,
  opts: PytorchOptions,
  extra: { resume?: boolean; stopAt?: number | null; io?: ReturnType<typeof failingIo>; control?: SessionControl } = {},
): Promise<FromTrainingWorker[]> {
  const events: FromTrainingWorker[] = [];
  await runPytorchSession({
    request: { runDir, spec: SPEC, resume: extra.resume ?? false, stopAt: extra.stopAt ?? null, extendTo: null },
    pytorch: opts,
    control: extra.control ?? new SessionControl(),
    emit: (m) => events.push(m),
    ...(extra.io ? { io: extra.io } : {}),
  });
  return events;
}

function failure(events: readonly FromTrainingWorker[]): { step: number; code: string; message: string } {
  const f = events.find((e) => e.type === 'train/didFail');
  if (f?.type !== 'train/didFail') throw new Error(`the run did not fail: ${JSON.stringify(events.at(-1))}`);
  return { step: f.step, ...f.error };
}

/** The one line of a run stopped while `what`, with the checkpoint of `kept`. */
const line = (dir: string, what: string, kept: number): string =>
  `Disk full while ${what} in ${dir}; the checkpoint of step ${kept} is kept — free space and \`train --resume ${dir}\`.`;

/** After a full disk: the reason, run.json, no temporary file, a loadable checkpoint, a log without a torn line. */
async function expectStopped(
  dir: string,
  events: readonly FromTrainingWorker[],
  message: string,
  kept: number,
): Promise<void> {
  expect(failure(events)).toMatchObject({ code: 'disk/full', message });
  const run = await readRunJson(NODE_FS, dir);
  expect(run).toMatchObject({ status: 'stopped', step: kept, error: { code: 'disk/full', message } });
  expect(tempFilesUnder(dir)).toEqual([]);
  expect((await openRun(NODE_FS, dir, createReferenceBackend())).step).toBe(kept);
  expect(fs.readFileSync(path.join(dir, 'metrics.jsonl'), 'utf8').endsWith('\n')).toBe(true);
  expect((await readMetrics(NODE_FS, dir)).skipped).toBe(0);
}

const reference = path.join(root, 'reference');
beforeAll(async () => {
  await trainSession(reference, SPEC, { pytorch: torchOptions() });
  expect(await readRunJson(NODE_FS, reference)).toMatchObject({ status: 'completed', step: 40 });
}, TIMEOUT);

describe('the trainer on a full disk', () => {
  it(
    'keeps the last checkpoint when a checkpoint finds no room, and resumes to the uninterrupted run',
    async () => {
      const dir = path.join(root, 'checkpoint');
      // The checkpoint of step 20: its optimizer state lands, the model's half, then no room.
      const events = await train(
        dir,
        torchOptions(1, {
          python: fullPython('checkpoint', { match: String.raw`^\.model\.safetensors\.\d+\.tmp$`, nth: 2 }),
        }),
      );
      await expectStopped(dir, events, line(dir, 'saving the checkpoint at step 20', 10), 10);
      expect(failure(events).step).toBe(20);
      expect(fs.readFileSync(path.join(dir, 'metrics.jsonl'), 'utf8')).toContain('"step":20,');
      // With room again: on from step 10, to exactly the run the disk never interrupted.
      const resumed = await trainSession(dir, SPEC, { resume: true, pytorch: torchOptions() });
      expect(resumed.find((e) => e.type === 'train/didStart')).toMatchObject({ startStep: 10 });
      expect(await readRunJson(NODE_FS, dir)).toMatchObject({ status: 'completed', step: 40, error: null });
      expect(stepLines(dir).map((s) => s.step)).toEqual(stepLines(reference).map((s) => s.step));
      expect(lossGap(stepLines(reference), stepLines(dir))).toBeLessThan(1e-6);
      expect(weightGap(reference, dir)).toBeLessThan(1e-6);
    },
    TIMEOUT,
  );

  it(
    'cuts a metrics line back when the disk stays full, even with no room for run.json (the lab records the reason)',
    async () => {
      const dir = path.join(root, 'metrics');
      const fault = { match: String.raw`^metrics\.jsonl$`, nth: 15, after: `^${escape(dir)}/` };
      const events = await train(dir, torchOptions(1, { python: fullPython('metrics', fault) }));
      await expectStopped(dir, events, line(dir, 'logging the metrics of step 15', 10), 10);
      expect(stepLines(dir).map((s) => s.step)).toEqual(Array.from({ length: 14 }, (_, i) => i + 1));
      const resumed = await trainSession(dir, SPEC, { resume: true, pytorch: torchOptions() });
      expect(resumed.at(-1)).toMatchObject({ type: 'train/didFinish', step: 40, reason: 'completed' });
      expect(lossGap(stepLines(reference), stepLines(dir))).toBeLessThan(1e-6);
    },
    TIMEOUT,
  );

  it(
    'with two processes, stops both at the same step when the snapshot weights find no room',
    async () => {
      const dir = path.join(root, 'weights-two');
      const fault = { match: String.raw`^\.step-0000020\.weights\.safetensors\.\d+\.tmp$`, nth: 1 };
      const events = await train(dir, torchOptions(2, { python: fullPython('weights', fault) }));
      await expectStopped(dir, events, line(dir, 'saving the attention snapshot of step 20', 10), 10);
      expect(fs.readdirSync(path.join(dir, 'snapshots')).sort()).toEqual([
        'step-0000000.safetensors',
        'step-0000010.safetensors',
      ]);
      expect((await readRunJson(NODE_FS, dir)).backendUsed).toBe('pytorch cpu ×2');
    },
    TIMEOUT,
  );
});

describe('the lab on a full disk while it follows the trainer', () => {
  it(
    'stops the trainer when a snapshot finds no room, keeping its weights to draw once there is space',
    async () => {
      const dir = path.join(root, 'lab-snapshot');
      const io = failingIo((f) => path.basename(f).startsWith('.step-0000020.safetensors.'), 1);
      const spec = { ...SPEC, training: { ...SPEC.training, steps: 100_000 } };
      const events: FromTrainingWorker[] = [];
      await runPytorchSession({
        request: { runDir: dir, spec, resume: false, stopAt: null, extendTo: null },
        pytorch: torchOptions(),
        control: new SessionControl(),
        emit: (m) => events.push(m),
        io,
      });
      const f = failure(events);
      const kept = (await readRunJson(NODE_FS, dir)).step;
      expect(kept).toBeGreaterThanOrEqual(20);
      expect(f).toMatchObject({
        step: 20,
        code: 'disk/full',
        message: line(dir, 'saving the attention snapshot of step 20', kept),
      });
      expect(await readRunJson(NODE_FS, dir)).toMatchObject({ status: 'stopped', error: { code: 'disk/full' } });
      expect(tempFilesUnder(dir)).toEqual([]);
      expect((await openRun(NODE_FS, dir, createReferenceBackend())).step).toBe(kept);
      expect(fs.existsSync(path.join(dir, 'snapshots', 'step-0000020.weights.safetensors'))).toBe(true);
      // Resumed with room: the weights left waiting become the snapshot of step 20.
      const resumed: FromTrainingWorker[] = [];
      await runPytorchSession({
        request: { runDir: dir, spec, resume: true, stopAt: kept + 10, extendTo: null },
        pytorch: torchOptions(),
        control: new SessionControl(),
        emit: (m) => resumed.push(m),
      });
      expect(resumed.at(-1)).toMatchObject({ type: 'train/didFinish', step: kept + 10, reason: 'stopped' });
      const snaps = fs.readdirSync(path.join(dir, 'snapshots')).sort();
      expect(snaps.filter((n) => n.includes('.weights.'))).toEqual([]);
      expect(snaps).toContain('step-0000020.safetensors');
    },
    TIMEOUT,
  );
});

describe("the trainer's writers", () => {
  it('leave the old file and no temporary file when a write fails, and cut a failed log line back', () => {
    const out = JSON.parse(
      python(String.raw`
import builtins, errno, json, os, tempfile
from attention_lab_trainer import files as tf
d = tempfile.mkdtemp()
model, opt, log = (os.path.join(d, n) for n in ("model.safetensors", "optimizer.safetensors", "metrics.jsonl"))
tf.write_files_atomic([(opt, b"old optimizer"), (model, b"old model")])
real_open, real_write = builtins.open, os.write
class Short:
    def __init__(self, f): self.f = f
    def write(self, data):
        self.f.write(data[: len(data) // 2]); self.f.flush()
        raise OSError(errno.ENOSPC, "No space left on device")
    def __getattr__(self, n): return getattr(self.f, n)
    def __enter__(self): return self
    def __exit__(self, *e): return self.f.__exit__(*e)
builtins.open = lambda p, m="r", *a, **k: Short(real_open(p, m, *a, **k)) if "model" in os.path.basename(p) and "w" in m else real_open(p, m, *a, **k)
try:
    tf.write_files_atomic([(opt, b"new optimizer" * 100), (model, b"new model" * 100)])
    raised = None
except tf.DiskFull as e:
    raised = os.path.basename(e.file)
builtins.open = real_open
tf.append_metrics(d, {"type": "step", "step": 1})
def full_write(fd, data):
    real_write(fd, bytes(data[:5]))
    raise OSError(errno.ENOSPC, "No space left on device")
os.write = full_write
try:
    tf.append_metrics(d, {"type": "step", "step": 2})
    appended = True
except tf.DiskFull:
    appended = False
os.write = real_write
with real_open(log, "ab") as f:
    f.write(b'{"type":"step","st')  # a writer killed mid-line
tf.append_metrics(d, {"type": "step", "step": 3})
print(json.dumps({"raised": raised, "model": real_open(model, "rb").read().decode(), "optimizer": real_open(opt, "rb").read().decode(),
                  "files": sorted(os.listdir(d)), "appended": appended, "log": real_open(log).read()}))
`),
    ) as { raised: string; model: string; optimizer: string; files: string[]; appended: boolean; log: string };
    expect(out).toEqual({
      raised: 'model.safetensors',
      model: 'old model',
      optimizer: 'old optimizer',
      files: ['metrics.jsonl', 'model.safetensors', 'optimizer.safetensors'],
      appended: false,
      log: '{"type":"step","step":1}\n{"type":"step","st\n{"type":"step","step":3}\n',
    });
  });
});
