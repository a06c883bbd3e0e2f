/**
 * "Export what you see": the small "…" menu each chart and heatmap carries (Save as PNG, Save
 * as SVG, and for tables Save as CSV), and the saving itself. One call adds a menu:
 *
 *   box.append(exportMenu(ctx.host, 'Export loss chart', [svgItems(() => chartSvg(), 'loss'), csvItem(...)]))
 *
 * - SVG is what svg.ts writes from the chart's data. PNG is that same SVG rasterised at 2×
 *   (so title, axes, tick labels and legend are in the picture, and crisp), through an
 *   `<img>` of a blob: URL — which the CSP of the webview and of the report allows
 *   (`img-src … blob:`) — drawn on a canvas.
 * - In VS Code the page posts `export/save` (src/protocol/webview.ts) and the extension asks
 *   where to save; in the standalone report (and with no host) the browser downloads the file
 *   through a blob link.
 *
 * The menu is a WAI-ARIA menu button: Enter, Space or ↓ open it on its first item, ↑/↓ move,
 * Home/End jump, Escape closes and returns focus to the button, Tab or a click elsewhere closes.
 *
 * Leaves out: what goes in each file (svg.ts, src/common/csv.ts, the panels).
 */

import type { ExportKind, FromWebview } from '../../src/protocol/webview';
import { h } from '../base/dom';
import type { Host } from '../host';
import type { SvgDoc } from '../base/svg';

/** A file ready to save. */
export interface ExportFile {
  readonly fileName: string;
  readonly kind: ExportKind;
  /** Text (SVG, CSV) or the PNG's bytes. */
  readonly content: string | Uint8Array;
}

/** One entry of a menu: its label and how to make the file. */
export interface ExportItem {
  readonly label: string;
  readonly kind: ExportKind;
  make(): Promise<ExportFile> | ExportFile;
}

/** Scale of PNG exports relative to CSS pixels. */
export const PNG_SCALE = 2;

/** Rasterises an SVG at `scale`× to PNG bytes. */
export async function svgToPng(doc: SvgDoc, scale = PNG_SCALE): Promise<Uint8Array> {
  const url = URL.createObjectURL(new Blob([doc.svg], { type: 'image/svg+xml' }));
  try {
    const img = new Image();
    img.decoding = 'async';
    await new Promise<void>((resolve, reject) => {
      img.onload = (): void => resolve();
      img.onerror = (): void => reject(new Error('the browser could not draw the exported SVG'));
      img.src = url;
    });
    const canvas = document.createElement('canvas');
    canvas.width = Math.round(doc.width * scale);
    canvas.height = Math.round(doc.height * scale);
    const ctx = canvas.getContext('2d');
    if (!ctx) throw new Error('no 2D canvas to draw the PNG on');
    ctx.drawImage(img, 0, 0, canvas.width, canvas.height);
    const blob = await new Promise<Blob | null>((resolve) => canvas.toBlob(resolve, 'image/png'));
    if (!blob) throw new Error(`the browser could not encode a ${canvas.width} × ${canvas.height} PNG`);
    return new Uint8Array(await blob.arrayBuffer());
  } finally {
    URL.revokeObjectURL(url);
  }
}

/** The PNG and SVG entries of a chart or heatmap drawn by `svg()`, saved as `name(kind)`. */
export function imageItems(svg: () => SvgDoc, name: (kind: ExportKind) => string): ExportItem[] {
  return [
    {
      label: 'Save as PNG',
      kind: 'png',
      make: async () => ({ fileName: name('png'), kind: 'png', content: await svgToPng(svg()) }),
    },
    { label: 'Save as SVG', kind: 'svg', make: () => ({ fileName: name('svg'), kind: 'svg', content: svg().svg }) },
  ];
}

/** A CSV entry. */
export function csvItem(label: string, fileName: () => string, csv: () => string): ExportItem {
  return { label, kind: 'csv', make: () => ({ fileName: fileName(), kind: 'csv', content: csv() }) };
}

function base64(bytes: Uint8Array): string {
  let s = '';
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(s);
}

const MIME: Readonly<Record<ExportKind, string>> = { png: 'image/png', svg: 'image/svg+xml', csv: 'text/csv' };

/** Saves a file: through the extension in VS Code, as a browser download elsewhere. */
export function saveExport(host: Host, file: ExportFile): void {
  if (host.kind === 'vscode') {
    const content = typeof file.content === 'string' ? file.content : base64(file.content);
    host.post({ type: 'export/save', fileName: file.fileName, kind: file.kind, content } satisfies FromWebview);
    return;
  }
  const part: BlobPart = typeof file.content === 'string' ? file.content : (file.content.slice().buffer as ArrayBuffer);
  const url = URL.createObjectURL(new Blob([part], { type: MIME[file.kind] }));
  const a = h('a', { attrs: { href: url, download: file.fileName, hidden: true } });
  document.body.appendChild(a);
  a.click();
  a.remove();
  // Revoke later: the download starts asynchronously.
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

/**
 * A "…" menu button with `items`; `label` names what it exports ("Export loss chart"). Items
 * run when chosen; a failure goes to `problem` (the dashboard's error banner).
 */
export function exportMenu(
  host: Host,
  label: string,
  items: () => readonly ExportItem[],
  problem: (text: string) => void,
): HTMLElement {
  const button = h(
    'button',
    {
      className: 'export-button',
      attrs: { type: 'button', 'aria-haspopup': 'menu', 'aria-expanded': 'false', 'aria-label': label, title: label },
    },
    '⋯',
  );
  const menu = h('div', { className: 'export-list', attrs: { role: 'menu', 'aria-label': label, hidden: true } });
  const root = h('div', { className: 'export-menu' }, button, menu);
  const entries = (): HTMLButtonElement[] => [...menu.querySelectorAll<HTMLButtonElement>('[role="menuitem"]')];
  const onOutside = (e: Event): void => {
    if (!root.contains(e.target as Node)) close(false);
  };
  const close = (refocus: boolean): void => {
    if (menu.hidden) return;
    menu.hidden = true;
    button.setAttribute('aria-expanded', 'false');
    document.removeEventListener('pointerdown', onOutside, true);
    if (refocus) button.focus();
  };
  const run = async (item: ExportItem): Promise<void> => {
    close(true);
    root.dataset.busy = item.kind;
    try {
      saveExport(host, await item.make());
      root.dataset.saved = item.kind;
    } catch (e) {
      problem(`Could not export ${item.kind.toUpperCase()}: ${(e as Error).message}.`);
    } finally {
      delete root.dataset.busy;
    }
  };
  const openMenu = (focusLast = false): void => {
    menu.replaceChildren(
      ...items().map((it) =>
        h(
          'button',
          {
            className: 'export-item',
            attrs: { type: 'button', role: 'menuitem', tabindex: -1, 'data-kind': it.kind },
            on: { click: () => void run(it), pointerenter: (e) => (e.target as HTMLElement).focus() },
          },
          it.label,
        ),
      ),
    );
    menu.hidden = false;
    button.setAttribute('aria-expanded', 'true');
    document.addEventListener('pointerdown', onOutside, true);
    const list = entries();
    (focusLast ? list[list.length - 1] : list[0])?.focus();
  };
  button.addEventListener('click', () => (menu.hidden ? openMenu() : close(true)));
  button.addEventListener('keydown', (e) => {
    if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
      e.preventDefault();
      openMenu(e.key === 'ArrowUp');
    }
  });
  menu.addEventListener('keydown', (e) => {
    const list = entries();
    const i = list.indexOf(document.activeElement as HTMLButtonElement);
    const go = (j: number): void => list[(j + list.length) % list.length]?.focus();
    if (e.key === 'ArrowDown') go(i + 1);
    else if (e.key === 'ArrowUp') go(i - 1);
    else if (e.key === 'Home') go(0);
    else if (e.key === 'End') go(list.length - 1);
    else if (e.key === 'Escape') close(true);
    else if (e.key === 'Tab') close(false);
    else return;
    if (e.key !== 'Tab') e.preventDefault();
  });
  return root;
}
