/**
 * The bar above the Attention and Heads tabs that says what they show and runs the model on
 * a text: "Training snapshots" (the run's probe sample over training) or "Your text" (the
 * model now, on what is typed in the box — any run, trained here or imported, with or
 * without snapshots). The text box takes newlines; Show (or Ctrl+Enter) asks the host for
 * the attention (`model/attend`), which both tabs then draw; "Logit lens and ablation…"
 * opens the playground on the same text. The text is kept per run (in
 * the saved UI state), so switching runs never shows another run's text or result, and after
 * a reload a run's text is asked for again.
 *
 * Leaves out: drawing what came back (attention.ts, heads.ts).
 */

import type { FromWebview } from '../../src/protocol/webview';
import { h } from '../base/dom';
import type { RunEntry } from '../store';
import type { PanelContext } from './panel';

/** What the Attention and Heads tabs show for a run. */
export type InspectView = 'training' | 'text';

/** The view of `run`: the text when chosen or when the run has no snapshots to show. */
export function inspectView(ctx: PanelContext, run: RunEntry | undefined): InspectView {
  return ctx.ui.attention.view === 'text' || !run || run.snapshots.length === 0 ? 'text' : 'training';
}

/** One tab's copy of the bar (both read and write the same state). */
export class InspectBar {
  readonly el: HTMLElement;
  private readonly training = h(
    'button',
    { attrs: { type: 'button', role: 'radio', 'data-view': 'training' } },
    'Training snapshots',
  );
  private readonly yours = h('button', { attrs: { type: 'button', role: 'radio', 'data-view': 'text' } }, 'Your text');
  private readonly input: HTMLTextAreaElement;
  private readonly show = h('button', { className: 'primary', attrs: { type: 'button' } }, 'Show');
  private readonly inside = h(
    'button',
    {
      className: 'inspect-inside',
      attrs: {
        type: 'button',
        title:
          "Opens the Playground on this text: the logit lens (each layer's next-token guess) and " +
          'head ablation (switch heads off and compare)',
      },
    },
    'Logit lens and ablation…',
  );
  private readonly status = h('p', { className: 'note inspect-status', attrs: { 'aria-live': 'polite' } });
  private readonly form: HTMLElement;

  constructor(
    private readonly ctx: PanelContext,
    id: string,
  ) {
    this.input = h('textarea', {
      className: 'inspect-text',
      attrs: {
        id: `${id}-text`,
        rows: 2,
        spellcheck: false,
        placeholder: 'Type or paste a text; Show runs the model on it (Ctrl+Enter)',
        'aria-label': 'Text to run the model on',
      },
      on: {
        input: () => {
          const run = ctx.run();
          if (run) ctx.ui.inspectTexts[run.id] = this.input.value;
          ctx.saveUi();
        },
        keydown: (e) => {
          const k = e as KeyboardEvent;
          if (k.key === 'Enter' && (k.ctrlKey || k.metaKey)) {
            k.preventDefault();
            this.submit();
          }
        },
      },
    });
    this.show.addEventListener('click', () => this.submit());
    this.inside.addEventListener('click', () => {
      if (this.input.value.trim() === '') this.status.textContent = 'Type a text first.';
      else ctx.lookInside(this.input.value);
    });
    for (const b of [this.training, this.yours])
      b.addEventListener('click', () => this.choose(b.dataset.view as InspectView));
    this.form = h(
      'div',
      { className: 'inspect-form' },
      this.input,
      h('div', { className: 'inspect-actions' }, this.show, this.inside),
    );
    this.el = h(
      'div',
      { className: 'inspect-bar' },
      h(
        'div',
        { className: 'segmented', attrs: { role: 'radiogroup', 'aria-label': 'What to show' } },
        this.training,
        this.yours,
      ),
      this.form,
      this.status,
    );
  }

  private choose(view: InspectView): void {
    this.ctx.ui.attention.view = view;
    this.ctx.saveUi();
    this.ctx.invalidate('attention', true);
    this.ctx.invalidate('heads', true);
  }

  /** Asks for the attention of the box's text with the selected run's model. */
  submit(): void {
    const run = this.ctx.run();
    const text = this.input.value;
    if (!run) return;
    if (text.trim() === '') {
      this.status.textContent = 'Type a text first.';
      return;
    }
    this.request(run, text);
    this.choose('text');
  }

  private request(run: RunEntry, text: string): void {
    const insp = this.ctx.store.beginInspection(run.id, text);
    if (!insp) return;
    this.ctx.ui.inspectTexts[run.id] = text;
    this.ctx.host.post({
      type: 'model/attend',
      id: insp.id,
      runDir: run.summary.runDir,
      text,
    } satisfies FromWebview);
  }

  /** Shows the bar for `run`. */
  render(run: RunEntry | undefined): void {
    const view = inspectView(this.ctx, run);
    const interactive = this.ctx.host.interactive;
    const hasSnapshots = (run?.snapshots.length ?? 0) > 0;
    this.training.disabled = !hasSnapshots;
    this.training.title = hasSnapshots
      ? ''
      : 'This run has no attention snapshots (an imported model, or one trained without --snapshot-every)';
    this.training.setAttribute('aria-checked', String(view === 'training'));
    this.yours.setAttribute('aria-checked', String(view === 'text'));
    this.form.hidden = view !== 'text';
    this.input.disabled = !interactive || !run;
    this.show.disabled = !interactive || !run;
    this.inside.disabled = !interactive || !run;
    const kept = run ? (this.ctx.ui.inspectTexts[run.id] ?? run.inspection?.text ?? '') : '';
    // The text a run showed before the page reloaded (kept in the UI state) is asked for again
    // (the model worker answers from what it kept, or computes it anew after a window reload).
    if (view === 'text' && run && !run.inspection && kept.trim() !== '' && interactive) this.request(run, kept);
    const insp = run?.inspection ?? null;
    if (document.activeElement !== this.input) this.input.value = kept;
    this.status.hidden = view !== 'text';
    this.status.classList.toggle('error', insp?.error !== null && insp?.error !== undefined);
    if (!interactive)
      this.status.textContent = 'This page is a saved report: open the run in VS Code to run its model on a text.';
    else if (!insp)
      this.status.textContent =
        `Runs ${run ? `the model of ${run.summary.name}` : 'the model'} now on ` +
        `your text: every layer's and head's attention, and each head's scores.`;
    else if (insp.error) this.status.textContent = `Could not compute the attention: ${insp.error.message}`;
    else if (!insp.snapshot) this.status.textContent = 'Computing the attention…';
    else {
      const s = insp.snapshot;
      const n =
        s.srcTokens.length > 0
          ? `${s.srcTokens.length} source and ${s.tgtTokens.length} target tokens`
          : `${s.tgtTokens.length} tokens`;
      this.status.textContent =
        `The model at step ${s.step} on your text (${n}), not a training ` +
        `snapshot.${s.truncation ? ` ${s.truncation}` : ''}`;
    }
  }
}
