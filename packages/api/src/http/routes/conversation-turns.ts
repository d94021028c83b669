import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
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
import type { TurnResult } from '../../conversations/turn-service.js';
import type { ConversationTurns } from '../../runs/conversation-turns.js';
import type { RunService } from '../../runs/run-service.js';
import { idempotencyOf } from '../idempotency-header.js';
import { answerStarted } from '../run-started.js';
import { awaitRun, streamLegacyRun } from '../legacy-run.js';
import { assertMessageFits, type MessageLimits } from '../message-limit.js';

export interface TurnRoutesOptions {
  turns: ConversationTurns;
  runs: RunService;
  messageLimits: MessageLimits;
  pingIntervalMs?: number;
}

const tags = ['conversations'];
const security = [{ ApiKey: [] }];
const turnErrors = { 400: ErrorResponse, 403: ErrorResponse, 404: ErrorResponse, 409: ErrorResponse, 413: ErrorResponse, 422: ValidationErrorResponse, 429: ErrorResponse, 503: ErrorResponse };

export const conversationTurnRoutes: FastifyPluginAsyncZod<TurnRoutesOptions> = async (app, options) => {
  const { turns, runs, messageLimits, pingIntervalMs } = options;
  app.post(
    '/conversations/:conversation_id/runs',
    {
      schema: {
        tags,
        security,
        summary: 'Send a message as a stored run that outlives this request',
        description: [
          'Stores the user message with the run before answering 202; the run then summarizes (as POST .../messages does),',
          'runs the agent and stores the assistant message when it succeeds. Follow it with GET /runs/{id}/events;',
          'POST /runs/{id}/cancel stops it, summarization included.',
          'One turn at a time: 409 `Conversation is busy` while another runs.',
        ].join(' '),
        params: ConversationParams,
        body: ConversationRunRequest,
        headers: IdempotencyHeaders,
        response: { 200: RunResponse, 202: RunResponse, ...turnErrors, 422: ValidationErrorResponse.or(ErrorResponse) },
      },
    },
    async (request, reply) => {
      const { content, mode, on_ask, model } = request.body;
      await assertMessageFits(content, messageLimits);
      const started = await turns.start({
        conversationId: request.params.conversation_id,
        userId: request.caller.userId,
        content,
        mode,
        model,
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
          'The turn is a stored run (`X-Run-Id` header); closing the connection cancels it, and so does the key',
          '(or console session) being revoked meanwhile, which answers 401 `Invalid API key`.',
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
      const { run } = await turns.start({
        conversationId: request.params.conversation_id,
        userId: request.caller.userId,
        content: request.body.content,
        mode: request.body.mode,
        model: request.body.model,
        streaming: false,
        onAsk: 'deny',
        idempotency: idempotencyOf(request, 'POST /conversations/{id}/messages'),
        onResult: (r) => (fresh = r),
      });
      const result = await turns.result(await awaitRun(runs, reply, run), fresh);
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
      const { run } = await turns.start({
        conversationId: request.params.conversation_id,
        userId: request.caller.userId,
        content: request.body.content,
        mode: request.body.mode,
        model: request.body.model,
        streaming: true,
        onAsk: 'wait',
      });
      await streamLegacyRun(runs, reply, run, pingIntervalMs);
    },
  );
};
