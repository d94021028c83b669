import type { ShellToolName } from '../plan.js';
import type { PathUse } from '../path-access.js';
import { scanArgs, type OptionTable, type ParsedArgs, type ValueKind } from '../options.js';
import { refuse } from '../refusal.js';

export interface CommandContext {
  tool: ShellToolName;
  /** Real working directory of the command. */
  cwd: string;
  /** The executable a program name runs, or undefined when it is not installed. */
  locate(program: string): string | undefined;
}

export interface CheckedArgs {
  /** The arguments to run (after the program name), forced options included. */
  args: string[];
  /** Every argument that names a file, with how the program uses it. */
  paths: PathUse[];
  /**
   * What the program acts on beyond `paths` (real directories), for the scope of an approve_always
   * grant; `unknown` when the policy cannot tell (git in a repository found through a `.git` file).
   */
  reach?: string[] | 'unknown';
  /**
   * It may change anything it reaches, not only the paths it writes: a program that runs code, git
   * changing the repository. Without it, only its `write` and `entry` paths change.
   */
  changesReach?: boolean;
}

/** Judges one program's arguments: refuses, or says what will run and which paths it touches. */
export type ProgramCheck = (args: string[], ctx: CommandContext) => CheckedArgs;

export const pathsOf = (values: string[], kind: ValueKind): PathUse[] =>
  kind === 'text' ? [] : values.map((path) => ({ path, access: kind }));

/** Paths given as option values (`-f FILE`, `--output=FILE`). */
export const optionPaths = (parsed: ParsedArgs): PathUse[] =>
  parsed.options.flatMap((o) => (o.value === undefined ? [] : pathsOf([o.value], o.def.kind)));

export interface SimpleSpec {
  table: OptionTable;
  /** How operands are used; a function for programs whose operands differ by position. */
  operands: ValueKind | ((parsed: ParsedArgs, ctx: CommandContext) => PathUse[]);
  maxOperands?: number;
  /** Further refusals that need the whole picture. */
  validate?: (parsed: ParsedArgs, ctx: CommandContext) => void;
  /** Options always put in front of the user's arguments. */
  forced?: string[];
}

/** The common shape: scan options, check operand counts, collect paths. */
export function simpleProgram(name: string, spec: SimpleSpec): ProgramCheck {
  return (args, ctx) => {
    const parsed = scanArgs(name, args, spec.table, ctx.tool);
    if (spec.maxOperands !== undefined && parsed.operands.length > spec.maxOperands) {
      refuse(spec.maxOperands === 0 ? `${name} takes no operands here` : `${name} takes at most ${spec.maxOperands} operand(s) here`);
    }
    spec.validate?.(parsed, ctx);
    const operandPaths = typeof spec.operands === 'function' ? spec.operands(parsed, ctx) : pathsOf(parsed.operands, spec.operands);
    return { args: [...(spec.forced ?? []), ...args], paths: [...optionPaths(parsed), ...operandPaths] };
  };
}
