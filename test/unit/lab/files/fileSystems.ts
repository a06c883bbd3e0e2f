/**
 * The file systems the lab's tests run on, for `describe.each`: Node's (in a fresh
 * temporary folder), memory's (under `/lab`), memory playing VS Code's `workspace.fs` under
 * the web host's whole-file layer (no append, a rename over a file that deletes it first),
 * and a web worker's calls answered by that. Each gives a folder to work in and a way to put
 * fixture files there, so one test body runs on all.
 */

import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { LabFs } from '../../../../src/lab/files/labFs';
import { writeFile } from '../../../../src/lab/files/labFs';
import { MessageChannel } from 'node:worker_threads';
import { FileServer } from '../../../../src/lab/files/fileServer';
import { MemoryFs, workspaceLikeFs } from '../../../../src/lab/files/memoryFs';
import { NODE_FS } from '../../../../src/lab/files/fs.node';
import { RemoteFs } from '../../../../src/lab/files/remoteFs';

/** A file system with a fresh folder to work in. */
export interface TestFs {
  readonly name: string;
  readonly fs: LabFs;
  /** A fresh, empty folder (created). */
  dir(): Promise<string>;
  /** Writes fixture files (relative names) under `dir` and returns their paths. */
  put(dir: string, files: Readonly<Record<string, string | Uint8Array>>): Promise<string[]>;
}

async function putFiles(
  lab: LabFs,
  dir: string,
  files: Readonly<Record<string, string | Uint8Array>>,
): Promise<string[]> {
  const out: string[] = [];
  for (const [name, data] of Object.entries(files)) {
    const p = lab.join(dir, name);
    await writeFile(lab, p, data);
    out.push(p);
  }
  return out;
}

/** Node's file system in a temporary folder. */
export function nodeTestFs(): TestFs {
  return {
    name: 'node',
    fs: NODE_FS,
    dir: async () => fs.mkdtempSync(path.join(os.tmpdir(), 'al-fs-')),
    put: (dir, files) => putFiles(NODE_FS, dir, files),
  };
}

/** A fresh in-memory file system. */
export function memoryTestFs(mem = new MemoryFs()): TestFs & { readonly fs: MemoryFs } {
  let n = 0;
  return {
    name: 'memory',
    fs: mem,
    dir: async () => {
      const d = `/lab/t${++n}`;
      await mem.mkdir(d);
      return d;
    },
    put: (dir, files) => putFiles(mem, dir, files),
  };
}

/**
 * Memory as the web host sees VS Code's `workspace.fs` (memoryFs.ts's workspaceLikeFs), with
 * URI paths; `mem` holds the files.
 */
export function workspaceTestFs(mem = new MemoryFs()): TestFs & { readonly mem: MemoryFs } {
  const fs = workspaceLikeFs(mem);
  let n = 0;
  return {
    name: 'workspace',
    fs,
    mem,
    dir: async () => {
      const d = `vscode-remote://host/home/lab/t${++n}`;
      await fs.mkdir(d);
      return d;
    },
    put: (dir, files) => putFiles(fs, dir, files),
  };
}

/**
 * A web worker's file system: RemoteFs calls travel over a real MessageChannel (structured
 * clone and all) to a FileServer answering from memory playing `workspace.fs`, as the
 * extension host answers from `workspace.fs`. Paths are URIs, as the web host spells them.
 */
export function remoteTestFs(): TestFs & { readonly remote: RemoteFs; readonly host: MemoryFs } {
  const host = new MemoryFs();
  const { port1, port2 } = new MessageChannel();
  const remote = new RemoteFs((call, transfer) => port1.postMessage(call, transfer));
  const server = new FileServer(workspaceLikeFs(host), (answer, transfer) => port2.postMessage(answer, transfer));
  port2.on('message', (m: unknown) => server.serve(m));
  port1.on('message', (m: unknown) => remote.receive(m));
  port1.unref();
  port2.unref();
  let n = 0;
  return {
    name: 'remote',
    fs: remote,
    remote,
    host,
    dir: async () => {
      const d = `vscode-userdata://host/User/globalStorage/t${++n}`;
      await remote.mkdir(d);
      return d;
    },
    put: (dir, files) => putFiles(remote, dir, files),
  };
}

/** All four, for `describe.each(FILE_SYSTEMS)('… on $name', …)`. */
export const FILE_SYSTEMS: readonly { readonly name: string; readonly make: () => TestFs }[] = [
  { name: 'node', make: nodeTestFs },
  { name: 'memory', make: memoryTestFs },
  { name: 'workspace', make: workspaceTestFs },
  { name: 'remote', make: remoteTestFs },
];
