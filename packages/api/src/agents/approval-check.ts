import { homedir } from 'node:os';
import { resolve } from 'node:path';
import {
  ApprovalRuleSet,
  checkCommand,
  type CheckedCommand,
  type CheckRequest,
  DEFAULT_APPROVAL_RULES,
  shellSubject,
  type CallSubject,
  type RuleVerdict,
} from '../tools/sandbox/command-policy/index.js';
import { shellCheckRequest } from '../tools/sandbox/shell-tool.js';
import type { ToolContext } from '../tools/tool.js';

/** Asked when no gate can put the question to anyone (`on_ask=deny`, or a run nobody watches). */
export const CANNOT_WAIT = 'Needs approval, and this run cannot wait for it (on_ask=deny)';

const DEFAULT_RULES = new ApprovalRuleSet(DEFAULT_APPROVAL_RULES);
const PATH_ARGUMENTS = ['file_path', 'path'] as const;

/** What the rules judge of a call: the parsed commands of a shell tool, the resolved path of a file tool. */
export function subjectOf(tool: string, params: Record<string, unknown>, context: ToolContext): CallSubject {
  if ((tool === 'bash' || tool === 'bash_readonly') && typeof params.command === 'string') {
    // Where the command runs: `git checkout <name>` checks out a path when <name> is a file there.
    const cwd = typeof params.cwd === 'string' ? resolvedPath(params.cwd, context) : context.workingDir;
    return shellSubject(tool, params.command, process.env.HOME ?? homedir(), cwd);
  }
  const path = pathArgument(tool, params);
  return path === undefined ? { kind: 'other' } : { kind: 'path', path: resolvedPath(path, context) };
}

/** The path a file tool acts on, as the model wrote it; undefined for a tool that takes none. */
function pathArgument(tool: string, params: Record<string, unknown>): string | undefined {
  const argument = PATH_ARGUMENTS.find((name) => name in params);
  if (argument === undefined && !['glob_files', 'grep_content'].includes(tool)) return undefined;
  const raw = argument === undefined ? undefined : params[argument];
  return typeof raw === 'string' && raw !== '' ? raw : '.';
}

/** Symlinks followed where the sandbox can; a path it refuses is judged as written (the tool refuses it anyway). */
function resolvedPath(path: string, context: ToolContext): string {
  return sandboxPath(path, context) ?? resolve(context.workingDir, path);
}

/** The real path the sandbox lets the tool open, or undefined when it refuses it. */
function sandboxPath(path: string, context: ToolContext): string | undefined {
  try {
    return context.sandbox.resolve(path, context.workingDir);
  } catch {
    return undefined;
  }
}

/**
 * Every real path a call acts on, for the scope of an approve_always grant; undefined when the
 * policy cannot tell (it refuses the command, or a program runs code that can touch any path).
 * A shell call is read by the same policy check the run makes, so the paths are the ones it resolves.
 */
export async function callReach(tool: string, params: Record<string, unknown>, context: ToolContext): Promise<string[] | undefined> {
  if (tool === 'bash' || tool === 'bash_readonly') {
    if (typeof params.command !== 'string') return undefined;
    const cwd = typeof params.cwd === 'string' ? params.cwd : undefined;
    return shellReach(await checkedOrUndefined(shellCheckRequest(tool, { command: params.command, cwd }, context)));
  }
  const path = pathArgument(tool, params);
  if (path === undefined) return [];
  const real = sandboxPath(path, context);
  return real === undefined ? undefined : [real];
}

async function checkedOrUndefined(request: CheckRequest): Promise<CheckedCommand | undefined> {
  try {
    return await checkCommand(request);
  } catch {
    return undefined;
  }
}

function shellReach(checked: CheckedCommand | undefined): string[] | undefined {
  if (checked === undefined) return undefined;
  const reaches: string[] = [checked.cwd];
  for (const invocation of checked.invocations) {
    if (invocation.reach === undefined) return undefined;
    reaches.push(...invocation.reach);
  }
  return reaches;
}

export function judgeCall(tool: string, params: Record<string, unknown>, context: ToolContext): RuleVerdict {
  return (context.approval?.rules ?? DEFAULT_RULES).judge(tool, subjectOf(tool, params, context));
}
