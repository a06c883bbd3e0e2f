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

import ignore from 'ignore';
import type { Ignore } from 'ignore';
import type { LabFs } from '../files/labFs';
import { exists, readText } from '../files/labFs';

/** Folder names that are never part of a corpus. */
export const ALWAYS_IGNORED: ReadonlySet<string> = new Set(['.git', 'node_modules']);

/** Answers "would git ignore this path?" with the rule files read once per folder. */
export class GitignoreFilter {
  private readonly fallbackTop: string;
  private readonly rules = new Map<string, Promise<Ignore | null>>();
  private readonly tops = new Map<string, Promise<string | null>>();
  private readonly dirVerdicts = new Map<string, Promise<boolean>>();

  /** `fallbackTop`: where rule lookup starts for files that are in no git repository. */
  constructor(
    private readonly fs: LabFs,
    fallbackTop: string,
  ) {
    this.fallbackTop = fs.resolve(fallbackTop);
  }

  /** True when the file at `absPath` is ignored (by a rule, or by an ignored parent folder). */
  async isIgnored(absPath: string): Promise<boolean> {
    const { fs } = this;
    const file = fs.resolve(absPath);
    const top = await this.topFor(file);
    const parts = (fs.relative(top, file) ?? fs.basename(file)).split('/');
    if (parts.some((p) => ALWAYS_IGNORED.has(p))) return true;
    let dir = top;
    for (let i = 0; i < parts.length - 1; i++) {
      const child = fs.join(dir, parts[i] as string);
      if (await this.dirIgnored(top, dir, child)) return true;
      dir = child;
    }
    return this.judge(top, dir, file, false);
  }

  private dirIgnored(top: string, parent: string, dir: string): Promise<boolean> {
    let verdict = this.dirVerdicts.get(dir);
    if (verdict === undefined) {
      verdict = this.judge(top, parent, dir, true);
      this.dirVerdicts.set(dir, verdict);
    }
    return verdict;
  }

  /** Applies the rule files from `parent` up to `top`, deepest first; the first that decides wins. */
  private async judge(top: string, parent: string, target: string, isDir: boolean): Promise<boolean> {
    const { fs } = this;
    for (let level = parent; ; level = fs.dirname(level)) {
      const verdict = this.test(await this.load(fs.join(level, '.gitignore')), level, target, isDir);
      if (verdict !== null) return verdict;
      if (level === top || fs.dirname(level) === level) break;
    }
    return this.test(await this.load(fs.join(top, '.git', 'info', 'exclude')), top, target, isDir) ?? false;
  }

  private test(rules: Ignore | null, base: string, target: string, isDir: boolean): boolean | null {
    if (rules === null) return null;
    const rel = this.fs.relative(base, target);
    if (rel === null || rel === '') return null;
    const r = rules.test(isDir ? `${rel}/` : rel);
    return r.ignored ? true : r.unignored ? false : null;
  }

  private load(file: string): Promise<Ignore | null> {
    let rules = this.rules.get(file);
    if (rules === undefined) {
      rules = readText(this.fs, file).then(
        (text) => (text.trim() !== '' ? ignore().add(text) : null),
        // No rule file here (or unreadable): git treats that as no rules.
        () => null,
      );
      this.rules.set(file, rules);
    }
    return rules;
  }

  /** The repository root above `file`, or the fallback top for files in no repository. */
  private async topFor(file: string): Promise<string> {
    const dir = this.fs.dirname(file);
    const repo = await this.repoRoot(dir);
    if (repo !== null) return repo;
    return this.fs.relative(this.fallbackTop, file) === null ? dir : this.fallbackTop;
  }

  private repoRoot(dir: string): Promise<string | null> {
    let found = this.tops.get(dir);
    if (found === undefined) {
      found = exists(this.fs, this.fs.join(dir, '.git')).then((here) => {
        if (here) return dir;
        const up = this.fs.dirname(dir);
        return up === dir ? null : this.repoRoot(up);
      });
      this.tops.set(dir, found);
    }
    return found;
  }
}
