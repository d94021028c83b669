import type { RunUsage } from '@mada/protocol';

/**
 * A run's usage before its first call. The protocol's RunUsage is the one usage shape: what a run
 * cost as RunResponse `usage` shows it; sub-agents add to their parent's, and a model call reports
 * its part (model/types.ts ModelUsage).
 */
export const emptyUsage = (): RunUsage => ({ model_calls: 0, tool_calls: 0, input_tokens: 0, output_tokens: 0 });
