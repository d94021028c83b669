import type { AgentEvent, PermissionMode, ToolOutcome } from '@mada/protocol';
import { z } from 'zod';
import { renderForAgent, type Tool, type ToolContext } from '../tools/tool.js';
import type { ModelToolCall } from '../model/index.js';
import { CANNOT_WAIT, callScope, isMcpTool, rulesOf, subjectOf } from './approval-check.js';
import { decide, needsScope, type PolicyCall } from './decide.js';
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
    context.emit(toolDone(call.name, text, 'failed'));
    return text;
  }
  const parsed = tool.parameters.safeParse(call.arguments);
  if (call.argumentsError !== undefined || !parsed.success) {
    const reason = call.argumentsError ?? (parsed.success ? '' : describeIssues(parsed.error));
    const text = `Error: Invalid arguments for ${call.name}: ${reason}`;
    context.emit(toolStart(call.name, plainArgs(call.arguments)));
    context.emit(toolDone(call.name, text, 'failed'));
    return text;
  }
  context.emit(toolStart(call.name, tool.startArgs(parsed.data)));
  const clearance = await approvalClearance(tool, parsed.data, call, context);
  const { text, outcome } =
    'refusal' in clearance ? { text: clearance.refusal, outcome: clearance.outcome } : await runTool(tool, parsed.data, call, withScopes(context, clearance));
  context.emit(toolDone(call.name, text, outcome));
  return text;
}

/** The text the model reads, and how the call ended for the `tool_done` event. */
interface Ended {
  text: string;
  outcome: ToolOutcome;
}

/**
 * Refused with the text the model reads, or cleared: by a grant for `grantScope` when one answered,
 * and with `changeScope` when it was let change files there only.
 */
type Clearance = { refusal: string; outcome: 'refused' | 'denied' } | Pick<ToolContext, 'grantScope' | 'changeScope'>;

const withScopes = (context: ExecutionContext, scopes: Pick<ToolContext, 'grantScope' | 'changeScope'>): ExecutionContext =>
  scopes.grantScope === undefined && scopes.changeScope === undefined ? context : { ...context, toolContext: { ...context.toolContext, ...scopes } };

/**
 * The security decision on a call (decide.ts), turned into what the executor does: refused with the
 * text the model reads, run, or put to the run's gate first. The scope is gathered only when the
 * decision needs it.
 */
async function approvalClearance(tool: Tool, params: unknown, call: ModelToolCall, context: ExecutionContext): Promise<Clearance> {
  const args = plainArgs(params);
  const toolContext = context.toolContext;
  const policyCall: PolicyCall = {
    tool: call.name,
    subject: subjectOf(call.name, args, toolContext),
    changesFiles: tool.modifiesFiles === true,
    offered: [...context.tools.keys()],
    ...(tool.asksUnlessAllowed === undefined ? {} : { asksUnlessAllowed: tool.asksUnlessAllowed }),
  };
  const rules = rulesOf(toolContext);
  const scope = needsScope(policyCall, context.mode, rules) ? await callScope(call.name, args, toolContext, policyCall.changesFiles) : undefined;
  const decision = decide(policyCall, context.mode, rules, scope);
  if (decision.action === 'deny') return { refusal: `Error: ${call.name} refused by ${decision.reasons.join('; ')}`, outcome: 'refused' };
  const changeScope = decision.confined ? { changeScope: toolContext.workingDir } : {};
  if (decision.action === 'allow') return changeScope;
  const gate = toolContext.approval?.gate;
  if (!gate) return { refusal: CANNOT_WAIT, outcome: 'refused' };
  const answer = await gate.ask(
    {
      tool: call.name,
      args: tool.startArgs(params),
      reason: decision.reasons.join('; '),
      matches: decision.matches,
      ...(decision.reach === undefined ? {} : { reach: decision.reach }),
      ...(isMcpTool(call.name) ? { byName: true } : {}),
    },
    toolContext.signal,
  );
  // A run started with on_ask=deny is answered at once, by the service rather than by a person.
  if (!answer.approved) return { refusal: answer.text, outcome: answer.text === CANNOT_WAIT ? 'refused' : 'denied' };
  return { ...changeScope, ...(answer.scope === undefined ? {} : { grantScope: answer.scope }) };
}

async function runTool(tool: Tool, params: unknown, call: ModelToolCall, context: ExecutionContext): Promise<Ended> {
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
    return { text: renderForAgent(result), outcome: result.success ? 'ok' : 'failed' };
  } catch (error) {
    if (context.toolContext.signal.aborted) throw error;
    if (signal.aborted) {
      log?.warn({ tool: call.name, timeout_seconds: context.timeoutSeconds }, 'tool call timed out');
      return { text: `Error: ${call.name} timed out after ${context.timeoutSeconds}s`, outcome: 'failed' };
    }
    log?.warn({ tool: call.name, err: error, duration_ms: took() }, 'tool call failed');
    return { text: `Error: ${call.name} failed: ${errorMessage(error)}`, outcome: 'failed' };
  } finally {
    deadline.dispose();
  }
}
