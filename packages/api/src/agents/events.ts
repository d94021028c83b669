import type { StreamEvent } from '@mada/protocol';

const SUMMARY_WIDTH = 80;

/**
 * SPEC.md section 4: `<N> lines` for a result of more than 3 lines, otherwise the result on one
 * line (newlines as spaces), cut to 80 characters plus `...`.
 */
export function resultSummary(result: string): string {
  const lines = result.split('\n');
  if (lines.length > 3) return `${lines.length} lines`;
  const flat = result.replace(/\n/g, ' ');
  return flat.length > SUMMARY_WIDTH ? `${flat.slice(0, SUMMARY_WIDTH)}...` : flat;
}

const SPAWN_PROMPT_WIDTH = 50;

/** spawn_agent's prompt in tool_start args: 50 characters plus `...` when longer. */
export function cutSpawnPrompt(prompt: string): string {
  return prompt.length > SPAWN_PROMPT_WIDTH ? `${prompt.slice(0, SPAWN_PROMPT_WIDTH)}...` : prompt;
}

export const toolStart = (tool: string, args: Record<string, unknown>): StreamEvent => ({ event: 'tool_start', tool, args });
export const toolDone = (tool: string, result: string): StreamEvent => ({ event: 'tool_done', tool, result_summary: resultSummary(result) });
export const thinking = (message: string): StreamEvent => ({ event: 'thinking', message });
