import type { RunResponse } from '@mada/protocol';
import type { RunRecord } from '../db/run-repository.js';

export const toRunResponse = (r: RunRecord): RunResponse => ({
  id: r.id,
  agent_type: r.agentType,
  mode: r.mode,
  status: r.status,
  prompt: r.prompt,
  working_dir: r.workingDir,
  model: r.model,
  conversation_id: r.conversationId,
  response: r.response,
  error: r.error,
  created_at: r.createdAt.toISOString(),
  started_at: r.startedAt?.toISOString() ?? null,
  ended_at: r.endedAt?.toISOString() ?? null,
  usage: {
    model_calls: r.modelCalls,
    tool_calls: r.toolCalls,
    input_tokens: r.inputTokens,
    output_tokens: r.outputTokens,
  },
  last_event_id: r.lastEventId,
});
