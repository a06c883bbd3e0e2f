/**
 * The one error type the engine throws. Every message says what was expected, what was
 * found, and what to change; `code` lets callers (worker, CLI, extension) react without
 * parsing text. Engine errors cross thread boundaries as plain data (`toData`).
 */

/**
 * Machine-readable category of an engine error. What each means for the user (fix it, or a
 * failure) is decided once, in lab/base/errorCodes.ts, which does not compile until a new code is
 * classified.
 */
export type EngineErrorCode =
  | 'config/invalid'
  | 'shape/mismatch'
  | 'input/invalid'
  | 'tokenizer/invalid'
  | 'checkpoint/invalid'
  | 'train/nonFinite'
  /** The WebGPU backend's device was lost (a driver reset, a GPU unplugged, destroyed): nothing on it is readable. */
  | 'gpu/lost';

/** Plain-data form of an {@link EngineError}, safe to post between threads. */
export interface EngineErrorData {
  readonly code: EngineErrorCode;
  readonly message: string;
}

/** An error whose message tells the user what to change. */
export class EngineError extends Error {
  readonly code: EngineErrorCode;

  constructor(code: EngineErrorCode, message: string, options?: { cause?: unknown }) {
    // One line, always: a message may quote a parser's (JSON.parse shows the text around a
    // damaged byte, line breaks included), and people see it as one line in a terminal or a toast.
    super(message.replace(/\s*[\r\n]+\s*/g, ' '), options);
    this.name = 'EngineError';
    this.code = code;
  }

  /** True when `e` is an EngineError (optionally of one code), also across realms. */
  static is(e: unknown, code?: EngineErrorCode): e is EngineError {
    return (
      e instanceof Error &&
      e.name === 'EngineError' &&
      typeof (e as EngineError).code === 'string' &&
      (code === undefined || (e as EngineError).code === code)
    );
  }

  toData(): EngineErrorData {
    return { code: this.code, message: this.message };
  }
}
