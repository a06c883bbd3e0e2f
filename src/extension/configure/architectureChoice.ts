/**
 * Configure Model…'s architecture step as plain data: after the preset, each option of
 * today's transformers (src/common/architecture.ts: positions, RoPE θ, norms, QK-norm, the
 * feed-forward's kind, key/value heads, biases, soft-caps, the window, the parallel residual,
 * the embedding norm) with its value in words and what it does; choosing one changes the
 * draft's `attentionLab.model.overrides`. A value equal to the preset's drops its override, so
 * the settings keep only what differs. Whether a combination is valid is the engine's call:
 * the draft's size estimate runs `validateConfig` and its one-line message is shown.
 *
 * Leaves out: the quick-input UI (configure.ts) and the estimate itself (the lab module).
 */

import type { ArchitectureOption } from '../../common/architecture';
import { ARCHITECTURE_OPTIONS, OPTION_INFO, architectureLine, choiceName, optionName } from '../../common/architecture';
import type { ModelConfigData } from '../../protocol/model';
import type { Draft, Estimator } from './configureDraft';
import { estimateSpecOf } from './configureDraft';
import type { Settings } from '../base/settings';

/** A value of an override, as `attentionLab.model.overrides` holds it. */
export type FieldValue = string | number | boolean;

/** One row of the architecture step. */
export interface OptionRow {
  readonly key: ArchitectureOption;
  /** "positions", "key/value heads"… */
  readonly title: string;
  /** The value in words ("RoPE θ 10000"), "?" when the config could not be made. */
  readonly value: string;
  readonly description: string;
  /** True when the draft's overrides set it (it differs from the preset's). */
  readonly changed: boolean;
}

/** What the architecture step shows for a draft. */
export interface ArchitectureView {
  readonly rows: readonly OptionRow[];
  /** The architecture in one line ("RoPE θ 10000 · RMSNorm · SwiGLU · GQA 4 q / 2 kv heads"), or null when invalid. */
  readonly line: string | null;
  /** The engine's one-line message when the draft's model cannot be made, else null. */
  readonly problem: string | null;
}

/** The config a draft resolves to (preset, the data's fields, overrides), or the engine's message. */
export function draftConfig(
  s: Settings,
  d: Draft,
  estimate: Estimator,
): { readonly ok: true; readonly config: ModelConfigData } | { readonly ok: false; readonly error: string } {
  try {
    const e = estimate(estimateSpecOf(s, d), null);
    return { ok: true, config: e.config as ModelConfigData };
  } catch (err) {
    return { ok: false, error: err instanceof Error ? err.message : String(err) };
  }
}

/** The architecture options whose values the draft's overrides set. */
function archOverrides(d: Draft): Set<string> {
  return new Set(Object.keys(d.overrides).filter((k) => (ARCHITECTURE_OPTIONS as readonly string[]).includes(k)));
}

/**
 * An option's value as its row shows it, beside its title: the option's name in words, but RoPE's
 * θ and fraction as numbers (the title names them) and said to be unused without RoPE, and the
 * norm scale as "learned scale" / "no scale".
 */
function rowValue(key: ArchitectureOption, c: ModelConfigData): string {
  const ropeOnly = c.positional === 'rope' ? '' : ' (used with RoPE only)';
  if (key === 'ropeTheta') return `${String(c.ropeTheta)}${ropeOnly}`;
  if (key === 'rotaryFraction') return `${String(c.rotaryFraction)}${ropeOnly}`;
  if (key === 'normScale') return c.normScale === false ? 'no scale' : 'learned scale';
  return optionName(key, c);
}

/** An override's value as its option's type (settings may hold "true" or "10000", as `--set` gives them). */
function typed(key: ArchitectureOption, v: FieldValue): FieldValue {
  if (typeof v !== 'string') return v;
  const type = OPTION_INFO[key].type;
  if (type === 'bool') return v === 'true' ? true : v === 'false' ? false : v;
  return type === 'int' || type === 'number' ? Number(v) : v;
}

/**
 * The config the draft asks for when the engine refuses it: the preset's (with the other
 * overrides) and the chosen architecture options over it, so each row still shows what was
 * chosen beside the engine's message; null when even the preset's model cannot be made.
 */
function chosenConfig(s: Settings, d: Draft, estimate: Estimator): ModelConfigData | null {
  const set = archOverrides(d);
  const base = draftConfig(s, withPresetArchitecture(d), estimate);
  if (!base.ok) return null;
  const chosen = Object.entries(d.overrides)
    .filter(([k]) => set.has(k))
    .map(([k, v]) => [k, typed(k as ArchitectureOption, v)]);
  return { ...base.config, ...Object.fromEntries(chosen) } as ModelConfigData;
}

/** The config whose values the step shows: the draft's, or when the engine refuses it, what was chosen (null: none). */
export function shownConfig(s: Settings, d: Draft, estimate: Estimator): ModelConfigData | null {
  const r = draftConfig(s, d, estimate);
  return r.ok ? r.config : chosenConfig(s, d, estimate);
}

/** The rows and the verdict of the architecture step for a draft. */
export function architectureView(s: Settings, d: Draft, estimate: Estimator): ArchitectureView {
  const r = draftConfig(s, d, estimate);
  const set = archOverrides(d);
  const shown = r.ok ? r.config : chosenConfig(s, d, estimate);
  const rows = ARCHITECTURE_OPTIONS.map((key): OptionRow => ({
    key,
    title: OPTION_INFO[key].title,
    value: shown ? rowValue(key, shown) : '?',
    description: OPTION_INFO[key].description,
    changed: set.has(key),
  }));
  return r.ok ? { rows, line: architectureLine(r.config), problem: null } : { rows, line: null, problem: r.error };
}

/**
 * The engine's one-line message as a refusal row: what is wrong on the row's first line and what
 * to do on its second (the engine writes "…problem…; …fix…"), so neither is cut off at the width
 * of the list.
 */
export function refusalRow(message: string): { readonly label: string; readonly detail: string } {
  const cut = message.indexOf('; ');
  if (cut < 0) return { label: message, detail: 'Change an option below, or go Back to the preset.' };
  const fix = message.slice(cut + 2);
  return { label: `${message.slice(0, cut)}:`, detail: `${fix.charAt(0).toUpperCase()}${fix.slice(1)}` };
}

/** The values a choice or on/off option takes, each in words, for its pick list. */
export function optionChoices(
  key: ArchitectureOption,
  config: ModelConfigData | null,
): { readonly value: FieldValue; readonly label: string }[] {
  const info = OPTION_INFO[key];
  if (info.type === 'bool') {
    const named = (v: boolean): string => (config ? optionName(key, { ...config, [key]: v }) : String(v));
    return [
      { value: true, label: named(true) },
      { value: false, label: named(false) },
    ];
  }
  return (info.choices ?? []).map((value) => ({ value, label: choiceName(value) }));
}

/**
 * Error of a typed-in number for a numeric option, or null: whole numbers ≥ 0 for key/value
 * heads and the window, a finite number otherwise (the ranges and relations are the engine's).
 */
export function validateOptionNumber(key: ArchitectureOption, v: string): string | null {
  const t = v.trim();
  const title = OPTION_INFO[key].title;
  if (OPTION_INFO[key].type === 'int')
    return /^\d+$/.test(t) ? null : `The ${title} must be a whole number ≥ 0 (0 = off or as many as the heads).`;
  return t !== '' && Number.isFinite(Number(t)) ? null : `The ${title} must be a number, e.g. 10000 or 0.25.`;
}

/**
 * The draft with option `key` set to `value`: an override, or none when the value is the one
 * the preset (with the data's fields) gives, so the settings hold only what differs.
 */
export function withOption(
  s: Settings,
  d: Draft,
  key: ArchitectureOption,
  value: FieldValue,
  estimate: Estimator,
): Draft {
  const rest = Object.fromEntries(Object.entries(d.overrides).filter(([k]) => k !== key));
  const base = draftConfig(s, { ...d, overrides: rest }, estimate);
  const same = base.ok && (base.config as Record<string, unknown>)[key] === value;
  return { ...d, overrides: same ? rest : { ...rest, [key]: value } };
}

/** The draft with the architecture options back at the preset's (other overrides, such as sizes, stay). */
export function withPresetArchitecture(d: Draft): Draft {
  const set = archOverrides(d);
  return { ...d, overrides: Object.fromEntries(Object.entries(d.overrides).filter(([k]) => !set.has(k))) };
}

/** The architecture options the draft changes from its preset, as "key=value" words for the review. */
export function changedOptions(d: Draft): string[] {
  const set = archOverrides(d);
  return Object.entries(d.overrides)
    .filter(([k]) => set.has(k))
    .map(([k, v]) => `${k}=${String(v)}`);
}
