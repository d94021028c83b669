import type { OnAsk, PermissionMode } from '@mada/protocol';
import type { AgentEngine } from '../agents/engine.js';
import type { ConversationService } from '../conversations/service.js';
import { AgentFailedError, ConversationBusyError, type TurnResult, type TurnService } from '../conversations/turn-service.js';
import { ACTIVE_RUN_STATUSES, type RunRecord } from '../db/run-repository.js';
import { conversationJob } from './conversation-job.js';
import { ShuttingDownError } from './errors.js';
import type { GateFactory, RunService } from './run-service.js';

export interface TurnStart {
  conversationId: string;
  userId: string;
  content: string;
  mode: PermissionMode;
  /** This turn's model; absent: the conversation's (the default for one from before models were chosen). */
  model?: string | undefined;
  /** Streamed model calls; the blocking `/messages` route makes non-streaming ones. */
  streaming: boolean;
  onAsk: OnAsk;
  idempotency?: { key: string; hash: string } | undefined;
  onResult?: (result: TurnResult) => void;
}

/**
 * A conversation turn is a run from its first statement: the run and the user message are stored
 * together, and the run does the rest (conversation-job.ts). A conversation runs one turn at a
 * time: a second answers 409 `Conversation is busy` while the first is active.
 */
export class ConversationTurns {
  constructor(
    private readonly deps: {
      runs: RunService;
      turns: TurnService;
      conversations: ConversationService;
      engine: AgentEngine;
      /** The approval gate of a stored run (the approvals service's, handed down: it sits above the runs). */
      gates: (run: RunRecord, onAsk: OnAsk) => GateFactory;
    },
  ) {}

  async start(start: TurnStart): Promise<{ run: RunRecord; created: boolean }> {
    const { runs, turns, conversations, engine, gates } = this.deps;
    if (runs.isDraining) throw new ShuttingDownError();
    const conversation = await conversations.getOwned(start.conversationId, start.userId);
    // A model LLM_MODELS no longer names is refused (400) like an unknown one: the turn may name another.
    const model = engine.model(start.model ?? conversation.model);
    // Checked again at each turn: the owner's workspace may have changed since the conversation began.
    const workspace = await runs.workspaceOf(start.userId);
    // Stored resolved, as every other run's: its checkpoints and approve_always grants name the real directory.
    const workingDir = engine.workingDirectory(conversation.workingDir, workspace);
    return runs.start(
      {
        workspace,
        userId: start.userId,
        agentType: conversation.agentType,
        mode: start.mode,
        prompt: start.content,
        workingDir,
        model,
        conversationId: conversation.id,
        idempotency: start.idempotency,
        userMessage: turns.draftUserMessage(start.content),
      },
      (stored, turn) =>
        conversationJob(engine, turns, stored, turn!, {
          mode: start.mode,
          streaming: start.streaming,
          gate: gates(stored, start.onAsk),
          ...(start.onResult ? { onResult: start.onResult } : {}),
        }),
    );
  }

  /**
   * What a blocking turn answers: from the run just executed (`fresh`), or, for a retry, from what
   * its first request stored (the ids in the run's `done` event).
   */
  async result(ended: RunRecord, fresh: TurnResult | undefined): Promise<TurnResult> {
    if (ended.status !== 'succeeded') {
      // A retry of a turn still running on another replica: nothing to answer yet.
      if (ACTIVE_RUN_STATUSES.includes(ended.status)) throw new ConversationBusyError();
      throw new AgentFailedError(stripAgentError(ended.error ?? 'Run failed'));
    }
    if (fresh) return fresh;
    const done = await this.deps.runs.lastEvent(ended);
    if (done?.event !== 'done' || !('user_message_id' in done) || ended.conversationId === null) throw new AgentFailedError('The stored turn has no result');
    return this.deps.turns.storedResult(ended.conversationId, done);
  }
}

/** A run's error already carries the `Agent error: ` prefix the 500 detail adds. */
const stripAgentError = (error: string): string => error.replace(/^Agent error: /, '');
