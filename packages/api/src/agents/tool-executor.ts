import type { AgentEvent, PermissionMode } from '@mada/protocol';
import { z } from 'zod';
import { renderForAgent, type Tool, type ToolContext } from '../tools/tool.js';
import type { ModelToolCall } from '../model/index.js';
import { CANNOT_WAIT, callReach, judgeCall } from './approval-check.js';
import { toolDone, toolStart } from './events.js';
import { errorMessage } from '../util/error-message.js';
import { withDeadline } from '../util/deadline.js';

export interface ExecutionContext {
  tools: ReadonlyMap<string, Tool>;
  mode: PermissionMode;
  toolContext: ToolContext;
  timeoutSeconds: number;
  emit: (frame: AgentEvent) => void;
}

const plainArgs = (raw: unknown): Record<string, unknown> =>
  raw !== null && typeof raw === 'object' && !Array.isArray(raw) ? (raw as Record<string, unknown>) : {};

function describeIssues(error: z.ZodError): string {
  return error.issues.map((issue) => `${issue.path.join('.') || '(arguments)'}: ${issue.message}`).join('; ');
}

/**
 * Runs one tool call and returns the text the model will read. Nothing here throws: an unknown
 * tool, bad arguments, a refusal or a crash all become an error text the model can act on.
 */
export async function executeToolCall(call: ModelToolCall, context: ExecutionContext): Promise<string> {
  const tool = context.tools.get(call.name);
  if (!tool) {
    const text = `Error: Unknown tool '${call.name}'. Available tools: ${[...context.tools.keys()].join(', ')}`;
    context.emit(toolStart(call.name, plainArgs(call.arguments)));
    context.emit(toolDone(call.name, text));
    return text;
  }
  const parsed = tool.parameters.safeParse(call.arguments);
  if (call.argumentsError !== undefined || !parsed.success) {
    const reason = call.argumentsError ?? (parsed.success ? '' : describeIssues(parsed.error));
    const text = `Error: Invalid arguments for ${call.name}: ${reason}`;
    context.emit(toolStart(call.name, plainArgs(call.arguments)));
    context.emit(toolDone(call.name, text));
    return text;
  }
  context.emit(toolStart(call.name, tool.startArgs(parsed.data)));
  const clearance = await approvalClearance(tool, parsed.data, call, context);
  const text = 'refusal' in clearance ? clearance.refusal : await runTool(tool, parsed.data, call, withGrantScope(context, clearance.scope));
  context.emit(toolDone(call.name, text));
  return text;
}

/** Refused with the text the model reads, or cleared (by a grant for `scope`, when one answered). */
type Clearance = { refusal: string } | { scope?: string };

const withGrantScope = (context: ExecutionContext, scope: string | undefined): ExecutionContext =>
  scope === undefined ? context : { ...context, toolContext: { ...context.toolContext, grantScope: scope } };

/**
 * The approval rules' say on a call (EXTENSIONS.md section 3): refused with the text the model
 * reads, or cleared. `auto_accept` runs an `ask` at once; `deny` refuses in every mode. `plan` is
 * judged as `default` is: a mode that takes tools away must not also lift the operator's `deny`
 * rules (on read_file of a secret, say) or skip asking.
 */
async function approvalClearance(tool: Tool, params: unknown, call: ModelToolCall, context: ExecutionContext): Promise<Clearance> {
  const verdict = judgeCall(call.name, plainArgs(params), context.toolContext);
  if (verdict.action === 'deny') return { refusal: `Error: ${call.name} refused by ${verdict.reason}` };
  if (verdict.action === 'allow' || context.mode === 'auto_accept') return {};
  const gate = context.toolContext.approval?.gate;
  if (!gate) return { refusal: CANNOT_WAIT };
  const reach = await callReach(call.name, plainArgs(params), context.toolContext);
  const matches = verdict.rules.map((rule) => rule.match ?? '');
  const answer = await gate.ask(
    { tool: call.name, args: tool.startArgs(params), reason: verdict.reason, matches, ...(reach === undefined ? {} : { reach }) },
    context.toolContext.signal,
  );
  if (!answer.approved) return { refusal: answer.text };
  return answer.scope === undefined ? {} : { scope: answer.scope };
}

async function runTool(tool: Tool, params: unknown, call: ModelToolCall, context: ExecutionContext): Promise<string> {
  if (tool.modifiesFiles) await context.toolContext.beforeModify?.();
  const deadline = withDeadline(context.toolContext.signal, context.timeoutSeconds * 1000);
  const signal = deadline.signal;
  const log = context.toolContext.log;
  const started = performance.now();
  const took = (): number => Math.round(performance.now() - started);
  try {
    const result = await tool.execute(params, { ...context.toolContext, signal });
    // Most tools stop on the signal and answer a failure rather than throw.
    if (signal.aborted && !context.toolContext.signal.aborted) log?.warn({ tool: call.name, timeout_seconds: context.timeoutSeconds }, 'tool call timed out');
    else log?.debug({ tool: call.name, success: result.success, duration_ms: took() }, 'tool call');
    return renderForAgent(result);
  } catch (error) {
    if (context.toolContext.signal.aborted) throw error;
    if (signal.aborted) {
      log?.warn({ tool: call.name, timeout_seconds: context.timeoutSeconds }, 'tool call timed out');
      return `Error: ${call.name} timed out after ${context.timeoutSeconds}s`;
    }
    log?.warn({ tool: call.name, err: error, duration_ms: took() }, 'tool call failed');
    return `Error: ${call.name} failed: ${errorMessage(error)}`;
  } finally {
    deadline.dispose();
  }
}
