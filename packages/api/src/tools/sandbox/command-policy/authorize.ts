import { hasOtherNames, type PathSandbox } from '../paths.js';
import { ALWAYS_REFUSED, NETWORK_PROGRAMS, WRAPPERS, programsFor } from './allowlists.js';
import { expandGlob } from './glob.js';
import { checkPathUse, isStandardStream, linkTargetsBelow } from './path-access.js';
import { PROGRAM_CHECKS, type CheckedArgs } from './programs/index.js';
import { refuse } from './refusal.js';
import type { RedirectionSpec, ShellToolName, ShellWord, SimpleCommandSpec } from './plan.js';
import { TimeSlice } from '../../../util/time-slice.js';

export interface PolicyContext {
  tool: ShellToolName;
  /** Real working directory, already checked to be inside the sandbox. */
  cwd: string;
  sandbox: PathSandbox;
  /** The executable a program name runs (absolute), or undefined when not installed. */
  locate(program: string): string | undefined;
}

/** A redirection as planned, with the word it names resolved to a checked real path. */
export type ResolvedRedirection = WithPath<RedirectionSpec>;
type WithPath<R> = R extends { target: ShellWord } ? Omit<R, 'target'> & { path: string } : R;

/** Exactly what one simple command will run, after every check. */
export interface Invocation {
  program: string;
  /** Absolute executable; `builtin` for bash's `type`; undefined when the program is not installed. */
  executable: string | 'builtin' | undefined;
  /** argv[0] is the program name. */
  argv: string[];
  redirections: ResolvedRedirection[];
  /**
   * Every real path it acts on, as checked (arguments, option values, redirections, and what the
   * program reaches by itself); absent when the policy cannot tell (a program that runs code).
   */
  reach?: string[];
  /**
   * Every real path it may change (written or created, removed, renamed, re-moded); absent when the
   * policy cannot tell. For whether the checkpoint of one directory can undo what it does.
   */
  changes?: string[];
}

/** The program name rules: a bare name on the tool's allowlist, with the reason when it is not. */
export function checkProgramName(name: string, tool: ShellToolName): void {
  if (name === '') refuse('an empty program name');
  if (name.includes('/')) refuse(`${name}: program names must be bare allowlisted names, not paths`);
  const family = name.startsWith('mkfs.') ? 'mkfs' : name;
  const always = ALWAYS_REFUSED[family];
  if (always !== undefined) refuse(`${name} is always refused (${always})`);
  if (NETWORK_PROGRAMS.includes(name)) refuse(`${name}: network programs are refused`);
  const allowed = programsFor(tool);
  if (allowed.includes(name)) return;
  if (name === 'cd') refuse('cd is not available; use the cwd parameter instead');
  if (WRAPPERS.includes(name)) refuse(`${name} runs another program, which the policy cannot check`);
  refuse(`${name} is not in the ${tool} allowlist (allowed: ${allowed.join(', ')})`);
}

function resolveRedirection(redirection: RedirectionSpec, ctx: PolicyContext): ResolvedRedirection {
  if (redirection.kind !== 'read' && redirection.kind !== 'write') return redirection;
  const { target, ...rest } = redirection;
  return { ...rest, path: checkPathUse({ path: target.value, access: redirection.kind }, ctx.cwd, ctx.sandbox) };
}


/**
 * Checks one simple command against the current file system: expands its globs, reads its
 * arguments as the program will, and resolves every path. Runs once before anything starts and
 * again just before the command itself starts, so earlier commands cannot change what it touches.
 */
export async function authorizeCommand(spec: SimpleCommandSpec, ctx: PolicyContext): Promise<Invocation> {
  checkProgramName(spec.program, ctx.tool);
  const check = PROGRAM_CHECKS[spec.program];
  if (check === undefined) return refuse(`${spec.program} has no argument rules`);
  const args = spec.args.flatMap((word) => expandGlob(word, ctx.cwd, ctx.sandbox));
  const checked = check(args, { tool: ctx.tool, cwd: ctx.cwd, locate: (name) => ctx.locate(name) });
  const reals: string[] = [];
  // Each path costs a few file-system calls, and 8 KiB of text holds 4,000 of them: checked in one
  // go they held the service (and `/health`) for over a second on a busy machine.
  const slice = new TimeSlice();
  for (const use of checked.paths) {
    if (slice.due()) await slice.pause();
    reals.push(checkPathUse(use, ctx.cwd, ctx.sandbox));
  }
  const redirections = spec.redirections.map((r) => resolveRedirection(r, ctx));
  const executable = spec.program === 'type' ? 'builtin' : ctx.locate(spec.program);
  const { reach, changes } = scopeOf(checked, reals, redirections);
  return {
    program: spec.program,
    executable,
    argv: [spec.program, ...checked.args],
    redirections,
    ...(reach === undefined ? {} : { reach }),
    ...(changes === undefined ? {} : { changes }),
  };
}

/**
 * What a command reaches (for a grant) and may change (for a checkpoint): its paths, its
 * redirections, what the program reaches by itself, and where the links lead below a directory it
 * writes into along paths it does not name. Undefined when the policy cannot tell.
 */
function scopeOf(checked: CheckedArgs, reals: string[], redirections: ResolvedRedirection[]): Pick<Invocation, 'reach' | 'changes'> {
  const linked = linkTargetsBelow(reals.filter((_, i) => checked.paths[i]?.below === true));
  if (linked === undefined) return {};
  const reach = reachOf(checked.reach, [...reals, ...redirections.flatMap((r) => ('path' in r ? [r.path] : [])), ...linked]);
  const known = reach === undefined ? {} : { reach };
  const redirectedTo = redirections.flatMap((r) => (r.kind === 'write' ? [r.path] : []));
  const overwritten = [...reals.filter((_, i) => checked.paths[i]?.access === 'write'), ...redirectedTo];
  // A file with other names is changed under each of them, wherever they are.
  if (overwritten.some(hasOtherNames)) return known;
  // Only a program that may change all it reaches needs its reach known: git that reads a linked
  // work tree changes nothing.
  if (checked.changesReach === true) return reach === undefined ? {} : { reach, changes: reach };
  const changed = [...reals.filter((_, i) => checked.paths[i]?.access !== 'read'), ...redirectedTo, ...linked];
  return { ...known, changes: withoutStreams(changed) };
}

/** The standard streams lead nowhere, so they widen no grant's scope and change nothing. */
const withoutStreams = (reals: string[]): string[] => reals.filter((real) => !isStandardStream(real));

function reachOf(programReach: CheckedArgs['reach'], reals: string[]): string[] | undefined {
  if (programReach === 'unknown') return undefined;
  return [...(programReach ?? []), ...withoutStreams(reals)];
}
