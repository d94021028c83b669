/** What a run cost: the `usage` of a stored run (RunResponse `usage`). Sub-agents add to their parent's. */
export interface RunUsage {
  model_calls: number;
  tool_calls: number;
  input_tokens: number;
  output_tokens: number;
}

export const emptyUsage = (): RunUsage => ({ model_calls: 0, tool_calls: 0, input_tokens: 0, output_tokens: 0 });
