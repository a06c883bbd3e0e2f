// Driving VS Code's web workbench with playwright: the command palette, quick inputs, the
// status bar, notifications (read from the notification centre: the smoke-test driver
// mode turns toasts off), the activity bar, tree rows, editors, and the dashboard webview
// (two nested iframes: VS Code's host page, then the extension's page).
import { sleep } from './codeServer.mjs';

/** Workbench actions on one page. */
/** Waits for `locator` to be visible; the error names `what`. */
export async function expectVisible(locator, what, timeout = 30_000) {
  try {
    await locator.first().waitFor({ state: 'visible', timeout });
  } catch {
    throw new Error(`${what} did not appear within ${timeout / 1000} s`);
  }
}

/** Polls a locator's text until `ok(text)` holds; returns it, or throws with the last text seen. */
export async function waitForText(locator, ok, timeout = 60_000) {
  const end = Date.now() + timeout;
  let text = '';
  while (Date.now() < end) {
    text = ((await locator.textContent({ timeout: 1_000 }).catch(() => '')) ?? '').trim();
    if (ok(text)) return text;
    await sleep(250);
  }
  throw new Error(`timed out waiting for the text of ${locator}; it read ${JSON.stringify(text)}`);
}

export class Workbench {
  constructor(page, log = console.log) {
    this.page = page;
    this.log = log;
  }

  /**
   * Runs a command by its palette title. Contributed commands appear once the extension
   * host has scanned the extensions (seconds after the workbench restores), so retry.
   */
  async runCommand(title, timeoutMs = 60_000) {
    const { page } = this;
    const end = Date.now() + timeoutMs;
    for (;;) {
      // Escape only closes an open quick input: in an editor it would drop the selection.
      if (
        await page
          .locator('.quick-input-widget')
          .isVisible()
          .catch(() => false)
      )
        await page.keyboard.press('Escape');
      await page.keyboard.press('F1');
      const input = page.locator('.quick-input-widget input');
      await input.waitFor({ state: 'visible', timeout: 20_000 });
      await input.fill(`>${title}`);
      const row = page.locator('.quick-input-list .monaco-list-row', { hasText: title }).first();
      try {
        await row.waitFor({ timeout: 2_000 });
        const label = (await row.textContent()) ?? '';
        // Exact title (the palette also lists prefixes such as "… Decode with This Run…").
        const rows = page.locator('.quick-input-list .monaco-list-row');
        const n = await rows.count();
        let picked = false;
        for (let i = 0; i < n && !picked; i++) {
          const aria = (await rows.nth(i).getAttribute('aria-label')) ?? '';
          if (aria.split(',')[0]?.trim() === title || aria.startsWith(`${title},`) || aria === title) {
            await rows.nth(i).click();
            picked = true;
          }
        }
        if (!picked) {
          this.log(`palette: no exact row for "${title}" (first: ${label}); pressing Enter`);
          await page.keyboard.press('Enter');
        }
        return;
      } catch {
        if (Date.now() > end) throw new Error(`The command "${title}" never appeared in the command palette.`);
        await sleep(1000);
      }
    }
  }

  /** Opens a workspace file by name through Quick Open (F1, then a file search instead of a command). */
  async openFile(name, timeoutMs = 30_000) {
    const { page } = this;
    const end = Date.now() + timeoutMs;
    for (;;) {
      await page.keyboard.press('Escape');
      await page.keyboard.press('F1');
      const input = page.locator('.quick-input-widget input');
      await input.waitFor({ state: 'visible', timeout: 20_000 });
      await input.fill(name);
      try {
        await page.locator('.quick-input-list .monaco-list-row', { hasText: name }).first().waitFor({ timeout: 3_000 });
        await page.keyboard.press('Enter');
        return;
      } catch {
        if (Date.now() > end) throw new Error(`Quick Open never listed ${name}.`);
      }
    }
  }

  /**
   * Opens `name`, selects all of it and runs Score Selection; resolves to the shaded spans'
   * locator and how many there are once at least `min` are drawn (throws if they never are).
   * `firstLine` is text of the file's first line, to know the editor shows it.
   */
  async scoreFile(name, firstLine, min = 20) {
    const { page } = this;
    await this.openFile(name);
    await page
      .locator('.editor-group-container.active .monaco-editor .view-line', { hasText: firstLine })
      .first()
      .waitFor({ state: 'visible', timeout: 30_000 });
    await page.locator('.editor-group-container.active .monaco-editor .view-lines').click();
    await page.keyboard.press('Control+A');
    await this.runCommand('Attention Lab: Score Selection');
    const shaded = page.locator('.editor-group-container.active .monaco-editor [class*="ced-"]');
    let shades = 0;
    for (let i = 0; i < 60 && shades < min; i++, await sleep(250)) shades = await shaded.count();
    if (shades < min) throw new Error(`Score Selection decorated only ${shades} spans of ${name}`);
    return { shaded, shades };
  }

  /** Answers the open input box with `text`. */
  async answerInput(text, timeoutMs = 20_000) {
    const input = this.page.locator('.quick-input-widget input');
    await input.waitFor({ state: 'visible', timeout: timeoutMs });
    await input.fill(text);
    await this.page.keyboard.press('Enter');
  }

  /** Text of the status-bar item whose text contains `needle`, or null. */
  async statusItem(needle) {
    const items = this.page.locator('.statusbar-item', { hasText: needle });
    if ((await items.count()) === 0) return null;
    return ((await items.first().textContent()) ?? '').trim();
  }

  /** Waits until `predicate(text)` holds for the status item containing `needle`; returns the text. */
  async waitForStatus(needle, predicate, timeoutMs) {
    const end = Date.now() + timeoutMs;
    let last = null;
    for (;;) {
      last = await this.statusItem(needle);
      if (last !== null && predicate(last)) return last;
      if (Date.now() > end)
        throw new Error(`Status bar never showed what was expected for "${needle}"; last: ${JSON.stringify(last)}`);
      await sleep(200);
    }
  }

  /** Messages in the notification centre. */
  async notifications() {
    const { page } = this;
    const center = page.locator('.notifications-center');
    if (!(await center.isVisible().catch(() => false))) await page.locator('#status\\.notifications').click();
    await sleep(300);
    const items = page.locator('.notifications-center .notification-list-item-message');
    const out = [];
    for (let i = 0; i < (await items.count()); i++) out.push(((await items.nth(i).textContent()) ?? '').trim());
    await page.keyboard.press('Escape');
    return out;
  }

  /** Opens an activity-bar container by its title (e.g. "Attention Lab"); a no-op when it is already showing. */
  async openActivity(title) {
    const item = this.page.locator(`.activitybar .action-item:has([aria-label^="${title}"])`).first();
    await item.waitFor({ timeout: 30_000 });
    const checked =
      (await item.getAttribute('aria-checked')) === 'true' ||
      ((await item.getAttribute('class')) ?? '').includes('checked');
    const sidebar = await this.page
      .locator('.part.sidebar')
      .isVisible()
      .catch(() => false);
    if (checked && sidebar) return;
    await item.locator(`[aria-label^="${title}"]`).first().click();
  }

  /** The dashboard page (inside the two webview iframes). */
  dashboard() {
    return this.page.frameLocator('iframe.webview.ready').frameLocator('iframe#active-frame');
  }

  /** The visible lines of every visible text editor, one string per editor. */
  async editorTexts() {
    return this.page.locator('.editor-group-container .monaco-editor .view-lines').evaluateAll((els) =>
      els.map((el) =>
        [...el.querySelectorAll('.view-line')]
          .sort((a, b) => parseFloat(a.style.top) - parseFloat(b.style.top))
          .map((l) => l.textContent.replace(/\u00a0/g, ' '))
          .join('\n'),
      ),
    );
  }

  /** Saves a PNG screenshot of the whole window. */
  async screenshot(file) {
    await this.page.screenshot({ path: file });
    this.log(`screenshot ${file}`);
  }
}
