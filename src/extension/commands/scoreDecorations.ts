/**
 * "Attention Lab: Score Selection": scores the selected text with a trained run (in the
 * model worker) and shades every token by its surprise, with a hover that gives the
 * token, its probability and log-probability. The shading stays until the document is
 * edited, another selection is scored, or "Clear Scores" runs.
 *
 * Leaves out: the scoring (lab/inference/score.ts, in the model worker) and the bucketing
 * rules (surprise.ts).
 */

import * as vscode from 'vscode';
import type { DisposableLike } from '../base/disposables';
import { DisposableStore } from '../base/disposables';
import { messageOf, showError } from '../base/errors';
import { askForRun, pickRun } from '../runs/pickRun';
import type { ScoredToken } from './surprise';
import { SURPRISE_BUCKETS, hoverText, scoreSummary, scoredTokens, splitPair } from './surprise';
import type { ContextKeys } from '../base/contextKeys';
import type { RunPickDeps } from '../runs/pickRun';
import type { ModelClient } from '../workers/modelClient';

/** What the score decorations use: picking the run, the model worker's scores, the context keys, the log. */
export interface ScoreDeps extends RunPickDeps {
  readonly log: vscode.LogOutputChannel;
  readonly models: Pick<ModelClient, 'request'>;
  readonly keys: ContextKeys;
}

const ALPHAS = [0.0, 0.12, 0.24, 0.38, 0.55];

/** Decorations of the last scored selection. */
export class ScoreDecorations implements DisposableLike {
  private readonly store = new DisposableStore();
  private readonly types: vscode.TextEditorDecorationType[];
  private scored: { uri: string; ranges: vscode.DecorationOptions[][] } | null = null;

  constructor(private readonly s: ScoreDeps) {
    this.types = ALPHAS.map((a, i) =>
      this.store.add(
        vscode.window.createTextEditorDecorationType({
          backgroundColor: `rgba(230, 80, 40, ${a})`,
          borderRadius: '2px',
          overviewRulerColor: i >= 3 ? `rgba(230, 80, 40, ${a + 0.2})` : undefined,
          overviewRulerLane: vscode.OverviewRulerLane.Right,
        }),
      ),
    );
    this.store.add(
      vscode.workspace.onDidChangeTextDocument(
        (e) => e.contentChanges.length && this.scored?.uri === e.document.uri.toString() && this.clear(),
      ),
    );
    this.store.add(vscode.window.onDidChangeVisibleTextEditors(() => this.redraw()));
  }

  /** Scores the active editor's selection. */
  async score(arg: unknown): Promise<ScoredToken[] | undefined> {
    const ed = vscode.window.activeTextEditor;
    if (!ed || ed.selection.isEmpty) {
      void vscode.window.showInformationMessage(
        'Select the text to score first (Score Selection shades each token by how much it surprised the model).',
      );
      return undefined;
    }
    const run = await pickRun(this.s, arg, { trained: true, purpose: 'score' });
    if (!run) return undefined;
    const text = ed.document.getText(ed.selection);
    let source: string | null = null;
    let target = text;
    let base = ed.document.offsetAt(ed.selection.start);
    if (run.kind === 'encoder-decoder') {
      const pair = splitPair(text);
      if (!pair) {
        const others = this.s.runs.items().filter((r) => r.kind === 'decoder-only' && r.hasModel && r.error === null);
        const choice = others.length === 0 ? 'Pick Another Run…' : 'Score with a Decoder-Only Run…';
        const msg =
          `${run.name} is an encoder-decoder run: select one "source<TAB>target" (or ` +
          `"source → target") line and its target is scored given the source — or score this text ` +
          `with a decoder-only run (` +
          (others.length === 0
            ? 'none is trained yet'
            : 'pick one; it becomes the active run, which you can also set in the Runs view or the status bar') +
          `).`;
        void vscode.window.showInformationMessage(msg, ...(others.length > 0 ? [choice] : [])).then(async (a) => {
          if (a !== choice) return;
          const other = await askForRun(
            this.s,
            others,
            'score',
            `${run.name} scores only source → target pairs; pick a decoder-only run for this text.`,
          );
          if (other) await vscode.commands.executeCommand('attentionLab.scoreSelection', other);
        });
        return undefined;
      }
      source = pair.source;
      target = pair.target;
      base += pair.targetStart;
    }
    let out;
    try {
      out = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Window, title: `Attention Lab: scoring with ${run.name}` },
        () => this.s.models.request('score', { runDir: run.runDir, source, text: target }),
      );
    } catch (e) {
      await showError(this.s.log, `Scoring with ${run.name} failed: ${messageOf(e)}`, e);
      return undefined;
    }
    const tokens = scoredTokens(out);
    const ranges: vscode.DecorationOptions[][] = this.types.map(() => []);
    for (const t of tokens) {
      if (t.end <= t.start) continue;
      const range = new vscode.Range(ed.document.positionAt(base + t.start), ed.document.positionAt(base + t.end));
      const hover = new vscode.MarkdownString(hoverText(t));
      hover.appendMarkdown('\n\n');
      hover.appendText(`scored by ${run.name}`);
      ranges[t.bucket]?.push({ range, hoverMessage: hover });
    }
    this.scored = { uri: ed.document.uri.toString(), ranges };
    this.s.keys.set('attentionLab.hasScores', true);
    this.redraw();
    const summary = scoreSummary(tokens, out.truncated);
    this.s.log.info(`Scored with ${run.name}: ${summary}`);
    vscode.window.setStatusBarMessage(
      `$(pulse) ${run.name}: ${summary} — shades: < ${SURPRISE_BUCKETS.join(', < ')} nats`,
      15000,
    );
    return tokens;
  }

  private redraw(): void {
    for (const ed of vscode.window.visibleTextEditors) {
      const mine = this.scored && ed.document.uri.toString() === this.scored.uri;
      this.types.forEach((t, i) => ed.setDecorations(t, mine ? (this.scored?.ranges[i] ?? []) : []));
    }
  }

  /** Removes the shading. */
  clear(): void {
    this.scored = null;
    this.s.keys.set('attentionLab.hasScores', false);
    this.redraw();
  }

  dispose(): void {
    this.store.dispose();
  }
}
