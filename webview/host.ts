/**
 * Where the dashboard runs, and how it talks to what hosts it (the contract is written down
 * in webview/README.md):
 *
 * - **Report** (standalone page from `attention-lab report`): the page embeds
 *   `<script type="application/json" id="attention-lab-data">` holding
 *   `{ "format": "attention-lab-report", "version": 1, "messages": ToWebview[] }` with typed
 *   arrays in the tagged base64 form (src/common/wireCodec.ts). Those messages are replayed in order; there
 *   is nobody to answer requests, so decoding and training controls are off.
 * - **VS Code webview**: the host page provides `acquireVsCodeApi()`. Messages arrive as window
 *   `message` events; the page posts `webview/ready` once it listens (nobody posts before the
 *   receiver is ready: docs/ARCHITECTURE.md, "The protocol"); UI state persists through `getState` / `setState`.
 *
 * Report detection wins, so a report opened inside a webview still shows its own data.
 *
 * Leaves out: validation (app.ts validates every message on arrival) and the UI.
 */

import type { FromWebview } from '../src/protocol/webview';
import { decodeArrays } from '../src/common/wireCodec';

/** The API object VS Code gives a webview. */
export interface VsCodeApi {
  postMessage(message: unknown): void;
  getState(): unknown;
  setState(state: unknown): void;
}

/** The dashboard's view of its host. */
export interface Host {
  readonly kind: 'vscode' | 'report' | 'none';
  /** Whether the model requests (model/decode, …) and train/control will be answered. */
  readonly interactive: boolean;
  post(msg: FromWebview): void;
  getState(): unknown;
  setState(state: unknown): void;
  /**
   * Starts delivering messages to `onMessage` — typed arrays revived from their tagged JSON
   * form, otherwise not yet validated — and problems of the host itself to `onProblem`.
   */
  listen(onMessage: (raw: unknown) => void, onProblem: (text: string) => void): void;
  /** Why the page has no live host (shown by the playground), or null. */
  readonly offlineReason: string | null;
}

/** The id of the embedded data element of a report page. */
export const REPORT_DATA_ID = 'attention-lab-data';
/** The `format` field of embedded report data. */
export const REPORT_FORMAT = 'attention-lab-report';

function vscodeHost(api: VsCodeApi): Host {
  return {
    kind: 'vscode',
    interactive: true,
    offlineReason: null,
    post: (msg) => api.postMessage(msg),
    getState: () => api.getState(),
    setState: (s) => api.setState(s),
    listen(onMessage, onProblem): void {
      window.addEventListener('message', (e: MessageEvent) => {
        let decoded: unknown;
        try {
          decoded = decodeArrays(e.data);
        } catch (err) {
          onProblem((err as Error).message);
          return;
        }
        onMessage(decoded);
      });
      api.postMessage({ type: 'webview/ready' } satisfies FromWebview);
    },
  };
}

function reportHost(el: HTMLElement): Host {
  let state: unknown = undefined;
  return {
    kind: 'report',
    interactive: false,
    offlineReason:
      'This is a standalone report: it holds the run’s metrics and attention snapshots but no live ' +
      'model. To decode, open the run in VS Code (Attention Lab: Open Dashboard) or run ' +
      '`attention-lab decode --run DIR --prompt TEXT`.',
    post: () => undefined,
    getState: () => state,
    setState: (s) => {
      state = s;
    },
    listen(onMessage, onProblem): void {
      let payload: unknown;
      try {
        payload = JSON.parse(el.textContent ?? '');
      } catch (e) {
        onProblem(`The embedded report data is not valid JSON (${(e as Error).message}); regenerate the report.`);
        return;
      }
      const p = typeof payload === 'object' && payload !== null ? (payload as Record<string, unknown>) : {};
      if (p.format !== REPORT_FORMAT || p.version !== 1 || !Array.isArray(p.messages)) {
        onProblem(
          `The embedded data is not an Attention Lab report (format ${JSON.stringify(p.format)}, ` +
            `version ${JSON.stringify(p.version)}); regenerate it with this version of attention-lab.`,
        );
        return;
      }
      (p.messages as unknown[]).forEach((m, i) => {
        let decoded: unknown;
        try {
          decoded = decodeArrays(m, `report message ${i}`);
        } catch (e) {
          onProblem((e as Error).message);
          return;
        }
        onMessage(decoded);
      });
    },
  };
}

function noHost(): Host {
  return {
    kind: 'none',
    interactive: false,
    offlineReason: 'No host: this page was opened without a VS Code webview or embedded report data.',
    post: () => undefined,
    getState: () => undefined,
    setState: () => undefined,
    listen(_onMessage, onProblem): void {
      onProblem(
        'No data: open the dashboard from VS Code (Attention Lab: Open Dashboard) or create a ' +
          'report with `attention-lab report --run DIR`.',
      );
    },
  };
}

/** Detects the host of this page. */
export function detectHost(): Host {
  const el = document.getElementById(REPORT_DATA_ID);
  if (el) return reportHost(el);
  const acquire = (globalThis as { acquireVsCodeApi?: unknown }).acquireVsCodeApi;
  if (typeof acquire === 'function') return vscodeHost((acquire as () => VsCodeApi)());
  return noHost();
}
