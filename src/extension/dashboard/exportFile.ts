/**
 * The bytes of a file the dashboard exported (`export/save`, already validated against its
 * schema): a PNG arrives as base64 and must decode to a PNG, SVG and CSV arrive as text and are
 * written as UTF-8; the file name's extension must match the kind. Free of `vscode`, so the
 * unit tests check it; exportSave.ts asks where to write and writes.
 *
 * Leaves out: the dialog and the file system (exportSave.ts).
 */

import { base64ToBytes } from '../../common/wireCodec';
import type { ExportKind } from '../../protocol/webview';

/** The 8 bytes every PNG starts with. */
const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

/** What to write for an export; throws with a one-line reason when the content is not what its kind says. */
export function exportBytes(fileName: string, kind: ExportKind, content: string): Uint8Array {
  if (!fileName.toLowerCase().endsWith(`.${kind}`))
    throw new Error(
      `The export "${fileName}" should end in .${kind} for a ${kind.toUpperCase()} file; this is a ` +
        `bug in the dashboard, please report it.`,
    );
  if (kind !== 'png') return new TextEncoder().encode(content);
  let bytes: Uint8Array;
  try {
    bytes = base64ToBytes(content, fileName);
  } catch {
    bytes = new Uint8Array(0);
  }
  if (bytes.length < 24 || PNG_SIGNATURE.some((b, i) => bytes[i] !== b))
    throw new Error(
      `The export "${fileName}" is not a PNG image (${bytes.length} bytes without the PNG ` +
        `signature); try Save as SVG instead.`,
    );
  return bytes;
}
