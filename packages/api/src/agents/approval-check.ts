import { homedir } from 'node:os';
import { resolve } from 'node:path';
import {
  ApprovalRuleSet,
  DEFAULT_APPROVAL_RULES,
  shellSubject,
  type CallSubject,
  type RuleVerdict,
} from '../tools/sandbox/command-policy/index.js';
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
  const argument = PATH_ARGUMENTS.find((name) => name in params);
  if (argument === undefined && !['glob_files', 'grep_content'].includes(tool)) return { kind: 'other' };
  const raw = argument === undefined ? undefined : params[argument];
  const path = typeof raw === 'string' && raw !== '' ? raw : '.';
  return { kind: 'path', path: resolvedPath(path, context) };
}

/** Symlinks followed where the sandbox can; a path it refuses is judged as written (the tool refuses it anyway). */
function resolvedPath(path: string, context: ToolContext): string {
  try {
    return context.sandbox.resolve(path, context.workingDir);
  } catch {
    return resolve(context.workingDir, path);
  }
}

export function judgeCall(tool: string, params: Record<string, unknown>, context: ToolContext): RuleVerdict {
  return (context.approval?.rules ?? DEFAULT_RULES).judge(tool, subjectOf(tool, params, context));
}
