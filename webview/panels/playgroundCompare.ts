/**
 * The playground's side by side: the same prompt (or source) and decode settings through
 * several runs of the same kind, one column each — each run's continuation with every
 * token's probability and the decode's score, and what the model expects right after the
 * prompt (the logit lens's top tokens at the last layer and position). Runs are picked with
 * checkboxes (kept per page in the UI state); "Decode side by side" sends one model/decode
 * and one model/lens per run, and each column fills in as its answers arrive. A column
 * belongs to its run: its header names the run, and picking another run in the header never
 * moves a column.
 *
 * Leaves out: the single-run view above it (playground.ts) and the lens grid (lensGrid.ts).
 */

import { formatNumber, formatPercent } from '../../src/common/format';
import type { DecodeParams } from '../../src/protocol/model';
import { stopReasonText } from '../../src/protocol/model';
import type { LensInputData } from '../../src/protocol/analysis';
import type { FromWebview } from '../../src/protocol/webview';
import { h, replaceChildren } from '../base/dom';
import { showToken, tokenTitle } from '../base/format';
import type { PlaygroundAnalysis, PlaygroundDecode, RunEntry } from '../store';
import type { PanelContext } from './panel';

/** One column: a run's decode and its lens after the prompt. */
interface Column {
  readonly runId: string;
  readonly decode: PlaygroundDecode;
  readonly lens: PlaygroundAnalysis;
}

/** The side-by-side section of the playground. */
export class PlaygroundCompare {
  readonly el: HTMLElement;
  private readonly runsBox = h('div', {
    className: 'pg-compare-runs',
    attrs: { role: 'group', 'aria-label': 'Runs to compare' },
  });
  private readonly button = h('button', { attrs: { type: 'button' } }, 'Decode side by side');
  private readonly note = h('p', { className: 'note pg-compare-note' });
  private readonly columnsBox = h('div', { className: 'pg-columns' });
  private columns: Column[] = [];

  constructor(private readonly ctx: PanelContext) {
    this.button.addEventListener('click', () => this.run());
    this.el = h(
      'section',
      { className: 'pg-compare' },
      h(
        'h3',
        {},
        'Side by side ',
        h('span', { className: 'hint' }, '(the same prompt and settings through other runs of this kind)'),
      ),
      this.runsBox,
      this.button,
      this.note,
      this.columnsBox,
    );
  }

  /** Whether a decode or lens answer is one of the columns'. */
  owns(id: number, kind: 'decode' | 'analysis'): boolean {
    return this.columns.some((c) => (kind === 'decode' ? c.decode.id : c.lens.id) === id);
  }

  /** The runs that can stand beside `run` (its kind), checkboxes for the user's picks. */
  render(run: RunEntry | undefined): void {
    const others = this.ctx.store.runs.filter((r) => r.id !== run?.id && r.summary.kind === run?.summary.kind);
    const picked = new Set(this.ctx.ui.playgroundCompare);
    replaceChildren(
      this.runsBox,
      ...others.map((r) => {
        const box = h('input', {
          attrs: { type: 'checkbox', id: `pg-compare-${r.id}`, 'data-run': r.id, checked: picked.has(r.id) },
        });
        box.addEventListener('change', () => {
          const set = new Set(this.ctx.ui.playgroundCompare);
          if (box.checked) set.add(r.id);
          else set.delete(r.id);
          this.ctx.ui.playgroundCompare = [...set];
          this.ctx.saveUi();
        });
        return h(
          'label',
          { className: 'pg-compare-run', attrs: { for: `pg-compare-${r.id}` } },
          box,
          ` ${r.summary.name}`,
        );
      }),
    );
    this.el.hidden = others.length === 0;
    this.button.disabled = !this.ctx.host.interactive || !run;
    this.show();
  }

  /** Sends the playground's text and settings to the selected run and every picked one. */
  private run(): void {
    const run = this.ctx.run();
    if (!run || !this.ctx.host.interactive) return;
    const params: DecodeParams = {
      ...this.ctx.ui.playground,
      input: this.ctx.ui.playgroundInputs[run.id] ?? this.ctx.ui.playground.input,
    };
    if (params.input === '') {
      this.note.textContent =
        `Type ` + `${run.summary.kind === 'encoder-decoder' ? 'a source sentence' : 'a prompt'}` + ` above first.`;
      return;
    }
    const ids = [
      run.id,
      ...this.ctx.ui.playgroundCompare.filter(
        (id) => id !== run.id && this.ctx.store.run(id)?.summary.kind === run.summary.kind,
      ),
    ];
    if (ids.length < 2) {
      this.note.textContent = 'Tick at least one other run to compare with.';
      return;
    }
    const input: LensInputData =
      run.summary.kind === 'decoder-only'
        ? { kind: 'decoder-only', prompt: params.input }
        : { kind: 'encoder-decoder', src: params.input };
    this.columns = ids.flatMap((id) => {
      const r = this.ctx.store.run(id);
      if (!r) return [];
      const decode = this.ctx.store.beginDecode(id, params);
      const lens = this.ctx.store.beginAnalysis(id, input);
      this.ctx.host.post({
        type: 'model/decode',
        id: decode.id,
        runDir: r.summary.runDir,
        params,
      } satisfies FromWebview);
      this.ctx.host.post({
        type: 'model/lens',
        id: lens.id,
        runDir: r.summary.runDir,
        input,
        topK: this.ctx.ui.lensTopK,
        fit: true,
      } satisfies FromWebview);
      return [{ runId: id, decode, lens }];
    });
    this.note.textContent =
      `${params.strategy} decode of ` +
      `${JSON.stringify(params.input.length > 40 ? `${params.input.slice(0, 40)}…` : params.input)}` +
      ` through ${this.columns.length} runs.`;
    this.show();
  }

  /** Redraws the columns from their decodes. */
  show(): void {
    replaceChildren(this.columnsBox, ...this.columns.map((c) => this.column(c)));
  }

  private column(c: Column): HTMLElement {
    const run = this.ctx.store.run(c.runId);
    const s = c.decode;
    const out = s.output;
    const status = s.error
      ? `Failed: ${s.error.message}`
      : out
        ? `${out.tokens.length} token(s) — ${stopReasonText(out.stopReason)}; ` +
          `score ${formatNumber(out.score, 3)}` +
          `${out.contextNote !== undefined ? `. ${out.contextNote}` : ''}`
        : `Decoding… ${s.tokens.length} token(s)`;
    const tokens = out ? out.tokens.map((t, i) => ({ token: t, logprob: out.logprobs[i] ?? Number.NaN })) : s.tokens;
    const chips = tokens.map((t) => {
      const p = Math.exp(t.logprob);
      const chip = h(
        'span',
        { className: 'chip token', attrs: { title: `${tokenTitle(t.token)} · p = ${formatPercent(p)}` } },
        h('span', { className: 'tok' }, showToken(t.token)),
        h('span', { className: 'prob' }, formatPercent(p)),
      );
      chip.style.setProperty('--p', p.toFixed(3));
      return chip;
    });
    const lens = c.lens.kind === 'lens' ? c.lens.output : null;
    const last = lens?.layers[lens.layers.length - 1]?.positions.at(-1)?.top ?? [];
    const next = c.lens.error
      ? h('p', { className: 'note error' }, `Lens failed: ${c.lens.error.message}`)
      : lens
        ? h(
            'ol',
            { className: 'pg-next' },
            ...last.map((t) =>
              h(
                'li',
                {},
                h('code', { attrs: { title: tokenTitle(t.token) } }, showToken(t.token)),
                ` ${formatPercent(t.prob)}`,
              ),
            ),
          )
        : h('p', { className: 'note' }, 'Reading the logit lens…');
    return h(
      'article',
      { className: 'pg-column', attrs: { 'data-run': c.runId } },
      h(
        'h4',
        {},
        run?.summary.name ?? c.runId,
        c.runId === this.ctx.run()?.id ? h('span', { className: 'hint' }, ' (shown above)') : null,
      ),
      h('p', { className: `pg-column-status${s.error ? ' error' : ''}` }, status),
      out ? h('pre', { className: 'pg-text' }, out.text) : null,
      h('div', { className: 'pg-output' }, ...chips),
      h('h5', {}, 'Next after the prompt (top tokens, last layer)'),
      next,
    );
  }
}
