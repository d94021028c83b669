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
import { hasOtherNames, isWithin } from '../tools/sandbox/paths.js';
import { shellCheckRequest } from '../tools/sandbox/shell-tool.js';
import type { ToolContext } from '../tools/tool.js';
import type { CallScope } from './decide.js';

export type { CallScope } from './decide.js';

/** Asked when no gate can put the question to anyone (`on_ask=deny`, or a run nobody watches). */
export const CANNOT_WAIT = 'Needs approval, and this run cannot wait for it (on_ask=deny)';

const DEFAULT_RULES = new ApprovalRuleSet(DEFAULT_APPROVAL_RULES);
const PATH_ARGUMENTS = ['file_path', 'path'] as const;

/**
 * An MCP tool (`mcp__<server>__<tool>`): its arguments mean what its server says, so the policy
 * names neither a path nor a reach of it, and an approve_always grant covers it by its name alone.
 */
export const isMcpTool = (tool: string): boolean => tool.startsWith('mcp__');

/** What the rules judge of a call: the parsed commands of a shell tool, the resolved path of a file tool. */
export function subjectOf(tool: string, params: Record<string, unknown>, context: ToolContext): CallSubject {
  // An MCP tool's arguments mean what its server says: a `path` there is not a path of ours.
  if (isMcpTool(tool)) return { kind: 'other' };
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
 * A call's scope; `changesFiles` for a tool that changes files. A shell call is read by the same
 * policy check the run makes, so the paths are the ones it resolves, and what it changes is what
 * each command writes, creates, removes or renames: reading elsewhere changes nothing a revert misses.
 */
export async function callScope(tool: string, params: Record<string, unknown>, context: ToolContext, changesFiles: boolean): Promise<CallScope> {
  if (isMcpTool(tool)) return { reach: undefined, outside: changesFiles ? changeOutside(tool, undefined, context.workingDir) : undefined };
  if (tool === 'bash' || tool === 'bash_readonly') {
    if (typeof params.command !== 'string') return { reach: undefined, outside: undefined };
    const cwd = typeof params.cwd === 'string' ? params.cwd : undefined;
    const checked = await checkedOrUndefined(shellCheckRequest(tool, { command: params.command, cwd }, context));
    const outside = changesFiles ? checked?.invocations.map((i) => changeOutside(i.program, i.changes, context.workingDir)).find((reason) => reason !== undefined) : undefined;
    return { reach: shellReach(checked), outside };
  }
  const path = pathArgument(tool, params);
  if (path === undefined) return { reach: [], outside: undefined };
  const real = sandboxPath(path, context);
  if (real === undefined) return { reach: undefined, outside: undefined };
  // The file tools write in place: into every other name of the file too.
  return { reach: [real], outside: changesFiles ? changeOutside(tool, hasOtherNames(real) ? undefined : [real], context.workingDir) : undefined };
}

/** A call's reach alone (callScope). */
export const callReach = async (tool: string, params: Record<string, unknown>, context: ToolContext): Promise<string[] | undefined> =>
  (await callScope(tool, params, context, false)).reach;

async function checkedOrUndefined(request: CheckRequest): Promise<CheckedCommand | undefined> {
  try {
    return await checkCommand(request);
  } catch {
    return undefined;
  }
}

function changeOutside(who: string, changes: readonly string[] | undefined, root: string): string | undefined {
  const undone = 'reverting this run will not undo it';
  if (changes === undefined) return `${who} may change files outside the run's working directory ${root} (the policy cannot tell which): ${undone}`;
  const outside = changes.find((path) => !isWithin(root, path));
  return outside === undefined ? undefined : `${who} changes ${outside}, outside the run's working directory ${root}: ${undone}`;
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

/** The run's approval rules; the defaults for a context that carries none. */
export const rulesOf = (context: ToolContext): ApprovalRuleSet => context.approval?.rules ?? DEFAULT_RULES;

/** The rules' verdict alone on a call (decide.ts adds the mode and the call's scope). */
export function judgeCall(tool: string, params: Record<string, unknown>, context: ToolContext): RuleVerdict {
  return rulesOf(context).judge(tool, subjectOf(tool, params, context));
}
