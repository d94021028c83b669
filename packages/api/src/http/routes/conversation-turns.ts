import { randomUUID } from 'node:crypto';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { OnAsk, PermissionMode } from '@mada/protocol';
import type { ApprovalService } from '../../approvals/approval-service.js';
import {
  AddMessageRequest,
  AddMessageResponse,
  ConversationParams,
  ConversationRunRequest,
  ErrorResponse,
  IdempotencyHeaders,
  RunResponse,
  TurnDoneEvent,
  TurnStreamFrame,
  ValidationErrorResponse,
} from '@mada/protocol';
import { toMessageResponse } from '../../conversations/service.js';
import { AgentFailedError, ConversationBusyError, type PreparedTurn, type TurnResult, type TurnService } from '../../conversations/turn-service.js';
import { conversationJob } from '../../runs/conversation-job.js';
import type { RunService } from '../../runs/run-service.js';
import { ShuttingDownError } from '../../runs/errors.js';
import { ACTIVE_RUN_STATUSES, type RunRecord } from '../../db/run-repository.js';
import { idempotencyOf } from '../idempotency-header.js';
import { answerStarted } from '../run-started.js';
import { awaitRun, streamLegacyRun } from '../legacy-run.js';
import { assertMessageFits, type MessageLimits } from '../message-limit.js';

export interface TurnRoutesOptions {
  turns: TurnService;
  runs: RunService;
  messageLimits: MessageLimits;
  approvals: ApprovalService;
  pingIntervalMs?: number;
}

const tags = ['conversations'];
const security = [{ ApiKey: [] }];
const turnErrors = { 403: ErrorResponse, 404: ErrorResponse, 409: ErrorResponse, 413: ErrorResponse, 422: ValidationErrorResponse, 429: ErrorResponse, 503: ErrorResponse };

interface TurnStart {
  conversationId: string;
  userId: string;
  content: string;
  mode: PermissionMode;
  streaming: boolean;
  onAsk: OnAsk;
  idempotency?: { key: string; hash: string } | undefined;
  onResult?: (result: TurnResult) => void;
}

/**
 * Stores the user message (and summarizes) under the conversation's turn lease, then starts the
 * run that answers it. The lease is held in the run's name, so recovery can free it.
 */
async function startTurn({ turns, runs, approvals }: TurnRoutesOptions, start: TurnStart): Promise<{ run: RunRecord; created: boolean }> {
  // Refused before the user message is stored: a turn that cannot run leaves no trace.
  if (runs.isDraining) throw new ShuttingDownError();
  await runs.checkQueueRoom(start.userId);
  // A retry is answered before the user message would be stored a second time.
  const earlier = await runs.repeated(start.userId, start.idempotency);
  if (earlier) return { run: earlier, created: false };
  const runId = randomUUID();
  const prepared = await prepareOrRepeat(turns, runs, start, runId);
  if ('repeated' in prepared) return { run: prepared.repeated, created: false };
  try {
    return await runs.start(
      {
        id: runId,
        userId: start.userId,
        agentType: prepared.conversation.agentType,
        mode: start.mode,
        prompt: start.content,
        workingDir: prepared.conversation.workingDir,
        conversationId: prepared.conversation.id,
        idempotency: start.idempotency,
      },
      (stored) => conversationJob(prepared, start.mode, start.streaming, start.onResult, approvals.gates(stored, start.onAsk)),
    );
  } catch (error) {
    await prepared.release();
    throw error;
  }
}

/**
 * The turn's user message stored under its lease; or, when a retry finds the conversation busy
 * with the very run its first request started (they raced), that run.
 */
async function prepareOrRepeat(turns: TurnService, runs: RunService, start: TurnStart, runId: string): Promise<PreparedTurn | { repeated: RunRecord }> {
  try {
    return await turns.prepare(start.conversationId, start.userId, start.content, runId, new AbortController().signal);
  } catch (error) {
    const raced = error instanceof ConversationBusyError ? await runs.repeated(start.userId, start.idempotency) : undefined;
    if (raced) return { repeated: raced };
    throw error;
  }
}

/**
 * What a blocking turn answers: from the run just executed, or, for a retry, from what its first
 * request stored (the ids in the run's `done` event).
 */
async function turnAnswer(turns: TurnService, runs: RunService, ended: RunRecord, fresh: TurnResult | undefined): Promise<TurnResult> {
  if (ended.status !== 'succeeded') {
    // A retry of a turn still running on another replica: nothing to answer yet.
    if (ACTIVE_RUN_STATUSES.includes(ended.status)) throw new ConversationBusyError();
    throw new AgentFailedError(stripAgentError(ended.error ?? 'Run failed'));
  }
  if (fresh) return fresh;
  const [last] = await runs.store.eventsAfter(ended.id, ended.lastEventId - 1, 1);
  const done = last === undefined ? undefined : TurnDoneEvent.safeParse(JSON.parse(last.data));
  if (!done?.success || ended.conversationId === null) throw new AgentFailedError('The stored turn has no result');
  return turns.storedResult(ended.conversationId, done.data);
}

export const conversationTurnRoutes: FastifyPluginAsyncZod<TurnRoutesOptions> = async (app, options) => {
  const { runs, messageLimits, pingIntervalMs } = options;
  app.post(
    '/conversations/:conversation_id/runs',
    {
      schema: {
        tags,
        security,
        summary: 'Send a message as a stored run that outlives this request',
        description: [
          'Stores the user message (and summarizes, as POST .../messages does) before answering 202 with the run;',
          'follow it with GET /runs/{id}/events. The assistant message is stored when the run succeeds.',
          'One turn at a time: 409 `Conversation is busy` while another runs.',
        ].join(' '),
        params: ConversationParams,
        body: ConversationRunRequest,
        headers: IdempotencyHeaders,
        response: { 200: RunResponse, 202: RunResponse, ...turnErrors, 422: ValidationErrorResponse.or(ErrorResponse) },
      },
    },
    async (request, reply) => {
      const { content, mode, on_ask } = request.body;
      await assertMessageFits(content, messageLimits);
      const started = await startTurn(options, {
        conversationId: request.params.conversation_id,
        userId: request.caller.userId,
        content,
        mode,
        streaming: true,
        onAsk: on_ask,
        idempotency: idempotencyOf(request, 'POST /conversations/{id}/runs'),
      });
      return answerStarted(reply, started);
    },
  );

  app.post(
    '/conversations/:conversation_id/messages',
    {
      schema: {
        tags,
        security,
        summary: "Send a message: runs the conversation's agent with the conversation as context",
        description: [
          'Stores the user message, summarizes older messages when total_tokens passes the threshold,',
          'runs the agent and stores its answer. A failing agent answers 500 `Agent error: ...` and the',
          'user message stays stored. A second turn while one is running answers 409 `Conversation is busy`.',
          'The turn is a stored run (`X-Run-Id` header); closing the connection cancels it.',
          'With an `Idempotency-Key` header, the same key and body within 24 h answer with what the first request stored',
          '(waiting for it if it still runs here) and store nothing.',
        ].join(' '),
        params: ConversationParams,
        body: AddMessageRequest,
        headers: IdempotencyHeaders,
        response: { 200: AddMessageResponse, ...turnErrors, 422: ValidationErrorResponse.or(ErrorResponse), 500: ErrorResponse },
      },
    },
    async (request, reply) => {
      await assertMessageFits(request.body.content, messageLimits);
      let fresh: TurnResult | undefined;
      const { run } = await startTurn(options, {
        conversationId: request.params.conversation_id,
        userId: request.caller.userId,
        content: request.body.content,
        mode: request.body.mode,
        streaming: false,
        onAsk: 'deny',
        idempotency: idempotencyOf(request, 'POST /conversations/{id}/messages'),
        onResult: (r) => (fresh = r),
      });
      const result = await turnAnswer(options.turns, runs, await awaitRun(runs, reply, run), fresh);
      return {
        user_message: toMessageResponse(result.userMessage),
        assistant_message: toMessageResponse(result.assistantMessage),
        total_tokens: result.totalTokens,
        summarized: result.summarized,
      };
    },
  );

  app.post(
    '/conversations/:conversation_id/stream',
    {
      schema: {
        tags,
        security,
        summary: 'Send a message and stream the turn as Server-Sent Events',
        description: [
          'The same steps as POST .../messages, streamed like /agents/stream. The last frame is `done`',
          'carrying the stored message ids, `total_tokens` and `summarized`, or `error`. If the client',
          'goes away the run stops: the user message stays stored and no assistant message is stored.',
        ].join(' '),
        params: ConversationParams,
        body: AddMessageRequest,
        produces: ['text/event-stream'],
        response: {
          200: {
            description: 'text/event-stream of TurnStreamFrame, ending with TurnDoneEvent or an error frame',
            content: { 'text/event-stream': { schema: TurnStreamFrame } },
          },
          ...turnErrors,
        },
      },
    },
    async (request, reply) => {
      await assertMessageFits(request.body.content, messageLimits);
      const { run } = await startTurn(options, {
        conversationId: request.params.conversation_id,
        userId: request.caller.userId,
        content: request.body.content,
        mode: request.body.mode,
        streaming: true,
        onAsk: 'wait',
      });
      await streamLegacyRun(runs, reply, run, pingIntervalMs);
    },
  );
};

/** A run's error already carries the `Agent error: ` prefix the 500 detail adds. */
const stripAgentError = (error: string): string => error.replace(/^Agent error: /, '');
