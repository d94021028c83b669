import { lstatSync } from 'node:fs';
import { resolve } from 'node:path';
import { npmCommand } from './npm-commands.js';

/**
 * Approval rules name commands the way people write them (`npm install`, `git checkout --`), but
 * a program runs many spellings of one command: npm's aliases and abbreviations, `python -m pip`,
 * git's `-f` for `--force` and path operands without `--`. A rule matches a command when it
 * matches the argv as written or the argv as the program reads it, so a default `ask` cannot be
 * sidestepped by another spelling of the same command (and a spelling never loosens a rule).
 */
export function ruleReadings(argv: readonly string[], cwd?: string): string[][] {
  const read = asProgramReadsIt(argv, cwd);
  return read === undefined || sameArgv(read, argv) ? [[...argv]] : [[...argv], read];
}

const sameArgv = (a: readonly string[], b: readonly string[]): boolean => a.length === b.length && a.every((word, i) => word === b[i]);

function asProgramReadsIt(argv: readonly string[], cwd: string | undefined): string[] | undefined {
  const [program, ...args] = argv;
  switch (program) {
    case 'npm':
      return ['npm', ...args.map((arg) => npmCommand(arg) ?? arg)];
    case 'pip3':
      return ['pip', ...args];
    case 'python':
    case 'python3':
      return pythonModule(args);
    case 'git':
      return gitReading(args, cwd);
    default:
      return undefined;
  }
}

/** Python options that take the next word (or the rest of the bundle) as their value. */
const PYTHON_VALUE_LETTERS = new Set(['W', 'X']);
/** Python's one long option with a value: only the separate word form, which python takes as the option's. */
const PYTHON_VALUED_LONG = '--check-hash-based-pycs';

/** `python -m pip install x` (also `-Im pip`, `-mpip`) is `pip install x`. */
function pythonModule(args: readonly string[]): string[] | undefined {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    // A script (or `-`, or `--` before one) runs, not a module; `--version` and the like go on.
    if (arg === '--' || arg === '-' || !arg.startsWith('-')) return undefined;
    if (arg.startsWith('--')) {
      if (arg === PYTHON_VALUED_LONG) i++;
      continue;
    }
    for (let j = 1; j < arg.length; j++) {
      const letter = arg[j] as string;
      if (letter === 'c') return undefined;
      if (letter !== 'm' && !PYTHON_VALUE_LETTERS.has(letter)) continue;
      const attached = arg.slice(j + 1);
      const value = attached !== '' ? attached : args[i + 1];
      const next = attached !== '' ? i + 1 : i + 2;
      if (letter === 'm') return value === 'pip' || value?.startsWith('pip.') === true ? ['pip', ...args.slice(next)] : undefined;
      i = next - 1;
      break;
    }
  }
  return undefined;
}

/**
 * Per git subcommand: short options that mean long ones the rules name (`branch -D` is
 * `--delete --force`), and short options taking a value.
 */
const GIT_SHORT: Readonly<Record<string, { long: Record<string, string>; valued: string }>> = {
  checkout: { long: { f: '--force' }, valued: 'bB' },
  switch: { long: { f: '--force' }, valued: 'cC' },
  pull: { long: { r: '--rebase', p: '--prune' }, valued: 'sXjo' },
  fetch: { long: { p: '--prune', P: '--prune-tags' }, valued: 'jo' },
  branch: {
    long: { d: '--delete', f: '--force', D: '--delete --force', m: '--move', M: '--move --force', c: '--copy', C: '--copy --force' },
    valued: 'u',
  },
  tag: { long: { d: '--delete', f: '--force' }, valued: 'mFu' },
};
/** checkout options whose value is the next word: a branch name, not a path. */
const CHECKOUT_VALUED_LONG = new Set(['--orphan']);

function gitReading(args: readonly string[], cwd: string | undefined): string[] | undefined {
  const subIndex = args.findIndex((arg) => !arg.startsWith('-'));
  if (subIndex < 0) return undefined;
  const sub = args[subIndex] as string;
  const table = GIT_SHORT[sub];
  if (table === undefined) return undefined;
  const options: string[] = [];
  const operands: string[] = [];
  let pathsFollow = false;
  const rest = args.slice(subIndex + 1);
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i] as string;
    if (arg === '--' && !pathsFollow) {
      pathsFollow = true;
    } else if (pathsFollow || arg === '-' || !arg.startsWith('-')) {
      operands.push(arg);
    } else if (arg.startsWith('--')) {
      options.push(arg);
      if (sub === 'checkout' && CHECKOUT_VALUED_LONG.has(arg)) options.push(rest[++i] ?? '');
    } else {
      i = readGitBundle(arg, rest, i, table, options);
    }
  }
  const head = ['git', ...args.slice(0, subIndex), sub, ...options];
  if (sub !== 'checkout') return [...head, ...(pathsFollow ? ['--'] : []), ...operands];
  const fromFile = options.some((option) => option.startsWith('--pathspec-from-file'));
  const paths = checkoutPaths(operands, pathsFollow || fromFile, cwd);
  return [...head, ...operands.slice(0, operands.length - paths.length), ...(paths.length > 0 || pathsFollow || fromFile ? ['--', ...paths] : [])];
}

/** `-qf` is `-q --force`; a letter that takes a value ends the bundle. Returns the new index. */
function readGitBundle(arg: string, rest: readonly string[], i: number, table: { long: Record<string, string>; valued: string }, options: string[]): number {
  for (let j = 1; j < arg.length; j++) {
    const letter = arg[j] as string;
    options.push(...(table.long[letter] ?? `-${letter}`).split(' '));
    if (table.valued.includes(letter)) {
      const attached = arg.slice(j + 1);
      options.push(attached !== '' ? attached : (rest[i + 1] ?? ''));
      return attached !== '' ? i : i + 1;
    }
  }
  return i;
}

/**
 * The operands of `git checkout` that git takes as paths: after `--` (or with a pathspec file),
 * every one; else all but the first when there are several (`git checkout HEAD a.txt`), or a lone
 * one that names a file or directory here, a pathspec (`.`, `:/`, a glob), as git does when it is
 * no revision.
 */
function checkoutPaths(operands: readonly string[], pathsOnly: boolean, cwd: string | undefined): string[] {
  if (pathsOnly) return [...operands];
  if (operands.length >= 2) return operands.slice(1);
  const lone = operands[0];
  if (lone === undefined) return [];
  return looksLikePath(lone, cwd) ? [lone] : [];
}

function looksLikePath(operand: string, cwd: string | undefined): boolean {
  if (operand === '.' || operand.startsWith(':') || /[*?[]/.test(operand)) return true;
  if (cwd === undefined) return false;
  try {
    lstatSync(resolve(cwd, operand));
    return true;
  } catch {
    return false;
  }
}
