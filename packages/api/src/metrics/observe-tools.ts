import type { Tool, ToolContext, ToolResult, ToolSource } from '../tools/tool.js';
import type { ServiceMetrics, ToolOutcome } from './service-metrics.js';

/** The executor aborts a tool's signal on TOOL_TIMEOUT_SECONDS with a TimeoutError reason. */
function timedOut(context: ToolContext): boolean {
  const reason: unknown = context.signal.reason;
  return context.signal.aborted && reason instanceof Error && reason.name === 'TimeoutError';
}

/**
 * A tool stopped by its time limit counts as `timeout`, whether it then threw or returned a
 * failure. A shell tool keeps its own timer at the same limit (TOOL_TIMEOUT_SECONDS, or the
 * call's shorter `timeout`) and may stop its processes a moment before the executor's signal
 * fires; its result says so (`timed_out`).
 */
function outcomeOf(result: ToolResult | undefined, context: ToolContext): ToolOutcome {
  if (timedOut(context) || result?.metadata.timed_out === true) return 'timeout';
  if (result) return result.success ? 'ok' : 'error';
  return context.signal.aborted ? 'cancelled' : 'error';
}

function observeTool(tool: Tool, metrics: ServiceMetrics): Tool {
  const record = (outcome: ToolOutcome, started: number): void => {
    metrics.toolCalls.inc({ tool: tool.name, outcome });
    metrics.toolDuration.observe({ tool: tool.name, outcome }, (performance.now() - started) / 1000);
  };
  return {
    ...tool,
    async execute(params, context): Promise<ToolResult> {
      const started = performance.now();
      try {
        const result = await tool.execute(params, context);
        record(outcomeOf(result, context), started);
        return result;
      } catch (error) {
        record(outcomeOf(undefined, context), started);
        throw error;
      }
    },
  };
}

/**
 * The same tools, each reporting its executions. Only tools the service defines are labelled:
 * a name the model invents never reaches a tool, so it never becomes a label value.
 */
export function observeTools(tools: ReadonlyMap<string, Tool>, metrics: ServiceMetrics): Map<string, Tool> {
  return new Map([...tools].map(([name, tool]) => [name, observeTool(tool, metrics)]));
}

/**
 * A user's tools from the source (MCP servers' `mcp__<server>__<tool>`), each reporting its
 * executions like the built-in ones. Their names come from the configured servers' own lists,
 * never from the model: a name the model invents matches no tool and is never a label.
 */
export function observeToolSource(source: ToolSource, metrics: ServiceMetrics): ToolSource {
  return { toolsFor: async (request) => (await source.toolsFor(request)).map((tool) => observeTool(tool, metrics)) };
}
