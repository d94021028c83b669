import { optionTable, type ParsedArgs } from '../options.js';
import { refuse } from '../refusal.js';
import { simpleProgram, type CommandContext, type ProgramCheck } from './types.js';
import type { PathUse } from '../path-access.js';

const FOLLOWS_LINKS = 'follows symbolic links, which can lead outside the allowed paths';
const HELP = ['help', 'version'];

export const ls = simpleProgram('ls', {
  table: optionTable({
    options: [
      ...HELP,
      'a|all', 'A|almost-all', 'author', 'b|escape', 'block-size=text', 'B|ignore-backups', 'c', 'C', 'color?=text',
      'd|directory', 'D|dired', 'f', 'F|classify?=text', 'file-type', 'format=text', 'full-time', 'g',
      'group-directories-first', 'G|no-group', 'h|human-readable', 'si', 'H|dereference-command-line',
      'dereference-command-line-symlink-to-dir', 'hide=text', 'hyperlink?=text', 'indicator-style=text', 'i|inode',
      'I|ignore=text', 'k|kibibytes', 'l', 'm', 'n|numeric-uid-gid', 'N|literal', 'o', 'p', 'q|hide-control-chars',
      'show-control-chars', 'Q|quote-name', 'quoting-style=text', 'r|reverse', 'R|recursive', 's|size', 'S', 'sort=text',
      't', 'time=text', 'time-style=text', 'T|tabsize=text', 'u', 'U', 'v', 'w|width=text', 'x', 'X', 'Z|context', 'zero', '1',
    ],
    refused: { 'L|dereference': FOLLOWS_LINKS },
  }),
  operands: 'read',
});

export const cat = simpleProgram('cat', {
  table: optionTable({
    options: [...HELP, 'A|show-all', 'b|number-nonblank', 'e', 'E|show-ends', 'n|number', 's|squeeze-blank', 't', 'T|show-tabs', 'u', 'v|show-nonprinting'],
  }),
  operands: 'read',
});

export const head = simpleProgram('head', {
  table: optionTable({
    options: [...HELP, 'c|bytes=text', 'n|lines=text', 'q|quiet|silent', 'v|verbose', 'z|zero-terminated'],
    style: { numericOption: 'lines' },
  }),
  operands: 'read',
});

export const tail = simpleProgram('tail', {
  table: optionTable({
    options: [
      ...HELP, 'c|bytes=text', 'f', 'follow?=text', 'F', 'n|lines=text', 'max-unchanged-stats=text', 'pid=text',
      'q|quiet|silent', 'retry', 's|sleep-interval=text', 'v|verbose', 'z|zero-terminated',
    ],
    style: { numericOption: 'lines' },
  }),
  operands: 'read',
});

export const wc = simpleProgram('wc', {
  table: optionTable({
    options: [...HELP, 'c|bytes', 'm|chars', 'l|lines', 'w|words', 'L|max-line-length', 'files0-from=read', 'total=text'],
  }),
  operands: 'read',
});

export const file = simpleProgram('file', {
  table: optionTable({
    options: [
      ...HELP, 'b|brief', 'c|checking-printout', 'd|debug', 'E', 'e|exclude=text', 'exclude-quiet=text', 'extension',
      'f|files-from=read', 'F|separator=text', 'h|no-dereference', 'i|mime', 'apple', 'mime-type', 'mime-encoding',
      'k|keep-going', 'l|list', 'L|dereference', 'm|magic-file=read', 'N|no-pad', 'n|no-buffer', '0|print0',
      'p|preserve-date', 'P|parameter=text', 'r|raw', 's|special-files', 'S', 'z|uncompress', 'Z|uncompress-noreport',
    ],
    refused: { 'C|compile': 'writes a compiled magic file', 'no-sandbox': 'turns off the sandbox of file' },
  }),
  operands: 'read',
});

export const stat = simpleProgram('stat', {
  table: optionTable({
    options: [...HELP, 'L|dereference', 'f|file-system', 'c|format=text', 'printf=text', 't|terse', 'cached=text'],
  }),
  operands: 'read',
});

// tree parses its own options: exact long names, and a short option's value is the next argument.
export const tree = simpleProgram('tree', {
  table: optionTable({
    options: [
      ...HELP, 'a', 'd', 'f', 'x', 'i', 'q', 'N', 'Q', 'p', 'u', 'g', 's', 'h', 'D', 'F', 'v', 't', 'c', 'U', 'r', 'n',
      'C', 'A', 'S', 'J', 'X', 'L=text', 'P=text', 'I=text', 'H=text', 'T=text', 'noreport', 'charset=text',
      'filelimit=text', 'dirsfirst', 'filesfirst', 'du', 'si', 'prune', 'timefmt=text', 'sort=text', 'matchdirs',
      'metafirst', 'ignore-case', 'nolinks', 'inodes', 'device', 'gitignore', 'gitfile=read', 'hintro=read',
      'houtro=read', 'fflinks', 'info', 'infofile=read',
    ],
    refused: { l: FOLLOWS_LINKS, R: 'writes 00Tree.html files', fromfile: 'reads the listing from files' },
    readonlyRefused: { 'o=write': 'writes the listing to a file' },
    style: { abbreviations: false, attachedValues: false },
  }),
  operands: 'read',
});

export const du = simpleProgram('du', {
  table: optionTable({
    options: [
      ...HELP, '0|null', 'a|all', 'apparent-size', 'B|block-size=text', 'b|bytes', 'c|total', 'D|H|dereference-args',
      'd|max-depth=text', 'files0-from=read', 'h|human-readable', 'inodes', 'k', 'l|count-links', 'm',
      'P|no-dereference', 'S|separate-dirs', 'si', 's|summarize', 't|threshold=text', 'time?=text', 'time-style=text',
      'X|exclude-from=read', 'exclude=text', 'x|one-file-system',
    ],
    refused: { 'L|dereference': FOLLOWS_LINKS },
  }),
  operands: 'read',
});

export const df = simpleProgram('df', {
  table: optionTable({
    options: [
      ...HELP, 'a|all', 'B|block-size=text', 'h|human-readable', 'H|si', 'i|inodes', 'k', 'l|local', 'no-sync',
      'output?=text', 'P|portability', 'sync', 'total', 't|type=text', 'T|print-type', 'x|exclude-type=text', 'v',
    ],
  }),
  operands: 'read',
});

export const cut = simpleProgram('cut', {
  table: optionTable({
    options: [
      ...HELP, 'b|bytes=text', 'c|characters=text', 'd|delimiter=text', 'f|fields=text', 'n', 'complement',
      's|only-delimited', 'output-delimiter=text', 'z|zero-terminated',
    ],
  }),
  operands: 'read',
});

export const tr = simpleProgram('tr', {
  table: optionTable({ options: [...HELP, 'c|C|complement', 'd|delete', 's|squeeze-repeats', 't|truncate-set1'] }),
  operands: 'text',
  maxOperands: 2,
});

export const sort = simpleProgram('sort', {
  table: optionTable({
    options: [
      ...HELP, 'b|ignore-leading-blanks', 'd|dictionary-order', 'f|ignore-case', 'g|general-numeric-sort',
      'i|ignore-nonprinting', 'M|month-sort', 'h|human-numeric-sort', 'n|numeric-sort', 'R|random-sort',
      'random-source=read', 'r|reverse', 'sort=text', 'V|version-sort', 'batch-size=text', 'c', 'C', 'check?=text',
      'debug', 'files0-from=read', 'k|key=text', 'm|merge', 's|stable', 'S|buffer-size=text', 't|field-separator=text',
      'parallel=text', 'u|unique', 'z|zero-terminated',
    ],
    refused: { 'compress-program=text': 'runs another program' },
    readonlyRefused: { 'o|output=write': 'writes a file', 'T|temporary-directory=write': 'writes temporary files' },
  }),
  operands: 'read',
});

/** uniq [INPUT [OUTPUT]]: the second operand is written. */
function uniqOperands(parsed: ParsedArgs, ctx: CommandContext): PathUse[] {
  const [input, output] = parsed.operands;
  if (output !== undefined && ctx.tool === 'bash_readonly') refuse('uniq with an output file in bash_readonly');
  return [
    ...(input === undefined ? [] : [{ path: input, access: 'read' as const }]),
    ...(output === undefined ? [] : [{ path: output, access: 'write' as const }]),
  ];
}

export const uniq = simpleProgram('uniq', {
  table: optionTable({
    options: [
      ...HELP, 'c|count', 'd|repeated', 'D', 'all-repeated?=text', 'f|skip-fields=text', 'group?=text', 'i|ignore-case',
      's|skip-chars=text', 'u|unique', 'z|zero-terminated', 'w|check-chars=text',
    ],
  }),
  operands: uniqOperands,
  maxOperands: 2,
});

export const FILE_READERS: Record<string, ProgramCheck> = { ls, cat, head, tail, wc, file, stat, tree, du, df, cut, tr, sort, uniq };
