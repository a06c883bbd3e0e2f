/**
 * Decides whether a file is left out of a corpus because git would ignore it: the rules
 * of `.gitignore` files in the repository root and in every folder down to the file, plus
 * `.git/info/exclude`, with git's precedence (a deeper `.gitignore` wins over a shallower
 * one, `info/exclude` has the lowest priority, and within one file the last matching
 * pattern wins; see the gitignore(5) manual). A file inside an ignored folder is ignored,
 * as in git. `.git/` and `node_modules/` are always left out.
 *
 * Pattern matching itself is the `ignore` package's. The repository root is the nearest
 * folder above the file that holds a `.git` entry; outside a repository the corpus root
 * plays that part.
 *
 * Leaves out: `core.excludesFile` (the user's global excludes), `.gitattributes`, and a
 * corner of cross-file precedence: when a deeper `.gitignore` re-includes a folder that a
 * shallower one excludes, files below it are still judged by the shallower file's own
 * rules about that folder.
 */

import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import ignore from 'ignore';
import type { Ignore } from 'ignore';

/** Folder names that are never part of a corpus. */
export const ALWAYS_IGNORED: ReadonlySet<string> = new Set(['.git', 'node_modules']);

/** True when a `path.relative` result leaves its base folder. */
function isOutside(rel: string): boolean {
  return rel === '..' || rel.startsWith(`..${path.sep}`) || rel.startsWith('../') || path.isAbsolute(rel);
}

/** Answers "would git ignore this path?" with the rule files read once per folder. */
export class GitignoreFilter {
  private readonly fallbackTop: string;
  private readonly rules = new Map<string, Ignore | null>();
  private readonly tops = new Map<string, string | null>();
  private readonly dirVerdicts = new Map<string, boolean>();

  /** `fallbackTop`: where rule lookup starts for files that are in no git repository. */
  constructor(fallbackTop: string) {
    this.fallbackTop = path.resolve(fallbackTop);
  }

  /** True when the file at `absPath` is ignored (by a rule, or by an ignored parent folder). */
  isIgnored(absPath: string): boolean {
    const file = path.resolve(absPath);
    const top = this.topFor(file);
    const parts = path.relative(top, file).split(path.sep);
    if (parts.some((p) => ALWAYS_IGNORED.has(p))) return true;
    let dir = top;
    for (let i = 0; i < parts.length - 1; i++) {
      const child = path.join(dir, parts[i] as string);
      if (this.dirIgnored(top, dir, child)) return true;
      dir = child;
    }
    return this.judge(top, dir, file, false);
  }

  private dirIgnored(top: string, parent: string, dir: string): boolean {
    let verdict = this.dirVerdicts.get(dir);
    if (verdict === undefined) {
      verdict = this.judge(top, parent, dir, true);
      this.dirVerdicts.set(dir, verdict);
    }
    return verdict;
  }

  /** Applies the rule files from `parent` up to `top`, deepest first; the first that decides wins. */
  private judge(top: string, parent: string, target: string, isDir: boolean): boolean {
    for (let level = parent; ; level = path.dirname(level)) {
      const verdict = this.test(this.rulesIn(level), level, target, isDir);
      if (verdict !== null) return verdict;
      if (level === top || path.dirname(level) === level) break;
    }
    return this.test(this.excludeRules(top), top, target, isDir) ?? false;
  }

  private test(rules: Ignore | null, base: string, target: string, isDir: boolean): boolean | null {
    if (rules === null) return null;
    const rel = path.relative(base, target).split(path.sep).join('/');
    if (rel === '' || isOutside(rel)) return null;
    const r = rules.test(isDir ? `${rel}/` : rel);
    return r.ignored ? true : r.unignored ? false : null;
  }

  private rulesIn(dir: string): Ignore | null {
    return this.load(path.join(dir, '.gitignore'));
  }

  private excludeRules(top: string): Ignore | null {
    return this.load(path.join(top, '.git', 'info', 'exclude'));
  }

  private load(file: string): Ignore | null {
    let rules = this.rules.get(file);
    if (rules === undefined) {
      rules = null;
      try {
        const text = readFileSync(file, 'utf8');
        if (text.trim() !== '') rules = ignore().add(text);
      } catch {
        // No rule file here (or unreadable): git treats that as no rules.
      }
      this.rules.set(file, rules);
    }
    return rules;
  }

  /** The repository root above `file`, or the fallback top for files in no repository. */
  private topFor(file: string): string {
    const dir = path.dirname(file);
    const repo = this.repoRoot(dir);
    if (repo !== null) return repo;
    const rel = path.relative(this.fallbackTop, file);
    return isOutside(rel) ? dir : this.fallbackTop;
  }

  private repoRoot(dir: string): string | null {
    const cached = this.tops.get(dir);
    if (cached !== undefined) return cached;
    let found: string | null;
    if (existsSync(path.join(dir, '.git'))) found = dir;
    else {
      const up = path.dirname(dir);
      found = up === dir ? null : this.repoRoot(up);
    }
    this.tops.set(dir, found);
    return found;
  }
}
