import { compileNameGlob, isNameGlob } from '../../../util/name-glob.js';
import { compileGlobElements, literalElement, MAX_GLOB_WILDCARDS, type GlobElement, type GlobMatcher } from '../../../util/glob-automaton.js';
import { checkCommandText } from './pre-parse.js';
import { allCommands } from './structure.js';
import { readWithUnbash } from './unbash-reader.js';
import type { ShellToolName } from './plan.js';
import { ruleReadings } from './rule-readings.js';
import { globReadings, globWord, ruleVocabulary, type GlobWord } from './rule-globs.js';

/**
 * Approval rules (EXTENSIONS.md section 3), judged on what the policy parsed: a shell call on
 * each simple command's argv after quote removal, a file tool on the resolved absolute path. The
 * raw text never decides, so `'npm' publish` and `npm --loglevel info publish` meet the rule
 * written for `npm publish`.
 */
export type RuleAction = 'allow' | 'ask' | 'deny';

export interface ApprovalRule {
  /** A tool name, `*` for every tool, or a glob on MCP tool names (`mcp__github__*`). */
  tool: string;
  /** Shell tools: words (program first); file tools: a glob on the absolute path; absent: every call. */
  match?: string;
  action: RuleAction;
}

/** The decision for one call: the strictest matching action and the rules that gave it. */
export interface RuleVerdict {
  action: RuleAction;
  /** Says why, for the approval and the model: the rules that decided. */
  reason: string;
  /** The rules with the deciding action (what an `approve_always` grant must cover). */
  rules: ApprovalRule[];
}

/**
 * What the rules look at in one call: the argv of each simple command (with, per word, its glob
 * when it has one), or one resolved path.
 */
export type CallSubject =
  | { kind: 'commands'; argvs: string[][]; globs?: (GlobWord | undefined)[][]; cwd?: string }
  | { kind: 'path'; path: string }
  | { kind: 'other' };

const SHELL_TOOLS: readonly string[] = ['bash', 'bash_readonly'];
const STRICTNESS: Record<RuleAction, number> = { allow: 0, ask: 1, deny: 2 };

const askBash = (matches: readonly string[]): ApprovalRule[] => matches.map((match) => ({ tool: 'bash', match, action: 'ask' }));

/**
 * Command names as the programs read them (`npm add` is `npm install`, `pip3` is `pip`, git's
 * `-f` is `--force`, `git checkout <file>` is `git checkout -- <file>`: see rule-readings.ts).
 */
export const DEFAULT_APPROVAL_RULES: readonly ApprovalRule[] = [
  // Package installs and publishes. `install-test`, `install-ci-test`, `update`, `audit fix` and `link`
  // install too, `cargo add` names a crate whose build script the next build runs; `npm exec` (`npx`)
  // and `npm init <name>` (`npm exec create-<name>`) fetch a package and run it. `npm explore` runs
  // a shell command as `npm exec -c` does; `cargo --config` can define an alias (`alias.b="install"`).
  // `pip download` and `pip wheel` (through `python -m pip`) fetch, and build a source package: its code runs.
  ...askBash([
    'npm install', 'npm ci', 'npm install-test', 'npm install-ci-test', 'npm update', 'npm audit fix', 'npm link', 'npm publish', 'npm exec',
    'npm explore', 'npm init', 'pip install', 'pip download', 'pip wheel', 'cargo install', 'cargo add', 'cargo publish', 'cargo --config',
  ]),
  // What changes a registry or an account: an unpublished version or a revoked token is not given back.
  ...askBash([
    'npm unpublish', 'npm deprecate', 'npm undeprecate', 'npm dist-tag', 'npm owner', 'npm access', 'npm team', 'npm org', 'npm token',
    'npm trust', 'npm star', 'npm unstar', 'npm profile', 'npm adduser', 'npm login', 'npm logout', 'cargo yank', 'cargo owner',
    'cargo login', 'cargo logout',
  ]),
  // What discards work: a forced checkout or switch throws away local changes as a checkout of paths does,
  // `reset --merge` staged changes as `--hard` does, `git rm` files as `rm` does.
  // Stashes, branches and tags live in the repository, not the working tree, so a checkpoint cannot give
  // them back. A branch forced over another by a move or copy loses its reflog as with -D; a tag has
  // none to lose; fetch and pull prune local branches and tags too when the refspec names them, and
  // `git remote prune` and `git remote update` prune as the config says.
  ...askBash([
    'git reset --hard', 'git reset --merge', 'git clean', 'git rebase', 'git pull --rebase', 'git checkout --', 'git checkout --force',
    'git switch --force', 'git switch --discard-changes', 'git restore', 'git rm', 'git stash drop', 'git stash clear', 'git branch -D',
    'git branch --delete --force', 'git branch --move --force', 'git branch --copy --force', 'git tag --delete', 'git tag --force',
    'git fetch --prune', 'git fetch --prune-tags', 'git pull --prune', 'git remote prune', 'git remote update',
    'git reflog expire', 'rm',
  ]),
];

/**
 * The argv of every simple command of a shell command line, as the policy reads it (quotes
 * removed, `~` expanded, globs left as written); undefined when the policy cannot read it, and
 * then the tool refuses it anyway.
 */
export function parsedArgvs(tool: ShellToolName, command: string, home: string): string[][] | undefined {
  const subject = shellSubject(tool, command, home);
  return subject.kind === 'commands' ? subject.argvs : undefined;
}

/** A shell call's subject: its parsed commands, globs kept; `other` when the policy cannot read it (and refuses it). */
export function shellSubject(tool: ShellToolName, command: string, home: string, cwd?: string): CallSubject {
  try {
    const specs = allCommands(readWithUnbash(checkCommandText(command, tool), home).script);
    const argvs = specs.map((spec) => [spec.program, ...spec.args.map((word) => word.value)]);
    const globs = specs.map((spec) => [undefined, ...spec.args.map((word) => (word.glob === undefined ? undefined : globWord(word.glob)))]);
    return { kind: 'commands', argvs, globs, ...(cwd === undefined ? {} : { cwd }) };
  } catch {
    return { kind: 'other' };
  }
}

/** A compiled rule set: evaluate calls against it, in any order of the rules. */
export class ApprovalRuleSet {
  private readonly globs = new Map<string, GlobMatcher>();
  /** A shell rule's match words, as written and as the program reads them. */
  private readonly commandForms = new Map<string, string[][]>();
  /** Per shell rule: what a glob in a command could stand for to match it (rule-globs.ts). */
  private readonly vocabularies = new Map<string, string[]>();
  /** Rules whose `tool` is a glob on MCP tool names (`mcp__github__*`). */
  private readonly toolGlobs = new Map<string, GlobMatcher>();

  constructor(readonly rules: readonly ApprovalRule[]) {
    for (const rule of rules) {
      if (isNameGlob(rule.tool) && rule.tool !== '*') this.toolGlobs.set(rule.tool, compileNameGlob(rule.tool));
      if (rule.match === undefined) continue;
      if (SHELL_TOOLS.includes(rule.tool) || rule.tool === '*') {
        const forms = ruleReadings(rule.match.trim().split(/\s+/));
        this.commandForms.set(rule.match, forms);
        this.vocabularies.set(rule.match, ruleVocabulary(forms));
      }
      if (!SHELL_TOOLS.includes(rule.tool)) this.globs.set(rule.match, compilePathGlob(rule.match));
    }
  }

  /**
   * Whether the rules deny `tool` the file at `path` (a search judges each file it found this way);
   * undefined when no deny rule could ever match a path of this tool, so a search checks nothing.
   */
  deniedPaths(tool: string): ((path: string) => boolean) | undefined {
    const denying = this.rules.filter((rule) => rule.action === 'deny' && this.names(rule, tool));
    if (denying.length === 0) return undefined;
    return (path) => denying.some((rule) => this.matches(rule, { kind: 'path', path }));
  }

  judge(tool: string, subject: CallSubject): RuleVerdict {
    const matching = this.rules.filter((rule) => this.names(rule, tool) && this.matches(rule, subject));
    if (matching.length === 0) return { action: 'allow', reason: 'no rule matched', rules: [] };
    const action = matching.map((rule) => rule.action).reduce((a, b) => (STRICTNESS[b] > STRICTNESS[a] ? b : a));
    const deciding = matching.filter((rule) => rule.action === action);
    return { action, reason: `approval rule ${deciding.map(describeRule).join(', ')}`, rules: deciding };
  }

  /** Whether the rule is about `tool`: by name, `*`, or a glob on MCP tool names. */
  private names(rule: ApprovalRule, tool: string): boolean {
    return rule.tool === '*' || rule.tool === tool || this.toolGlobs.get(rule.tool)?.test(tool) === true;
  }

  private matches(rule: ApprovalRule, subject: CallSubject): boolean {
    if (rule.match === undefined) return true;
    if (subject.kind === 'commands') {
      const forms = this.commandForms.get(rule.match) ?? ruleReadings(rule.match.trim().split(/\s+/));
      const vocabulary = this.vocabularies.get(rule.match) ?? ruleVocabulary(forms);
      return subject.argvs.some((argv, i) => matchesArgv(forms, vocabulary, argv, subject.globs?.[i], subject.cwd));
    }
    if (subject.kind === 'path') return (this.globs.get(rule.match) ?? compilePathGlob(rule.match)).test(subject.path);
    return false;
  }
}

/** One command against one rule's forms, each glob word read as each word of the rule it could become. */
function matchesArgv(forms: string[][], vocabulary: string[], argv: string[], globs: (GlobWord | undefined)[] | undefined, cwd: string | undefined): boolean {
  const readings = globs === undefined ? [argv] : globReadings(argv, globs, vocabulary);
  // Too many globs to read one by one: judged as matching if the rule names a program it could run as.
  if (readings === undefined) return ruleReadings(argv, cwd).some((read) => forms.some((form) => form[0] === read[0]));
  return readings.some((reading) => ruleReadings(reading, cwd).some((read) => forms.some((form) => matchesWords(form, read))));
}

export const describeRule = (rule: ApprovalRule): string => `${rule.tool}${rule.match === undefined ? '' : ` "${rule.match}"`} (${rule.action})`;

/**
 * `match` words against one argv: the first word is the program; each further word that starts
 * with `-` must be among the arguments, each other word among the non-option arguments, in the
 * order given, not necessarily adjacent. After `--` every argument is a non-option one. An option
 * word also matches the spellings getopt and git accept for it: a long option abbreviated
 * (`--har` for `--hard`) or with a value (`--rebase=merges`), a short one inside a bundle (`-qf`).
 */
export function matchesCommand(match: string, argv: readonly string[]): boolean {
  return matchesWords(match.trim().split(/\s+/), argv);
}

function matchesWords(match: readonly string[], argv: readonly string[]): boolean {
  const [program, ...words] = match;
  if (argv[0] !== program) return false;
  const args = argv.slice(1);
  const dashDash = args.indexOf('--');
  const isOption = (arg: string, i: number): boolean => arg.startsWith('-') && arg !== '-' && (dashDash < 0 || i <= dashDash);
  const operands = args.filter((arg, i) => !isOption(arg, i));
  let next = 0;
  for (const word of words) {
    if (word.startsWith('-')) {
      if (!args.some((arg, i) => isOption(arg, i) && spellsOption(arg, word))) return false;
      continue;
    }
    while (next < operands.length && operands[next] !== word) next++;
    if (next === operands.length) return false;
    next++;
  }
  return true;
}

/** Whether `arg` is a spelling of the option `word`. */
function spellsOption(arg: string, word: string): boolean {
  if (arg === word) return true;
  if (word === '--') return false;
  if (word.startsWith('--')) {
    const name = arg.split('=')[0] as string;
    return name.startsWith('--') && name.length > 2 && word.startsWith(name);
  }
  // A single letter (`-f`): in a bundle of short options. `-delete` and the like only as written.
  return word.length === 2 && !arg.startsWith('--') && arg.slice(1).includes(word.slice(1));
}

const notSlash = (c: number): boolean => c !== 0x2f;
const anything = (): boolean => true;

/** `**` any characters, `*` any but a slash, `?` one but a slash; a `**` followed by a slash also matches no directory. */
export function compilePathGlob(pattern: string): GlobMatcher {
  const elements: GlobElement[] = [];
  const chars = [...pattern];
  let wildcards = 0;
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i]!;
    if (c === '*' && chars[i + 1] === '*') {
      wildcards++;
      i++;
      if (chars[i + 1] === '/') {
        i++;
        elements.push({ kind: 'choice', options: [[], [{ kind: 'many', test: anything }, literalElement(0x2f)]] });
      } else {
        elements.push({ kind: 'many', test: anything });
      }
    } else if (c === '*') {
      wildcards++;
      elements.push({ kind: 'many', test: notSlash });
    } else if (c === '?') {
      wildcards++;
      elements.push({ kind: 'one', test: notSlash });
    } else {
      elements.push(literalElement(c.codePointAt(0)!));
    }
  }
  if (wildcards > MAX_GLOB_WILDCARDS) throw new Error(`more than ${MAX_GLOB_WILDCARDS} wildcards`);
  return compileGlobElements(elements);
}
