/**
 * The PyTorch probe waits for an interpreter to import torch, which can hang: it says what
 * it waits for while it waits, ends at its limit with a line saying what did not answer,
 * and a stop ends it at once (it waited 120 s in silence before, and could not be stopped).
 * A shell script that never answers plays the hanging Python. An empty interpreter path (a
 * cleared setting) is one line saying what to set, not Node's TypeError from execFile.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CancelledError } from '../../../../src/lab/base/cancelled';
import { probeTorch } from '../../../../src/lab/pytorch/probe.node';
import { SessionControl } from '../../../../src/lab/training/sessionControl';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'attention-lab-probe-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
const hanging = path.join(dir, 'python-that-hangs');
fs.writeFileSync(hanging, '#!/bin/sh\nexec sleep 600\n', { mode: 0o755 });

describe.runIf(process.platform !== 'win32')('probeTorch with a Python that never answers', () => {
  it('says what it waits for, again while it waits, and stops when the session is stopped', async () => {
    const control = new SessionControl();
    const heard: string[] = [];
    const probe = probeTorch(hanging, dir, {
      timeoutMs: 600_000,
      noticeMs: 20,
      signal: control.signal,
      onWait: (m) => {
        heard.push(m);
        if (heard.length === 3) control.stop();
      },
    });
    const e = await probe.then(
      () => null,
      (x: unknown) => x,
    );
    expect(e).toBeInstanceOf(CancelledError);
    expect((e as Error).message).toBe(`Cancelled while waiting for "${hanging}" to import torch; nothing was saved.`);
    expect(heard[0]).toBe(
      `Waiting for "${hanging}" to import torch and report what it runs on (at most 600 s; stop to cancel)…`,
    );
    expect(heard[1]).toMatch(
      /^Still waiting for ".*" to import torch and report what it runs on \(at most 600 s; stop to cancel\): \d+ s so far…$/,
    );
  });

  it('ends at its limit with one line naming the interpreter', async () => {
    const e = await probeTorch(hanging, dir, { timeoutMs: 1000 }).then(
      () => null,
      (x: unknown) => x,
    );
    expect((e as Error).message).toMatch(
      /^".*python-that-hangs" did not report its torch within 1 s \(importing torch hung, or the interpreter waits for input\); check that/,
    );
  });

  it('is cancelled before it starts when the session already stopped', async () => {
    const control = new SessionControl();
    control.stop();
    await expect(probeTorch(hanging, dir, { signal: control.signal })).rejects.toBeInstanceOf(CancelledError);
  });
});

describe('probeTorch without a Python path', () => {
  it('refuses an empty Python path in one line naming the flag and the setting', async () => {
    for (const python of ['', '  ']) {
      const e = await probeTorch(python, '.').then(
        () => null,
        (err: unknown) => err as Error & { code?: string },
      );
      expect(e?.code).toBe('pytorch/launch');
      expect(e?.message).toBe(
        'No Python given (the path is empty); name the Python 3 that has PyTorch (--python PATH; in VS Code, attentionLab.pytorch.python).',
      );
    }
  });
});
