import type { ThinkingEvent, ToolDoneEvent, ToolOutcome, ToolStartEvent } from '@mada/protocol';

const SUMMARY_WIDTH = 80;

/**
 * What `tool_done` says about a result (docs/api.md, "Stream events"): `<N> lines` for a result of
 * more than 3 lines, otherwise the result on one line (newlines as spaces), cut to 80 characters
 * plus `...`.
 */
export function resultSummary(result: string): string {
  const lines = result.split('\n');
  if (lines.length > 3) return `${lines.length} lines`;
  const flat = result.replace(/\n/g, ' ');
  return flat.length > SUMMARY_WIDTH ? `${flat.slice(0, SUMMARY_WIDTH)}...` : flat;
}

export const toolStart = (tool: string, args: Record<string, unknown>): ToolStartEvent => ({ event: 'tool_start', tool, args });
export const toolDone = (tool: string, result: string, outcome: ToolOutcome): ToolDoneEvent => ({
  event: 'tool_done',
  tool,
  result_summary: resultSummary(result),
  outcome,
});
export const thinking = (message: string): ThinkingEvent => ({ event: 'thinking', message });
