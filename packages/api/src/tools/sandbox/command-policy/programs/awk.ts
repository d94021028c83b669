import { realpathSync } from 'node:fs';
import { basename } from 'node:path';
import { hasOption, optionTable, optionValues } from '../options.js';
import { refuse } from '../refusal.js';
import { checkAwkProgram } from './awk-program.js';
import { simpleProgram, type CommandContext } from './types.js';

const UNCHECKED_FILE = 'program files cannot be checked; pass the program inline';
const WRITES = 'writes a file';

const table = optionTable({
  options: [
    'F|field-separator=text', 'v|assign=text', 'e|source=text', 'b|characters-as-bytes', 'c|traditional',
    'C|copyright', 'g|gen-pot', 'h|help', 'L|lint?=text', 'M|bignum', 'n|non-decimal-data', 'N|use-lc-numeric',
    'O|optimize', 'P|posix', 'r|re-interval', 's|no-optimize', 'S|sandbox', 't|lint-old', 'V|version',
  ],
  refused: {
    'f|file=text': UNCHECKED_FILE,
    'E|exec=text': UNCHECKED_FILE,
    'i|include=text': UNCHECKED_FILE,
    'l|load=text': 'loads a shared library',
    'd|dump-variables?=text': WRITES,
    'D|debug?=text': 'starts the debugger',
    'o|pretty-print?=text': WRITES,
    'p|profile?=text': WRITES,
    persist: 'uses a persistent memory file',
  },
  // gawk stops reading options at the program text.
  style: { permute: false },
});

/** --sandbox is what makes awk safe to run; only GNU awk has it. */
function requireGawk(ctx: CommandContext): void {
  const location = ctx.locate('awk');
  let real = '';
  try {
    real = location === undefined ? '' : realpathSync(location);
  } catch {
    real = '';
  }
  if (!basename(real).startsWith('gawk')) refuse('awk here is not GNU awk, whose --sandbox mode the policy relies on');
}

const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*=/;

/** awk: the program is the first operand unless -e gave it; `name=value` operands are assignments. */
export const awk = simpleProgram('awk', {
  table,
  forced: ['--sandbox'],
  validate: (parsed, ctx) => {
    requireGawk(ctx);
    const programs = optionValues(parsed, 'source');
    if (programs.length === 0 && parsed.operands[0] !== undefined) programs.push(parsed.operands[0]);
    if (programs.length === 0) refuse('awk needs a program');
    programs.forEach(checkAwkProgram);
  },
  operands: (parsed) => {
    const rest = hasOption(parsed, 'source') ? parsed.operands : parsed.operands.slice(1);
    return rest.filter((arg) => !ASSIGNMENT.test(arg)).map((path) => ({ path, access: 'read' as const }));
  },
});
