import type { PermissionMode } from '@mada/protocol';
import type { AgentEngine } from '../agents/engine.js';
import type { RunContext } from '../agents/run-context.js';
import type { AppendResult } from '../db/repository.js';
import type { RunRecord } from '../db/run-repository.js';
import { AgentFailedError, type Summarizer, type TurnResult, type TurnService } from '../conversations/turn-service.js';
import { errorMessage } from '../util/error-message.js';
import type { GateFactory, RunJob } from './run-service.js';

export interface ConversationJobOptions {
  mode: PermissionMode;
  streaming: boolean;
  gate?: GateFactory;
  /** Told of the turn's result (the blocking route answers with it). */
  onResult?: (result: TurnResult) => void;
}

/**
 * A conversation turn as a run. The user message was stored with the run (`turn`); everything
 * else happens inside it, under its signal, usage and log: summarization if needed, the context
 * prompt, the agent, the answer stored. The run ends with the `done` frame of the conversation
 * stream.
 */
export function conversationJob(engine: AgentEngine, turns: TurnService, run: RunRecord, turn: AppendResult, options: ConversationJobOptions): RunJob {
  const { conversation } = turn;
  const userMessage = turn.messages[0]!;
  return {
    ...(options.gate ? { gate: options.gate } : {}),
    async execute(context) {
      // The turn's run stored the model it was sent to (its own, or the conversation's).
      const model = run.model ?? undefined;
      const summarized = await turns.summarizeIfNeeded(conversation, summarizer(engine, context, conversation.workingDir, model), context.signal);
      const prompt = await turns.contextPrompt(conversation.id, userMessage);
      let answer: string;
      try {
        answer = await engine.execute(
          { agentType: conversation.agentType, mode: options.mode, prompt, workingDir: conversation.workingDir, streaming: options.streaming, ...(model ? { model } : {}) },
          context,
        );
      } catch (error) {
        throw new AgentFailedError(errorMessage(error));
      }
      const result = await turns.storeAnswer(conversation, userMessage, answer, summarized);
      options.onResult?.(result);
      return {
        response: result.assistantMessage.content,
        done: {
          event: 'done',
          mode: options.mode,
          user_message_id: result.userMessage.id,
          assistant_message_id: result.assistantMessage.id,
          total_tokens: result.totalTokens,
          summarized: result.summarized,
        },
      };
    },
  };
}

/**
 * Summaries are written by the read-only explore agent as part of the turn's run: cancelled with
 * it, counted in its usage, logged with its run_id. Its progress is no part of the turn's events.
 */
function summarizer(engine: AgentEngine, context: RunContext, workingDir: string, model: string | undefined): Summarizer {
  const { owner, workspace, signal, usage, log, afterModelCall } = context;
  const summarizing = { owner, workspace, signal, usage, ...(log ? { log } : {}), ...(afterModelCall ? { afterModelCall } : {}), emit: () => undefined };
  // Written by the turn's model, so what it keeps is cut to that model's window.
  const task = { agentType: 'explore', mode: 'plan' as const, workingDir, streaming: false, repositoryInstructions: false, ...(model ? { model } : {}) };
  return {
    room: () => engine.promptRoom('explore', 'plan', workingDir, model, summarizing),
    window: () => engine.contextWindow(model),
    summarize: (prompt) => engine.execute({ ...task, prompt }, summarizing),
  };
}
