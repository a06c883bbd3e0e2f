/**
 * The one error long work throws when it is told to stop (reading a corpus, importing a
 * checkpoint, waiting for a probe): the caller tells it from a failure and says nothing was
 * saved.
 */

/** Thrown when {@link WorkHooks.isCancelled} says stop. */
export class CancelledError extends Error {
  constructor(what: string) {
    super(`Cancelled while ${what}; nothing was saved.`);
    this.name = 'CancelledError';
  }
}
