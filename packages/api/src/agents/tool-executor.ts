import type { PermissionMode, StreamFrame } from '@mada/protocol';
import { z } from 'zod';
import { evaluateApproval } from '../approval/rules.js';
import { renderForAgent, type Tool, type ToolContext } from '../tools/tool.js';
import type { ModelToolCall } from '../model/index.js';
import { thinking, toolDone, toolStart } from './events.js';

export interface ExecutionContext {
  tools: ReadonlyMap<string, Tool>;
  mode: PermissionMode;
  toolContext: ToolContext;
  timeoutSeconds: number;
  emit: (frame: StreamFrame) => void;
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
  const text = await runApproved(tool, parsed.data, call, context);
  context.emit(toolDone(call.name, text));
  return text;
}

async function runApproved(tool: Tool, params: unknown, call: ModelToolCall, context: ExecutionContext): Promise<string> {
  if (context.mode !== 'plan') {
    const decision = evaluateApproval(call.name, plainArgs(params));
    if (decision.action === 'deny') return `Error: ${call.name} refused by approval rule: ${decision.reason}`;
    if (decision.action === 'ask' && context.mode === 'default') {
      context.emit(thinking(`Approval rule would ask before ${call.name} (${decision.reason}); no approval channel exists yet, so it runs.`));
    }
  }
  const signal = AbortSignal.any([context.toolContext.signal, AbortSignal.timeout(context.timeoutSeconds * 1000)]);
  try {
    const result = await tool.execute(params, { ...context.toolContext, signal });
    return renderForAgent(result);
  } catch (error) {
    if (context.toolContext.signal.aborted) throw error;
    if (signal.aborted) return `Error: ${call.name} timed out after ${context.timeoutSeconds}s`;
    return `Error: ${call.name} failed: ${error instanceof Error ? error.message : String(error)}`;
  }
}
