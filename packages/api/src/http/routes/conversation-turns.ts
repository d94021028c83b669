import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import {
  AddMessageRequest,
  AddMessageResponse,
  ConversationParams,
  ErrorResponse,
  StreamFrame,
  TurnDoneFrame,
  ValidationErrorResponse,
} from '@mada/protocol';
import { toMessageResponse } from '../../conversations/service.js';
import type { TurnService } from '../../conversations/turn-service.js';
import { abortOnClientGone } from '../client-gone.js';
import { SseStream } from '../sse.js';

export interface TurnRoutesOptions {
  turns: TurnService;
  pingIntervalMs?: number;
}

const tags = ['conversations'];
const security = [{ ApiKey: [] }];
const turnErrors = { 403: ErrorResponse, 404: ErrorResponse, 409: ErrorResponse, 422: ValidationErrorResponse };

export const conversationTurnRoutes: FastifyPluginAsyncZod<TurnRoutesOptions> = async (app, { turns, pingIntervalMs }) => {
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
        ].join(' '),
        params: ConversationParams,
        body: AddMessageRequest,
        response: { 200: AddMessageResponse, ...turnErrors, 500: ErrorResponse },
      },
    },
    async (request, reply) => {
      const result = await turns.addMessage(request.params.conversation_id, request.caller.userId, request.body.content, {
        mode: request.body.mode,
        signal: abortOnClientGone(reply),
      });
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
            description: 'text/event-stream of StreamFrame, ending with TurnDoneFrame or an error frame',
            content: { 'text/event-stream': { schema: StreamFrame.or(TurnDoneFrame) } },
          },
          ...turnErrors,
        },
      },
    },
    async (request, reply) => {
      const { content, mode } = request.body;
      const turn = await turns.open(request.params.conversation_id, request.caller.userId);
      const stream = new SseStream(reply, pingIntervalMs);
      try {
        const result = await turn(content, { mode, signal: stream.signal, onFrame: (frame) => stream.send(frame) });
        stream.send({
          event: 'done',
          mode,
          user_message_id: result.userMessage.id,
          assistant_message_id: result.assistantMessage.id,
          total_tokens: result.totalTokens,
          summarized: result.summarized,
        });
      } catch (error) {
        if (!stream.signal.aborted) stream.send({ event: 'error', error_message: error instanceof Error ? error.message : String(error) });
      } finally {
        stream.end();
      }
    },
  );
};
