import { refuse } from '../refusal.js';
import type { PathUse } from '../path-access.js';
import type { ProgramCheck } from './types.js';

/**
 * Interpreters, package managers and build tools run code by design; bubblewrap is their real
 * policy. The text check still keeps their arguments inside the allowed paths: every operand and
 * option value is treated as a path, except the code after -c / -e and similar.
 */
interface RunnerSpec {
  /** Options whose (next or attached) value is code or a name, not a path. */
  codeOptions?: string[];
  /** Interpreters: after the script (or -c/-m/-e code) the rest are the script's own arguments. */
  interpreter?: { terminators: string[] };
  /** Allowed first operands (pip subcommands). */
  subcommands?: Set<string>;
}

function codeOption(arg: string, options: string[]): { option: string; separate: boolean } | undefined {
  for (const option of options) {
    if (arg === option) return { option, separate: true };
    const attached = option.startsWith('--') ? arg.startsWith(`${option}=`) : arg.startsWith(option) && arg.length > option.length;
    if (attached) return { option, separate: false };
  }
  return undefined;
}

/** The path candidates in one argument: an operand, a `--name=value` value, or a short option's tail. */
function candidates(arg: string): string[] {
  if (arg === '-' || !arg.startsWith('-')) return [arg];
  if (arg.startsWith('--')) {
    const eq = arg.indexOf('=');
    return eq < 0 ? [] : [arg.slice(eq + 1)];
  }
  return arg.length > 2 ? [arg.slice(2)] : [];
}

function requireSubcommand(name: string, args: string[], subcommands: Set<string>): void {
  const first = args.find((arg) => !arg.startsWith('-'));
  if (first === undefined && args.some((a) => ['--help', '-h', '--version', '-V'].includes(a))) return;
  if (first === undefined || !subcommands.has(first)) {
    const what = first === undefined ? `${name} needs a subcommand` : `${name} ${first} is not allowed`;
    refuse(`${what} (allowed subcommands: ${[...subcommands].join(', ')})`);
  }
}

function codeRunner(name: string, spec: RunnerSpec): ProgramCheck {
  return (args, ctx) => {
    if (spec.subcommands !== undefined) requireSubcommand(name, args, spec.subcommands);
    const paths: PathUse[] = [];
    let scriptArgs = false;
    for (let i = 0; i < args.length; i++) {
      const arg = args[i] as string;
      const code = scriptArgs ? undefined : codeOption(arg, spec.codeOptions ?? []);
      if (code !== undefined) {
        if (code.separate) i++;
        if (spec.interpreter?.terminators.includes(code.option)) scriptArgs = true;
        continue;
      }
      if (spec.interpreter !== undefined && !arg.startsWith('-')) scriptArgs = true;
      for (const path of candidates(arg)) paths.push({ path, access: 'read' });
    }
    // It runs code that could touch any allowed path; for a grant it counts as acting where it
    // runs (and on the paths it is given): approving `npm install` always means its installs here.
    // So it does for what it changes: `npm test` in the working directory asks nothing.
    return { args, paths, reach: [ctx.cwd], changesReach: true };
  };
}

const PIP_SUBCOMMANDS = new Set(['install', 'list', 'show', 'freeze', 'check', 'help']);

const python = codeRunner('python', { codeOptions: ['-c', '-m', '-W', '-X'], interpreter: { terminators: ['-c', '-m'] } });
const pip = codeRunner('pip', { subcommands: PIP_SUBCOMMANDS });
const node = codeRunner('node', {
  codeOptions: ['-e', '--eval', '-p', '--print', '-r', '--require', '--import', '--input-type', '--loader', '--experimental-loader'],
  interpreter: { terminators: ['-e', '--eval', '-p', '--print'] },
});

export const CODE_RUNNERS: Record<string, ProgramCheck> = {
  python,
  python3: python,
  pip,
  pip3: pip,
  node,
  pytest: codeRunner('pytest', { codeOptions: ['-k', '-m'] }),
  mypy: codeRunner('mypy', { codeOptions: ['-c', '--command'] }),
  ruff: codeRunner('ruff', {}),
  make: codeRunner('make', {}),
  cargo: codeRunner('cargo', {}),
  npm: codeRunner('npm', {}),
  tsc: codeRunner('tsc', {}),
};
