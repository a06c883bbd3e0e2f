/**
 * The playground's form: the prompt (or source sentence), the decoding strategy and its
 * knobs — beam size and length penalty (GNMT, as the paper's beam 4 / α 0.6), temperature,
 * top-k, top-p and seed for sampling, and the token budget. Only the knobs of the chosen
 * strategy are shown; the chat-template box only for a run whose tokenizer has one. Every
 * change writes the persisted UI state.
 *
 * Leaves out: sending the request and showing the result (playground.ts).
 */

import { DECODE_STRATEGIES } from '../../src/protocol/data';
import type { DecodeParams } from '../../src/protocol/model';
import { formatExample } from '../../src/common/format';
import { h } from '../base/dom';

type NumKey = 'beam' | 'lengthPenalty' | 'temperature' | 'topK' | 'topP' | 'maxTokens' | 'seed';

const KNOBS: readonly {
  key: NumKey;
  label: string;
  min: number;
  max: number;
  step: number;
  for: readonly DecodeParams['strategy'][];
}[] = [
  { key: 'beam', label: 'beam size', min: 1, max: 16, step: 1, for: ['beam'] },
  { key: 'lengthPenalty', label: 'length penalty α', min: 0, max: 2, step: 0.1, for: ['beam'] },
  { key: 'temperature', label: 'temperature', min: 0.05, max: 5, step: 0.05, for: ['sample'] },
  { key: 'topK', label: 'top-k (0 = off)', min: 0, max: 1000, step: 1, for: ['sample'] },
  { key: 'topP', label: 'top-p (1 = off)', min: 0.05, max: 1, step: 0.05, for: ['sample'] },
  { key: 'seed', label: 'seed', min: 0, max: 2 ** 31 - 1, step: 1, for: ['sample'] },
  { key: 'maxTokens', label: 'max tokens', min: 1, max: 1000, step: 1, for: DECODE_STRATEGIES },
];

/** Builds the form; `submit` is called with Enter (Ctrl+Enter in the text box) or the button. */
export function playgroundForm(
  p: DecodeParams,
  opts: {
    encdec: boolean;
    examples: readonly string[];
    enabled: boolean;
    /** The run's tokenizer has a chat template: offer to wrap the prompt in it. */
    chat: boolean;
    onChange(): void;
    submit(): void;
  },
): { el: HTMLElement; button: HTMLButtonElement } {
  const params = p as { -readonly [K in keyof DecodeParams]: DecodeParams[K] };
  const input = h('textarea', {
    attrs: { id: 'pg-input', rows: 2, spellcheck: false, placeholder: placeholderOf(opts.encdec, opts.examples) },
    on: {
      input: (e) => {
        params.input = (e.target as HTMLTextAreaElement).value;
        opts.onChange();
      },
      keydown: (e) => {
        const k = e as KeyboardEvent;
        if (k.key === 'Enter' && (k.ctrlKey || k.metaKey)) {
          k.preventDefault();
          opts.submit();
        }
      },
    },
  });
  input.value = params.input;
  const knobs = h('div', { className: 'pg-knobs' });
  const showKnobs = (): void => {
    for (const el of knobs.querySelectorAll<HTMLElement>('[data-for]'))
      el.hidden = !(el.dataset.for ?? '').split(' ').includes(params.strategy);
  };
  for (const k of KNOBS) {
    const id = `pg-${k.key}`;
    const field = h('input', {
      attrs: { id, type: 'number', min: k.min, max: k.max, step: k.step, value: params[k.key] },
      on: {
        change: (e) => {
          const v = Number((e.target as HTMLInputElement).value);
          if (Number.isFinite(v)) params[k.key] = Math.min(k.max, Math.max(k.min, k.step === 1 ? Math.round(v) : v));
          (e.target as HTMLInputElement).value = String(params[k.key]);
          opts.onChange();
        },
      },
    });
    knobs.appendChild(
      h(
        'span',
        { className: 'pg-knob', attrs: { 'data-for': k.for.join(' ') } },
        h('label', { attrs: { for: id } }, k.label),
        field,
      ),
    );
  }
  const strategies = h(
    'fieldset',
    { className: 'pg-strategy' },
    h('legend', {}, 'strategy'),
    ...DECODE_STRATEGIES.map((s) =>
      h(
        'label',
        {},
        h('input', {
          attrs: { type: 'radio', name: 'pg-strategy', value: s, checked: params.strategy === s },
          on: {
            change: () => {
              params.strategy = s;
              showKnobs();
              opts.onChange();
            },
          },
        }),
        ` ${s === 'sample' ? 'sampling' : s === 'beam' ? 'beam search' : 'greedy'}`,
      ),
    ),
  );
  showKnobs();
  const chat = opts.chat
    ? h(
        'label',
        { className: 'pg-chat', attrs: { title: "Wrap the prompt in the model's chat template as one user message" } },
        h('input', {
          attrs: { id: 'pg-chat', type: 'checkbox', checked: params.chat === true },
          on: {
            change: (e) => {
              params.chat = (e.target as HTMLInputElement).checked;
              opts.onChange();
            },
          },
        }),
        ' chat template',
      )
    : null;
  const button = h('button', { className: 'primary', attrs: { type: 'submit', disabled: !opts.enabled } }, 'Decode');
  const el = h(
    'form',
    {
      className: 'pg-form',
      attrs: { 'aria-label': 'Decode settings' },
      on: {
        submit: (e) => {
          e.preventDefault();
          opts.submit();
        },
      },
    },
    h('label', { attrs: { for: 'pg-input' } }, opts.encdec ? 'Source sentence' : 'Prompt'),
    input,
    chat,
    strategies,
    knobs,
    button,
  );
  return { el, button };
}

/**
 * The text box's placeholder, from the run's own held-out data (`data.prompts`: beginnings of
 * held-out text, or held-out sources for a pairs run), so it suggests what the model knows.
 */
export function placeholderOf(encdec: boolean, examples: readonly string[]): string {
  const what = encdec ? 'a source sentence' : 'a prompt';
  const first = examples.find((e) => e.trim() !== '');
  return first === undefined ? what : `${what}, e.g. ${formatExample(first)}`;
}
