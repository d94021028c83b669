import { statSync } from 'node:fs';
import type { AgentType, PermissionMode } from '@mada/protocol';
import { callScope, subjectOf } from './agents/approval-check.js';
import { decide, needsScope, type Decision, type PolicyCall } from './agents/decide.js';
import { AGENTS } from './agents/definitions.js';
import { toolPathSandbox } from './tool-paths.js';
import type { Settings } from './settings.js';
import { createToolRegistry } from './tools/registry.js';
import { checkCommand, refusalMessage, type ApprovalRuleSet, type ShellToolName } from './tools/sandbox/command-policy/index.js';
import { shellCheckRequest } from './tools/sandbox/shell-tool.js';
import { createToolHost } from './tools/tool-host.js';
import type { ToolContext } from './tools/tool.js';

/** One call as an operator describes it to `npm run policy`. */
export interface CallQuestion {
  /** The command line of a shell tool, or the path of a file tool. */
  argument: string;
  tool: string;
  mode: PermissionMode;
  agent: AgentType;
  /** The run's working directory, relative to `startDir` unless absolute. */
  cwd: string;
  rules: ApprovalRuleSet;
  settings: Settings;
  /** The service's start directory: where its `.env` lives and relative paths start. */
  startDir: string;
}

export interface Explanation {
  decision: Decision;
  /** The command policy's refusal of a shell call, which no rule lifts: the tool will not run it. */
  refusal?: string;
  /** The real working directory the call was judged in. */
  workingDir: string;
}

/** Why `npm run policy` cannot answer: the message is for the operator. */
export class QuestionError extends Error {}

const SHELL_TOOLS: readonly string[] = ['bash', 'bash_readonly'];
const PATH_PARAMETER: Record<string, string> = { read_file: 'file_path', write_file: 'file_path', edit_file: 'file_path', glob_files: 'path', grep_content: 'path' };

/**
 * What a run would decide on one call, gathered as the executor gathers it (the same subject, the
 * same scope) and decided by the same function; for a shell call, also whether the command policy
 * lets the tool run it at all.
 */
export async function explainCall(question: CallQuestion): Promise<Explanation> {
  const tools = createToolRegistry();
  const tool = tools.get(question.tool);
  if (tool === undefined) throw new QuestionError(`unknown tool ${question.tool} (tools: ${[...tools.keys()].join(', ')})`);
  const sandbox = toolPathSandbox(question.settings, question.startDir);
  const workingDir = workingDirectoryOf(question, sandbox);
  // Nothing runs: the host's gitlink guard never reads an index, so its worker threads never start.
  const context: ToolContext = { workingDir, sandbox, settings: question.settings, host: createToolHost(), signal: new AbortController().signal };
  return judge(question, tool.modifiesFiles === true, tools, context);
}

async function judge(question: CallQuestion, changesFiles: boolean, tools: ReturnType<typeof createToolRegistry>, context: ToolContext): Promise<Explanation> {
  const params = paramsOf(question);
  const call: PolicyCall = {
    tool: question.tool,
    subject: subjectOf(question.tool, params, context),
    changesFiles,
    offered: AGENTS[question.agent].toolNames(question.mode).filter((name) => tools.has(name)),
  };
  const scope = needsScope(call, question.mode, question.rules) ? await callScope(question.tool, params, context, call.changesFiles) : undefined;
  const decision = decide(call, question.mode, question.rules, scope);
  const refusal = SHELL_TOOLS.includes(question.tool) ? await commandRefusal(question.tool as ShellToolName, question.argument, context) : undefined;
  return { decision, workingDir: context.workingDir, ...(refusal === undefined ? {} : { refusal }) };
}

function paramsOf(question: CallQuestion): Record<string, unknown> {
  if (SHELL_TOOLS.includes(question.tool)) return { command: question.argument };
  const parameter = PATH_PARAMETER[question.tool];
  return parameter === undefined ? {} : { [parameter]: question.argument };
}

function workingDirectoryOf(question: CallQuestion, sandbox: ToolContext['sandbox']): string {
  let real: string;
  try {
    real = sandbox.resolve(question.cwd, question.startDir);
  } catch {
    throw new QuestionError(`working directory ${question.cwd} is outside ALLOWED_PATHS (${sandbox.roots.join(', ')}) or hidden from the tools`);
  }
  if (!isDirectory(real)) throw new QuestionError(`working directory ${question.cwd} is not a directory`);
  return real;
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

async function commandRefusal(tool: ShellToolName, command: string, context: ToolContext): Promise<string | undefined> {
  try {
    await checkCommand(shellCheckRequest(tool, { command, cwd: undefined }, context));
    return undefined;
  } catch (error) {
    return refusalMessage(error);
  }
}

/** The verdict on the first line, then one reason a line: what `npm run policy` prints. */
export function formatExplanation(explanation: Explanation): string {
  const { decision, refusal } = explanation;
  const lines: string[] = [];
  if (refusal !== undefined) {
    lines.push('deny', `  the command policy refuses it, whatever the rules say: ${refusal}`, `  (the approval decision alone: ${decision.action})`);
  } else {
    lines.push(decision.action);
  }
  for (const reason of decision.reasons) lines.push(`  ${reason}`);
  if (decision.action === 'ask') lines.push(`  acts on: ${decision.reach === undefined ? 'paths the policy cannot name (no approve_always grant covers it)' : [...new Set(decision.reach)].join(', ')}`);
  lines.push(`  working directory: ${explanation.workingDir}`);
  return `${lines.join('\n')}\n`;
}
