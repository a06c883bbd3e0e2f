import { describe, expect, it } from 'vitest';
import type { GlobPreview } from '../../../../src/extension/configure/dataPreview';
import { noMatchMessage, previewLine, previewRows } from '../../../../src/extension/configure/dataPreview';

const base: GlobPreview = {
  glob: '**/*.md',
  found: 6,
  capped: false,
  excluded: 0,
  files: [
    { path: 'a.md', bytes: 1200 },
    { path: 'docs/b.md', bytes: 1.2 * 1024 * 1024 - 1200 },
  ],
  bytes: 1.2 * 1024 * 1024,
  skipped: [
    { path: 'package-lock.json', reason: 'lockfile' },
    { path: 'x.min.js', reason: 'minified' },
    { path: 'huge.md', reason: 'too-large', bytes: 80 * 1024 * 1024 },
    { path: 'yarn.lock', reason: 'lockfile' },
  ],
  read: 2,
  planned: 2,
};

describe('dataPreview', () => {
  it('counts the files, their size and the skipped ones by reason', () => {
    expect(previewLine(base)).toEqual({
      severity: 'warning',
      message: '2 files, 1.2 MB · 4 skipped: 2 lockfile, 1 minified, 1 too large — Preview files… lists them.',
    });
    const clean = previewLine({ ...base, skipped: [], found: 2 });
    expect(clean).toEqual({ severity: 'info', message: '2 files, 1.2 MB — Preview files… lists them.' });
  });

  it('says when it looked at only part of the files', () => {
    const line = previewLine({ ...base, found: 1000, capped: true, planned: 900, read: 300, skipped: [] });
    expect(line.severity).toBe('warning');
    expect(line.message).toBe(
      '1,000+ files match; of 1,000 looked at: 2 files, 1.2 MB (contents of 600 checked when training reads them) — Preview files… lists them.',
    );
  });

  it('refuses a glob that matches nothing, or only skipped files, with what to try', () => {
    const none = previewLine({ ...base, glob: '*.rst', found: 0, files: [], skipped: [], bytes: 0 });
    expect(none.severity).toBe('error');
    expect(none.message).toBe(
      'No file in this workspace matches "*.rst" (files.exclude applies): try **/*.rst to search every folder, e.g. **/*.md or docs/**/*.txt.',
    );
    expect(noMatchMessage('docs/**/*.rst', 3)).toMatch(
      /^No file in this workspace matches "docs\/\*\*\/\*\.rst" once attentionLab\.data\.exclude leaves out 3 files .*check the folder and the extension/,
    );
    const skipped = previewLine({ ...base, files: [], bytes: 0 });
    expect(skipped).toEqual({
      severity: 'error',
      message:
        'All 6 matching files would be skipped (2 lockfile, 1 minified, 1 too large); point the glob at UTF-8 text files.',
    });
  });

  it('lists the files with sizes, then the skipped ones with why', () => {
    const rows = previewRows(base);
    expect(rows[0]).toEqual({ kind: 'separator', label: '2 files to train on, 1.2 MB' });
    expect(rows[1]).toEqual({ kind: 'file', label: 'a.md', description: '1.2 KB' });
    expect(rows[3]).toEqual({ kind: 'separator', label: '4 skipped' });
    expect(rows).toContainEqual({ kind: 'skipped', label: 'huge.md', description: 'skipped: too large (80 MB)' });
    expect(rows).toContainEqual({ kind: 'skipped', label: 'x.min.js', description: 'skipped: minified' });
    const few = previewRows(base, 1);
    expect(few.filter((r) => r.kind === 'file')).toHaveLength(1);
    expect(few).toContainEqual({ kind: 'separator', label: '… and 1 more file' });
    expect(few).toContainEqual({ kind: 'separator', label: '… and 3 more skipped files' });
  });
});
