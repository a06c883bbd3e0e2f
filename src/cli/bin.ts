/**
 * Process entry of the bundled `attention-lab` binary (dist/cli.js).
 */

import * as path from 'node:path';
import { main } from './main';
import { enableWasmRelaxedSimd } from '../lab/platform/wasmFlags.node';

// Before any kernel module is compiled (Node 20 keeps relaxed SIMD behind a flag).
enableWasmRelaxedSimd();

// The reader of stdout has gone (`attention-lab tokenize … | head -1`): stop quietly, as Unix tools
// do, instead of a stack trace of the unhandled EPIPE.
process.stdout.on('error', (e: NodeJS.ErrnoException) => {
  if (e.code !== 'EPIPE') throw e;
  process.exit(process.exitCode ?? 0);
});

const ctx = {
  cwd: process.cwd(),
  out: (line: string): void => void process.stdout.write(`${line}\n`),
  err: (line: string): void => void process.stderr.write(`${line}\n`),
  stderr: process.stderr,
  workerScript: path.join(__dirname, 'worker.js'),
  help(text: string): number {
    process.stdout.write(`${text}\n`);
    return 0;
  },
};

main(process.argv.slice(2), ctx).then(
  (code) => {
    process.exitCode = code;
  },
  (e: unknown) => {
    process.stderr.write(`attention-lab: internal error: ${String((e as Error)?.stack ?? e)}\n`);
    process.exitCode = 1;
  },
);
