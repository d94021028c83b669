import { dirname, join } from 'node:path';
import { childPath, isIgnored, loadDirectoryRules, loadParentRules, RuleBudget, type DirectoryRules, type RuleChain } from '../tools/search/ignore-files.js';
import { innerRuleLines, outerRuleLines, readIgnoreFile } from './outer-ignores.js';
import { asBytes } from './snapshot-rules.js';
import { TimeSlice } from '../util/time-slice.js';

/** The ignore files ripgrep reads and git does not; by rank, lowest first. */
const SEARCH_IGNORE_NAMES = ['.ignore', '.rgignore'] as const;

/** Whether a path (bytes, relative) names a `.ignore` or `.rgignore` file. */
export const isSearchIgnoreFile = (path: string): boolean => SEARCH_IGNORE_NAMES.some((name) => path === name || path.endsWith(`/${name}`));

/**
 * The `.ignore` and `.rgignore` files that glob_files honours and git does not: those of the
 * directories above the working directory (read each time, like the outer `.gitignore` files) and
 * those inside it that snapshots came across (`known`: git lists them like any file, so none is
 * looked for). Their rules become lines of the shadow repository's `info/exclude`, anchored at
 * their directories, so git does not walk what they hide; where git's order of precedence differs
 * from ripgrep's (in git any `.gitignore` outranks `info/exclude`), `GlobVerdict` decides.
 */
export class SearchIgnores {
  /** Lines for `info/exclude`, after those of the outer `.gitignore` files. */
  readonly lines: string[] = [];
  /** The files inside the working directory that still exist (bytes, relative). */
  readonly present: string[] = [];
  /** Directories (bytes, relative, '' for the working directory) under which a `!` rule may re-include what git ignores. */
  readonly reincluding: string[] = [];
  /** Whether any such file exists, inside or above: when none does, snapshots cost what they did without. */
  readonly active: boolean;

  /** `readRoot`: where the files inside are read (the held directory, see shadow-repo.ts TreeAccess). */
  constructor(workingDir: string, known: readonly string[], readRoot: string = workingDir) {
    const outer = outerFiles(workingDir);
    const inner = [...new Set(known)].sort(byDepth).flatMap((path) => {
      const text = readIgnoreFile(Buffer.from(`${asBytes(readRoot)}/${path}`, 'latin1'));
      return text === undefined ? [] : [{ path, text }];
    });
    this.present = inner.map(({ path }) => path);
    for (const name of SEARCH_IGNORE_NAMES) {
      for (const { text } of outer.filter((file) => file.name === name)) {
        this.lines.push(...text.lines);
        if (text.reincludes) this.reincluding.push('');
      }
      for (const { path, text } of inner.filter((file) => file.path.endsWith(name))) {
        const dir = path.slice(0, Math.max(path.lastIndexOf('/'), 0));
        this.lines.push(...innerRuleLines(text, dir));
        if (hasWhitelist(text)) this.reincluding.push(dir);
      }
    }
    this.active = outer.length > 0 || inner.length > 0;
  }
}

/** `.ignore`/`.rgignore` files above the working directory (ripgrep reads them up to `/`), outermost first. */
function outerFiles(workingDir: string): { name: string; text: { lines: string[]; reincludes: boolean } }[] {
  const files: { name: string; text: { lines: string[]; reincludes: boolean } }[] = [];
  for (let dir = dirname(workingDir); ; dir = dirname(dir)) {
    for (const name of SEARCH_IGNORE_NAMES) {
      const text = readIgnoreFile(join(dir, name));
      if (text === undefined) continue;
      const prefix = `${asBytes(workingDir.slice(dir === '/' ? 1 : dir.length + 1))}/`;
      files.unshift({ name, text: { lines: outerRuleLines(text, prefix), reincludes: hasWhitelist(text) } });
    }
    if (dir === dirname(dir)) return files;
  }
}

/**
 * Whether a line re-includes (`!pattern`), read from the text alone: compiling each rule's glob
 * cost a third of a millisecond, and a `.ignore` of 100,000 lines held the event loop for half a
 * minute. A `!` line whose pattern would not compile counts too: a directory wrongly thought
 * re-including costs a snapshot time, never a file.
 */
const hasWhitelist = (text: string): boolean => text.split('\n').some((line) => line.startsWith('!') && line.trimEnd().length > 1);

/** The directory holding `path` (bytes, relative), '' for the working directory. */
const parentOf = (path: string): string => {
  const cut = path.lastIndexOf('/');
  return cut < 0 ? '' : path.slice(0, cut);
};

const byDepth = (a: string, b: string): number => a.split('/').length - b.split('/').length || (a < b ? -1 : a > b ? 1 : 0);

/**
 * glob_files' own verdict on paths of the working directory (bytes, relative): the ignore files
 * of each directory on the way, ranked as ripgrep ranks them, read once per directory.
 */
export class GlobVerdict {
  private readonly dirs = new Map<string, Promise<{ chain: RuleChain; hidden: boolean }>>();
  /** One walk's limits on ignore rules (see RuleBudget), shared by every directory this verdict reads. */
  private readonly budget = new RuleBudget();

  constructor(private readonly workingDir: string) {}

  /** Whether glob_files leaves the file out (it or a directory on its way is ignored). */
  async hides(path: string): Promise<boolean> {
    return this.judge(path, await this.dir(parentOf(path)));
  }

  /**
   * The paths among `paths` that glob_files leaves out. The directories are read first; the paths
   * are then judged in slices of a few milliseconds, since a snapshot may judge 100,000 of them.
   */
  async hidden(paths: readonly string[]): Promise<Set<string>> {
    const parents = [...new Set(paths.map(parentOf))];
    const states = new Map(await Promise.all(parents.map(async (dir) => [dir, await this.dir(dir)] as const)));
    const hidden = new Set<string>();
    const slice = new TimeSlice();
    for (const path of paths) {
      if (slice.due()) await slice.pause();
      if (this.judge(path, states.get(parentOf(path)) as { chain: RuleChain; hidden: boolean })) hidden.add(path);
    }
    return hidden;
  }

  private judge(path: string, parent: { chain: RuleChain; hidden: boolean }): boolean {
    return parent.hidden || isIgnored(this.absolute(path), false, parent.chain);
  }

  private dir(path: string): Promise<{ chain: RuleChain; hidden: boolean }> {
    let state = this.dirs.get(path);
    if (state === undefined) {
      state = this.load(path);
      this.dirs.set(path, state);
    }
    return state;
  }

  private async load(path: string): Promise<{ chain: RuleChain; hidden: boolean }> {
    const absolute = this.absolute(path);
    if (path === '') return { chain: [await loadDirectoryRules(absolute, this.budget), ...(await loadParentRules(absolute, this.budget))], hidden: false };
    const parent = await this.dir(parentOf(path));
    const hidden = parent.hidden || isIgnored(absolute, true, parent.chain);
    // A hidden directory's own rules never count: nothing below it is listed.
    const chain: DirectoryRules[] = hidden ? [...parent.chain] : [await loadDirectoryRules(absolute, this.budget), ...parent.chain];
    return { chain, hidden };
  }

  private absolute(path: string): string {
    return path === '' ? this.workingDir : childPath(this.workingDir, Buffer.from(path, 'latin1').toString('utf8'));
  }
}
