/** How the model is offered its tools: the runtime's `tools` field, or described in the system prompt. */
export type ToolCallMode = 'native' | 'text';

/** What the service knows of the model it talks to; `/health` shows it as `model`. */
export interface RuntimeInfo {
  name: string;
  /** Tokens per request, answer included: the smallest of what the runtime reports and LLM_NUM_CTX. */
  contextWindow: number;
  toolCalls: ToolCallMode;
  /** Set when the runtime said it does not have the model (its reason); runs sent to it fail. */
  missing?: string;
}

/** The current view of the runtime, for the agent loop and the model client. */
export interface RuntimeInfoSource {
  current(): RuntimeInfo;
  /** The runtime refused a request with tools for this model: from now on tools go in the prompt. */
  useTextToolCalls(): void;
}

/** A fixed view, for runtimes nobody asks (benchmarks, tests of other parts). */
export function fixedRuntimeInfo(info: RuntimeInfo): RuntimeInfoSource {
  let current = info;
  return {
    current: () => current,
    useTextToolCalls: () => {
      current = { ...current, toolCalls: 'text' };
    },
  };
}
