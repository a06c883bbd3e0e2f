/**
 * The PyTorch engine where a host cannot start processes (the web's workers): the training
 * service refuses a run asked to train on PyTorch in one line, without touching the run
 * folder, and the model service refuses to draw a PyTorch run's snapshots; a Node host hands
 * both in, and the services call what it gave them.
 */

import { describe, expect, it } from 'vitest';
import { MemoryFs } from '../../../../src/lab/files/memoryFs';
import { trainSpecOf } from '../../../../src/lab/runs/runSpec';
import { serveModelRequests } from '../../../../src/lab/workers/modelService';
import type { WorkerChannel } from '../../../../src/lab/platform/platform';
import type { PytorchRunner } from '../../../../src/lab/workers/trainingService';
import { NO_PYTORCH, serveTraining } from '../../../../src/lab/workers/trainingService';
import type { PytorchOptions } from '../../../../src/protocol/data';
import { SessionControl } from '../../../../src/lab/training/sessionControl';
import type { PytorchStart } from '../../../../src/lab/training/sessionSetup';
import { platformOf } from '../tinyRuns';

const OPTIONS: PytorchOptions = {
  python: 'python3',
  nproc: 1,
  accumulate: 1,
  device: 'cpu',
  bf16: false,
  trainerDir: '/trainer',
};
const SPEC = trainSpecOf({ kind: 'task', task: 'copy' }, { steps: 2 });

/** A channel whose posts are recorded and whose listener the test calls. */
function channel<Out>(): WorkerChannel<Out> & {
  readonly posted: Out[];
  send(msg: unknown): void;
  settled(): Promise<void>;
} {
  const posted: Out[] = [];
  let listener: ((msg: unknown) => void) | null = null;
  return {
    posted,
    post: (msg) => posted.push(msg),
    onMessage: (l) => (listener = l),
    send: (msg) => listener?.(msg),
    settled: () => new Promise((r) => setTimeout(r, 20)),
  };
}

describe('the PyTorch engine on a host without processes', () => {
  it('the training service refuses a PyTorch run in one line and leaves the folder alone', async () => {
    const fs = new MemoryFs();
    const ch = channel();
    serveTraining(platformOf(fs), ch);
    ch.send({
      type: 'train/start',
      runDir: '/runs/a',
      spec: SPEC,
      resume: false,
      stopAt: null,
      extendTo: null,
      pytorch: OPTIONS,
    });
    await ch.settled();
    expect(ch.posted).toEqual([
      { type: 'worker/ready' },
      { type: 'train/didFail', step: 0, error: { code: 'input/invalid', message: NO_PYTORCH } },
    ]);
    expect(NO_PYTORCH).not.toContain('\n');
    expect(await fs.stat('/runs/a')).toBeNull();
  });

  it('a Node host hands the PyTorch session in, and the service runs it with the options', async () => {
    const calls: PytorchStart[] = [];
    const runner: PytorchRunner = async (start) => {
      calls.push(start);
    };
    const ch = channel();
    serveTraining(platformOf(new MemoryFs()), ch, null, runner);
    ch.send({
      type: 'train/start',
      runDir: '/runs/b',
      spec: SPEC,
      resume: true,
      stopAt: 5,
      extendTo: null,
      pytorch: OPTIONS,
    });
    await ch.settled();
    expect(calls).toHaveLength(1);
    expect(calls[0]?.request).toMatchObject({ runDir: '/runs/b', spec: SPEC, resume: true, stopAt: 5, extendTo: null });
    expect(calls[0]?.pytorch).toEqual(OPTIONS);
    expect(calls[0]?.control).toBeInstanceOf(SessionControl);
    expect(calls[0]?.options).toBeUndefined();
  });

  it("the model service refuses to draw a PyTorch run's snapshots without a drawer, and uses one it is given", async () => {
    const ch = channel();
    serveModelRequests(platformOf(new MemoryFs()), ch);
    ch.send({ type: 'model/drawSnapshots', id: 7, runDir: '/runs/c' });
    await ch.settled();
    expect(ch.posted[1]).toMatchObject({
      type: 'model/didFail',
      id: 7,
      error: { code: 'input/invalid', message: expect.stringMatching(/needs desktop VS Code or the CLI/) },
    });
    const drawn = channel();
    serveModelRequests(platformOf(new MemoryFs()), drawn, async (_fs, runDir) => (runDir === '/runs/c' ? 3 : 0));
    drawn.send({ type: 'model/drawSnapshots', id: 8, runDir: '/runs/c' });
    await drawn.settled();
    expect(drawn.posted[1]).toEqual({ type: 'model/didDrawSnapshots', id: 8, output: 3 });
  });
});
