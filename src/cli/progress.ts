/**
 * The live progress line of `attention-lab train`: step, loss, tokens/s and ETA on one
 * redrawn line when stderr is a terminal, or a plain line every tenth of the run when it
 * is not (logs, CI).
 *
 * Leaves out: how the numbers are written (src/common/format.ts, as in the extension and dashboard).
 */

import { formatBytes, formatCompact, formatDuration, formatLoss, formatPercent } from '../common/format';

/** Draws training progress on a stream. */
export class ProgressLine {
  private lastPlain = -1;
  private drawn = false;
  private readonly startedAt = Date.now();

  constructor(
    private readonly out: NodeJS.WriteStream,
    private readonly total: number,
    private readonly startStep: number,
  ) {}

  update(step: number, loss: number, tokensPerSec: number, extra = ''): void {
    const done = step - this.startStep;
    const left = this.total - step;
    const elapsed = (Date.now() - this.startedAt) / 1000;
    const eta = done > 0 ? (elapsed / done) * left : NaN;
    const frac = step / this.total;
    const text =
      `step ${step}/${this.total}  loss ${formatLoss(loss)}  ` +
      `${formatCompact(tokensPerSec)} tok/s  ETA ${formatDuration(eta)}` +
      `${extra ? `  ${extra}` : ''}`;
    if (this.out.isTTY) {
      const width = 24;
      const fill = Math.round(frac * width);
      this.out.write(`\r\x1b[2K${'█'.repeat(fill)}${'░'.repeat(width - fill)} ${text}`);
      this.drawn = true;
    } else {
      const decile = Math.floor(frac * 10);
      if (decile !== this.lastPlain) {
        this.lastPlain = decile;
        this.out.write(`${text}\n`);
      }
    }
  }

  /** Prints a message above the progress line. */
  note(message: string): void {
    if (this.drawn && this.out.isTTY) this.out.write('\r\x1b[2K');
    this.out.write(`${message}\n`);
  }

  end(): void {
    if (this.drawn && this.out.isTTY) this.out.write('\n');
    this.drawn = false;
  }
}

/**
 * Draws the work before the first step (reading, tokenizer, encoding): redrawn on a terminal, a line per phase and
 * quarter otherwise.
 */
export class PrepareLine {
  private drawn = false;
  private lastKey = '';

  constructor(private readonly out: NodeJS.WriteStream) {}

  update(p: { readonly phase: string; readonly done: number; readonly total: number; readonly message: string }): void {
    const pct = p.total > 0 ? Math.floor((100 * p.done) / p.total) : 0;
    const text =
      p.total > 0
        ? `${p.message}  ${formatBytes(p.done)} of ${formatBytes(p.total)}  ${formatPercent(p.done / p.total)}`
        : p.message;
    if (this.out.isTTY) {
      this.out.write(`\r\x1b[2K${text}`);
      this.drawn = true;
      return;
    }
    const key = `${p.phase}:${Math.floor(pct / 25)}`;
    if (key !== this.lastKey) {
      this.lastKey = key;
      this.out.write(`${text}\n`);
    }
  }

  /** Clears the line (before training's own progress takes over). */
  end(): void {
    if (this.drawn && this.out.isTTY) this.out.write('\r\x1b[2K');
    this.drawn = false;
  }
}
