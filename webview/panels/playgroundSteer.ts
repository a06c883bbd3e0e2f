/**
 * The playground's steering section: activation addition with the selected run's model
 * (model/steer, answered by model/didSteer or model/didFail). The person gives two prompts
 * whose difference is the vector (plus − minus: the mean residual stream entering a layer),
 * the layer and α; the playground's prompt and decode settings are decoded twice, with α·v
 * added at that layer at every position and without, and the two continuations are shown
 * side by side with the vector's norm. The settings and the last result are per run. On an
 * encoder-decoder run, plus, minus and the playground's input are sources, and the vector is the
 * decoder's stream (lab/inference/steer.ts).
 *
 * Leaves out: computing any of it (lab/inference/steer.ts, in the model worker).
 */

import type { DecodeParams } from '../../src/protocol/model';
import type { SteerVectorData } from '../../src/protocol/steering';
import type { FromWebview } from '../../src/protocol/webview';
import { validateFromWebview } from '../../src/protocol/webview';
import { formatNumber } from '../../src/common/format';
import { h, replaceChildren } from '../base/dom';
import type { PlaygroundAnalysis } from '../store';
import type { PanelContext } from './panel';

/** Past the host's own limit for a steering request (5 minutes, which it answers with its error): the host is gone. */
const TIMEOUT_MS = 330_000;

/** The steering section of the playground. */
export class PlaygroundSteer {
  readonly el = h('section', {
    className: 'pg-steer',
    attrs: { 'aria-label': 'Steering: add a vector to the residual stream while decoding' },
  });
  private readonly status = h('p', { className: 'steer-status', attrs: { 'aria-live': 'polite' } });
  private readonly box = h('div', { className: 'steer-box' });
  /** The settings of each run (by run id). */
  private readonly settings = new Map<string, SteerVectorData>();
  /** The last steering request of each run (by run id). */
  private readonly last = new Map<string, PlaygroundAnalysis>();
  private readonly timers = new Map<number, ReturnType<typeof setTimeout>>();
  private drawn = '';

  constructor(
    private readonly ctx: PanelContext,
    /** The playground's decode settings now (its prompt is what is steered). */
    private readonly decodeParams: () => DecodeParams,
  ) {}

  /** Whether `id` is a steering request of this section (its answer stops its timer). */
  owns(id: number): boolean {
    const s = this.ctx.store.analysis(id);
    if (s?.kind !== 'steer') return false;
    const t = this.timers.get(id);
    if (t !== undefined) clearTimeout(t);
    this.timers.delete(id);
    return true;
  }

  /** Rebuilds the section for the selected run. */
  render(): void {
    const run = this.ctx.run();
    const host = this.ctx.host;
    const cfg = run?.summary.model?.config;
    const layers = cfg?.nDecoderLayers ?? 0;
    const encdec = cfg?.kind === 'encoder-decoder';
    if (!host.interactive || !run) {
      replaceChildren(
        this.el,
        h('h3', {}, 'Steering'),
        h(
          'p',
          { className: 'note', attrs: { role: 'note' } },
          !run
            ? 'Pick a run to steer its model.'
            : 'Steering is off: this page has no host to run the model. Open the run in VS Code, or run ' +
                '`attention-lab steer RUN --layer L --plus TEXT --minus TEXT --alpha A --prompt TEXT`.',
        ),
      );
      this.drawn = '';
      return;
    }
    const s = this.settings.get(run.id) ?? { plus: '', minus: '', layer: Math.min(1, layers), alpha: 4 };
    this.settings.set(run.id, s);
    const set = (patch: Partial<SteerVectorData>): void => {
      this.settings.set(run.id, { ...(this.settings.get(run.id) ?? s), ...patch });
    };
    const text = (id: string, label: string, value: string, on: (v: string) => void): HTMLElement =>
      h(
        'span',
        { className: 'pg-knob steer-prompt' },
        h('label', { attrs: { for: id } }, label),
        h('input', {
          attrs: { id, type: 'text', spellcheck: false, value },
          on: { input: (e) => on((e.target as HTMLInputElement).value) },
        }),
      );
    const num = (id: string, label: string, value: number, attrs: Record<string, number>, on: (v: number) => void) =>
      h(
        'span',
        { className: 'pg-knob' },
        h('label', { attrs: { for: id } }, label),
        h('input', {
          attrs: { id, type: 'number', value, ...attrs },
          on: {
            change: (e) => {
              const v = Number((e.target as HTMLInputElement).value);
              if (Number.isFinite(v)) on(v);
            },
          },
        }),
      );
    const button = h('button', { className: 'primary', attrs: { type: 'button', id: 'steer-run' } }, 'Steer');
    button.addEventListener('click', () => this.request());
    replaceChildren(
      this.el,
      h(
        'h3',
        {},
        'Steering ',
        h(
          'span',
          { className: 'hint' },
          encdec
            ? '(adds α × (the decoder’s mean stream translating source “plus” − translating “minus”) entering a ' +
                'decoder layer, at every target position, while the source above is translated; the unsteered ' +
                'decode beside it)'
            : '(adds α × (mean stream of “plus” − mean stream of “minus”) entering a layer, at every position, ' +
                'while the prompt above is decoded; the unsteered decode beside it)',
        ),
      ),
      h(
        'div',
        { className: 'pg-knobs' },
        text('steer-plus', encdec ? 'plus source' : 'plus', s.plus, (plus) => set({ plus })),
        text('steer-minus', encdec ? 'minus source' : 'minus', s.minus, (minus) => set({ minus })),
        num('steer-layer', `layer (0–${layers})`, s.layer, { min: 0, max: layers, step: 1 }, (v) =>
          set({ layer: Math.min(layers, Math.max(0, Math.round(v))) }),
        ),
        num('steer-alpha', 'α', s.alpha, { step: 0.5 }, (alpha) => set({ alpha })),
        button,
      ),
      this.status,
      this.box,
    );
    this.drawn = '';
    this.show();
  }

  /** Redraws the selected run's result where it changed. */
  show(): void {
    const run = this.ctx.run();
    if (!run || !this.ctx.host.interactive) return;
    const s = this.last.get(run.id);
    const state = s ? `${s.id}:${s.output ? 'done' : s.error ? 'failed' : 'waiting'}` : `none:${run.id}`;
    if (state === this.drawn) return;
    this.drawn = state;
    if (!s || s.kind !== 'steer') {
      this.status.textContent = '';
      replaceChildren(this.box);
      return;
    }
    this.status.classList.toggle('error', s.error !== null);
    if (s.error) {
      this.status.textContent = `Steering failed: ${s.error.message}`;
      replaceChildren(this.box);
      return;
    }
    if (!s.output) {
      this.status.textContent = 'Decoding steered and unsteered…';
      replaceChildren(this.box);
      return;
    }
    const o = s.output;
    this.status.textContent =
      `v at the stream entering layer ${o.layer}: ‖v‖ ${formatNumber(o.norm)} (the stream's mean norm there ` +
      `${formatNumber(o.streamNorm)}); α ${o.alpha}, so ‖α·v‖ ${formatNumber(Math.abs(o.alpha) * o.norm)}.`;
    const prompt = s.request.decode.input;
    const column = (title: string, cls: string, out: typeof o.steered): HTMLElement =>
      h(
        'div',
        { className: `steer-col ${cls}` },
        h('h4', {}, title),
        h('div', { className: 'pg-text-box' }, h('span', { className: 'pg-text-prompt' }, prompt), out.text),
      );
    replaceChildren(
      this.box,
      h(
        'div',
        { className: 'steer-cols' },
        column(`Steered (α ${o.alpha})`, 'steered', o.steered),
        column('Unsteered', 'unsteered', o.unsteered),
      ),
    );
  }

  private request(): void {
    const run = this.ctx.run();
    if (!run) return;
    const vector = this.settings.get(run.id);
    const decode = this.decodeParams();
    if (!vector || (vector.plus === '' && vector.minus === '')) {
      this.status.textContent = 'Type the two prompts whose difference steers (plus and minus) first.';
      return;
    }
    if (decode.input === '') {
      this.status.textContent = 'Type a prompt above first: it is what is decoded, steered and not.';
      return;
    }
    const s = this.ctx.store.beginSteer(run.id, { vector, decode });
    const msg: FromWebview = { type: 'model/steer', id: s.id, runDir: run.summary.runDir, request: { vector, decode } };
    try {
      validateFromWebview(msg);
    } catch (e) {
      this.ctx.problem(`The steering request is invalid: ${(e as Error).message}`);
      return;
    }
    this.timers.set(
      s.id,
      setTimeout(() => {
        this.timers.delete(s.id);
        if (s.output || s.error) return;
        s.error = {
          code: 'steer/timeout',
          message:
            `No answer from the host for ${TIMEOUT_MS / 1000} s; try again, or check the ` +
            'Attention Lab output channel.',
        };
        this.show();
      }, TIMEOUT_MS),
    );
    this.last.set(run.id, s);
    this.ctx.host.post(msg);
    this.show();
  }
}
