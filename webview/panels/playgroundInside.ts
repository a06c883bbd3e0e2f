/**
 * "Inside the model", below the playground's decode: the logit lens of the playground's text
 * (model/lens → model/didLens | model/didFail) and head ablation (model/ablate →
 * model/didAblate | model/didFail), both answered by the host's model worker with the
 * lab's one implementation of each (src/lab/inference/lens.ts, ablate.ts) — the numbers
 * `attention-lab lens` and `attention-lab heads --ablate` compute. A decoder-only run reads
 * the prompt; an encoder-decoder the source and a target prefix (empty: the model's own
 * translation). Toggling a head reruns the ablation after a short pause (debounced); Reset
 * switches every head back on. Inputs longer than the context are cut to it (the host says
 * how, and the note is shown). Everything is per run: the heads switched off and the target
 * (persisted UI state), and the last lens and ablation (kept while the page lives). A
 * request with no answer for 60 s fails visibly. In the standalone report there is no model
 * to ask: the section says so and its controls are off.
 *
 * Leaves out: drawing the grid and the comparison (lensGrid.ts, ablationView.ts).
 */

import type { HeadRefData, LensInputData } from '../../src/protocol/analysis';
import type { FromWebview } from '../../src/protocol/webview';
import { validateFromWebview } from '../../src/protocol/webview';
import { h, replaceChildren } from '../base/dom';
import { showToken } from '../base/format';
import type { PlaygroundAnalysis, RunEntry, StoreEvent } from '../store';
import { ablationResult, headOfKey, headToggles, stacksOf } from './ablationView';
import { lensGrid } from './lensGrid';
import type { PanelContext } from './panel';

/** Past the host's own limit for a lens or ablation (10 minutes, which it answers with its error): the host is gone. */
const TIMEOUT_MS = 630_000;
/** Pause after the last toggle before the ablation reruns. */
export const ABLATE_DEBOUNCE_MS = 300;

/** The lens and ablation section of the playground. */
export class PlaygroundInside {
  readonly el = h('section', {
    className: 'pg-inside',
    attrs: { 'aria-label': 'Inside the model: logit lens and head ablation' },
  });
  private readonly lensStatus = h('p', { className: 'lens-status', attrs: { 'aria-live': 'polite' } });
  private readonly lensBox = h('div', { className: 'lens-box' });
  private readonly ablateStatus = h('p', { className: 'ab-status', attrs: { 'aria-live': 'polite' } });
  private readonly toggles = h('div', { className: 'ab-toggles' });
  private readonly ablateBox = h('div', { className: 'ab-box' });
  /** The one floating top-k box of the lens grid (position: fixed, so the grid's scroller does not clip it). */
  private readonly tip = h('div', { className: 'lens-tip', attrs: { role: 'tooltip', hidden: true } });
  /** The last lens and ablation of each run (by run id). */
  private readonly lens = new Map<string, PlaygroundAnalysis>();
  private readonly ablation = new Map<string, PlaygroundAnalysis>();
  private debounce: ReturnType<typeof setTimeout> | null = null;
  /**
   * What the lens and ablation areas show now (request id and state), so unrelated redraws leave them (and the focus)
   * alone.
   */
  private drawn = { lens: '', ablate: '' };
  private readonly timers = new Map<number, ReturnType<typeof setTimeout>>();

  constructor(private readonly ctx: PanelContext) {}

  /** Whether a store change is an answer this section shows. */
  wants(ev: StoreEvent): boolean {
    return ev.kind === 'analysis';
  }

  /** Rebuilds the section for the selected run. */
  render(): void {
    const run = this.ctx.run();
    const host = this.ctx.host;
    if (!host.interactive) {
      replaceChildren(
        this.el,
        h('h3', {}, 'Inside the model'),
        h(
          'p',
          { className: 'note offline', attrs: { role: 'note', 'data-off': 'lens-ablation' } },
          offlineText(host.kind),
        ),
      );
      return;
    }
    const encdec = run?.summary.kind === 'encoder-decoder';
    const ui = this.ctx.ui;
    const target =
      encdec && run
        ? h(
            'span',
            { className: 'pg-knob' },
            h('label', { attrs: { for: 'pg-target' } }, 'target prefix'),
            h('input', {
              attrs: {
                id: 'pg-target',
                type: 'text',
                spellcheck: false,
                placeholder: 'empty: the model’s translation',
                value: ui.playgroundTargets[run.id] ?? '',
              },
              on: {
                input: (e) => {
                  ui.playgroundTargets[run.id] = (e.target as HTMLInputElement).value;
                  this.ctx.saveUi();
                },
              },
            }),
          )
        : null;
    const topK = h(
      'span',
      { className: 'pg-knob' },
      h('label', { attrs: { for: 'pg-lens-k' } }, 'top-k'),
      h('input', {
        attrs: { id: 'pg-lens-k', type: 'number', min: 1, max: 20, step: 1, value: ui.lensTopK },
        on: {
          change: (e) => {
            const v = Math.round(Number((e.target as HTMLInputElement).value));
            if (Number.isFinite(v)) ui.lensTopK = Math.min(20, Math.max(1, v));
            (e.target as HTMLInputElement).value = String(ui.lensTopK);
            this.ctx.saveUi();
          },
        },
      }),
    );
    const lensButton = h(
      'button',
      { className: 'primary', attrs: { type: 'button', id: 'pg-lens', disabled: !run } },
      'Show logit lens',
    );
    lensButton.addEventListener('click', () => this.requestLens());
    const compare = h('button', { attrs: { type: 'button', id: 'pg-ablate', disabled: !run } }, 'Compare');
    compare.addEventListener('click', () => this.requestAblation());
    const reset = h(
      'button',
      { attrs: { type: 'button', id: 'pg-ablate-reset', disabled: !run } },
      'Reset (all heads on)',
    );
    reset.addEventListener('click', () => this.reset());
    replaceChildren(
      this.el,
      h(
        'h3',
        {},
        'Inside the model ',
        h(
          'span',
          { className: 'hint' },
          encdec ? '(for the source above and a target prefix)' : '(for the prompt above)',
        ),
      ),
      h('div', { className: 'pg-knobs' }, target, topK),
      h(
        'h4',
        {},
        'Logit lens ',
        h(
          'span',
          { className: 'hint' },
          '(what the model would predict next if it stopped after each layer; hover or focus a cell for its top-k)',
        ),
      ),
      lensButton,
      this.lensStatus,
      this.lensBox,
      h(
        'h4',
        {},
        'Head ablation ',
        h(
          'span',
          { className: 'hint' },
          '(switch heads off — their output zeroed — and compare; changes rerun by themselves)',
        ),
      ),
      this.toggles,
      h('div', { className: 'ab-actions' }, compare, reset),
      this.ablateStatus,
      this.ablateBox,
      this.tip,
    );
    this.drawToggles(run);
    this.drawn = { lens: '', ablate: '' };
    this.show();
  }

  /** Redraws the results of the selected run where they changed. */
  show(): void {
    const run = this.ctx.run();
    if (!this.ctx.host.interactive) return;
    const lens = run ? this.lens.get(run.id) : undefined;
    const ab = run ? this.ablation.get(run.id) : undefined;
    const state = (s: PlaygroundAnalysis | undefined): string =>
      s ? `${s.id}:${s.output ? 'done' : s.error ? 'failed' : 'waiting'}` : `none:${run?.id ?? ''}`;
    if (state(lens) !== this.drawn.lens) {
      this.drawn.lens = state(lens);
      this.showLens(lens);
    }
    if (state(ab) !== this.drawn.ablate) {
      this.drawn.ablate = state(ab);
      this.showAblation(run, ab);
    }
  }

  private showLens(lens: PlaygroundAnalysis | undefined): void {
    this.tip.hidden = true;
    if (!lens) {
      this.lensStatus.textContent = '';
      replaceChildren(this.lensBox);
    } else if (lens.kind === 'lens') {
      this.lensStatus.textContent = lens.error
        ? `Logit lens failed: ${lens.error.message}`
        : lens.output
          ? (lens.output.truncation ?? '')
          : 'Computing the logit lens…';
      this.lensStatus.classList.toggle('error', lens.error !== null);
      const src = lens.output?.src;
      replaceChildren(
        this.lensBox,
        src
          ? h(
              'p',
              { className: 'lens-src' },
              'Source: ',
              ...src.map((t) => h('span', { className: 'chip' }, showToken(t))),
            )
          : null,
        lens.output ? lensGrid(lens.output, this.tip) : null,
      );
    }
  }

  private showAblation(run: RunEntry | undefined, ab: PlaygroundAnalysis | undefined): void {
    if (!ab || ab.kind !== 'ablate') {
      this.ablateStatus.textContent =
        run && this.inputOf(run) === null ? 'Type a text above, then switch heads off or press Compare.' : '';
      this.ablateStatus.classList.remove('error');
      replaceChildren(this.ablateBox);
      return;
    }
    this.ablateStatus.textContent = ab.error
      ? `Ablation failed: ${ab.error.message}`
      : ab.output
        ? (ab.output.truncation ?? '')
        : `Comparing with ${ab.off.length} head(s) off…`;
    this.ablateStatus.classList.toggle('error', ab.error !== null);
    replaceChildren(this.ablateBox, ab.output ? ablationResult(ab.output) : null);
  }

  /** Stops the debounce (the tab was hidden). */
  hide(): void {
    if (this.debounce !== null) clearTimeout(this.debounce);
    this.debounce = null;
    this.tip.hidden = true;
  }

  private drawToggles(run: RunEntry | undefined): void {
    const stacks = stacksOf(run?.summary.model?.config);
    if (!run || !stacks) {
      replaceChildren(
        this.toggles,
        h(
          'p',
          { className: 'note' },
          run
            ? 'This run does not say how many layers and heads its model has; ablation needs them.'
            : 'No run selected.',
        ),
      );
      return;
    }
    const off = new Set(this.ctx.ui.playgroundOff[run.id] ?? []);
    replaceChildren(
      this.toggles,
      headToggles(stacks, off, true, (key) => this.toggle(run, key)),
    );
  }

  private toggle(run: RunEntry, key: string): void {
    const off = new Set(this.ctx.ui.playgroundOff[run.id] ?? []);
    if (off.has(key)) off.delete(key);
    else off.add(key);
    this.ctx.ui.playgroundOff[run.id] = [...off];
    this.ctx.saveUi();
    this.drawToggles(run);
    this.toggles.querySelector<HTMLButtonElement>(`button[data-head="${key}"]`)?.focus();
    this.schedule();
  }

  private reset(): void {
    const run = this.ctx.run();
    if (!run) return;
    this.ctx.ui.playgroundOff[run.id] = [];
    this.ctx.saveUi();
    this.drawToggles(run);
    this.schedule();
  }

  /** Reruns the ablation once the toggles have been still for ABLATE_DEBOUNCE_MS. */
  private schedule(): void {
    if (this.debounce !== null) clearTimeout(this.debounce);
    this.debounce = setTimeout(() => {
      this.debounce = null;
      const run = this.ctx.run();
      if (run && this.inputOf(run) !== null) this.requestAblation();
    }, ABLATE_DEBOUNCE_MS);
  }

  /** The lens input of the playground's text for `run`, or null when there is no text. */
  private inputOf(run: RunEntry): LensInputData | null {
    const text = this.ctx.ui.playgroundInputs[run.id] ?? '';
    if (text === '') return null;
    if (run.summary.kind === 'decoder-only') return { kind: 'decoder-only', prompt: text };
    const tgt = this.ctx.ui.playgroundTargets[run.id] ?? '';
    return tgt === '' ? { kind: 'encoder-decoder', src: text } : { kind: 'encoder-decoder', src: text, tgt };
  }

  /** Asks for the logit lens of the playground's text for the selected run. */
  requestLens(): void {
    const run = this.ctx.run();
    if (!run) return;
    const input = this.inputOf(run);
    if (!input) {
      this.lensStatus.textContent =
        `Type ` + `${run.summary.kind === 'encoder-decoder' ? 'a source sentence' : 'a prompt'}` + ` above first.`;
      return;
    }
    const s = this.ctx.store.beginAnalysis(run.id, input);
    if (
      this.send(
        { type: 'model/lens', id: s.id, runDir: run.summary.runDir, input, topK: this.ctx.ui.lensTopK, fit: true },
        s,
      )
    )
      this.lens.set(run.id, s);
    this.show();
  }

  private requestAblation(): void {
    const run = this.ctx.run();
    if (!run) return;
    const input = this.inputOf(run);
    if (!input) {
      this.ablateStatus.textContent =
        `Type ` + `${run.summary.kind === 'encoder-decoder' ? 'a source sentence' : 'a prompt'}` + ` above first.`;
      return;
    }
    const off: HeadRefData[] = (this.ctx.ui.playgroundOff[run.id] ?? []).map(headOfKey);
    const s = this.ctx.store.beginAnalysis(run.id, input, off);
    if (
      this.send(
        {
          type: 'model/ablate',
          id: s.id,
          runDir: run.summary.runDir,
          input,
          off,
          topK: this.ctx.ui.lensTopK,
          fit: true,
        },
        s,
      )
    )
      this.ablation.set(run.id, s);
    this.show();
  }

  /** Validates and posts a request, with its 60 s timeout; false when it was invalid. */
  private send(msg: FromWebview, s: PlaygroundAnalysis): boolean {
    try {
      validateFromWebview(msg);
    } catch (e) {
      this.ctx.problem(
        `The ${s.kind === 'lens' ? 'logit lens' : 'ablation'} request is invalid: ${(e as Error).message}`,
      );
      return false;
    }
    this.timers.set(
      s.id,
      setTimeout(() => {
        this.timers.delete(s.id);
        if (s.output || s.error) return;
        s.error = {
          code: `${s.kind}/timeout`,
          message:
            `No answer from the host for ${TIMEOUT_MS / 1000} s; try again, or check the ` +
            `Attention Lab output channel.`,
        };
        this.show();
      }, TIMEOUT_MS),
    );
    this.ctx.host.post(msg);
    return true;
  }

  /** An answer arrived: stop its timer (the caller redraws). */
  answered(id: number): void {
    const t = this.timers.get(id);
    if (t !== undefined) clearTimeout(t);
    this.timers.delete(id);
  }
}

/** What the section says where no model can answer. */
export function offlineText(kind: 'vscode' | 'report' | 'none'): string {
  const cli =
    'or run `attention-lab lens --run DIR --prompt TEXT` (`--src TEXT` for an encoder-decoder) and ' +
    '`attention-lab heads --run DIR --ablate`';
  return kind === 'report'
    ? `The logit lens and head ablation are off in this standalone report: they need the run's live ` +
        `model. Open the run in VS Code (Attention Lab: Open Dashboard) ${cli}.`
    : `The logit lens and head ablation are off: this page has no host to run the model. Open the ` +
        `dashboard in VS Code ${cli}.`;
}
