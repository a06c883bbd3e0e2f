/**
 * What every command gets from the entry point: the working directory, output functions
 * (stdout for results, stderr for people), and where the worker script lives. Tests run
 * commands in-process with their own context.
 */

/** The environment of one command. */
export interface CommandContext {
  readonly cwd: string;
  /** A line of results (stdout). */
  out(line: string): void;
  /** A line for people (stderr). */
  err(line: string): void;
  readonly stderr: NodeJS.WriteStream;
  /** Path of the bundled training worker (dist/worker.js). */
  readonly workerScript: string;
  /** Prints a help text and returns exit code 0. */
  help(text: string): number;
}
