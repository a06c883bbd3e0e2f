import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { writeFilesAtomic } from '../../../../src/lab/runs/atomicFile';

describe('writeFilesAtomic', () => {
  it('replaces a pair of files together, and leaves both old ones when writing the second fails', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'al-atomic-'));
    const a = path.join(dir, 'optimizer.safetensors');
    const b = path.join(dir, 'model.safetensors');
    writeFilesAtomic([{ file: a, data: 'opt@40' }, { file: b, data: 'model@40' }]);
    expect([fs.readFileSync(a, 'utf8'), fs.readFileSync(b, 'utf8')]).toEqual(['opt@40', 'model@40']);
    // The second write fails (its folder is gone), as a killed writer would stop: the first
    // file must not have been replaced yet — the pair stays from one step.
    expect(() => writeFilesAtomic([{ file: a, data: 'opt@60' }, { file: path.join(dir, 'gone', 'model.safetensors'), data: 'model@60' }])).toThrow();
    expect(fs.readFileSync(a, 'utf8')).toBe('opt@40');
    writeFilesAtomic([{ file: a, data: 'opt@60' }, { file: b, data: 'model@60' }]);
    expect([fs.readFileSync(a, 'utf8'), fs.readFileSync(b, 'utf8')]).toEqual(['opt@60', 'model@60']);
    fs.rmSync(dir, { recursive: true, force: true });
  });
});
