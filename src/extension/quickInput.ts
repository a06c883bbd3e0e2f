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
export function pickStep<T>(opts: StepOptions & { readonly placeholder: string; readonly items: readonly ValueItem<T>[]; readonly active?: T; readonly busy?: Promise<readonly ValueItem<T>[]> }): Promise<T | Back | undefined> {
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

/** Shows an input box; `validate` returns an error message or null. */
export function inputStep(opts: StepOptions & { readonly prompt: string; readonly value: string; readonly validate: (v: string) => string | null }): Promise<string | Back | undefined> {
  const box = vscode.window.createInputBox();
  box.title = opts.title;
  box.step = opts.step;
  box.totalSteps = opts.totalSteps;
  box.prompt = opts.prompt;
  box.value = opts.value;
  box.ignoreFocusOut = true;
  box.buttons = opts.back ? [vscode.QuickInputButtons.Back] : [];
  return new Promise((resolve) => {
    const subs: vscode.Disposable[] = [];
    const done = (v: string | Back | undefined): void => {
      subs.forEach((d) => d.dispose());
      box.dispose();
      resolve(v);
    };
    subs.push(
      box.onDidTriggerButton((b) => b === vscode.QuickInputButtons.Back && done(BACK)),
      box.onDidChangeValue((v) => (box.validationMessage = opts.validate(v) ?? undefined)),
      box.onDidAccept(() => {
        const err = opts.validate(box.value);
        if (err) box.validationMessage = err;
        else done(box.value);
      }),
      box.onDidHide(() => done(undefined)),
    );
    box.show();
  });
}
