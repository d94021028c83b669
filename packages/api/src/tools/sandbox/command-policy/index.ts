import { statSync } from 'node:fs';
import { PathOutsideError, type PathSandbox } from '../paths.js';
import { authorizeCommand, type Invocation, type PolicyContext } from './authorize.js';
import { resolveInside } from './path-access.js';
import { checkCommandText } from './pre-parse.js';
import { WorkingDirectoryRefusal } from './refusal.js';
import { allCommands, checkStructure } from './structure.js';
import { requireAgreement } from './syntax-tokens.js';
import { readWithTreeSitter } from './tree-sitter-reader.js';
import { readWithUnbash } from './unbash-reader.js';
import type { ScriptSpec, ShellToolName } from './plan.js';

export { authorizeCommand, checkProgramName, type Invocation, type PolicyContext, type ResolvedRedirection } from './authorize.js';
export { CommandRefusal, WorkingDirectoryRefusal, isPolicyError, refusalMessage } from './refusal.js';
export { GIT_FORCED_CONFIG } from './programs/git.js';
export { BASH_PROGRAMS, READONLY_PROGRAMS } from './allowlists.js';
export type * from './plan.js';

export interface CheckRequest {
  tool: ShellToolName;
  command: string;
  /** The requested working directory, relative to `baseDir` unless absolute. */
  cwd: string;
  baseDir: string;
  sandbox: PathSandbox;
  /** What `~` expands to (the HOME the commands get). */
  home: string;
  locate(program: string): string | undefined;
}

export interface CheckedCommand {
  script: ScriptSpec;
  /** Real working directory. */
  cwd: string;
  /** The invocations as checked now; the executor checks each again just before it starts. */
  invocations: Invocation[];
  context: PolicyContext;
}

/** The working directory must exist, be a directory, and lie inside the allowed paths. */
export function resolveWorkingDirectory(cwd: string, baseDir: string, sandbox: PathSandbox): string {
  let real: string;
  try {
    real = resolveInside(cwd, baseDir, sandbox);
  } catch (error) {
    if (error instanceof PathOutsideError) throw new WorkingDirectoryRefusal(cwd);
    throw error;
  }
  let isDirectory = false;
  try {
    isDirectory = statSync(real).isDirectory();
  } catch {
    isDirectory = false;
  }
  if (!isDirectory) throw new WorkingDirectoryRefusal(cwd);
  return real;
}

/**
 * The whole text policy: raw-text checks, two bash parsers that must agree, the structure rules
 * of the tool, and every command's program, options and paths. Throws a policy error (its message
 * is what the agent reads) or returns what may run.
 */
export async function checkCommand(request: CheckRequest): Promise<CheckedCommand> {
  const cwd = resolveWorkingDirectory(request.cwd, request.baseDir, request.sandbox);
  const text = checkCommandText(request.command, request.tool);
  const reading = readWithUnbash(text, request.home);
  requireAgreement(reading.tokens, await readWithTreeSitter(text));
  checkStructure(reading.script, request.tool, reading.separators);
  const context: PolicyContext = { tool: request.tool, cwd, sandbox: request.sandbox, locate: request.locate };
  const invocations: Invocation[] = [];
  for (const command of allCommands(reading.script)) invocations.push(await authorizeCommand(command, context));
  return { script: reading.script, cwd, invocations, context };
}
export {
  ApprovalRuleSet,
  DEFAULT_APPROVAL_RULES,
  describeRule,
  matchesCommand,
  parsedArgvs,
  shellSubject,
  type ApprovalRule,
  type CallSubject,
  type RuleAction,
  type RuleVerdict,
} from './approval-rules.js';
export { readApprovalRulesFile } from './approval-rules-file.js';
