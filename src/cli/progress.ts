/**
 * The live progress line of `attention-lab train`: step, loss, tokens/s and ETA on one
 * redrawn line when stderr is a terminal, or a plain line every tenth of the run when it
 * is not (logs, CI).
 */

/** Formats seconds as 1h02m, 3m05s or 12s. */
export function formatDuration(s: number): string {
  if (!Number.isFinite(s) || s < 0) return '—';
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = Math.floor(s % 60);
  if (h) return `${h}h${String(m).padStart(2, '0')}m`;
  if (m) return `${m}m${String(sec).padStart(2, '0')}s`;
  return `${sec}s`;
}

function compact(n: number): string {
  return n >= 1e6 ? `${(n / 1e6).toFixed(1)}M` : n >= 1e3 ? `${(n / 1e3).toFixed(1)}k` : n.toFixed(0);
}

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
    const text = `step ${step}/${this.total}  loss ${loss.toFixed(4)}  ${compact(tokensPerSec)} tok/s  ETA ${formatDuration(eta)}${extra ? `  ${extra}` : ''}`;
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

/** Draws the work before the first step (reading, tokenizer, encoding): redrawn on a terminal, a line per phase and quarter otherwise. */
export class PrepareLine {
  private drawn = false;
  private lastKey = '';

  constructor(private readonly out: NodeJS.WriteStream) {}

  update(p: { readonly phase: string; readonly done: number; readonly total: number; readonly message: string }): void {
    const mb = (b: number): string => (b / 2 ** 20).toFixed(1);
    const pct = p.total > 0 ? Math.floor((100 * p.done) / p.total) : 0;
    const text = p.total > 0 ? `${p.message}  ${mb(p.done)}/${mb(p.total)} MB  ${pct}%` : p.message;
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
