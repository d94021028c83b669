import { basename, resolve } from 'node:path';
import { isDirectory } from '../../paths.js';
import { hasOption, optionTable, optionValues, type ParsedArgs } from '../options.js';
import { refuse } from '../refusal.js';
import type { PathUse } from '../path-access.js';
import { judgeMode } from './file-mode.js';
import { simpleProgram, type CommandContext, type ProgramCheck } from './types.js';

const HELP = ['help', 'version'];
const FOLLOWS_LINKS = 'follows symbolic links, which can lead outside the allowed paths';

function requireMode(mode: string): void {
  const reason = judgeMode(mode);
  if (reason !== undefined) refuse(reason);
}

export const mkdir = simpleProgram('mkdir', {
  table: optionTable({ options: [...HELP, 'm|mode=text', 'p|parents', 'v|verbose', 'Z', 'context?=text'] }),
  operands: 'entry',
  validate: (parsed) => optionValues(parsed, 'mode').forEach(requireMode),
});

export const touch = simpleProgram('touch', {
  table: optionTable({
    options: [...HELP, 'a', 'c|no-create', 'd|date=text', 'f', 'h|no-dereference', 'm', 'r|reference=read', 't=text', 'time=text'],
  }),
  operands: 'entry',
});

/** cp/mv: with -t every operand is a source; otherwise the last operand is the destination. */
function copyOperands(sourceAccess: 'read' | 'entry', destinationAccess: 'write' | 'entry') {
  return (parsed: ParsedArgs, ctx: CommandContext): PathUse[] => {
    const ops = parsed.operands;
    const target = hasOption(parsed, 'target-directory');
    if (ops.length < (target ? 1 : 2)) refuse('missing destination operand');
    const sources = target ? ops : ops.slice(0, -1);
    const destination = target ? [] : ops.slice(-1);
    const uses = [...sources.map((path) => ({ path, access: sourceAccess })), ...destination.map((path) => ({ path, access: destinationAccess }))];
    return destinationAccess === 'write' ? [...uses, ...copiesInto(parsed, sources, destination[0], ctx)] : uses;
  };
}

/**
 * The files cp writes into a destination directory: the copy of `src` is `dir/<name of src>`, and
 * cp writes through a symbolic link already there (mv replaces the link instead).
 */
function copiesInto(parsed: ParsedArgs, sources: string[], destination: string | undefined, ctx: CommandContext): PathUse[] {
  if (hasOption(parsed, 'no-target-directory')) return [];
  const dir = optionValues(parsed, 'target-directory').at(-1) ?? destination;
  if (dir === undefined || !isDirectory(resolve(ctx.cwd, dir))) return [];
  return sources.map((source) => ({ path: `${dir}/${basename(source)}`, access: 'write' }));
}

export const cp = simpleProgram('cp', {
  table: optionTable({
    options: [
      ...HELP, 'a|archive', 'attributes-only', 'backup?=text', 'b', 'd', 'f|force', 'i|interactive', 'H', 'l|link',
      'n|no-clobber', 'P|no-dereference', 'p', 'preserve?=text', 'no-preserve=text', 'parents', 'R|r|recursive',
      'reflink?=text', 'remove-destination', 'sparse=text', 'strip-trailing-slashes', 'S|suffix=text',
      't|target-directory=write', 'T|no-target-directory', 'u', 'update?=text', 'v|verbose', 'x|one-file-system', 'Z',
      'context?=text',
    ],
    refused: {
      'L|dereference': FOLLOWS_LINKS,
      's|symbolic-link': 'creates symbolic links, which can point outside the allowed paths',
      'copy-contents': 'reads special files',
    },
  }),
  operands: copyOperands('read', 'write'),
});

export const mv = simpleProgram('mv', {
  table: optionTable({
    options: [
      ...HELP, 'backup?=text', 'b', 'f|force', 'i|interactive', 'n|no-clobber', 'no-copy', 'strip-trailing-slashes',
      'S|suffix=text', 't|target-directory=entry', 'T|no-target-directory', 'u', 'update?=text', 'v|verbose', 'Z', 'context',
    ],
  }),
  // Moving a file away changes its old place too.
  operands: copyOperands('entry', 'entry'),
});

const RECURSIVE = 'recursive removal is refused; rm takes one file at a time';

export const rm = simpleProgram('rm', {
  table: optionTable({
    options: [...HELP, 'f|force', 'i', 'I', 'interactive?=text', 'one-file-system', 'preserve-root?=text', 'v|verbose'],
    refused: { 'r|R|recursive': RECURSIVE, 'd|dir': 'rm -d removes directories; rm takes one file at a time', 'no-preserve-root': RECURSIVE },
  }),
  operands: 'entry',
  validate: (parsed) => {
    if (parsed.operands.length !== 1) refuse(`rm takes exactly one file (got ${parsed.operands.length})`);
  },
});

const CHMOD_FLAGS = new Set(['c', 'f', 'v', 'R']);
const CHMOD_LONG = new Set(['changes', 'silent', 'quiet', 'verbose', 'recursive', 'preserve-root', 'help', 'version']);
const MODE_LIKE = /^-[rwxXstugoa=+,0-7-]+$/;

/**
 * chmod reads `-w` or `-x,o-r` as a mode rather than options (several are joined with commas), and
 * only without such an argument is the first operand the mode; it gets its own small parser.
 */
export const chmod: ProgramCheck = (args) => {
  const dashModes: string[] = [];
  const operands: string[] = [];
  let optionsEnded = false;
  for (const arg of args) {
    if (optionsEnded || arg === '-' || !arg.startsWith('-')) operands.push(arg);
    else if (arg === '--') optionsEnded = true;
    else if (arg.startsWith('--')) checkChmodLong(arg);
    else if ([...arg.slice(1)].every((c) => CHMOD_FLAGS.has(c))) continue;
    else if (MODE_LIKE.test(arg)) dashModes.push(arg);
    else refuse(`chmod option ${arg} is not in the allowlist`);
  }
  const mode = dashModes.length > 0 ? dashModes.join(',') : operands.shift();
  if (mode === undefined || operands.length === 0) return refuse('chmod needs a mode and at least one file');
  requireMode(mode);
  return { args, paths: operands.map((path) => ({ path, access: 'entry' as const })) };
};

function checkChmodLong(arg: string): void {
  const name = arg.slice(2).split('=')[0] as string;
  if ('reference'.startsWith(name)) refuse('chmod --reference copies a mode that cannot be judged');
  if ('no-preserve-root'.startsWith(name)) refuse('chmod --no-preserve-root');
  if (!CHMOD_LONG.has(name)) refuse(`chmod option ${arg} is not in the allowlist`);
}

export const FILE_WRITERS: Record<string, ProgramCheck> = { mkdir, touch, cp, mv, rm, chmod };
