import { lstatSync, type Stats } from 'node:fs';
import { dirname, join } from 'node:path';
import { refuse } from '../refusal.js';
import type { PathUse } from '../path-access.js';
import type { CommandContext, ProgramCheck } from './types.js';

/**
 * Settings that keep a repository's own config from running programs through the commands we
 * allow. Git runs inside the sandbox, so what slips past these (clean/smudge filters, say) runs
 * confined; these keep ordinary commands from starting anything at all. `safe.bareRepository`
 * stops git from adopting a bare repository planted in the work tree as the current one.
 */
export const GIT_FORCED_CONFIG = [
  '-c', 'core.fsmonitor=false',
  '-c', 'core.pager=cat',
  '-c', 'core.hooksPath=/dev/null',
  '-c', 'core.sshCommand=ssh',
  '-c', 'credential.helper=',
  '-c', 'safe.bareRepository=explicit',
  '-c', 'commit.gpgSign=false',
  '-c', 'tag.gpgSign=false',
  '-c', 'log.showSignature=false',
  // `--show-signature` and the `%G` placeholders of a format verify signatures with whatever
  // program the repository names; `false` makes every signature unverified instead.
  '-c', 'gpg.program=false',
  '-c', 'gpg.openpgp.program=false',
  '-c', 'gpg.x509.program=false',
  '-c', 'gpg.ssh.program=false',
  // With `gpg.format=ssh` and no signing key, `git commit -S` asks this program for one.
  '-c', 'gpg.ssh.defaultKeyCommand=false',
  // No editor can open without a terminal; `true` makes `git commit` without -m fail at once.
  '-c', 'core.editor=true',
  '-c', 'sequence.editor=true',
  '-c', 'protocol.ext.allow=never',
];

const READONLY_SUBCOMMANDS = new Set(['status', 'log', 'diff', 'show', 'branch']);
const BASH_SUBCOMMANDS = new Set([
  'status', 'log', 'diff', 'show', 'branch', 'tag', 'remote', 'config', 'ls-files', 'ls-tree', 'rev-parse', 'describe',
  'shortlog', 'blame', 'add', 'commit', 'checkout', 'switch', 'restore', 'merge', 'rebase', 'cherry-pick', 'stash',
  'pull', 'fetch', 'init', 'reset', 'clean', 'rm', 'mv',
]);

const GLOBAL_ALLOWED = new Set([
  '--no-pager', '-P', '-p', '--paginate', '--no-optional-locks', '--literal-pathspecs', '--glob-pathspecs',
  '--noglob-pathspecs', '--icase-pathspecs', '--no-replace-objects', '--version', '--help',
]);

const GLOBAL_REFUSED: Record<string, string> = {
  '-c': 'sets configuration, which can run programs',
  '--config-env': 'sets configuration, which can run programs',
  '-C': 'changes to another directory; use the cwd parameter',
  '--git-dir': 'points git at another repository',
  '--work-tree': 'points git at another work tree',
  '--exec-path': 'changes where git finds its programs',
  '--namespace': 'is not needed here',
  '--super-prefix': 'is not needed here',
  '--bare': 'is not needed here',
};

/** Long options refused in every subcommand, also when abbreviated (`--outp`). */
const REFUSED_LONG: Record<string, string> = {
  output: 'writes to a file',
  'upload-pack': 'runs another program',
  'receive-pack': 'runs another program',
  exec: 'runs another program',
  'config-env': 'sets configuration, which can run programs',
  'git-dir': 'points git at another repository',
  'work-tree': 'points git at another work tree',
  template: 'copies hooks from a template directory',
  'separate-git-dir': 'moves the repository elsewhere',
  'recurse-submodules': 'fetches and runs submodule commands',
};

/**
 * Refused by exact name: they undo the `--no-ext-diff`/`--no-textconv` given before them and run
 * the program a repository's config names. Git takes no abbreviation of these, and their
 * prefixes are other options (`--text`).
 */
const REFUSED_EXACT = new Map([
  ['ext-diff', 'runs the diff program the repository config names'],
  ['textconv', 'runs the textconv program the repository config names'],
]);

const SAFE_STRATEGIES = new Set(['ort', 'recursive', 'resolve', 'octopus', 'ours', 'subtree']);
const STRATEGY_SUBCOMMANDS = new Set(['merge', 'pull', 'rebase', 'cherry-pick']);
/** Where `-s` means --strategy (in cherry-pick it is --signoff). */
const SHORT_STRATEGY_SUBCOMMANDS = new Set(['merge', 'pull', 'rebase']);
const REMOTE_SUBCOMMANDS = new Set(['fetch', 'pull', 'remote']);
/**
 * Their operands are directory entries git makes or renames. `git mv f .git/x` renames the file
 * into `.git` before git finds the index path invalid: `-f` over `.git/logs/refs/stash` clears
 * the stash past the rules that ask before `git stash clear`.
 */
const ENTRY_SUBCOMMANDS = new Set(['mv', 'init']);

/** Short options whose values are messages, counts or patterns, not paths. */
const TEXT_SHORT = new Set(['m', 'n']);
/** The pickaxe options; elsewhere `-S` can name a file (git blame -S <revs-file>). */
const PICKAXE_SUBCOMMANDS = new Set(['log', 'show', 'diff', 'shortlog']);
/** `-X` is a strategy option only where there is a strategy: `git ls-files -X <file>` reads a file. */
const isTextShort = (sub: string, letter: string): boolean =>
  TEXT_SHORT.has(letter) || (PICKAXE_SUBCOMMANDS.has(sub) && (letter === 'S' || letter === 'G')) || (STRATEGY_SUBCOMMANDS.has(sub) && letter === 'X');
const TEXT_LONG = new Set([
  'message', 'author', 'committer', 'date', 'format', 'pretty', 'grep', 'since', 'until', 'after', 'before',
  'max-count', 'skip', 'strategy-option', 'sort', 'trailer', 'abbrev', 'strategy',
]);

function splitGlobal(args: string[]): { globals: string[]; sub: string | undefined; rest: string[] } {
  const globals: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (!arg.startsWith('-')) return { globals, sub: arg, rest: args.slice(i + 1) };
    const name = arg.split('=')[0] as string;
    const reason = GLOBAL_REFUSED[name] ?? (name.startsWith('-C') ? GLOBAL_REFUSED['-C'] : undefined) ?? (name.startsWith('-c') ? GLOBAL_REFUSED['-c'] : undefined);
    if (reason !== undefined) refuse(`git ${name} ${reason}`);
    if (!GLOBAL_ALLOWED.has(arg)) refuse(`git option ${arg} is not in the allowlist`);
    globals.push(arg);
  }
  return { globals, sub: undefined, rest: [] };
}

function refusedLong(name: string): string | undefined {
  const match = Object.keys(REFUSED_LONG).find((refused) => name !== '' && refused.startsWith(name));
  return match === undefined ? undefined : `git --${match} ${REFUSED_LONG[match]}`;
}

interface ReadArgs {
  options: { name: string; value?: string }[];
  operands: string[];
  paths: PathUse[];
}

/**
 * Git's options are too many to list, so this reads them loosely and fails closed: refused options
 * are caught in any spelling, and every value or operand that is not known text is treated as a
 * path and must stay inside the allowed paths.
 */
function readArgs(sub: string, rest: string[]): ReadArgs {
  const out: ReadArgs = { options: [], operands: [], paths: [] };
  const path = (value: string): void => {
    out.paths.push({ path: value, access: 'read' });
  };
  let ended = false;
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i] as string;
    if (ended || arg === '-' || !arg.startsWith('-')) {
      out.operands.push(arg);
      path(arg);
    } else if (arg === '--') {
      ended = true;
    } else if (arg.startsWith('--')) {
      const eq = arg.indexOf('=');
      const name = eq < 0 ? arg.slice(2) : arg.slice(2, eq);
      const reason = refusedLong(name) ?? (REFUSED_EXACT.has(name) ? `git --${name} ${REFUSED_EXACT.get(name)}` : undefined);
      if (reason !== undefined) refuse(reason);
      const value = eq < 0 ? undefined : arg.slice(eq + 1);
      if (value === undefined && TEXT_LONG.has(name) && i + 1 < rest.length) {
        out.options.push({ name, value: rest[++i] as string });
        continue;
      }
      out.options.push(value === undefined ? { name } : { name, value });
      if (value !== undefined && !TEXT_LONG.has(name)) path(value);
    } else {
      i = readShortBundle(sub, arg, rest, i, out);
    }
  }
  return out;
}

/** `-am msg`, `-n5`, `-xcmd`: letters until one that takes a value. Returns the new index. */
function readShortBundle(sub: string, arg: string, rest: string[], i: number, out: ReadArgs): number {
  for (let j = 1; j < arg.length; j++) {
    const letter = arg[j] as string;
    if (sub === 'rebase' && letter === 'x') refuse('git rebase -x runs another program');
    if (SHORT_STRATEGY_SUBCOMMANDS.has(sub) && letter === 's') {
      const attached = arg.slice(j + 1);
      out.options.push({ name: 'strategy', value: attached !== '' ? attached : ((rest[i + 1] as string | undefined) ?? '') });
      return attached !== '' ? i : i + 1;
    }
    if (isTextShort(sub, letter)) {
      const attached = arg.slice(j + 1);
      out.options.push({ name: letter, value: attached !== '' ? attached : ((rest[i + 1] as string | undefined) ?? '') });
      return attached !== '' ? i : i + 1;
    }
    out.options.push({ name: letter });
    // Any letter not known as text may take the rest of the bundle as its value (`-O<orderfile>`,
    // `-oX<file>` in ls-files), so each such rest must stay inside like any path.
    const remainder = arg.slice(j + 1);
    if (remainder !== '') out.paths.push({ path: remainder, access: 'read' });
  }
  return i;
}

function checkStrategies(sub: string, read: ReadArgs): void {
  if (!STRATEGY_SUBCOMMANDS.has(sub)) return;
  for (const o of read.options) {
    // Shorter prefixes are ambiguous to git (--stat, --squash) and rejected by it.
    const isStrategy = o.name.length >= 4 && 'strategy'.startsWith(o.name);
    if (isStrategy && (o.value === undefined || !SAFE_STRATEGIES.has(o.value))) {
      refuse(`git ${sub} strategy ${o.value ?? ''} is not allowed (a strategy runs git-merge-<name>)`);
    }
  }
}

function checkRemoteUrls(sub: string, read: ReadArgs): void {
  if (!REMOTE_SUBCOMMANDS.has(sub)) return;
  for (const operand of read.operands) {
    if (operand.includes('::') || /^(ext|file):/i.test(operand)) refuse(`git ${sub} ${operand}: transport helpers and file: URLs are refused`);
  }
}

const BRANCH_LIST_OPTIONS = new Set([
  'a', 'r', 'l', 'v', 'i', 'all', 'remotes', 'list', 'verbose', 'contains', 'no-contains', 'merged', 'no-merged',
  'points-at', 'sort', 'format', 'show-current', 'color', 'no-color', 'column', 'no-column', 'ignore-case',
  'abbrev', 'no-abbrev', 'omit-empty',
]);
const LIST_MODE = new Set(['l', 'list', 'contains', 'no-contains', 'merged', 'no-merged', 'points-at']);

/** Why a `git branch` changes branches (any option but a listing one, or a bare name); undefined when it only lists them. */
function branchChange(read: ReadArgs): string | undefined {
  const changing = read.options.find((o) => !BRANCH_LIST_OPTIONS.has(o.name));
  if (changing !== undefined) return `git branch ${changing.name.length === 1 ? '-' : '--'}${changing.name} changes branches`;
  const listing = read.options.some((o) => LIST_MODE.has(o.name));
  return read.operands.length > 0 && !listing ? 'git branch <name> creates a branch' : undefined;
}

/** In bash_readonly, `git branch` may only list. */
function checkReadonlyBranch(read: ReadArgs): void {
  const change = branchChange(read);
  if (change !== undefined) refuse(`${change} (bash_readonly only lists them)`);
}

/**
 * Subcommands that change no file of the work tree (`config` only reads here): they read, or write
 * only inside the repository's git directory (its index, objects and refs). A git directory is in
 * no run's checkpoint wherever the repository's root lies, so these are not changes a revert would
 * miss: `git add` and `git commit` in a package of a monorepo ask no more than at its root. Any
 * other subcommand may change the whole work tree of the repository it finds.
 */
const WORK_TREE_UNCHANGED = new Set([
  'status', 'log', 'diff', 'show', 'ls-files', 'ls-tree', 'rev-parse', 'describe', 'shortlog', 'blame', 'config',
  'add', 'commit', 'tag', 'notes', 'fetch', 'branch',
]);
const changesWorkTree = (sub: string): boolean => !WORK_TREE_UNCHANGED.has(sub);

const CONFIG_READ_OPTIONS = new Set(['get', 'get-all', 'get-regexp', 'list', 'l', 'show-origin', 'show-scope', 'name-only', 'z', 'null', 'local', 'global', 'system', 'includes', 'type', 'bool', 'int', 'path']);

/** git config: reading only. The repository config is protected (EXTENSIONS.md section 1): set by no route. */
function checkConfig(read: ReadArgs): void {
  const names = read.options.map((o) => o.name);
  for (const name of names) if (!CONFIG_READ_OPTIONS.has(name)) refuse(`git config ${name.length === 1 ? '-' : '--'}${name} is not allowed (git config only reads here)`);
  const reading = names.some((n) => n.startsWith('get') || n === 'list' || n === 'l');
  if (reading || read.operands.length <= 1) return;
  refuse('git config only reads here: the repository config is protected');
}

/**
 * Options placed before the command's own, which win over the repository's config and lose to the
 * command's. The diff machinery runs no configured program: forcing `diff.external` empty instead
 * breaks plain `git diff` on git 2.39 ("external diff died"). Fetch and pull prune only when the
 * command says so, where the approval rules see it: a configured prune with a refspec into
 * refs/heads deletes every local branch.
 */
const FORCED_OPTIONS: Record<string, string[]> = {
  diff: ['--no-ext-diff', '--no-textconv'],
  log: ['--no-ext-diff', '--no-textconv'],
  show: ['--no-ext-diff', '--no-textconv'],
  blame: ['--no-textconv'],
  fetch: ['--no-prune', '--no-prune-tags'],
  pull: ['--no-prune'],
};

/**
 * Git acts on the whole repository it finds above the working directory: `git reset --hard` in a
 * subdirectory resets the parent's work tree, `git stash drop` changes the parent's `.git`. A `.git`
 * file points somewhere else (a linked work tree, a submodule), which the policy does not follow.
 */
function repositoryReach(cwd: string): string[] | 'unknown' {
  for (let dir = cwd; ; dir = dirname(dir)) {
    let found: Stats | undefined;
    try {
      found = lstatSync(join(dir, '.git'));
    } catch {
      found = undefined;
    }
    if (found !== undefined) return found.isDirectory() ? [dir] : 'unknown';
    if (dirname(dir) === dir) return [cwd];
  }
}

export const git: ProgramCheck = (args, ctx: CommandContext) => {
  const { globals, sub, rest } = splitGlobal(args);
  if (sub === undefined) return globals.length > 0 ? { args: [...GIT_FORCED_CONFIG, ...globals], paths: [] } : refuse('git needs a subcommand');
  const allowed = ctx.tool === 'bash_readonly' ? READONLY_SUBCOMMANDS : BASH_SUBCOMMANDS;
  if (!allowed.has(sub)) refuse(`git ${sub} is not allowed in ${ctx.tool} (allowed: ${[...allowed].join(', ')})`);
  const read = readArgs(sub, rest);
  checkStrategies(sub, read);
  checkRemoteUrls(sub, read);
  if (sub === 'branch' && ctx.tool === 'bash_readonly') checkReadonlyBranch(read);
  if (sub === 'config') {
    checkConfig(read);
    return { args: [...GIT_FORCED_CONFIG, ...globals, sub, ...rest], paths: [], reach: repositoryReach(ctx.cwd) };
  }
  const forced = FORCED_OPTIONS[sub] ?? [];
  const paths = ENTRY_SUBCOMMANDS.has(sub) ? read.paths.map((use) => ({ ...use, access: 'entry' as const })) : read.paths;
  const changes = changesWorkTree(sub) ? { changesReach: true } : {};
  return { args: [...GIT_FORCED_CONFIG, ...globals, sub, ...forced, ...rest], paths, reach: repositoryReach(ctx.cwd), ...changes };
};
