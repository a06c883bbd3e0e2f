/**
 * Argument parsing for the CLI on top of Node's `util.parseArgs` (strict: an unknown flag
 * is an error), with typed getters whose errors say which flag is wrong and what it takes.
 */

import { parseArgs } from 'node:util';

/** A mistake on the command line: printed as one line, exit code 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/** Declared flags of one command. */
export type FlagSpec = Record<string, { type: 'string' | 'boolean'; multiple?: boolean; short?: string }>;

/** Parsed flags with checked getters. */
export class Flags {
  constructor(
    private readonly values: Record<string, string | boolean | (string | boolean)[] | undefined>,
    readonly positionals: string[],
  ) {}

  has(name: string): boolean {
    return this.values[name] !== undefined;
  }

  bool(name: string): boolean {
    return this.values[name] === true;
  }

  str(name: string): string | undefined {
    const v = this.values[name];
    if (v === undefined) return undefined;
    if (typeof v !== 'string') throw new UsageError(`--${name} needs a value.`);
    return v;
  }

  list(name: string): string[] {
    const v = this.values[name];
    if (v === undefined) return [];
    return (Array.isArray(v) ? v : [v]).map(String);
  }

  /** An integer flag within [min, max]. */
  int(name: string, fallback: number, min = 1, max = Number.MAX_SAFE_INTEGER): number {
    const s = this.str(name);
    if (s === undefined) return fallback;
    const n = Number(s);
    if (!Number.isInteger(n) || n < min || n > max) {
      throw new UsageError(
        `--${name} must be a whole number` +
          `${max < Number.MAX_SAFE_INTEGER ? ` from ${min} to ${max}` : ` ≥ ${min}`}` +
          `, got "${s}".`,
      );
    }
    return n;
  }

  /** A number flag within [min, max]. */
  num(name: string, fallback: number, min = -Infinity, max = Infinity): number {
    const s = this.str(name);
    if (s === undefined) return fallback;
    const n = Number(s);
    if (s.trim() === '' || !Number.isFinite(n) || n < min || n > max)
      throw new UsageError(
        `--${name} must be a number${Number.isFinite(min) ? ` ≥ ${min}` : ''}` +
          `${Number.isFinite(max) ? ` and ≤ ${max}` : ''}, got "${s}".`,
      );
    return n;
  }

  /** One of a fixed set. */
  choice<T extends string>(name: string, choices: readonly T[], fallback: T): T {
    const s = this.str(name);
    if (s === undefined) return fallback;
    if (!(choices as readonly string[]).includes(s))
      throw new UsageError(`--${name} must be one of ${choices.join(', ')}, got "${s}".`);
    return s as T;
  }
}

/** A value that starts with a dash but is no flag: a negative number ("-3", "-.5", "-1e-3") or "- text". */
const DASH_VALUE = /^-(?:[\d.]|Infinity$|\s|$)/;

/**
 * `--alpha -3` as `--alpha=-3`: Node's parser refuses a string flag's value that starts with a
 * dash (it could be a forgotten value followed by a flag); a negative number or "- text" cannot
 * be a flag, so it is joined to the string flag before it.
 */
function joinDashValues(argv: string[], spec: FlagSpec): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const name = a.startsWith('--') && !a.includes('=') ? a.slice(2) : undefined;
    const next = argv[i + 1];
    if (name !== undefined && spec[name]?.type === 'string' && next !== undefined && DASH_VALUE.test(next)) {
      out.push(`${a}=${next}`);
      i++;
    } else out.push(a);
  }
  return out;
}

/** Parses `argv` against `spec`; unknown flags and stray positionals become UsageErrors. */
export function parseFlags(command: string, argv: string[], spec: FlagSpec, maxPositionals = 0): Flags {
  let parsed;
  try {
    parsed = parseArgs({
      args: joinDashValues(argv, spec),
      options: { ...spec, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
      strict: true,
      allowPositionals: true,
    });
  } catch (e) {
    const msg = (e as Error).message;
    const ambiguous = /^Option '(-[^']*)' argument is ambiguous/.exec(msg);
    if (ambiguous) {
      const flag = ambiguous[1];
      throw new UsageError(
        `${flag} needs a value; to give one that starts with a dash, write ${flag}=-VALUE ` +
          `(see \`attention-lab ${command} --help\`).`,
      );
    }
    const m = msg.replace(/\. To specify a positional argument.*$/s, '');
    throw new UsageError(`${m.replace(/^Unknown option/, 'unknown flag')} (see \`attention-lab ${command} --help\`).`);
  }
  if (parsed.positionals.length > maxPositionals) {
    throw new UsageError(
      `unexpected argument "${parsed.positionals[maxPositionals]}" for \`${command}\` (see ` +
        `\`attention-lab ${command} --help\`).`,
    );
  }
  return new Flags(
    parsed.values as Record<string, string | boolean | (string | boolean)[] | undefined>,
    parsed.positionals,
  );
}
