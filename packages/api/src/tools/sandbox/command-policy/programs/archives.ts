import { optionTable, optionValues, scanArgs, type ParsedArgs } from '../options.js';
import { refuse } from '../refusal.js';
import type { PathUse } from '../path-access.js';
import type { CommandContext, ProgramCheck } from './types.js';

const RUNS = 'runs another program';
const FOLLOWS_LINKS = 'follows symbolic links, which can lead outside the allowed paths';

/**
 * Extracted archives must not write into a repository (hooks and config run code; an empty
 * `.git/logs/refs/stash` clears the stash), nor keep owners and setuid bits. Unanchored, `.git`
 * also leaves out `sub/.git` and everything below either.
 */
const TAR_EXTRACT_FORCED = ['--no-same-owner', '--no-same-permissions', '--exclude=.git'];

const tarTable = optionTable({
  options: [
    'help', 'usage', 'version', 'c|create', 'x|extract|get', 't|list', 'd|diff|compare', 'v|verbose', 'z|gzip|gunzip|ungzip',
    'j|bzip2', 'J|xz', 'zstd', 'a|auto-compress', 'k|keep-old-files', 'skip-old-files', 'keep-newer-files', 'overwrite',
    'no-overwrite-dir', 'O|to-stdout', 'm|touch', 'U|unlink-first', 'f|file=text', 'C|directory=text', 'T|files-from=read',
    'X|exclude-from=read', 'exclude=text', 'exclude-vcs', 'exclude-vcs-ignores', 'strip-components=text', 'wildcards',
    'no-wildcards', 'anchored', 'no-anchored', 'ignore-case', 'no-same-owner', 'no-same-permissions', 'numeric-owner',
    'owner=text', 'group=text', 'mode=text', 'mtime=text', 'sort=text', 'totals?=text', 'one-file-system', 'null',
    'no-null', 'recursion', 'no-recursion', 'b|blocking-factor=text', 'W|verify', 'checkpoint?=text', 'full-time',
    'utc', 'force-local', 'S|sparse', 'posix', 'H|format=text', 'show-transformed-names', 'warning=text',
  ],
  refused: {
    'P|absolute-names': 'writes outside the extraction directory',
    'h|dereference': FOLLOWS_LINKS,
    'to-command=text': RUNS,
    'I|use-compress-program=text': RUNS,
    'checkpoint-action=text': RUNS,
    'F|info-script|new-volume-script=text': RUNS,
    'rsh-command=text': RUNS,
    'rmt-command=text': RUNS,
    'w|interactive|confirmation': 'asks questions on a terminal',
    'transform|xform=text': 'renames members, which can lead outside the extraction directory',
    'g|listed-incremental=text': 'writes a snapshot file',
    'G|incremental': 'is not supported here',
    'M|multi-volume': 'is not supported here',
    'L|tape-length=text': 'is not supported here',
    'index-file=text': 'writes a file',
    'volno-file=text': 'writes a file',
    'remove-files': 'deletes the files it archives',
    'recursive-unlink': 'removes whole directories',
    'r|append': 'is not supported here',
    'u|update': 'is not supported here',
    'A|catenate|concatenate': 'is not supported here',
    delete: 'is not supported here',
    'p|preserve-permissions|same-permissions': 'keeps setuid bits from the archive',
    'same-owner': 'keeps file owners from the archive',
  },
});

const TAR_VALUE_LETTERS = new Set([...'fCTXbHLgFIK']);

/** `tar xzf a.tar` (letters without a dash, values taken in order) as `-x -z -f a.tar`. */
function normaliseOldStyle(args: string[]): string[] {
  const [first, ...rest] = args;
  if (first === undefined || first.startsWith('-')) return args;
  const out: string[] = [];
  for (const letter of first) {
    out.push(`-${letter}`);
    if (TAR_VALUE_LETTERS.has(letter)) {
      const value = rest.shift();
      if (value === undefined) refuse(`tar ${letter} needs a value`);
      out.push(value as string);
    }
  }
  return [...out, ...rest];
}

function tarMode(parsed: ParsedArgs): 'create' | 'extract' | 'list' | 'diff' {
  const modes = (['create', 'extract', 'list', 'diff'] as const).filter((m) => parsed.options.some((o) => o.def.id === m));
  if (modes.length !== 1) refuse('tar needs exactly one of -c, -x, -t or -d');
  return modes[0] as 'create' | 'extract' | 'list' | 'diff';
}

/** tar extracts into each -C directory it is given, or the working directory. */
const extractionDirectories = (directories: string[]): PathUse[] =>
  (directories.length > 0 ? directories : ['.']).map((path) => ({ path, access: 'write', below: true }));

function tarPaths(parsed: ParsedArgs, mode: string): PathUse[] {
  const archives = optionValues(parsed, 'file');
  for (const archive of archives) if (archive.includes(':')) refuse(`tar -f ${archive}: a colon makes tar use a remote host`);
  const directories = optionValues(parsed, 'directory');
  const paths: PathUse[] = [
    ...archives.map((path) => ({ path, access: mode === 'create' ? ('write' as const) : ('read' as const) })),
    ...(mode === 'extract' ? extractionDirectories(directories) : directories.map((path) => ({ path, access: 'read' as const }))),
    ...optionValues(parsed, 'files-from').map((path) => ({ path, access: 'read' as const })),
    ...optionValues(parsed, 'exclude-from').map((path) => ({ path, access: 'read' as const })),
  ];
  if (mode !== 'create') return paths;
  // Files to archive are read from every -C directory the command names, so check them from each.
  const bases = directories.length > 0 ? directories : [undefined];
  for (const operand of parsed.operands) {
    for (const base of bases) paths.push(base === undefined ? { path: operand, access: 'read' } : { path: operand, access: 'read', base });
  }
  return paths;
}

export const tar: ProgramCheck = (args, ctx: CommandContext) => {
  const normalised = normaliseOldStyle(args);
  const parsed = scanArgs('tar', normalised, tarTable, ctx.tool);
  const mode = tarMode(parsed);
  const forced = mode === 'extract' ? TAR_EXTRACT_FORCED : [];
  return { args: [...forced, ...normalised], paths: tarPaths(parsed, mode) };
};

const UNZIP_FLAGS = new Set([...'lvtzcpfuonjqaCLTbD']);
const UNZIP_REFUSED: Record<string, string> = {
  X: 'restores file owners',
  K: 'keeps setuid bits',
  ':': 'allows ../ in member names',
  '^': 'allows control characters in names',
  Z: 'is zipinfo mode; use zipinfo',
};
/** unzip's `*` crosses `/`: these leave out every `.git` and what is below it, as tar's `--exclude=.git` does. */
const UNZIP_FORCED_EXCLUDES = ['.git', '*/.git', '.git/*', '*/.git/*'];

interface UnzipArgs {
  flags: string[];
  password?: string;
  zipfile: string;
  members: string[];
  excludes: string[];
  exdir?: string;
}

/** unzip [-opts] file.zip [members] [-x excludes] [-d exdir]; -d may also come with the options. */
function readUnzip(args: string[]): UnzipArgs {
  const out: Partial<UnzipArgs> & { flags: string[]; members: string[]; excludes: string[] } = { flags: [], members: [], excludes: [] };
  let list: 'members' | 'excludes' = 'members';
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    const takeValue = (attached: string): string => {
      if (attached !== '') return attached;
      const next = args[++i];
      return next ?? refuse(`unzip ${arg} needs a value`);
    };
    if (arg === '-x') list = 'excludes';
    else if (arg.startsWith('-d')) {
      if (out.exdir !== undefined) refuse('unzip takes one -d directory');
      out.exdir = takeValue(arg.slice(2));
    }
    else if (arg.startsWith('-P')) out.password = takeValue(arg.slice(2));
    else if (arg.startsWith('-') && arg.length > 1 && out.zipfile === undefined) {
      for (const letter of arg.slice(1)) {
        const reason = UNZIP_REFUSED[letter];
        if (reason !== undefined) refuse(`unzip -${letter} ${reason}`);
        if (!UNZIP_FLAGS.has(letter)) refuse(`unzip option -${letter} is not in the allowlist`);
      }
      out.flags.push(arg);
    } else if (out.zipfile === undefined) out.zipfile = arg;
    else if (arg.startsWith('-') && arg.length > 1) refuse(`unzip option ${arg} after the archive is not supported`);
    else out[list].push(arg);
  }
  if (out.zipfile === undefined) return refuse('unzip needs an archive');
  return out as UnzipArgs;
}

export const unzip: ProgramCheck = (args) => {
  const u = readUnzip(args);
  const letters = u.flags.join('');
  const extracting = !/[lvtzcp]/.test(letters);
  const paths: PathUse[] = [{ path: u.zipfile, access: 'read' }];
  if (extracting) paths.push({ path: u.exdir ?? '.', access: 'write', below: true });
  const rebuilt = [
    ...u.flags,
    ...(u.password === undefined ? [] : ['-P', u.password]),
    u.zipfile,
    ...u.members,
    '-x',
    ...u.excludes,
    ...UNZIP_FORCED_EXCLUDES,
    ...(u.exdir === undefined ? [] : ['-d', u.exdir]),
  ];
  return { args: rebuilt, paths };
};

const ZIPINFO_FLAGS = new Set([...'12hlmMstTvzC']);

export const zipinfo: ProgramCheck = (args) => {
  let zipfile: string | undefined;
  let excluding = false;
  for (const arg of args) {
    if (arg === '-x') excluding = true;
    else if (arg.startsWith('-') && arg.length > 1 && zipfile === undefined) {
      for (const letter of arg.slice(1)) if (!ZIPINFO_FLAGS.has(letter)) refuse(`zipinfo option -${letter} is not in the allowlist`);
    } else if (zipfile === undefined) zipfile = arg;
    else if (arg.startsWith('-') && arg.length > 1 && !excluding) refuse(`zipinfo option ${arg} after the archive is not supported`);
  }
  if (zipfile === undefined) return refuse('zipinfo needs an archive');
  return { args, paths: [{ path: zipfile, access: 'read' }] };
};

export const ARCHIVE_PROGRAMS: Record<string, ProgramCheck> = { tar, unzip, zipinfo };
