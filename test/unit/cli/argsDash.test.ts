/**
 * Values that start with a dash (src/cli/args.ts): a negative number after a string flag
 * (`steer --alpha -3`, `--lr -1` to be refused by its own check) is that flag's value, and a
 * flag left without its value is one line that says how to pass a dash value.
 */
import { describe, expect, it } from 'vitest';
import { UsageError, parseFlags } from '../../../src/cli/args';

const spec = {
  alpha: { type: 'string' as const },
  layer: { type: 'string' as const },
  csv: { type: 'boolean' as const },
};

describe('dash values', () => {
  it('takes a negative number as the value of the string flag before it', () => {
    const f = parseFlags('steer', ['--alpha', '-3', '--layer', '-1', '--csv'], spec);
    expect(f.num('alpha', 0)).toBe(-3);
    expect(f.str('layer')).toBe('-1');
    expect(f.bool('csv')).toBe(true);
    expect(parseFlags('steer', ['--alpha', '-.5'], spec).num('alpha', 0)).toBe(-0.5);
    expect(parseFlags('steer', ['--alpha', '-2e-3'], spec).num('alpha', 0)).toBe(-0.002);
    expect(parseFlags('steer', ['--alpha=-4'], spec).num('alpha', 0)).toBe(-4);
  });

  it('refuses a flag without its value in one line naming the flag', () => {
    for (const argv of [
      ['--alpha', '--csv'],
      ['--alpha', '-ing'],
    ]) {
      let err: unknown;
      try {
        parseFlags('steer', argv, spec);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(UsageError);
      const m = (err as Error).message;
      expect(m).not.toContain('\n');
      expect(m).toContain('--alpha needs a value; to give one that starts with a dash, write --alpha=-VALUE');
    }
  });

  it('joins only a string flag: after a boolean flag a negative number stays refused, -h is help', () => {
    expect(() => parseFlags('steer', ['--csv', '-3'], spec, 1)).toThrow("unknown flag '-3'");
    expect(parseFlags('steer', ['-h'], spec).bool('help')).toBe(true);
  });
});
