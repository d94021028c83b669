import { access } from 'node:fs/promises';
import { dirname } from 'node:path';
import { readRegularFile } from '../../util/regular-file.js';
import { TimeSlice } from '../../util/time-slice.js';
import { IgnoreRuleSet, readIgnoreLine, type IgnoreLine, type IgnoreVerdict } from './ignore-rules.js';

/** The ignore files of one directory, by ripgrep's precedence (highest first). */
export interface DirectoryRules {
  dir: string;
  rgignore: IgnoreRuleSet;
  ignore: IgnoreRuleSet;
  gitignore: IgnoreRuleSet;
  /** A `.git` entry here ends the reach of `.gitignore` files further up. */
  hasGit: boolean;
}

/** Directories from a path's own directory up to `/`, deepest first. */
export type RuleChain = readonly DirectoryRules[];

/** Far above any ignore file a project writes; a planted multi-gigabyte one is not read. */
const MAX_IGNORE_FILE_BYTES = 16 * 1024 * 1024;

/**
 * How many rules the ignore files of one walk may hold. Rules with wildcards cost a compiled glob
 * each (a fraction of a millisecond) and are tried one by one against every path, so they are
 * few; literal rules cost a table entry and one look-up per path, so they may be many. Project
 * ignore files stay far below both; a planted one does not, and reading it stops at the limit.
 */
export interface RuleLimits {
  /** Wildcard rules per file and per walk. */
  globsPerFile: number;
  globsPerWalk: number;
  /** Rules of any kind per file and per walk. */
  rulesPerFile: number;
  rulesPerWalk: number;
}

export const DEFAULT_RULE_LIMITS: RuleLimits = { globsPerFile: 500, globsPerWalk: 2500, rulesPerFile: 100_000, rulesPerWalk: 200_000 };

/**
 * What is left of one walk's limits. Past a limit a file is read as if it ended there: its later
 * rules, and the rules of files read later, do not count. That leaves files visible that the
 * ignored rules would hide (as when no ignore file is there) rather than hiding files no rule
 * names; a search shows a little more, a checkpoint keeps a little more, neither loses a file.
 * The first time a walk stops reading, a process warning (code MADA_IGNORE_RULES_LIMITED) says
 * which file and why, so the difference from ripgrep is in the service's log.
 */
export class RuleBudget {
  private globs: number;
  private rules: number;
  private warned = false;

  constructor(private readonly limits: RuleLimits = DEFAULT_RULE_LIMITS) {
    this.globs = limits.globsPerWalk;
    this.rules = limits.rulesPerWalk;
  }

  /** Whether `line` fits the limits of the walk and of a file already holding `rules`; spends its share when it does. */
  take(line: IgnoreLine, rules: IgnoreRuleSet): boolean {
    const glob = IgnoreRuleSet.isGlob(line);
    if (this.rules <= 0 || rules.size >= this.limits.rulesPerFile) return false;
    if (glob && (this.globs <= 0 || rules.globCount >= this.limits.globsPerFile)) return false;
    this.rules--;
    if (glob) this.globs--;
    return true;
  }

  /** Records that `path` was read only up to `lineNumber`. */
  stopped(path: string, lineNumber: number): void {
    if (this.warned) return;
    this.warned = true;
    const { globsPerFile, globsPerWalk, rulesPerFile, rulesPerWalk } = this.limits;
    process.emitWarning(
      `${path}: rules from line ${lineNumber} on are not applied by the JavaScript search (limits: ${globsPerFile} rules with wildcards per file, ${globsPerWalk} per search, ${rulesPerFile} rules per file, ${rulesPerWalk} per search); the files they would hide stay visible`,
      { code: 'MADA_IGNORE_RULES_LIMITED' },
    );
  }
}

async function readRules(path: string, budget: RuleBudget): Promise<IgnoreRuleSet> {
  const rules = new IgnoreRuleSet();
  const bytes = await readRegularFile(path, MAX_IGNORE_FILE_BYTES);
  // Missing or unreadable: ripgrep skips such files silently too. Not a regular file (a FIFO)
  // or larger than any real one: skipped too, where ripgrep would wait or fill memory.
  if (bytes === undefined) return rules;
  // Line by line, decoding each as it comes: decoding and splitting 16 MiB at once holds the loop
  // for a tenth of a second, and reading stops early at the limits anyway.
  const slice = new TimeSlice();
  for (let start = 0, lineNumber = 1; start < bytes.length; lineNumber++) {
    if (slice.due()) await slice.pause();
    const newline = bytes.indexOf(0x0a, start);
    const end = newline === -1 ? bytes.length : newline;
    const line = readIgnoreLine(bytes.toString('utf8', start, end));
    start = end + 1;
    if (line === undefined) continue;
    if (!budget.take(line, rules)) {
      budget.stopped(path, lineNumber);
      return rules;
    }
    rules.add(line);
  }
  return rules;
}

const exists = (path: string): Promise<boolean> =>
  access(path).then(
    () => true,
    () => false,
  );

/** `dir/name`, also for the root directory. */
export const childPath = (dir: string, name: string): string => (dir === '/' ? `/${name}` : `${dir}/${name}`);

/** The entries of a directory that loadDirectoryRules looks at. */
const RULE_ENTRY_NAMES: ReadonlySet<string> = new Set(['.rgignore', '.ignore', '.gitignore', '.git']);

/** The longest of RULE_ENTRY_NAMES, so that most names are passed over without a lower-case copy. */
const LONGEST_RULE_ENTRY = 10;

/**
 * Which of the entries loadDirectoryRules looks at are among `names` (a directory's listing). A
 * name that differs only in case counts too: on a case-insensitive file system (a casefolded ext4
 * directory, a FAT or NTFS mount) opening `.gitignore` finds `.GITIGNORE`, as it does for ripgrep.
 */
export function ruleEntriesAmong(names: Iterable<{ name: string }>): Set<string> {
  const found = new Set<string>();
  for (const { name } of names) {
    if (name.length > LONGEST_RULE_ENTRY || name.charCodeAt(0) !== 0x2e) continue;
    const lower = name.toLowerCase();
    if (RULE_ENTRY_NAMES.has(lower)) found.add(lower);
  }
  return found;
}

/**
 * The ignore files of `dir`. `listed`, when the caller has read the directory: which of those
 * entries it holds (ruleEntriesAmong); the others are not looked for. Most directories hold none,
 * and a search that looked for all four in each spent a failed open and its exception on each.
 */
export async function loadDirectoryRules(dir: string, budget: RuleBudget, listed?: ReadonlySet<string>): Promise<DirectoryRules> {
  const has = (name: string): boolean => listed === undefined || listed.has(name);
  const rules = (name: string): Promise<IgnoreRuleSet> => (has(name) ? readRules(childPath(dir, name), budget) : Promise.resolve(new IgnoreRuleSet()));
  const [rgignore, ignore, gitignore, hasGit] = await Promise.all([
    rules('.rgignore'),
    rules('.ignore'),
    rules('.gitignore'),
    has('.git') ? exists(childPath(dir, '.git')) : false,
  ]);
  return { dir, rgignore, ignore, gitignore, hasGit };
}

/** The rules of every directory above `root` (ripgrep reads ignore files of parent directories too). */
export async function loadParentRules(root: string, budget: RuleBudget): Promise<DirectoryRules[]> {
  const chain: DirectoryRules[] = [];
  if (root === dirname(root)) return chain;
  for (let dir = dirname(root); ; dir = dirname(dir)) {
    chain.push(await loadDirectoryRules(dir, budget));
    if (dir === dirname(dir)) return chain;
  }
}

/** Where a path below `dir` starts its part relative to `dir`. */
const relativeStart = (dir: string): number => (dir === '/' ? 1 : dir.length + 1);

/**
 * ripgrep's verdict for `path`: per kind of ignore file the deepest matching file decides, and the
 * kinds rank `.rgignore` over `.ignore` over `.gitignore`, whatever their depth. `.gitignore` files
 * above the nearest directory holding `.git` do not count. `name`, the path's last component, when
 * the caller has it (a walk has it from the listing).
 */
export function isIgnored(path: string, isDir: boolean, chain: RuleChain, name?: string): boolean {
  let rgignore: IgnoreVerdict;
  let ignore: IgnoreVerdict;
  let gitignore: IgnoreVerdict;
  let sawGit = false;
  for (const level of chain) {
    const gitignoreCounts = !sawGit && gitignore === undefined && level.gitignore.size > 0;
    sawGit ||= level.hasGit;
    // Most directories hold no ignore file: their level costs a few comparisons.
    if (!gitignoreCounts && level.rgignore.size === 0 && (ignore !== undefined || level.ignore.size === 0)) continue;
    const start = relativeStart(level.dir);
    rgignore = level.rgignore.matchBelow(path, start, isDir, name);
    if (rgignore !== undefined) break; // the highest kind decided: nothing further up can change it
    ignore ??= level.ignore.matchBelow(path, start, isDir, name);
    if (gitignoreCounts) gitignore = level.gitignore.matchBelow(path, start, isDir, name);
  }
  return (rgignore ?? ignore ?? gitignore) === 'ignore';
}
