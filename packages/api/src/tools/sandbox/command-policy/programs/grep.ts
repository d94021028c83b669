import { hasOption, optionTable } from '../options.js';
import { simpleProgram } from './types.js';

const table = optionTable({
  options: [
    'help', 'V|version', 'E|extended-regexp', 'F|fixed-strings', 'G|basic-regexp', 'P|perl-regexp', 'e|regexp=text',
    'f|file=read', 'i|y|ignore-case', 'no-ignore-case', 'w|word-regexp', 'x|line-regexp', 'z|null-data',
    's|no-messages', 'v|invert-match', 'm|max-count=text', 'b|byte-offset', 'n|line-number', 'line-buffered',
    'H|with-filename', 'h|no-filename', 'label=text', 'o|only-matching', 'q|quiet|silent', 'binary-files=text',
    'a|text', 'I', 'd|directories=text', 'D|devices=text', 'r|recursive', 'include=text', 'exclude=text',
    'exclude-from=read', 'exclude-dir=text', 'L|files-without-match', 'l|files-with-matches', 'c|count',
    'T|initial-tab', 'Z|null', 'B|before-context=text', 'A|after-context=text', 'C|context=text', 'color?=text',
    'colour?=text', 'U|binary',
  ],
  refused: { 'R|dereference-recursive': 'follows symbolic links, which can lead outside the allowed paths' },
  style: { numericOption: 'context' },
});

/** grep: the first operand is the pattern unless -e or -f gave one; the rest are files. */
export const grep = simpleProgram('grep', {
  table,
  operands: (parsed) => {
    const patternGiven = hasOption(parsed, 'regexp') || hasOption(parsed, 'file');
    const files = patternGiven ? parsed.operands : parsed.operands.slice(1);
    return files.map((path) => ({ path, access: 'read' as const }));
  },
});
