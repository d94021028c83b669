import { refuse } from '../refusal.js';
import type { PathUse } from '../path-access.js';
import type { ProgramCheck } from './types.js';

type Primary = { args: 0 | 1; kind: 'text' | 'read' } | { refused: string };

const RUNS = { refused: 'runs another program' } as const;
const WRITES = { refused: 'writes files' } as const;

const PRIMARIES = new Map<string, Primary>();
const define = (names: string, primary: Primary): void => names.split(' ').forEach((name) => PRIMARIES.set(name, primary));

define(
  '-print -print0 -ls -prune -quit -true -false -empty -executable -readable -writable -nouser -nogroup -depth -d ' +
    '-mount -xdev -noleaf -ignore_readdir_race -noignore_readdir_race -daystart -not -and -a -or -o -help --help ' +
    '-version --version -warn -nowarn ( ) ! ,',
  { args: 0, kind: 'text' },
);
define(
  '-name -iname -path -ipath -wholename -iwholename -regex -iregex -lname -ilname -type -xtype -user -group -uid ' +
    '-gid -perm -size -mtime -mmin -atime -amin -ctime -cmin -maxdepth -mindepth -links -inum -printf -regextype ' +
    '-fstype -context -used',
  { args: 1, kind: 'text' },
);
define('-newer -anewer -cnewer -samefile -files0-from', { args: 1, kind: 'read' });
define('-exec -execdir -ok -okdir', RUNS);
define('-delete', { refused: 'deletes files (rm takes one file at a time)' });
define('-fprint -fprint0 -fls -fprintf', WRITES);
define('-follow', { refused: 'follows symbolic links, which can lead outside the allowed paths' });

/** `-newerXY`: Y = t means a time string, otherwise a reference file. */
function primaryFor(token: string): Primary | undefined {
  const newer = /^-newer([aBcm])([aBcmt])$/.exec(token);
  if (newer) return { args: 1, kind: newer[2] === 't' ? 'text' : 'read' };
  return PRIMARIES.get(token);
}

const startsExpression = (arg: string): boolean => arg.startsWith('-') || ['(', ')', '!', ','].includes(arg);

/** find's grammar: global options, starting points, then an expression of primaries. */
export const find: ProgramCheck = (args) => {
  const paths: PathUse[] = [];
  let i = 0;
  for (; i < args.length; i++) {
    const arg = args[i] as string;
    if (arg === '-H' || arg === '-P' || /^-O\d$/.test(arg)) continue;
    if (arg === '-L') refuse('find -L follows symbolic links, which can lead outside the allowed paths');
    if (arg === '-D') {
      i++;
      continue;
    }
    break;
  }
  for (; i < args.length && !startsExpression(args[i] as string); i++) paths.push({ path: args[i] as string, access: 'read' });
  while (i < args.length) {
    const token = args[i] as string;
    const primary = primaryFor(token);
    if (primary === undefined) refuse(`find ${token} is not in the allowlist`);
    if (primary !== undefined && 'refused' in primary) refuse(`find ${token} ${primary.refused}`);
    const p = primary as { args: 0 | 1; kind: 'text' | 'read' };
    if (p.args === 1) {
      const value = args[i + 1];
      if (value === undefined) refuse(`find ${token} needs a value`);
      if (p.kind === 'read') paths.push({ path: value as string, access: 'read' });
    }
    i += 1 + p.args;
  }
  return { args, paths };
};
