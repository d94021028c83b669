import type { PermissionMode } from '@mada/protocol';
import type { PreparedTurn, TurnResult } from '../conversations/turn-service.js';
import type { GateFactory } from './agent-job.js';
import type { RunJob } from './run-service.js';

/**
 * A conversation turn as a run: the user message is already stored (PreparedTurn); the run runs
 * the agent, stores its answer, and ends with the `done` frame of the conversation stream. The
 * turn's lease is given back however the run ends.
 */
export function conversationJob(turn: PreparedTurn, mode: PermissionMode, streaming: boolean, onResult?: (result: TurnResult) => void, gate?: GateFactory): RunJob {
  return {
    async execute({ signal, emit, usage, beforeModify, log }) {
      const result = await turn.run({
        mode,
        signal,
        streaming,
        onFrame: emit,
        usage,
        log,
        ...(gate ? { approvalGate: gate(emit) } : {}),
        ...(beforeModify ? { beforeModify } : {}),
      });
      onResult?.(result);
      return {
        response: result.assistantMessage.content,
        done: {
          event: 'done',
          mode,
          user_message_id: result.userMessage.id,
          assistant_message_id: result.assistantMessage.id,
          total_tokens: result.totalTokens,
          summarized: result.summarized,
        },
      };
    },
    ended: () => turn.release(),
  };
}
