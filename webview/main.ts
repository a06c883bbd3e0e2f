/**
 * Entry point of the dashboard bundle (dist/webview/dashboard.js + dashboard.css): finds the
 * root element (`#attention-lab-root`, else a new <main> in <body>), detects the host
 * (webview/README.md has the contract) and starts the app. Runs once, when the script loads;
 * the bundle exports nothing.
 *
 * Leaves out: everything else (app.ts and below).
 */

import 'uplot/dist/uPlot.min.css';
import './dashboard.css';
import { App } from './app';
import { detectHost } from './host';

function start(): void {
  let root = document.getElementById('attention-lab-root');
  if (!root) {
    root = document.createElement('main');
    root.id = 'attention-lab-root';
    document.body.appendChild(root);
  }
  root.classList.add('attention-lab');
  const host = detectHost();
  document.body.dataset.host = host.kind;
  const app = new App(root, host);
  host.listen(
    (raw) => app.receive(raw),
    (text) => app.problem(text),
  );
}

if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start, { once: true });
else start();
