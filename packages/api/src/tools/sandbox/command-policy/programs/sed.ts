import { hasOption, optionTable, optionValues } from '../options.js';
import { checkSedScript } from './sed-script.js';
import { simpleProgram } from './types.js';

const table = optionTable({
  options: [
    'help', 'version', 'n|quiet|silent', 'debug', 'e|expression=text', 'follow-symlinks', 'l|line-length=text',
    'posix', 'E|r|regexp-extended', 's|separate', 'sandbox', 'u|unbuffered', 'z|null-data|zero-terminated', 'b|binary',
  ],
  // A script file could change between this check and the run, so only inline scripts are read.
  refused: { 'f|file=text': 'script files cannot be checked; pass the script inline' },
  readonlyRefused: { 'i|in-place?=text': 'edits files in place' },
});

/**
 * sed: the script is the first operand unless -e gave it. Always run with --sandbox, which makes
 * GNU sed itself reject the e, r and w commands.
 */
export const sed = simpleProgram('sed', {
  table,
  forced: ['--sandbox'],
  validate: (parsed) => {
    const scripts = optionValues(parsed, 'expression');
    if (scripts.length === 0 && parsed.operands[0] !== undefined) scripts.push(parsed.operands[0]);
    scripts.forEach(checkSedScript);
  },
  operands: (parsed) => {
    const files = hasOption(parsed, 'expression') ? parsed.operands : parsed.operands.slice(1);
    // sed -i replaces each file by renaming a new one over it.
    const access = hasOption(parsed, 'in-place') ? ('entry' as const) : ('read' as const);
    return files.map((path) => ({ path, access }));
  },
});
