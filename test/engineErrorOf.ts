import { EngineError } from '../src/engine/errors';

/** The EngineError `f` throws; fails the test when it returns or throws anything else. */
export function engineErrorOf(f: () => unknown): EngineError {
  try {
    f();
  } catch (e) {
    if (EngineError.is(e)) return e;
    throw e;
  }
  throw new Error('expected an EngineError');
}
