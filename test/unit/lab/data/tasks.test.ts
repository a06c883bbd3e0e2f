import { describe, expect, it } from 'vitest';
import { EngineError } from '../../../../src/engine/errors';
import { Rng } from '../../../../src/engine/rng';
import { PAIR_TASK_NAMES } from '../../../../src/protocol/data';
import { generatePairs, splitTaskData, taskInfo } from '../../../../src/lab/data/tasks';

const MONTHS = [
  'january',
  'february',
  'march',
  'april',
  'may',
  'june',
  'july',
  'august',
  'september',
  'october',
  'november',
  'december',
];
const DAYS = ['saturday', 'sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday'];

/** Zeller's congruence (0 = Saturday): an oracle independent of the code under test. */
function zeller(y: number, m: number, d: number): number {
  const mm = m < 3 ? m + 12 : m;
  const yy = m < 3 ? y - 1 : y;
  const k = yy % 100;
  const j = Math.floor(yy / 100);
  return (d + Math.floor((13 * (mm + 1)) / 5) + k + Math.floor(k / 4) + Math.floor(j / 4) + 5 * j) % 7;
}

function monthOf(name: string): number {
  const i = MONTHS.findIndex((m) => m === name.toLowerCase() || m.slice(0, 3) === name.toLowerCase());
  if (i < 0) throw new Error(`bad month ${name}`);
  return i + 1;
}

/** Parses every format the task promises; returns [y, m, d, weekday name or null]. */
function parseHumanDate(s: string): [number, number, number, string | null] {
  let r: RegExpExecArray | null;
  if ((r = /^(?:([A-Za-z]+), )?([A-Za-z]+) (\d{1,2})(?:st|nd|rd|th)?, (\d{4})$/.exec(s)))
    return [Number(r[4]), monthOf(r[2] ?? ''), Number(r[3]), r[1] ?? null];
  if ((r = /^(?:([A-Za-z]+), )?(\d{1,2}) ([A-Za-z]+) (\d{4})$/.exec(s)))
    return [Number(r[4]), monthOf(r[3] ?? ''), Number(r[2]), r[1] ?? null];
  if ((r = /^(\d{2})\/(\d{2})\/(\d{4})$/.exec(s))) return [Number(r[3]), Number(r[1]), Number(r[2]), null];
  if ((r = /^(\d{4})\.(\d{1,2})\.(\d{1,2})$/.exec(s))) return [Number(r[1]), Number(r[2]), Number(r[3]), null];
  if ((r = /^(\d{1,2})\.(\d{1,2})\.(\d{4})$/.exec(s))) return [Number(r[3]), Number(r[2]), Number(r[1]), null];
  throw new Error(`unparsed date source ${JSON.stringify(s)}`);
}

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
function isLeap(y: number): boolean {
  return (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
}

describe('generatePairs', () => {
  it('copy, reverse and sort map a small-alphabet string as named', () => {
    for (const task of ['copy', 'reverse', 'sort'] as const) {
      const info = taskInfo(task);
      for (const { src, tgt } of generatePairs(task, 300, new Rng(1))) {
        expect(src).toMatch(/^[a-j]+$/);
        expect(src.length).toBeGreaterThanOrEqual(info.srcLength.min);
        expect(src.length).toBeLessThanOrEqual(info.srcLength.max);
        const chars = src.split('');
        const want = task === 'copy' ? src : task === 'reverse' ? chars.reverse().join('') : chars.sort().join('');
        expect(tgt).toBe(want);
      }
    }
  });

  it('addition sums operands of up to three digits, small ones included', () => {
    const pairs = generatePairs('addition', 2000, new Rng(2));
    let oneDigit = 0;
    for (const { src, tgt } of pairs) {
      const m = /^(\d{1,3})\+(\d{1,3})$/.exec(src);
      expect(m).not.toBeNull();
      const [a, b] = [Number(m?.[1]), Number(m?.[2])];
      expect(String(a)).toBe(m?.[1]); // no leading zeros
      expect(tgt).toBe(String(a + b));
      if (a < 10) oneDigit++;
    }
    expect(oneDigit).toBeGreaterThan(400); // digit counts are uniform: ~1/3 have one digit
    const wide = generatePairs('addition', 200, new Rng(3), { maxDigits: 4 });
    expect(wide.some((p) => /^\d{4}\+/.test(p.src))).toBe(true);
  });

  it('dates: every source parses back to its ISO target, on a real calendar with right weekdays', () => {
    const pairs = generatePairs('dates', 3000, new Rng(4));
    const forms = new Set<string>();
    for (const { src, tgt } of pairs) {
      const [y, m, d, wd] = parseHumanDate(src);
      expect(tgt).toBe(`${y}-${String(m).padStart(2, '0')}-${String(d).padStart(2, '0')}`);
      const dim = m === 2 && isLeap(y) ? 29 : (DAYS_IN_MONTH[m - 1] as number);
      expect(d).toBeGreaterThanOrEqual(1);
      expect(d).toBeLessThanOrEqual(dim);
      if (wd !== null) {
        const want = DAYS[zeller(y, m, d)] as string;
        expect(want.startsWith(wd.toLowerCase())).toBe(true);
      }
      forms.add(src.replace(/\d/g, '9').replace(/[A-Za-z]+/g, 'A'));
      expect(src.length).toBeLessThanOrEqual(taskInfo('dates').srcLength.max);
      expect(src.length).toBeGreaterThanOrEqual(taskInfo('dates').srcLength.min);
    }
    expect(forms.size).toBeGreaterThanOrEqual(8); // many human formats, not one
  });

  it('the weekday oracle agrees on known dates', () => {
    expect(DAYS[zeller(2021, 3, 3)]).toBe('wednesday');
    expect(DAYS[zeller(2000, 1, 1)]).toBe('saturday');
    expect(DAYS[zeller(1969, 7, 20)]).toBe('sunday');
  });

  it('is deterministic per rng and differs across seeds', () => {
    for (const task of PAIR_TASK_NAMES) {
      expect(generatePairs(task, 50, new Rng(7))).toEqual(generatePairs(task, 50, new Rng(7)));
      expect(generatePairs(task, 50, new Rng(7))).not.toEqual(generatePairs(task, 50, new Rng(8)));
    }
  });

  it('rejects bad counts, lengths and task names with EngineError', () => {
    expect(() => generatePairs('copy', -1, new Rng(0))).toThrow(/count must be a whole number/);
    expect(() => generatePairs('copy', 1.5, new Rng(0))).toThrow(EngineError);
    expect(() => generatePairs('copy', 5, new Rng(0), { minLen: 5, maxLen: 2 })).toThrow(/maxLen/);
    expect(() => generatePairs('bogus' as 'copy', 5, new Rng(0))).toThrow(/Unknown task "bogus".*copy, reverse/);
  });

  it('honors minLen/maxLen', () => {
    for (const p of generatePairs('reverse', 200, new Rng(5), { minLen: 2, maxLen: 4 })) {
      expect(p.src.length).toBeGreaterThanOrEqual(2);
      expect(p.src.length).toBeLessThanOrEqual(4);
    }
  });
});

describe('taskInfo', () => {
  it('describes every task in one line with an example and sizes', () => {
    for (const task of PAIR_TASK_NAMES) {
      const info = taskInfo(task);
      expect(info.description.startsWith(`${task}: '`)).toBe(true);
      expect(info.description).toContain('→');
      expect(info.description).not.toContain('\n');
      expect(info.trainPairs).toBeGreaterThan(info.valPairs);
      expect(info.srcLength.min).toBeLessThanOrEqual(info.srcLength.max);
    }
    expect(taskInfo('reverse').description).toBe("reverse: 'abcde' → 'edcba'");
  });

  it('maxTgtLength bounds the generated targets', () => {
    for (const task of PAIR_TASK_NAMES) {
      const max = Math.max(...generatePairs(task, 500, new Rng(9)).map((p) => p.tgt.length));
      expect(max).toBeLessThanOrEqual(taskInfo(task).maxTgtLength);
    }
  });
});

describe('splitTaskData', () => {
  it('no validation source appears in training, and none repeats', () => {
    for (const task of PAIR_TASK_NAMES) {
      const { train, val } = splitTaskData(task, 3000, 300, 11);
      expect(train).toHaveLength(3000);
      expect(val).toHaveLength(300);
      const trainSrc = new Set(train.map((p) => p.src));
      expect(val.filter((p) => trainSrc.has(p.src))).toEqual([]);
      expect(new Set(val.map((p) => p.src)).size).toBe(300);
    }
  });

  it('dedupes even when the source space is tiny', () => {
    // length 1..2 over 10 letters: 110 sources; 100 training pairs cover many of them.
    const { train, val } = splitTaskData('copy', 100, 10, 3, { minLen: 1, maxLen: 2 });
    const trainSrc = new Set(train.map((p) => p.src));
    expect(val).toHaveLength(10);
    for (const p of val) expect(trainSrc.has(p.src)).toBe(false);
  });

  it('throws a clear error when there are not enough fresh sources', () => {
    expect(() => splitTaskData('copy', 500, 50, 3, { minLen: 1, maxLen: 1 })).toThrow(
      /ran out of new sources.*fewer pairs/,
    );
  });

  it('is deterministic per seed, and the training set does not depend on nVal', () => {
    const a = splitTaskData('dates', 200, 20, 5);
    expect(splitTaskData('dates', 200, 20, 5)).toEqual(a);
    expect(splitTaskData('dates', 200, 40, 5).train).toEqual(a.train);
    expect(splitTaskData('dates', 200, 20, 6).train).not.toEqual(a.train);
  });
});
