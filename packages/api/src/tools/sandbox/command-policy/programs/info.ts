import { optionTable } from '../options.js';
import { refuse } from '../refusal.js';
import { simpleProgram, type ProgramCheck } from './types.js';

const HELP = ['help', 'version'];

export const echo: ProgramCheck = (args) => ({ args, paths: [] });

export const pwd = simpleProgram('pwd', {
  table: optionTable({ options: [...HELP, 'L|logical', 'P|physical'] }),
  operands: 'text',
  maxOperands: 0,
});

export const whoami = simpleProgram('whoami', { table: optionTable({ options: HELP }), operands: 'text', maxOperands: 0 });

export const hostname = simpleProgram('hostname', {
  table: optionTable({
    options: [...HELP, 'a|alias', 'A|all-fqdns', 'd|domain', 'f|fqdn|long', 'i|ip-address', 'I|all-ip-addresses', 's|short', 'y|yp|nis'],
    refused: { 'b|boot': 'sets the host name', 'F|file=text': 'sets the host name' },
  }),
  operands: 'text',
  // An operand would set the host name.
  maxOperands: 0,
});

export const uname = simpleProgram('uname', {
  table: optionTable({
    options: [
      ...HELP, 'a|all', 's|kernel-name', 'n|nodename', 'r|kernel-release', 'v|kernel-version', 'm|machine',
      'p|processor', 'i|hardware-platform', 'o|operating-system',
    ],
  }),
  operands: 'text',
  maxOperands: 0,
});

export const date = simpleProgram('date', {
  table: optionTable({
    options: [
      ...HELP, 'd|date=text', 'debug', 'f|file=read', 'I|iso-8601?=text', 'resolution', 'R|rfc-email', 'rfc-3339=text',
      'r|reference=read', 'u|utc|universal',
    ],
    refused: { 's|set=text': 'sets the system clock' },
  }),
  operands: 'text',
  maxOperands: 1,
  validate: (parsed) => {
    const operand = parsed.operands[0];
    if (operand !== undefined && !operand.startsWith('+')) refuse('date with an operand that is not a +FORMAT sets the system clock');
  },
});

/** env alone prints the (allowlisted) environment; with anything more it runs or changes things. */
export const env: ProgramCheck = (args) => {
  if (args.some((arg) => !['-0', '--null', '--help', '--version'].includes(arg))) {
    refuse('env with a command, VAR=value or options runs another program or changes the environment (env alone is fine)');
  }
  return { args, paths: [] };
};

export const printenv = simpleProgram('printenv', { table: optionTable({ options: [...HELP, '0|null'] }), operands: 'text' });

export const which = simpleProgram('which', {
  table: optionTable({ options: ['a', 's'], style: { permute: false, abbreviations: false } }),
  // A name with a slash is looked up as a file.
  operands: (parsed) => parsed.operands.filter((name) => name.includes('/')).map((path) => ({ path, access: 'read' as const })),
});

/** Bash's `type` builtin; the executor answers it itself, as no such program exists. */
export const type = simpleProgram('type', {
  table: optionTable({ options: ['a', 'f', 'p', 'P', 't'], style: { permute: false, abbreviations: false } }),
  operands: 'text',
});

export const INFO_PROGRAMS: Record<string, ProgramCheck> = { echo, pwd, whoami, hostname, uname, date, env, printenv, which, type };
