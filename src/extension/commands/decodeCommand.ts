/**
 * "Attention Lab: Decode…": continues a prompt (decoder-only) or translates a source
 * (encoder-decoder) with a trained run, taking the editor's selection or asking for the
 * text, decoding in the model worker with the `attentionLab.decode.*` settings, and
 * showing the result in an editor and in the dashboard's playground (tokens, probabilities
 * and attention), and saying how many tokens came and why it stopped (a notification: the
 * limit of `attentionLab.decode.maxTokens`, the model's end of text, or its context, with the
 * sliding window's note when generation went past the context).
 *
 * Leaves out: the decoding algorithms (engine/decode).
 */

import * as vscode from 'vscode';
import type { DecodeOutput, DecodeParams } from '../../protocol/model';
import { messageOf, showError } from '../base/errors';
import { formatDuration, formatExample } from '../../common/format';
import { pickRun } from '../runs/pickRun';
import { decodeMessage } from '../base/summaryLines';
import type { DashboardCalls } from '../base/dashboardCalls';
import type { Settings } from '../base/settings';
import type { RunPickDeps } from '../runs/pickRun';
import type { ModelClient } from '../workers/modelClient';

/** What Decode uses. */
export interface DecodeDeps extends RunPickDeps {
  readonly log: vscode.LogOutputChannel;
  readonly models: Pick<ModelClient, 'request'>;
  readonly dashboard: Pick<DashboardCalls, 'showDecode'>;
  settings(): Settings;
}

/** The editor's selected text (trimmed of a trailing newline), or ''. */
export function selectedText(): string {
  const ed = vscode.window.activeTextEditor;
  if (!ed || ed.selection.isEmpty) return '';
  return ed.document.getText(ed.selection);
}

/** What a decode gave: the text, how many tokens, why it stopped, and the sentence shown for it. */
export interface DecodeSummary {
  /** The generated text (decoder-only: without the prompt). */
  readonly text: string;
  /** Generated tokens (EOS included when the model chose it). */
  readonly tokens: number;
  readonly stopReason: DecodeOutput['stopReason'];
  /** The notification shown: the count, the reason, and the context note when there is one. */
  readonly message: string;
}

/** Decodes with a run; `arg` may name the run. Resolves to what it gave (undefined when cancelled or failed). */
export async function decodeCommand(s: DecodeDeps, arg: unknown, textArg?: string): Promise<DecodeSummary | undefined> {
  const run = await pickRun(s, arg, { trained: true, purpose: 'decode' });
  if (!run) return undefined;
  const encdec = run.kind === 'encoder-decoder';
  let input = typeof textArg === 'string' ? textArg : selectedText();
  if (!input) {
    const typed = await vscode.window.showInputBox({
      title: `Attention Lab: decode with ${run.name}`,
      prompt: encdec
        ? 'Source text to translate (the model was trained on source → target pairs)'
        : 'Prompt for the model to continue',
      placeHolder: placeholderOf(run.data?.prompts ?? [], encdec),
      ignoreFocusOut: true,
    });
    if (typed === undefined) return undefined;
    input = typed;
  }
  const d = s.settings().decode;
  const params: DecodeParams = {
    input,
    strategy: d.strategy,
    beam: d.beamSize,
    lengthPenalty: d.lengthPenalty,
    temperature: d.temperature,
    topK: d.topK,
    topP: d.topP,
    maxTokens: d.maxTokens,
    seed: 1,
  };
  const t0 = Date.now();
  let output;
  try {
    output = await vscode.window.withProgress(
      {
        location: vscode.ProgressLocation.Notification,
        title: `Attention Lab: decoding with ${run.name}`,
        cancellable: false,
      },
      () => s.models.request('decode', { runDir: run.runDir, params }),
    );
  } catch (e) {
    await showError(s.log, `Decoding with ${run.name} failed: ${messageOf(e)}`, e);
    return undefined;
  }
  const message = decodeMessage(run.name, output);
  s.log.info(`${message} (${d.strategy}, ${formatDuration((Date.now() - t0) / 1000)})`);
  void vscode.window.showInformationMessage(`Attention Lab: ${message}`);
  const text = encdec ? output.text : input + output.text;
  const doc = await vscode.workspace.openTextDocument({ content: text, language: 'plaintext' });
  await vscode.window.showTextDocument(doc, { viewColumn: vscode.ViewColumn.Beside, preview: true });
  s.dashboard.showDecode(run.runDir, params, output);
  return { text: output.text, tokens: output.tokens.length, stopReason: output.stopReason, message };
}

/** The input box's placeholder: an example from the run's held-out data, when it has one. */
function placeholderOf(prompts: readonly string[], encdec: boolean): string {
  const first = prompts.find((p) => p.trim() !== '');
  if (first !== undefined) return `e.g. ${formatExample(first)}`;
  return encdec ? 'a source sentence like the ones it was trained on' : 'e.g. The';
}
