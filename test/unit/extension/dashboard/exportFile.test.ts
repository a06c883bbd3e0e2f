/**
 * An export arriving from the dashboard (`export/save`): the schema refuses file names with a
 * folder or the wrong extension and oversized content; exportBytes decodes a PNG (and refuses
 * one that is not), writes text as UTF-8 and refuses an extension that does not match the kind.
 */
import { describe, expect, it } from 'vitest';
import { exportBytes } from '../../../../src/extension/dashboard/exportFile';
import { MAX_EXPORT_CHARS, validateFromWebview } from '../../../../src/protocol/webview';

const PNG = Buffer.from([
  0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52, 0, 0, 0, 2, 0, 0, 0, 3, 8, 6, 0,
  0, 0,
]);

describe('export/save', () => {
  const msg = (fileName: string, content = 'a,b\r\n'): unknown => ({
    type: 'export/save',
    fileName,
    kind: 'csv',
    content,
  });

  it('accepts a plain name and refuses folders, hidden names, odd characters and other extensions', () => {
    expect(validateFromWebview(msg('run-1-metrics.csv'))).toMatchObject({ fileName: 'run-1-metrics.csv' });
    for (const bad of [
      '../x.csv',
      'a/b.csv',
      'a\\b.csv',
      '.hidden.csv',
      'x.exe',
      'x.csv.exe',
      'c:x.csv',
      `${'a'.repeat(120)}.csv`,
    ]) {
      expect(() => validateFromWebview(msg(bad)), bad).toThrow(
        /message\(export\/save\)\.fileName: expected a plain file name/,
      );
    }
  });

  it('refuses content over the size limit', () => {
    expect(() => validateFromWebview(msg('x.csv', 'a'.repeat(MAX_EXPORT_CHARS + 1)))).toThrow(
      /content: expected at most/,
    );
  });

  it('decodes PNG base64, writes text as UTF-8, and refuses a mismatch', () => {
    expect(Array.from(exportBytes('a.png', 'png', PNG.toString('base64')))).toEqual(Array.from(PNG));
    expect(Buffer.from(exportBytes('a.svg', 'svg', '<svg>·</svg>')).toString('utf8')).toBe('<svg>·</svg>');
    expect(() => exportBytes('a.png', 'png', Buffer.from('not a png at all, no signature').toString('base64'))).toThrow(
      /is not a PNG image/,
    );
    expect(() => exportBytes('a.csv', 'svg', '<svg/>')).toThrow(/should end in \.svg/);
  });
});
