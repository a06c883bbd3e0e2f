/**
 * The playground tab: decode with the selected run's model through the host (model/decode,
 * answered by model/didToken while tokens stream and model/didDecode or model/didFail),
 * showing each generated token with its probability, the prompt's tokenization, the n-best
 * list of beam search, and — on click or Enter on a generated token — the attention of that
 * token over its context (self-attention, every layer and head) and over the source
 * (cross-attention). The decoded text comes first, as text people can copy. The state is
 * per run: switching runs shows that run's own last decode and prompt, never another's.
 * A request with no answer for 60 s fails with a visible error (requests time out: docs/ARCHITECTURE.md, "The
 * protocol").
 * Below the decode, the prompt steered beside unsteered (playgroundSteer.ts), the same text
 * through other runs side by side (playgroundCompare.ts), and
 * the logit lens and head ablation of the same text (playgroundInside.ts).
 *
 * Leaves out: the form (playgroundForm.ts) and decoding itself (the host's job).
 */

import type { AttentionStack, DecodeOutput } from '../../src/protocol/model';
import { stopReasonText } from '../../src/protocol/model';
import type { FromWebview } from '../../src/protocol/webview';
import { validateFromWebview } from '../../src/protocol/webview';
import { h, replaceChildren } from '../base/dom';
import { formatNumber, formatPercent } from '../../src/common/format';
import { isPadToken, showToken, tokenTitle } from '../base/format';
import { HeatmapView } from '../heatmap/heatmapView';
import type { PlaygroundDecode, StoreEvent } from '../store';
import type { Panel, PanelContext } from './panel';
import { playgroundForm } from './playgroundForm';
import { PlaygroundCompare } from './playgroundCompare';
import { PlaygroundInside } from './playgroundInside';
import { PlaygroundSteer } from './playgroundSteer';

const TIMEOUT_MS = 60_000;

/** The playground tab. */
export class PlaygroundPanel implements Panel {
  readonly id = 'playground' as const;
  readonly label = 'Playground';
  readonly el = h('section', { className: 'panel playground' });
  private readonly status = h('p', { className: 'pg-status', attrs: { 'aria-live': 'polite' } });
  /** The decoded text as text (decoder-only: the prompt, then the continuation). */
  private readonly text = h('div', { className: 'pg-text-box' });
  private readonly prompt = h('div', { className: 'pg-prompt' });
  private readonly output = h('div', {
    className: 'pg-output',
    attrs: { role: 'toolbar', 'aria-label': 'Generated tokens' },
  });
  private readonly beams = h('div', { className: 'pg-beams' });
  private readonly attention = h('div', { className: 'pg-attention' });
  /** The last decode of each run (by run id): the playground state is per run. */
  private readonly decodes = new Map<string, PlaygroundDecode>();
  /** The decode whose tokens are on screen, so a run switch resets the picked token. */
  private shown: PlaygroundDecode | null = null;
  private picked = -1;
  private pendingFull = false;
  private timer: ReturnType<typeof setTimeout> | null = null;
  /** The logit lens and head ablation of the playground's text. */
  private readonly inside: PlaygroundInside;
  /** The same text through other runs, side by side. */
  private readonly compare: PlaygroundCompare;
  /** The prompt decoded with and without a steering vector. */
  private readonly steer: PlaygroundSteer;

  constructor(private readonly ctx: PanelContext) {
    this.inside = new PlaygroundInside(ctx);
    this.compare = new PlaygroundCompare(ctx);
    this.steer = new PlaygroundSteer(ctx, () => ({ ...ctx.ui.playground }));
  }

  wants(ev: StoreEvent): boolean {
    if (ev.kind === 'analysis') {
      if (!this.compare.owns(ev.id, 'analysis') && !this.steer.owns(ev.id)) this.inside.answered(ev.id);
      return true;
    }
    if (ev.kind === 'decode' && ev.fromHost) {
      // A decode the host ran (the Decode command): show it, with its input in the form.
      const s = this.ctx.store.decode(ev.id);
      if (s) {
        this.decodes.set(s.runId, s);
        this.picked = -1;
        this.pendingFull = true;
        Object.assign(this.ctx.ui.playground, s.params);
        this.ctx.ui.playgroundInputs[s.runId] = s.params.input;
      }
      return true;
    }
    return (
      ev.kind === 'runs' || (ev.kind === 'decode' && (ev.id === this.current?.id || this.compare.owns(ev.id, 'decode')))
    );
  }

  /** The selected run's last decode, if any. */
  private get current(): PlaygroundDecode | null {
    const run = this.ctx.run();
    return (run && this.decodes.get(run.id)) ?? null;
  }

  render(full: boolean): void {
    full ||= this.pendingFull;
    this.pendingFull = false;
    const run = this.ctx.run();
    if (full) {
      const host = this.ctx.host;
      const encdec = run?.summary.kind === 'encoder-decoder';
      const ui = this.ctx.ui;
      Object.assign(ui.playground, { input: run ? (ui.playgroundInputs[run.id] ?? '') : '' });
      const onChange = (): void => {
        if (run) ui.playgroundInputs[run.id] = ui.playground.input;
        this.ctx.saveUi();
      };
      const examples = run?.summary.data?.prompts ?? [];
      const form = playgroundForm(ui.playground, {
        encdec,
        examples,
        enabled: host.interactive && run !== undefined,
        chat: run?.summary.tokenizer?.chatTemplate === true,
        onChange,
        submit: () => this.decode(),
      });
      replaceChildren(
        this.el,
        host.offlineReason ? h('p', { className: 'note offline', attrs: { role: 'note' } }, host.offlineReason) : null,
        form.el,
        this.status,
        this.text,
        h('h3', {}, encdec ? 'Source tokens' : 'Prompt tokens'),
        this.prompt,
        h(
          'h3',
          {},
          'Generated tokens ',
          h('span', { className: 'hint' }, '(probability under the model; click one to see its attention)'),
        ),
        this.output,
        this.beams,
        this.attention,
        this.steer.el,
        this.compare.el,
        this.inside.el,
      );
      this.inside.render();
      this.steer.render();
      this.compare.render(run);
    } else {
      this.inside.show();
      this.steer.show();
      this.compare.show();
    }
    this.showDecode();
  }

  hide(): void {
    this.inside.hide();
  }

  /** Puts `text` in the selected run's prompt (or source) and asks for its logit lens. */
  lookInside(text: string): void {
    const run = this.ctx.run();
    if (!run || !this.ctx.host.interactive) return;
    this.ctx.ui.playgroundInputs[run.id] = text;
    this.ctx.saveUi();
    this.pendingFull = true;
    this.inside.requestLens();
  }

  private decode(): void {
    const run = this.ctx.run();
    if (!run || !this.ctx.host.interactive) return;
    const { chat, ...rest } = this.ctx.ui.playground;
    // The box is a setting of the form; only a run with a chat template is asked to use it.
    const params = chat === true && run.summary.tokenizer?.chatTemplate === true ? { ...rest, chat } : rest;
    const s = this.ctx.store.beginDecode(run.id, params);
    this.ctx.ui.playgroundInputs[run.id] = params.input;
    const msg: FromWebview = { type: 'model/decode', id: s.id, runDir: run.summary.runDir, params };
    try {
      validateFromWebview(msg);
    } catch (e) {
      this.ctx.problem(`The decode settings are invalid: ${(e as Error).message}`);
      return;
    }
    this.decodes.set(run.id, s);
    this.picked = -1;
    this.armTimeout();
    this.ctx.host.post(msg);
    this.showDecode();
  }

  private armTimeout(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    const s = this.current;
    this.timer = setTimeout(() => {
      if (s && !s.output && !s.error) {
        s.error = {
          code: 'decode/timeout',
          message:
            `No answer from the host for ${TIMEOUT_MS / 1000} s; try again, or check the ` +
            `Attention Lab output channel.`,
        };
        this.showDecode();
      }
    }, TIMEOUT_MS);
  }

  private showDecode(): void {
    const s = this.current;
    if (s !== this.shown) this.picked = -1;
    this.shown = s;
    if (!s) {
      this.status.textContent = this.ctx.host.interactive ? 'Enter a prompt and press Decode (Ctrl+Enter).' : '';
      this.status.classList.remove('error');
      replaceChildren(this.text);
      replaceChildren(this.prompt);
      replaceChildren(this.output);
      replaceChildren(this.beams);
      replaceChildren(this.attention);
      return;
    }
    if (!s.output && !s.error) this.armTimeout();
    const out = s.output;
    if (s.error) this.status.textContent = `Decode failed: ${s.error.message}`;
    else if (!out) this.status.textContent = `Decoding… ${s.tokens.length} token(s)`;
    else
      this.status.textContent =
        `Done: ${out.tokens.length} token(s) — ` +
        `${stopReasonText(out.stopReason)}. Score ${formatNumber(out.score, 3)}` +
        (s.params.strategy === 'beam'
          ? ` (log-probability / length penalty, α = ${s.params.lengthPenalty})`
          : ' (sum of log-probabilities)') +
        `.${out.contextNote !== undefined ? ` ${out.contextNote}` : ''}`;
    this.status.classList.toggle('error', s.error !== null);
    this.showText(s);
    const tokens = out ? out.tokens.map((t, i) => ({ token: t, logprob: out.logprobs[i] ?? Number.NaN })) : s.tokens;
    replaceChildren(
      this.prompt,
      ...(out
        ? out.promptTokens.map((t, i) =>
            h(
              'span',
              { className: `chip${isPadToken(t) ? ' pad' : ''}`, attrs: { title: `position ${i}: ${tokenTitle(t)}` } },
              showToken(t),
            ),
          )
        : []),
    );
    const chips = tokens.map((t, i) => {
      const p = Math.exp(t.logprob);
      const b = h(
        'button',
        {
          className: 'chip token',
          attrs: {
            type: 'button',
            'data-index': i,
            'aria-pressed': String(i === this.picked),
            'aria-label': `token ${i + 1}: ${showToken(t.token)}, probability ${formatPercent(p)}`,
            tabindex: i === Math.max(0, this.picked) ? 0 : -1,
          },
        },
        h('span', { className: 'tok' }, showToken(t.token)),
        h('span', { className: 'prob' }, formatPercent(p)),
      );
      b.style.setProperty('--p', p.toFixed(3));
      b.addEventListener('click', () => this.pick(i));
      b.addEventListener('keydown', (e) => {
        const d = e.key === 'ArrowRight' ? 1 : e.key === 'ArrowLeft' ? -1 : 0;
        if (d === 0) return;
        e.preventDefault();
        const next = this.output.querySelector<HTMLButtonElement>(
          `button[data-index="${Math.min(tokens.length - 1, Math.max(0, i + d))}"]`,
        );
        next?.focus();
      });
      return b;
    });
    replaceChildren(this.output, ...chips);
    replaceChildren(
      this.beams,
      ...(out && out.beams.length > 1
        ? [
            h('h3', {}, 'Beams (n-best)'),
            h(
              'ol',
              {},
              ...out.beams.map((b) => h('li', {}, h('code', {}, b.text), ` score ${formatNumber(b.score, 3)}`)),
            ),
          ]
        : []),
    );
    if (out && this.picked >= 0) this.showAttention(out, this.picked);
    else replaceChildren(this.attention);
  }

  /** The decoded text, copyable: decoder-only shows the prompt (muted) and its continuation. */
  private showText(s: PlaygroundDecode): void {
    const out = s.output;
    if (!out) {
      replaceChildren(this.text);
      return;
    }
    const run = this.ctx.store.run(s.runId);
    const encdec = run?.summary.kind === 'encoder-decoder';
    const full = encdec ? out.text : s.params.input + out.text;
    const pre = h(
      'pre',
      { className: 'pg-text', attrs: { 'aria-label': 'Decoded text' } },
      encdec ? null : h('span', { className: 'pg-text-prompt' }, s.params.input),
      h('span', { className: 'pg-text-gen' }, out.text),
    );
    const copy = h(
      'button',
      { className: 'pg-copy', attrs: { type: 'button', title: 'Copy the decoded text' } },
      'Copy',
    );
    copy.addEventListener('click', () => {
      void navigator.clipboard?.writeText(full).then(
        () => (copy.textContent = 'Copied'),
        () => (copy.textContent = 'Select the text to copy'),
      );
    });
    replaceChildren(
      this.text,
      h(
        'h3',
        {},
        encdec ? 'Output text' : 'Text ',
        encdec ? null : h('span', { className: 'hint' }, '(prompt, then what the model wrote)'),
      ),
      pre,
      copy,
    );
  }

  private pick(i: number): void {
    this.picked = i;
    this.showDecode();
    this.output.querySelector<HTMLButtonElement>(`button[data-index="${i}"]`)?.focus();
  }

  private showAttention(out: DecodeOutput, i: number): void {
    const a = out.attention;
    if (!a || i >= a.queries) {
      replaceChildren(
        this.attention,
        h(
          'p',
          { className: 'note' },
          a ? 'No attention recorded for this token.' : 'The host returned no attention for this decode.',
        ),
      );
      return;
    }
    const run = this.ctx.store.run(this.current?.runId);
    const encdec = run?.summary.kind === 'encoder-decoder' || a.sourceLength > 0;
    const context = [...(encdec ? ['<bos>'] : out.promptTokens), ...out.tokens];
    const K = a.selfKeys;
    const H = a.nHeads;
    const T = a.queries;
    const q = a.queryStart + i;
    const rowLabels = a.self.flatMap((_, l) => Array.from({ length: H }, (__, hd) => `L${l + 1}·H${hd + 1}`));
    const views: HTMLElement[] = [];
    const build = (
      maps: readonly Float32Array[],
      cols: number,
      colLabels: string[],
      label: string,
      stack: AttentionStack,
    ): void => {
      const causal = stack === 'decoder.self';
      const rows = maps.length * H;
      const values = new Float32Array(rows * cols);
      maps.forEach((m, l) => {
        for (let hd = 0; hd < H; hd++)
          values.set(m.subarray((hd * T + i) * cols, (hd * T + i + 1) * cols), (l * H + hd) * cols);
      });
      const mask = causal ? Uint8Array.from({ length: rows * cols }, (_, k) => (k % cols <= q ? 1 : 0)) : null;
      const v = new HeatmapView(label, 520);
      v.set(
        {
          data: { rows, cols, values, offset: 0, mask, mode: 'prob', scale: 'linear' },
          rowLabels,
          colLabels,
          rowTitle: 'layer · head',
          colTitle: `keys (${cols})`,
          describe: (t, s) =>
            `${rowLabels[t]} → key ${s} “${showToken(colLabels[s] ?? '')}”: p = ` +
            (`${formatNumber(values[t * cols + s] as number, 4)}` +
              `${mask && mask[t * cols + s] === 0 ? ' — masked (future)' : ''}`),
        },
        this.ctx.theme,
      );
      views.push(
        h('figure', { className: 'pg-map', attrs: { 'data-stack': stack } }, h('figcaption', {}, label), v.el),
      );
    };
    // Row i is the query at position q, whose output chose token i: its keys are positions ≤ q.
    const chosen = showToken(out.tokens[i] ?? '');
    const query = showToken(context[q] ?? '');
    build(
      a.self,
      K,
      Array.from({ length: K }, (_, s) => context[s] ?? `#${s}`),
      `Self-attention while choosing “${chosen}” (query: position ${q}, “${query}”)`,
      'decoder.self',
    );
    if (a.cross.length > 0 && a.sourceLength > 0)
      build(
        a.cross,
        a.sourceLength,
        Array.from({ length: a.sourceLength }, (_, s) => out.promptTokens[s] ?? `#${s}`),
        `Cross-attention over the source while choosing “${chosen}”`,
        'decoder.cross',
      );
    replaceChildren(this.attention, ...views);
  }
}
