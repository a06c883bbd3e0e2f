/**
 * Steps of a multi-step quick input with a Back button (VS Code's quick-input sample
 * pattern): each step resolves to a value, to BACK (the user pressed Back), or to
 * undefined (Escape). The flow that strings steps together lives in configure.ts.
 *
 * Leaves out: multi-select pickers and validation that needs I/O.
 */

import * as vscode from 'vscode';

/** Returned when the user pressed Back. */
export const BACK = Symbol('back');
export type Back = typeof BACK;

/** One pick item carrying a value. */
export interface ValueItem<T> extends vscode.QuickPickItem {
  readonly value?: T;
}

/** Shared options of a step. */
export interface StepOptions {
  readonly title: string;
  readonly step: number;
  readonly totalSteps: number;
  readonly back: boolean;
}

/** Shows a single-choice pick; items without a value (separators) cannot be chosen. */
export function pickStep<T>(
  opts: StepOptions & {
    readonly placeholder: string;
    readonly items: readonly ValueItem<T>[];
    readonly active?: T;
    readonly busy?: Promise<readonly ValueItem<T>[]>;
  },
): Promise<T | Back | undefined> {
  const qp = vscode.window.createQuickPick<ValueItem<T>>();
  qp.title = opts.title;
  qp.step = opts.step;
  qp.totalSteps = opts.totalSteps;
  qp.placeholder = opts.placeholder;
  qp.ignoreFocusOut = true;
  qp.matchOnDescription = true;
  qp.matchOnDetail = true;
  qp.buttons = opts.back ? [vscode.QuickInputButtons.Back] : [];
  const setItems = (items: readonly ValueItem<T>[]): void => {
    qp.items = items;
    const active = items.find((i) => i.value !== undefined && i.value === opts.active);
    if (active) qp.activeItems = [active];
  };
  setItems(opts.items);
  if (opts.busy) {
    qp.busy = true;
    opts.busy.then(
      (items) => {
        qp.busy = false;
        setItems(items);
      },
      () => (qp.busy = false),
    );
  }
  return new Promise((resolve) => {
    const subs: vscode.Disposable[] = [];
    const done = (v: T | Back | undefined): void => {
      subs.forEach((d) => d.dispose());
      qp.dispose();
      resolve(v);
    };
    subs.push(
      qp.onDidTriggerButton((b) => b === vscode.QuickInputButtons.Back && done(BACK)),
      qp.onDidAccept(() => {
        const v = qp.selectedItems[0]?.value;
        if (v !== undefined) done(v);
      }),
      qp.onDidHide(() => done(undefined)),
    );
    qp.show();
  });
}

/** What a live check said about the typed value. */
export interface LiveResult {
  readonly severity: 'info' | 'warning' | 'error';
  readonly message: string;
}

/**
 * A check that needs I/O, run while the user types: after `delayMs` of no typing, with a
 * token cancelled as soon as the text changes again. An 'error' result refuses Enter.
 */
export interface LiveCheck {
  readonly delayMs: number;
  run(value: string, token: vscode.CancellationToken): Promise<LiveResult>;
}

/** An extra title-bar button of an input box; the box stays open while `run` works. */
export interface InputButton {
  readonly icon: string;
  readonly tooltip: string;
  /** May show other quick inputs; the box is shown again when it resolves. */
  run(value: string): Promise<void>;
}

const SEVERITY = {
  info: vscode.InputBoxValidationSeverity.Info,
  warning: vscode.InputBoxValidationSeverity.Warning,
  error: vscode.InputBoxValidationSeverity.Error,
} as const;

/**
 * Shows an input box; `validate` returns an error message or null. With `live`, the check
 * runs as the user types (debounced, cancelled by the next keystroke) and its line shows
 * under the box; Enter waits for the check of the current text and is refused on 'error'.
 */
export function inputStep(
  opts: StepOptions & {
    readonly prompt: string;
    readonly value: string;
    readonly validate: (v: string) => string | null;
    readonly live?: LiveCheck;
    readonly button?: InputButton;
  },
): Promise<string | Back | undefined> {
  const box = vscode.window.createInputBox();
  box.title = opts.title;
  box.step = opts.step;
  box.totalSteps = opts.totalSteps;
  box.prompt = opts.prompt;
  box.value = opts.value;
  box.ignoreFocusOut = true;
  const extra: vscode.QuickInputButton | null = opts.button
    ? { iconPath: new vscode.ThemeIcon(opts.button.icon), tooltip: opts.button.tooltip }
    : null;
  box.buttons = [...(opts.back ? [vscode.QuickInputButtons.Back] : []), ...(extra ? [extra] : [])];
  let away = false; // the extra button's own quick input is showing: hiding the box is not Escape
  let timer: NodeJS.Timeout | undefined;
  let cts: vscode.CancellationTokenSource | undefined;
  let pending: Promise<LiveResult | null> = Promise.resolve(null);
  const check = (v: string): void => {
    clearTimeout(timer);
    cts?.cancel();
    cts?.dispose();
    const error = opts.validate(v);
    box.validationMessage = error ?? undefined;
    if (!opts.live || error) {
      cts = undefined;
      box.busy = false;
      pending = Promise.resolve(null);
      return;
    }
    const live = opts.live;
    const source = new vscode.CancellationTokenSource();
    cts = source;
    box.busy = true;
    pending = new Promise<LiveResult | null>((resolve) => {
      timer = setTimeout(() => {
        live.run(v, source.token).then(
          (r) => resolve(source.token.isCancellationRequested ? null : r),
          (e: unknown) =>
            resolve(
              source.token.isCancellationRequested
                ? null
                : { severity: 'error', message: e instanceof Error ? e.message : String(e) },
            ),
        );
      }, live.delayMs);
    });
    void pending.then((r) => {
      if (source.token.isCancellationRequested || r === null) return;
      box.busy = false;
      box.validationMessage = { message: r.message, severity: SEVERITY[r.severity] };
    });
  };
  return new Promise((resolve) => {
    const subs: vscode.Disposable[] = [];
    const done = (v: string | Back | undefined): void => {
      clearTimeout(timer);
      cts?.cancel();
      cts?.dispose();
      subs.forEach((d) => d.dispose());
      box.dispose();
      resolve(v);
    };
    subs.push(
      box.onDidTriggerButton((b) => {
        if (b === vscode.QuickInputButtons.Back) return done(BACK);
        if (b !== extra || !opts.button) return;
        away = true;
        void opts.button.run(box.value).finally(() => {
          away = false;
          box.show();
        });
      }),
      box.onDidChangeValue((v) => check(v)),
      box.onDidAccept(() => {
        const value = box.value;
        const err = opts.validate(value);
        if (err) {
          box.validationMessage = err;
          return;
        }
        void pending.then((r) => {
          if (box.value !== value) return; // typed on while waiting: the new text is checked afresh
          if (r?.severity === 'error') box.validationMessage = { message: r.message, severity: SEVERITY.error };
          else done(value);
        });
      }),
      box.onDidHide(() => !away && done(undefined)),
    );
    box.show();
    check(box.value);
  });
}
