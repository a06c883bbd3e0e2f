/**
 * The binary when the reader of its stdout goes away (`attention-lab … | head -1`): it stops
 * quietly with status 0 — no stack trace of an unhandled EPIPE on stderr.
 */
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { CLI } from './cliHarness';

describe('stdout closed by its reader', () => {
  it('ends quietly', async () => {
    const child = spawn(process.execPath, [CLI, 'patch', '--help'], { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.destroy();
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('close', (c) => resolve(c)));
    expect(stderr).toBe('');
    expect(code).toBe(0);
  });
});
