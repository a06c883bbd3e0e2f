/**
 * The built-in generated tasks (copy, reverse, sort, addition, dates) as (src, tgt) string
 * pairs for the encoder-decoder, plus a train/validation split whose validation sources
 * never occur in the training set.
 *
 * Everything is a pure function of the `Rng` it is given, so the same seed gives the same
 * pairs on every machine. Dates use the proleptic Gregorian calendar computed with integer
 * arithmetic (days ↔ civil date, after H. Hinnant, "chrono-Compatible Low-Level Date
 * Algorithms"), so weekday names are right without relying on the host's time zone.
 *
 * Leaves out: tokenization and batching (the training loop does that), and any task whose
 * answer is not a deterministic function of its source.
 */

import { EngineError } from '../../engine/errors';
import { Rng } from '../../engine/rng';
import type { TaskName } from '../../protocol/data';
import { TASK_NAMES } from '../../protocol/data';
import type { TaskRun } from '../runs/runSpec';
import { MODULAR_P, MODULAR_TRAIN_FRACTION, MODULAR_TRAIN_PAIRS, TASK_RUNS } from '../runs/runSpec';

/** One source → target example. */
export interface TaskPair {
  readonly src: string;
  readonly tgt: string;
}

/** Knobs of the generators; every field has a per-task default (see {@link taskInfo}). */
export interface TaskOptions {
  /** Shortest source for copy/reverse/sort (characters). */
  readonly minLen?: number;
  /** Longest source for copy/reverse/sort (characters). */
  readonly maxLen?: number;
  /** Most digits of each addition operand. */
  readonly maxDigits?: number;
}

/** What a task is, for people, and the sizes that learn it (its default run: {@link TaskRun}). */
export interface TaskInfo extends TaskRun {
  readonly task: TaskName;
  /** One line, e.g. "reverse: 'abcde' → 'edcba'". */
  readonly description: string;
  /** Shortest and longest source string the defaults produce (characters). */
  readonly srcLength: { readonly min: number; readonly max: number };
  /** Longest target string the defaults produce (characters). */
  readonly maxTgtLength: number;
  /** Suggested number of training pairs. */
  readonly trainPairs: number;
  /** Suggested number of held-out pairs. */
  readonly valPairs: number;
}

/** Letters used by copy, reverse and sort. */
const ALPHABET = 'abcdefghij';
const SEQ_MIN = 3;
const SEQ_MAX = 12;
const ADD_DIGITS = 3;
const MONTHS = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
];
/** Weekday names indexed by 0 = Sunday. */
const WEEKDAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
const FIRST_YEAR = 1950;
const LAST_YEAR = 2049;

/** Days since 1970-01-01 of a proleptic Gregorian date (Hinnant's days_from_civil). */
function daysFromCivil(y: number, m: number, d: number): number {
  const yy = m <= 2 ? y - 1 : y;
  const era = Math.floor(yy / 400);
  const yoe = yy - era * 400; // [0, 399]
  const doy = Math.floor((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1; // [0, 365]
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy; // [0, 146096]
  return era * 146097 + doe - 719468;
}

/** Civil date of a day count since 1970-01-01 (Hinnant's civil_from_days). */
function civilFromDays(z: number): { y: number; m: number; d: number } {
  const zz = z + 719468;
  const era = Math.floor(zz / 146097);
  const doe = zz - era * 146097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const m = mp < 10 ? mp + 3 : mp - 9;
  return { y: yoe + era * 400 + (m <= 2 ? 1 : 0), m, d };
}

function pad2(n: number): string {
  return n < 10 ? `0${n}` : String(n);
}

function ordinal(d: number): string {
  const teen = d % 100 >= 11 && d % 100 <= 13;
  const suffix = teen ? 'th' : d % 10 === 1 ? 'st' : d % 10 === 2 ? 'nd' : d % 10 === 3 ? 'rd' : 'th';
  return `${d}${suffix}`;
}

type DateParts = { y: number; m: number; d: number; wd: number };

/** The human formats a date source is written in (US month-first for the slash form). */
const DATE_FORMATS: readonly ((p: DateParts) => string)[] = [
  (p) => `${MONTHS[p.m - 1]} ${p.d}, ${p.y}`, // March 3, 2021
  (p) => `${MONTHS[p.m - 1]?.slice(0, 3)} ${p.d}, ${p.y}`, // Mar 3, 2021
  (p) => `${p.d} ${MONTHS[p.m - 1]} ${p.y}`, // 3 March 2021
  (p) => `${p.d} ${MONTHS[p.m - 1]?.slice(0, 3)} ${p.y}`, // 3 Mar 2021
  (p) => `${WEEKDAYS[p.wd]}, ${MONTHS[p.m - 1]} ${p.d}, ${p.y}`, // Wednesday, March 3, 2021
  (p) => `${WEEKDAYS[p.wd]?.slice(0, 3)}, ${p.d} ${MONTHS[p.m - 1]?.slice(0, 3)} ${p.y}`, // Wed, 3 Mar 2021
  (p) => `${MONTHS[p.m - 1]} ${ordinal(p.d)}, ${p.y}`, // March 3rd, 2021
  (p) => `${pad2(p.m)}/${pad2(p.d)}/${p.y}`, // 03/03/2021
  (p) => `${p.y}.${p.m}.${p.d}`, // 2021.3.3
  (p) => `${p.d}.${p.m}.${p.y}`, // 3.3.2021
];

function randomDate(rng: Rng): TaskPair {
  const lo = daysFromCivil(FIRST_YEAR, 1, 1);
  const hi = daysFromCivil(LAST_YEAR, 12, 31);
  const day = lo + rng.int(hi - lo + 1);
  const { y, m, d } = civilFromDays(day);
  const wd = (((day + 4) % 7) + 7) % 7; // 1970-01-01 was a Thursday (4)
  const format = DATE_FORMATS[rng.int(DATE_FORMATS.length)] as (p: DateParts) => string;
  return { src: format({ y, m, d, wd }), tgt: `${y}-${pad2(m)}-${pad2(d)}` };
}

function randomWord(rng: Rng, minLen: number, maxLen: number): string {
  const n = minLen + rng.int(maxLen - minLen + 1);
  let s = '';
  for (let i = 0; i < n; i++) s += ALPHABET[rng.int(ALPHABET.length)];
  return s;
}

/** An operand with a uniformly drawn digit count, so small numbers are as common as large ones. */
function randomOperand(rng: Rng, maxDigits: number): number {
  const digits = 1 + rng.int(maxDigits);
  const lo = digits === 1 ? 0 : 10 ** (digits - 1);
  return lo + rng.int(10 ** digits - lo);
}

function checkInt(name: string, v: number, min: number, max: number): void {
  if (!Number.isInteger(v) || v < min || v > max) {
    throw new EngineError(
      'input/invalid',
      `${name} must be a whole number from ${min} to ${max}; got ${v}. Change ${name}.`,
    );
  }
}

function checkTask(task: string): asserts task is TaskName {
  if (!(TASK_NAMES as readonly string[]).includes(task)) {
    throw new EngineError('input/invalid', `Unknown task "${task}"; expected one of ${TASK_NAMES.join(', ')}.`);
  }
}

function resolveOptions(opts: TaskOptions): { minLen: number; maxLen: number; maxDigits: number } {
  const minLen = opts.minLen ?? SEQ_MIN;
  const maxLen = opts.maxLen ?? Math.max(SEQ_MAX, minLen);
  checkInt('minLen', minLen, 1, 1000);
  checkInt('maxLen', maxLen, minLen, 1000);
  const maxDigits = opts.maxDigits ?? ADD_DIGITS;
  checkInt('maxDigits', maxDigits, 1, 15);
  return { minLen, maxLen, maxDigits };
}

function onePair(task: TaskName, rng: Rng, o: { minLen: number; maxLen: number; maxDigits: number }): TaskPair {
  switch (task) {
    case 'copy': {
      const s = randomWord(rng, o.minLen, o.maxLen);
      return { src: s, tgt: s };
    }
    case 'reverse': {
      const s = randomWord(rng, o.minLen, o.maxLen);
      return { src: s, tgt: [...s].reverse().join('') };
    }
    case 'sort': {
      const s = randomWord(rng, o.minLen, o.maxLen);
      return { src: s, tgt: [...s].sort().join('') };
    }
    case 'addition': {
      const a = randomOperand(rng, o.maxDigits);
      const b = randomOperand(rng, o.maxDigits);
      return { src: `${a}+${b}`, tgt: String(a + b) };
    }
    case 'dates':
      return randomDate(rng);
    case 'induction':
    case 'modular-addition':
      throw new EngineError(
        'input/invalid',
        `Task "${task}" trains a decoder-only model on sequences (inductionTask.ts, modularTask.ts), ` +
          'not source→target pairs.',
      );
    default:
      return task satisfies never;
  }
}

/**
 * `count` pairs of a built-in task, drawn from `rng` (deterministic for a given rng state).
 * Pairs may repeat; use {@link splitTaskData} for a held-out set disjoint from training.
 */
export function generatePairs(task: TaskName, count: number, rng: Rng, opts: TaskOptions = {}): TaskPair[] {
  checkTask(task);
  checkInt('count', count, 0, 100_000_000);
  const o = resolveOptions(opts);
  const out: TaskPair[] = [];
  for (let i = 0; i < count; i++) out.push(onePair(task, rng, o));
  return out;
}

/** A one-line description and the default sizes of a built-in task. */
export function taskInfo(task: TaskName): TaskInfo {
  checkTask(task);
  return { ...describeTask(task), ...TASK_RUNS[task] };
}

function describeTask(task: TaskName): Omit<TaskInfo, keyof TaskRun> {
  const seq = { min: SEQ_MIN, max: SEQ_MAX };
  switch (task) {
    case 'copy':
      return {
        task,
        description: "copy: 'abcde' → 'abcde'",
        srcLength: seq,
        maxTgtLength: SEQ_MAX,
        trainPairs: 20000,
        valPairs: 500,
      };
    case 'reverse':
      return {
        task,
        description: "reverse: 'abcde' → 'edcba'",
        srcLength: seq,
        maxTgtLength: SEQ_MAX,
        trainPairs: 20000,
        valPairs: 500,
      };
    case 'sort':
      return {
        task,
        description: "sort: 'dbeca' → 'abcde'",
        srcLength: seq,
        maxTgtLength: SEQ_MAX,
        trainPairs: 20000,
        valPairs: 500,
      };
    case 'addition':
      return {
        task,
        description: "addition: '123+58' → '181'",
        srcLength: { min: 3, max: 2 * ADD_DIGITS + 1 },
        maxTgtLength: ADD_DIGITS + 1,
        trainPairs: 40000,
        valPairs: 500,
      };
    case 'dates':
      // Shortest: "1.1.1950" (8); longest: "Wednesday, September 30, 2020" (29).
      return {
        task,
        description: "dates: 'Wednesday, March 3, 2021' → '2021-03-03'",
        srcLength: { min: 8, max: 29 },
        maxTgtLength: 10,
        trainPairs: 40000,
        valPairs: 500,
      };
    case 'induction':
      // Decoder-only (inductionTask.ts): sequences of 2L = --seq tokens drawn afresh each step,
      // so no training set; "pairs" here count the held-out sequences.
      return {
        task,
        description:
          "induction: 'qxfbm…qxfbm…' random letters, repeated (loss on the repeat), and letter " +
          'chains with a fresh rule each',
        srcLength: { min: 0, max: 0 },
        maxTgtLength: 0,
        trainPairs: 0,
        valPairs: 256,
      };
    case 'modular-addition':
      // Decoder-only (modularTask.ts): every pair (a, b) of Z_113 once, 30% of them trained on.
      return {
        task,
        description:
          `modular addition: 'a b =' → a + b mod ${MODULAR_P}, ` + `${MODULAR_TRAIN_FRACTION * 100}% of pairs trained`,
        srcLength: { min: 0, max: 0 },
        maxTgtLength: 0,
        trainPairs: MODULAR_TRAIN_PAIRS,
        valPairs: MODULAR_P * MODULAR_P - MODULAR_TRAIN_PAIRS,
      };
    default:
      return task satisfies never;
  }
}

/**
 * A training set of `nTrain` pairs and a held-out set of `nVal` pairs whose sources are
 * distinct from each other and from every training source. The two sets come from
 * independent child streams of `seed`, so the training set does not depend on `nVal`.
 * Throws when the task's source space is too small for `nVal` fresh sources.
 */
export function splitTaskData(
  task: TaskName,
  nTrain: number,
  nVal: number,
  seed: number,
  opts: TaskOptions = {},
): { train: TaskPair[]; val: TaskPair[] } {
  checkInt('nVal', nVal, 0, 10_000_000);
  const root = new Rng(seed);
  const trainRng = root.split();
  const valRng = root.split();
  const train = generatePairs(task, nTrain, trainRng, opts);
  const seen = new Set(train.map((p) => p.src));
  const val: TaskPair[] = [];
  const maxTries = 50 * nVal + 1000;
  for (let tries = 0; val.length < nVal && tries < maxTries; tries++) {
    const [pair] = generatePairs(task, 1, valRng, opts) as [TaskPair];
    if (seen.has(pair.src)) continue;
    seen.add(pair.src);
    val.push(pair);
  }
  if (val.length < nVal) {
    throw new EngineError(
      'input/invalid',
      `Task "${task}" ran out of new sources: found ${val.length} of ${nVal} held-out pairs not in ` +
        `the ${nTrain} training pairs. ` +
        'Ask for fewer pairs or allow longer sources.',
    );
  }
  return { train, val };
}
