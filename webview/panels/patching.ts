/**
 * The Patching tab: activation patching of a clean and a corrupted prompt with the selected
 * run's model (model/patch, answered by model/didPatch or model/didFail), and beside each
 * sweep its first-order estimate by attribution patching (model/attribute with what
 * attribution, a second request). The person gives the two prompts, the answer and wrong
 * tokens, the metric (logit-diff or logprob) and the sweeps (resid, attn, mlp, heads,
 * heads-pos); each sweep is drawn as a heatmap of its recovery (patched − corrupted) /
 * (clean − corrupted), diverging around 0 in the theme's blue (towards clean) and red (past
 * corrupted), with its row and column labels (positions carry their tokens) and one line
 * saying what a cell means. A failure (prompts of different token lengths, an answer that is
 * not one token) is one line in the panel. With logit-diff, direct logit attribution of the
 * clean prompt at its last position (model/attribute with what dla, a third request) and the
 * accumulated residual stream (what resid-accum, a fourth) follow as bars. Path patching (the
 * `path` sweep) sends each earlier head's clean output only through the receivers' q, k or v
 * typed beside it (L2H1 L2H2). On an encoder-decoder run the prompts are two sources under one
 * target prefix, each stack's map drawn apart (encoder, decoder), and receivers name their
 * attention as the CLI's do (enc:L1H2, self:L2H1, cross:L2H1).
 *
 * The quick requests (estimate, DLA, accumulated residual) are posted before the sweep, and the
 * estimate is drawn alone until full patching's maps arrive (decoder-only runs).
 * Beside each estimate, how well it agrees with full patching: Pearson's r over the sweep's cells
 * and a scatter around the diagonal. Clicking a cell (of either map, or a dot) shows its detail
 * (#ptc-cell): the patched run's top 5 next tokens beside the clean and corrupted runs', which
 * model/patch keeps (`top`). While the requests run, a progress bar counts "n of N patches"
 * (model/didProgress) and Cancel (#ptc-cancel) sends model/cancel for each, which stops the
 * worker's sweep between forwards. The settings and the last results are per run.
 *
 * Leaves out: computing any of it (lab/inference/patch.ts, attribute.ts, in the model worker), and
 * the smaller views (patchingViews.ts).
 */

import type { AttributionOutputData, AttributionParamsData } from '../../src/protocol/attribution';
import type {
  PatchMapData,
  PatchMetric,
  PatchOutputData,
  PatchRequestData,
  PatchWhat,
} from '../../src/protocol/patching';
import type { PathInput } from '../../src/protocol/patching';
import type { FromWebview } from '../../src/protocol/webview';
import { validateFromWebview } from '../../src/protocol/webview';
import { formatNumber } from '../../src/common/format';
import { h, replaceChildren } from '../base/dom';
import type { PlaygroundAnalysis, StoreEvent } from '../store';
import type { Panel, PanelContext } from './panel';
import { estimateMaps, parseReceivers } from './patchingMath';
import { agreement, cellDetail, progressBar, residBars, signedBars } from './patchingViews';
import { estimateOf } from './patchingEstimate';

/** Past the host's own limit for a patching request (30 minutes, which it answers with its error): the host is gone. */
const TIMEOUT_MS = 1_830_000;

/** The sweeps the tab offers, in the order they are drawn. */
const SWEEPS: readonly PatchWhat[] = ['resid', 'attn', 'mlp', 'heads', 'heads-pos', 'path'];

/** Top tokens each patched run keeps for a clicked cell's detail. */
const TOP = 5;

/** What the person set for one run. */
interface PatchingSettings {
  clean: string;
  corrupted: string;
  /** An encoder-decoder's shared target prefix (clean and corrupted are then sources). */
  target: string;
  answer: string;
  wrong: string;
  metric: PatchMetric;
  what: PatchWhat[];
  /** Also ask for attribution patching's estimate of the same sweeps. */
  estimate: boolean;
  /** Also ask for direct logit attribution of the clean prompt (logit-diff only). */
  dla: boolean;
  /** Also ask for the accumulated residual stream of the clean prompt (logit-diff only). */
  accum: boolean;
  /** Path patching's receivers as typed ("L2H1 L2H2") and their input. */
  receivers: string;
  input: PathInput;
}

/** The requests of one Run, and the cell the person clicked. */
interface LastRun {
  readonly patch: PlaygroundAnalysis;
  readonly estimate: PlaygroundAnalysis | null;
  readonly dla: PlaygroundAnalysis | null;
  readonly accum: PlaygroundAnalysis | null;
  /** The clicked cell: map `map` of the patch answer (its index: two stacks may share a sweep), cell `i`. */
  selected: { readonly map: number; readonly i: number } | null;
}

/** One line under a sweep's map: what one cell is. */
export function cellMeaning(what: PatchWhat): string {
  const tail = 'patched into the corrupted run; 1 = the clean metric recovered, 0 = as corrupted.';
  switch (what) {
    case 'resid':
      return `A cell (layer L, position p): the clean residual stream entering layer L at position p, ${tail}`;
    case 'attn':
      return `A cell (layer L, position p): layer L's clean attention output at position p, ${tail}`;
    case 'mlp':
      return `A cell (layer L, position p): layer L's clean MLP output at position p, ${tail}`;
    case 'heads':
      return `A cell (layer L, head H): head H of layer L, its clean output at every position, ${tail}`;
    case 'heads-pos':
      return `A cell (head, position p): that head's clean output at position p only, ${tail}`;
    case 'path':
      return `A cell (sender head): its clean output reaching only the receivers' input, ${tail}`;
  }
}

/** The Patching tab. */
export class PatchingPanel implements Panel {
  readonly id = 'patching' as const;
  readonly label = 'Patching';
  readonly el = h('section', { className: 'panel patching' });
  private readonly status = h('p', { className: 'ptc-status', attrs: { 'aria-live': 'polite' } });
  private readonly box = h('div', { className: 'ptc-maps' });
  private readonly settings = new Map<string, PatchingSettings>();
  /** The last requests of each run (by run id). */
  private readonly last = new Map<string, LastRun>();
  /** The progress bar of the requests in flight (a fresh one per Run). */
  private bar: ReturnType<typeof progressBar> | null = null;
  private readonly barBox = h('div', { className: 'ptc-progress-box' });
  private readonly timers = new Map<number, ReturnType<typeof setTimeout>>();
  private drawn = '';

  constructor(private readonly ctx: PanelContext) {}

  wants(ev: StoreEvent): boolean {
    if (ev.kind !== 'analysis') return false;
    const s = this.ctx.store.analysis(ev.id);
    if (s?.kind !== 'patch' && s?.kind !== 'attribute') return false;
    if (!s.output && !s.error) return true; // progress: the time-out runs on until the answer
    const t = this.timers.get(ev.id);
    if (t !== undefined) clearTimeout(t);
    this.timers.delete(ev.id);
    return true;
  }

  render(full: boolean): void {
    if (full) this.build();
    else this.show();
  }

  /** Rebuilds the form for the selected run. */
  private build(): void {
    const run = this.ctx.run();
    const cfg = run?.summary.model?.config;
    this.drawn = '';
    this.bar = null;
    const encdec = cfg?.kind === 'encoder-decoder';
    if (!this.ctx.host.interactive || !run) {
      replaceChildren(
        this.el,
        h('h2', {}, 'Patching'),
        h(
          'p',
          { className: 'note', attrs: { role: 'note' } },
          !run
            ? 'Pick a run to patch its model.'
            : 'Patching is off: this page has no host to run the model. Open the run in VS Code, or run ' +
                '`attention-lab patch RUN --clean TEXT --corrupted TEXT --answer TOKEN --wrong TOKEN`.',
        ),
      );
      return;
    }
    const s: PatchingSettings = this.settings.get(run.id) ?? {
      clean: '',
      corrupted: '',
      target: '',
      answer: '',
      wrong: '',
      metric: 'logit-diff',
      what: ['resid', 'attn', 'mlp', 'heads'],
      estimate: true,
      dla: true,
      accum: true,
      receivers: '',
      input: 'q',
    };
    this.settings.set(run.id, s);
    const text = (id: string, label: string, key: 'clean' | 'corrupted' | 'target' | 'answer' | 'wrong'): HTMLElement =>
      h(
        'span',
        { className: `pg-knob ptc-${key}` },
        h('label', { attrs: { for: id } }, label),
        h('input', {
          attrs: { id, type: 'text', spellcheck: false, value: s[key] },
          on: { input: (e) => (s[key] = (e.target as HTMLInputElement).value) },
        }),
      );
    const metric = h(
      'select',
      {
        attrs: { id: 'ptc-metric' },
        on: { change: (e) => (s.metric = (e.target as HTMLSelectElement).value as PatchMetric) },
      },
      h(
        'option',
        { attrs: { value: 'logit-diff', selected: s.metric === 'logit-diff' } },
        'logit[answer] − logit[wrong]',
      ),
      h('option', { attrs: { value: 'logprob', selected: s.metric === 'logprob' } }, 'log p(answer)'),
    );
    const check = (
      id: string,
      label: string,
      on: boolean,
      set: (v: boolean) => void,
      off: string | null = null,
    ): HTMLElement =>
      h(
        'label',
        { className: 'ptc-check', attrs: { for: id, title: off } },
        h('input', {
          attrs: { id, type: 'checkbox', checked: on && off === null, disabled: off !== null },
          on: { change: (e) => set((e.target as HTMLInputElement).checked) },
        }),
        label,
      );
    // DLA and the accumulated residual read the stream as a sum through one final norm (analysis/directLogit.ts).
    const postNorm = cfg?.norm === 'post' ? 'Needs a pre-norm model: a post-norm layer ends in its own norm.' : null;
    const sweeps = SWEEPS.map((w) =>
      check(`ptc-what-${w}`, w, s.what.includes(w), (v) => {
        s.what = SWEEPS.filter((x) => (x === w ? v : s.what.includes(x)));
      }),
    );
    const button = h('button', { className: 'primary', attrs: { type: 'button', id: 'ptc-run' } }, 'Run');
    button.addEventListener('click', () => this.request());
    const input = h(
      'select',
      {
        attrs: { id: 'ptc-input' },
        on: { change: (e) => (s.input = (e.target as HTMLSelectElement).value as PathInput) },
      },
      ...(['q', 'k', 'v'] as const).map((x) =>
        h('option', { attrs: { value: x, selected: s.input === x } }, { q: 'queries', k: 'keys', v: 'values' }[x]),
      ),
    );
    const receivers = h('input', {
      attrs: {
        id: 'ptc-receivers',
        type: 'text',
        spellcheck: false,
        value: s.receivers,
        placeholder: encdec ? 'cross:L2H1 self:L2H2' : 'L2H1 L2H2',
      },
      on: { input: (e) => (s.receivers = (e.target as HTMLInputElement).value) },
    });
    replaceChildren(
      this.el,
      h(
        'h2',
        {},
        'Patching ',
        h(
          'span',
          { className: 'hint' },
          '(runs the corrupted prompt with one activation of the clean prompt patched in, for every activation ' +
            'of each sweep, and reads the metric at the last position)',
        ),
      ),
      h(
        'div',
        { className: 'pg-knobs' },
        text('ptc-clean', encdec ? 'clean source' : 'clean', 'clean'),
        text('ptc-corrupted', encdec ? 'corrupted source' : 'corrupted', 'corrupted'),
        encdec ? text('ptc-target', 'target prefix', 'target') : null,
        text('ptc-answer', 'answer', 'answer'),
        text('ptc-wrong', 'wrong', 'wrong'),
        h('span', { className: 'pg-knob' }, h('label', { attrs: { for: 'ptc-metric' } }, 'metric'), metric),
      ),
      h(
        'div',
        { className: 'pg-knobs', attrs: { role: 'group', 'aria-label': 'Sweeps' } },
        h('span', {}, 'sweeps'),
        ...sweeps,
        check('ptc-estimate', 'attribution patching beside', s.estimate, (v) => (s.estimate = v)),
        check('ptc-dla', 'direct logit attribution', s.dla, (v) => (s.dla = v), postNorm),
        check('ptc-accum', 'accumulated residual', s.accum, (v) => (s.accum = v), postNorm),
        button,
      ),
      h(
        'div',
        { className: 'pg-knobs ptc-path', attrs: { role: 'group', 'aria-label': 'Path patching' } },
        h('span', {}, 'path: receivers'),
        h(
          'span',
          { className: 'pg-knob' },
          h('label', { className: 'visually-hidden', attrs: { for: 'ptc-receivers' } }, 'receivers'),
          receivers,
        ),
        h(
          'span',
          { className: 'pg-knob' },
          h('label', { attrs: { for: 'ptc-input' } }, 'reading the sender through their'),
          input,
        ),
      ),
      h(
        'p',
        { className: 'note ptc-key' },
        'Blue: towards the clean metric (1); no colour: as corrupted (0); red: below corrupted. ' +
          'Click a cell for what the patched model predicts.',
      ),
      this.status,
      this.barBox,
      this.box,
    );
    this.show();
  }

  /** Redraws the selected run's results where they changed. */
  private show(): void {
    const run = this.ctx.run();
    if (!run || !this.ctx.host.interactive) return;
    const last = this.last.get(run.id);
    this.showProgress(last);
    const state = (a: PlaygroundAnalysis | null | undefined): string =>
      a ? `${a.id}:${a.output ? 'done' : a.error ? 'failed' : 'waiting'}` : 'none';
    const key = [run.id, ...[last?.patch, last?.estimate, last?.dla, last?.accum].map(state)].join('/');
    if (key === this.drawn) return;
    this.drawn = key;
    this.status.classList.remove('error');
    if (!last) {
      this.status.textContent = '';
      replaceChildren(this.box);
      return;
    }
    const { patch, estimate, dla, accum } = last;
    const named: [string, PlaygroundAnalysis | null][] = [
      ['Patching', patch],
      ['Attribution patching', estimate],
      ['Direct logit attribution', dla],
      ['The accumulated residual', accum],
    ];
    const [what, failedAt] = named.find(([, a]) => a?.error) ?? ['', null];
    const failed = failedAt?.error ?? null;
    if (failed?.code === 'cancelled') this.status.textContent = 'Cancelled; Run starts again.';
    else if (failed) {
      this.status.classList.add('error');
      this.status.textContent = `${what} failed: ${failed.message}`;
    }
    const out = patch.kind === 'patch' ? patch.output : null;
    const est = estimate?.kind === 'attribute' ? estimate.output : null;
    if (!out) {
      if (!failed) this.status.textContent = 'Patching…';
      // The estimate (seconds) is drawn while the full sweep (minutes on a large model) still runs.
      const early = est && patch.kind === 'patch' ? estimateMaps(est, patch.request.what) : null;
      replaceChildren(this.box, ...(early ?? []).map(earlySweep));
      return;
    }
    const metric = `${metricName(out)}: clean ${formatNumber(out.clean)}, corrupted ${formatNumber(out.corrupted)}`;
    if (!failed) this.status.textContent = metric + (estimate && !est ? '; estimating…' : '.');
    // Full patching answered and another request failed: the metric stays, the failure follows it.
    else this.status.textContent = `${metric}. ${this.status.textContent ?? ''}`;
    const d = dla?.kind === 'attribute' && dla.output?.what === 'dla' ? dla.output : null;
    const r = accum?.kind === 'attribute' && accum.output?.what === 'resid-accum' ? accum.output : null;
    replaceChildren(
      this.box,
      ...out.maps.map((m, mi) => this.sweep(last, out, m, mi, est)),
      d ? dlaBars(d) : null,
      r ? residBars(r) : null,
    );
    this.showCell(last);
  }

  /** The progress bar while any of `last`'s requests runs: the patches done, then the other requests' passes. */
  private showProgress(last: LastRun | undefined): void {
    const running = [last?.patch, last?.estimate, last?.dla, last?.accum].filter(
      (a): a is PlaygroundAnalysis => !!a && !a.output && !a.error,
    );
    const first = running[0];
    if (!first || (first.kind !== 'patch' && first.kind !== 'attribute')) {
      this.bar = null;
      replaceChildren(this.barBox);
      return;
    }
    if (!this.bar) {
      this.bar = progressBar(() => this.cancel(running.map((a) => a.id)));
      replaceChildren(this.barBox, this.bar.el);
    }
    this.bar.update(first.progress, first.kind === 'patch' ? 'patches' : 'passes');
  }

  /** Cancels the requests `ids` still in flight: the host fails each with 'cancelled'. */
  private cancel(ids: readonly number[]): void {
    for (const id of ids) {
      const a = this.ctx.store.analysis(id);
      if (!a || a.output || a.error) continue;
      const msg: FromWebview = { type: 'model/cancel', id };
      validateFromWebview(msg);
      this.ctx.host.post(msg);
    }
  }

  /** Marks the selected cell in its sweep's maps and shows its detail under them. */
  private showCell(last: LastRun): void {
    this.box.querySelector('#ptc-cell')?.remove();
    for (const c of this.box.querySelectorAll('.ptc-cell.selected, .ptc-dot.selected')) c.classList.remove('selected');
    const out = last.patch.kind === 'patch' ? last.patch.output : null;
    const sel = last.selected;
    const m = sel ? out?.maps[sel.map] : undefined;
    const fig = sel ? this.box.querySelector(`.ptc-sweep[data-map="${sel.map}"]`) : null;
    if (!out || !sel || !m || !fig || sel.i >= m.values.length) return;
    for (const c of fig.querySelectorAll(`[data-i="${sel.i}"]`)) {
      c.classList.add('selected');
      if (c.classList.contains('ptc-dot')) c.parentNode?.appendChild(c); // drawn last: above the dots it covers
    }
    const est = last.estimate?.kind === 'attribute' ? last.estimate.output : null;
    const e = est ? estimateOf(est, m.what, m) : null;
    const detail = cellDetail(out, m, sel.i, e && e.length === m.values.length ? (e[sel.i] ?? null) : null);
    fig.querySelector('.ptc-pair')?.after(detail);
  }

  /** One sweep: its map, the estimate and their agreement beside it where asked, and what a cell means. */
  private sweep(
    last: LastRun,
    out: PatchOutputData,
    m: PatchMapData,
    mi: number,
    est: AttributionOutputData | null,
  ): HTMLElement {
    const e = est ? estimateOf(est, m.what, m) : null;
    const both = e && e.length === m.normalised.length ? e : null;
    const pair = h(
      'div',
      { className: 'ptc-pair' },
      patchMap('Activation patching', m, m.normalised, m.values, out),
      both ? patchMap('Attribution patching (estimate)', m, both, null, out, 'estimate') : null,
      both ? agreement(m.normalised, both, m.rows, m.cols) : null,
    );
    pair.addEventListener('click', (ev) => {
      const cell = (ev.target as Element).closest('[data-i]');
      if (!cell) return;
      last.selected = { map: mi, i: Number(cell.getAttribute('data-i')) };
      this.showCell(last);
    });
    // From the keyboard: a map takes focus, and the arrow keys move the selected cell (the first, to begin).
    pair.addEventListener('keydown', (ev) => {
      const cols = m.cols.length;
      const n = m.values.length;
      const at = last.selected?.map === mi ? last.selected.i : -1;
      const step: Record<string, number> = { ArrowRight: 1, ArrowLeft: -1, ArrowDown: cols, ArrowUp: -cols };
      const d = step[ev.key];
      if (d === undefined || n === 0) return;
      ev.preventDefault();
      let i = at < 0 ? 0 : at + d;
      if (Math.abs(d) === 1 && Math.floor(i / cols) !== Math.floor(at / cols)) i = at; // not past a row's end
      if (i < 0 || i >= n) i = at;
      last.selected = { map: mi, i };
      this.showCell(last);
    });
    const via = m.path ? ` → ${m.path.receivers.map(receiverName).join(', ')} (${m.path.input})` : '';
    const stack = m.stack ? ` — ${m.stack} (${m.stack === 'encoder' ? 'source' : 'target'} positions)` : '';
    return h(
      'figure',
      {
        className: 'ptc-sweep',
        attrs: { 'data-what': m.what, 'data-map': mi, ...(m.stack ? { 'data-stack': m.stack } : {}) },
      },
      h('h3', {}, sweepTitle(m.what) + via + stack),
      pair,
      h('figcaption', { className: 'ptc-meaning' }, cellMeaning(m.what)),
    );
  }

  private request(): void {
    const run = this.ctx.run();
    const s = run ? this.settings.get(run.id) : undefined;
    if (!run || !s) return;
    const fail = (text: string): void => {
      this.status.classList.add('error');
      this.status.textContent = text;
      this.drawn = '';
    };
    if (s.clean === '' || s.corrupted === '') return fail('Type the clean and the corrupted prompt first.');
    if (s.answer === '') return fail('Type the answer token first.');
    if (s.metric === 'logit-diff' && s.wrong === '')
      return fail('Type the wrong token too: logit-diff is logit[answer] − logit[wrong].');
    const what = [...s.what];
    if (what.length === 0) return fail('Tick at least one sweep.');
    let path: Pick<PatchRequestData, 'receivers' | 'input'> = {};
    if (what.includes('path')) {
      const cfg = run.summary.model?.config;
      const encoder = cfg?.kind === 'encoder-decoder' ? cfg.nEncoderLayers : null;
      const receivers = parseReceivers(s.receivers, cfg?.nDecoderLayers ?? 0, cfg?.nHeads ?? 0, encoder);
      if (typeof receivers === 'string') return fail(receivers);
      path = { receivers, input: s.input };
    }
    // An encoder-decoder's two sources share one target prefix, the decoder's input (lab/inference/patch.ts).
    const target = run.summary.model?.config.kind === 'encoder-decoder' ? { target: s.target } : {};
    const request: PatchRequestData = {
      clean: s.clean,
      corrupted: s.corrupted,
      ...target,
      answer: s.answer,
      wrong: s.metric === 'logit-diff' ? s.wrong : null,
      metric: s.metric,
      what,
      ...path,
      top: TOP,
    };
    const patch = this.ctx.store.beginPatching(run.id, { kind: 'patch', request });
    const msgs: { a: PlaygroundAnalysis; msg: FromWebview }[] = [
      { a: patch, msg: { type: 'model/patch', id: patch.id, runDir: run.summary.runDir, request } },
    ];
    let estimate: PlaygroundAnalysis | null = null;
    if (s.estimate && what.some((w) => w !== 'path')) {
      const params: AttributionParamsData = {
        clean: s.clean,
        corrupted: s.corrupted,
        ...target,
        metric: { kind: s.metric, answer: s.answer, ...(s.metric === 'logit-diff' ? { wrong: s.wrong } : {}) },
        what: 'attribution',
      };
      estimate = this.ctx.store.beginPatching(run.id, { kind: 'attribute', request: params });
      msgs.push({ a: estimate, msg: { type: 'model/attribute', id: estimate.id, runDir: run.summary.runDir, params } });
    }
    let dla: PlaygroundAnalysis | null = null;
    const preNorm = run.summary.model?.config.norm !== 'post';
    if (s.dla && s.metric === 'logit-diff' && preNorm) {
      const params: AttributionParamsData = {
        clean: s.clean,
        corrupted: s.corrupted,
        ...target,
        metric: { kind: 'logit-diff', answer: s.answer, wrong: s.wrong },
        what: 'dla',
      };
      dla = this.ctx.store.beginPatching(run.id, { kind: 'attribute', request: params });
      msgs.push({ a: dla, msg: { type: 'model/attribute', id: dla.id, runDir: run.summary.runDir, params } });
    }
    let accum: PlaygroundAnalysis | null = null;
    if (s.accum && s.metric === 'logit-diff' && preNorm) {
      const params: AttributionParamsData = {
        clean: s.clean,
        corrupted: s.corrupted,
        ...target,
        metric: { kind: 'logit-diff', answer: s.answer, wrong: s.wrong },
        what: 'resid-accum',
      };
      accum = this.ctx.store.beginPatching(run.id, { kind: 'attribute', request: params });
      msgs.push({ a: accum, msg: { type: 'model/attribute', id: accum.id, runDir: run.summary.runDir, params } });
    }
    try {
      for (const { msg } of msgs) validateFromWebview(msg);
    } catch (e) {
      this.ctx.problem(`The patching request is invalid: ${(e as Error).message}`);
      return;
    }
    // A new Run replaces the last: what of it still runs is cancelled, so the worker turns to this one.
    const before = this.last.get(run.id);
    if (before)
      this.cancel([before.patch, before.estimate, before.dla, before.accum].flatMap((a) => (a ? [a.id] : [])));
    this.last.set(run.id, { patch, estimate, dla, accum, selected: null });
    this.bar = null;
    // The estimate, DLA and the accumulated residual first: the worker answers in order, and they take seconds.
    for (const { a, msg } of [...msgs.slice(1), ...msgs.slice(0, 1)]) {
      this.timers.set(
        a.id,
        setTimeout(() => {
          this.timers.delete(a.id);
          if (a.output || a.error) return;
          a.error = {
            code: 'patch/timeout',
            message:
              `No answer from the host for ${TIMEOUT_MS / 60_000} min; try again, or check the ` +
              'Attention Lab output channel.',
          };
          this.show();
        }, TIMEOUT_MS),
      );
      this.ctx.host.post(msg);
    }
    this.show();
  }
}

/** A receiver as people type it: L2H1, or an encoder-decoder's enc:L1H2 / cross:L2H1. */
function receiverName(r: { layer: number; head: number; attention?: 'encoder' | 'self' | 'cross' }): string {
  const at = r.attention === 'encoder' ? 'enc:' : r.attention === 'cross' ? 'cross:' : '';
  return `${at}L${r.layer + 1}H${r.head + 1}`;
}

/** A sweep's estimate alone, drawn until full patching's map arrives beside it. */
function earlySweep(m: PatchMapData): HTMLElement {
  const map = patchMap('Attribution patching (estimate)', m, m.normalised, null, null, 'estimate');
  const grid = map.querySelector('.ptc-grid');
  grid?.removeAttribute('tabindex'); // no cell to choose until full patching's answer
  grid?.setAttribute('aria-label', `Attribution patching (estimate): ${sweepTitle(m.what)}`);
  return h(
    'figure',
    { className: 'ptc-sweep ptc-early', attrs: { 'data-what': m.what } },
    h('h3', {}, sweepTitle(m.what)),
    h('div', { className: 'ptc-pair' }, map),
    h(
      'figcaption',
      { className: 'ptc-meaning' },
      "The first-order estimate of each patch's recovery; full activation patching follows beside it.",
    ),
  );
}

/** The metric as people read it: logit[c] − logit[d], or log p(c). */
function metricName(out: PatchOutputData): string {
  return out.metric === 'logit-diff' ? `logit[${out.answer}] − logit[${out.wrong ?? ''}]` : `log p(${out.answer})`;
}

function sweepTitle(what: PatchWhat): string {
  const titles: Record<PatchWhat, string> = {
    resid: 'Residual stream (entering each layer) × position',
    attn: 'Attention output × position',
    mlp: 'MLP output × position',
    heads: 'Heads (every position)',
    'heads-pos': 'Heads × position',
    path: 'Path patching',
  };
  return titles[what];
}

/**
 * A labelled map of recoveries: a grid with the column labels above (positions with their
 * tokens, or heads), the row labels on the left, one cell per value coloured from red (−1)
 * through the background (0) to blue (1 and above), and the exact numbers in each cell's title.
 */
function patchMap(
  title: string,
  m: PatchMapData,
  normalised: readonly number[],
  values: readonly number[] | null,
  out: PatchOutputData | null,
  cls = 'full',
): HTMLElement {
  const grid = h('div', {
    className: 'ptc-grid',
    attrs: {
      role: 'table',
      tabindex: 0,
      'aria-label': `${title}: ${sweepTitle(m.what)}; the arrow keys choose a cell`,
    },
  });
  grid.style.setProperty('--cols', String(m.cols.length));
  const head = h('div', { className: 'ptc-row', attrs: { role: 'row' } }, h('span', { className: 'ptc-corner' }));
  for (const c of m.cols)
    head.append(h('span', { className: 'ptc-col', attrs: { role: 'columnheader', title: c } }, c));
  grid.append(head);
  for (const [r, label] of m.rows.entries()) {
    const row = h(
      'div',
      { className: 'ptc-row', attrs: { role: 'row' } },
      h('span', { className: 'ptc-rowlabel', attrs: { role: 'rowheader' } }, label),
    );
    for (const [c, col] of m.cols.entries()) {
      const i = r * m.cols.length + c;
      const n = normalised[i] ?? 0;
      const raw = values?.[i];
      const cell = h('span', {
        className: `ptc-cell${n < 0 ? ' neg' : ''}`,
        attrs: {
          role: 'cell',
          'data-n': n,
          'data-i': i,
          title:
            `${label}, ${col}: recovery ${formatNumber(n)}` +
            (raw !== undefined && out
              ? ` (metric ${formatNumber(raw)}; clean ${formatNumber(out.clean)}, ` +
                `corrupted ${formatNumber(out.corrupted)})`
              : ''),
        },
      });
      cell.style.setProperty('--p', String(Math.min(1, Math.abs(Number.isFinite(n) ? n : 0))));
      row.append(cell);
    }
    grid.append(row);
  }
  return h('div', { className: `ptc-map ${cls}` }, h('h4', {}, title), grid);
}

/** A DLA component's name as people read it (layers and heads 1-based). */
export function componentName(c: { kind: string; layer: number | null; head: number | null }): string {
  const l = c.layer === null ? '' : `L${c.layer + 1}`;
  if (c.kind === 'head') return `${l}H${(c.head ?? 0) + 1}`;
  if (c.kind === 'cross-head') return `${l} cross H${(c.head ?? 0) + 1}`;
  if (c.kind === 'attn-bias') return `${l} attn bias`;
  if (c.kind === 'cross-bias') return `${l} cross bias`;
  if (c.kind === 'mlp') return `${l} MLP`;
  return 'embeddings';
}

/**
 * Direct logit attribution at the last position as bars: each component's share of
 * logit[answer] − logit[wrong] read straight through the unembedding, blue above 0, red below.
 */
function dlaBars(d: Extract<AttributionOutputData, { what: 'dla' }>): HTMLElement {
  const last = d.tokens.length - 1;
  const bars = signedBars(
    'Direct logit attribution',
    d.components.map((c) => ({ label: componentName(c), value: c.values[last] ?? 0 })),
  );
  return h(
    'figure',
    { className: 'ptc-sweep ptc-dla', attrs: { 'data-what': 'dla' } },
    h('h3', {}, `Direct logit attribution (clean prompt, last token ${JSON.stringify(d.tokens[last] ?? '')})`),
    bars,
    h(
      'figcaption',
      { className: 'ptc-meaning' },
      `A bar: that component's output at the last position read straight through the unembedding onto ` +
        `logit[${d.answer}] − logit[${d.wrong}] (the model's is ${formatNumber(d.logitDiff[last] ?? 0)}; ` +
        `biases no component owns ${formatNumber(d.excluded[last] ?? 0)}).`,
    ),
  );
}
