import { describe, expect, it } from 'vitest';
import { dashboardCsp, dashboardHtml, makeNonce } from '../../../../src/extension/dashboard/dashboardHtml';

describe('dashboard page', () => {
  const page = {
    cspSource: 'https://x.vscode-cdn.net',
    nonce: 'abc123',
    scriptUri: 'https://x.vscode-cdn.net/dist/webview/dashboard.js',
    styleUri: 'https://x.vscode-cdn.net/dist/webview/dashboard.css',
    title: 'Attention <Lab>',
  };

  it('allows nothing by default, and only nonce-tagged scripts', () => {
    const csp = dashboardCsp(page.cspSource, page.nonce);
    expect(csp.split('; ')[0]).toBe("default-src 'none'");
    expect(csp).toContain("script-src 'nonce-abc123'");
    expect(csp).not.toMatch(/unsafe-(inline|eval)/);
    expect(csp).toContain(`img-src ${page.cspSource} data: blob:`);
  });

  it('loads the bundle with the nonce into the root element the dashboard looks for', () => {
    const html = dashboardHtml(page);
    expect(html).toContain(`<script nonce="abc123" src="${page.scriptUri}"></script>`);
    expect(html).toContain(`<link rel="stylesheet" href="${page.styleUri}" nonce="abc123">`);
    expect(html).toContain('<main id="attention-lab-root"></main>');
    expect(html).toContain('<title>Attention &lt;Lab&gt;</title>');
    expect((html.match(/<script/g) ?? []).length).toBe(1);
  });

  it('makes a fresh 128-bit nonce each time', () => {
    const a = makeNonce();
    expect(Buffer.from(a, 'base64')).toHaveLength(16);
    expect(makeNonce()).not.toBe(a);
  });
});
