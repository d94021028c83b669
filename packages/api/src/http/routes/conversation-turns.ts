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
  TurnStreamFrame,
  ValidationErrorResponse,
} from '@mada/protocol';
import { toMessageResponse } from '../../conversations/service.js';
import { AgentFailedError, type TurnResult, type TurnService } from '../../conversations/turn-service.js';
import { conversationJob } from '../../runs/conversation-job.js';
import type { RunService } from '../../runs/run-service.js';
import { ShuttingDownError } from '../../runs/errors.js';
import type { RunRecord } from '../../db/run-repository.js';
import { idempotencyOf } from '../idempotency-header.js';
import { answerStarted } from '../run-started.js';
import { awaitRun, streamLegacyRun } from '../legacy-run.js';
import { assertMessageFits } from '../message-limit.js';

export interface TurnRoutesOptions {
  turns: TurnService;
  runs: RunService;
  maxMessageTokens: number;
  approvals: ApprovalService;
  pingIntervalMs?: number;
}

const tags = ['conversations'];
const security = [{ ApiKey: [] }];
const turnErrors = { 403: ErrorResponse, 404: ErrorResponse, 409: ErrorResponse, 413: ErrorResponse, 422: ValidationErrorResponse, 503: ErrorResponse };

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
  const runId = randomUUID();
  const prepared = await turns.prepare(start.conversationId, start.userId, start.content, runId, new AbortController().signal);
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

export const conversationTurnRoutes: FastifyPluginAsyncZod<TurnRoutesOptions> = async (app, options) => {
  const { runs, maxMessageTokens, pingIntervalMs } = options;
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
      assertMessageFits(content, maxMessageTokens);
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
        ].join(' '),
        params: ConversationParams,
        body: AddMessageRequest,
        response: { 200: AddMessageResponse, ...turnErrors, 500: ErrorResponse },
      },
    },
    async (request, reply) => {
      assertMessageFits(request.body.content, maxMessageTokens);
      let result: TurnResult | undefined;
      const { run } = await startTurn(options, {
        conversationId: request.params.conversation_id,
        userId: request.caller.userId,
        content: request.body.content,
        mode: request.body.mode,
        streaming: false,
        onAsk: 'deny',
        onResult: (r) => (result = r),
      });
      const ended = await awaitRun(runs, reply, run);
      if (ended.status !== 'succeeded' || result === undefined) {
        throw new AgentFailedError(stripAgentError(ended.error ?? 'Run failed'));
      }
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
      assertMessageFits(request.body.content, maxMessageTokens);
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
