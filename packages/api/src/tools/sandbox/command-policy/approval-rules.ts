import { compileGlobElements, literalElement, MAX_GLOB_WILDCARDS, type GlobElement, type GlobMatcher } from '../../../util/glob-automaton.js';
import { checkCommandText } from './pre-parse.js';
import { allCommands } from './structure.js';
import { readWithUnbash } from './unbash-reader.js';
import type { ShellToolName } from './plan.js';

/**
 * Approval rules (EXTENSIONS.md section 3), judged on what the policy parsed: a shell call on
 * each simple command's argv after quote removal, a file tool on the resolved absolute path. The
 * raw text never decides, so `'npm' publish` and `npm --loglevel info publish` meet the rule
 * written for `npm publish`.
 */
export type RuleAction = 'allow' | 'ask' | 'deny';

export interface ApprovalRule {
  /** A tool name, or `*` for every tool. */
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

/** What the rules look at in one call: the argv of each simple command, or one resolved path. */
export type CallSubject = { kind: 'commands'; argvs: string[][] } | { kind: 'path'; path: string } | { kind: 'other' };

const SHELL_TOOLS: readonly string[] = ['bash', 'bash_readonly'];
const STRICTNESS: Record<RuleAction, number> = { allow: 0, ask: 1, deny: 2 };

export const DEFAULT_APPROVAL_RULES: readonly ApprovalRule[] = [
  ...['npm install', 'npm i', 'npm ci', 'npm publish', 'pip install', 'pip3 install', 'cargo install', 'cargo publish'].map(
    (match): ApprovalRule => ({ tool: 'bash', match, action: 'ask' }),
  ),
  ...['git reset --hard', 'git clean', 'git rebase', 'git checkout --', 'git restore', 'rm'].map(
    (match): ApprovalRule => ({ tool: 'bash', match, action: 'ask' }),
  ),
];

/**
 * The argv of every simple command of a shell command line, as the policy reads it (quotes
 * removed, `~` expanded, globs left as written); undefined when the policy cannot read it, and
 * then the tool refuses it anyway.
 */
export function parsedArgvs(tool: ShellToolName, command: string, home: string): string[][] | undefined {
  try {
    const reading = readWithUnbash(checkCommandText(command, tool), home);
    return allCommands(reading.script).map((spec) => [spec.program, ...spec.args.map((word) => word.value)]);
  } catch {
    return undefined;
  }
}

/** A compiled rule set: evaluate calls against it, in any order of the rules. */
export class ApprovalRuleSet {
  private readonly globs = new Map<string, GlobMatcher>();

  constructor(readonly rules: readonly ApprovalRule[]) {
    for (const rule of rules) {
      if (rule.match !== undefined && !SHELL_TOOLS.includes(rule.tool)) this.globs.set(rule.match, compilePathGlob(rule.match));
    }
  }

  judge(tool: string, subject: CallSubject): RuleVerdict {
    const matching = this.rules.filter((rule) => (rule.tool === '*' || rule.tool === tool) && this.matches(rule, subject));
    if (matching.length === 0) return { action: 'allow', reason: 'no rule matched', rules: [] };
    const action = matching.map((rule) => rule.action).reduce((a, b) => (STRICTNESS[b] > STRICTNESS[a] ? b : a));
    const deciding = matching.filter((rule) => rule.action === action);
    return { action, reason: `approval rule ${deciding.map(describeRule).join(', ')}`, rules: deciding };
  }

  private matches(rule: ApprovalRule, subject: CallSubject): boolean {
    if (rule.match === undefined) return true;
    if (subject.kind === 'commands') return subject.argvs.some((argv) => matchesCommand(rule.match!, argv));
    if (subject.kind === 'path') return (this.globs.get(rule.match) ?? compilePathGlob(rule.match)).test(subject.path);
    return false;
  }
}

export const describeRule = (rule: ApprovalRule): string => `${rule.tool}${rule.match === undefined ? '' : ` "${rule.match}"`} (${rule.action})`;

/**
 * `match` words against one argv: the first word is the program; each further word that starts
 * with `-` must be among the arguments, each other word among the non-option arguments, in the
 * order given, not necessarily adjacent. After `--` every argument is a non-option one.
 */
export function matchesCommand(match: string, argv: readonly string[]): boolean {
  const [program, ...words] = match.trim().split(/\s+/);
  if (argv[0] !== program) return false;
  const args = argv.slice(1);
  const dashDash = args.indexOf('--');
  const isOption = (arg: string, i: number): boolean => arg.startsWith('-') && arg !== '-' && (dashDash < 0 || i <= dashDash);
  const operands = args.filter((arg, i) => !isOption(arg, i));
  let next = 0;
  for (const word of words) {
    if (word.startsWith('-')) {
      if (!args.includes(word)) return false;
      continue;
    }
    while (next < operands.length && operands[next] !== word) next++;
    if (next === operands.length) return false;
    next++;
  }
  return true;
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
