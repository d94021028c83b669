import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import {
  ConversationDetailResponse,
  ConversationListResponse,
  ConversationParams,
  ConversationResponse,
  CreateConversationRequest,
  ErrorResponse,
  ListConversationsQuery,
  SaveMessagesRequest,
  SaveMessagesResponse,
  ValidationErrorResponse,
} from '@mada/protocol';
import { toConversationResponse, toMessageResponse, type ConversationService } from '../../conversations/service.js';

export interface ConversationRoutesOptions {
  conversations: ConversationService;
}

const ownedErrors = { 403: ErrorResponse, 404: ErrorResponse };
const tags = ['conversations'];
const security = [{ ApiKey: [] }];

export const conversationRoutes: FastifyPluginAsyncZod<ConversationRoutesOptions> = async (app, { conversations }) => {
  app.post(
    '/conversations/',
    {
      schema: {
        tags,
        security,
        summary: 'Create an empty conversation',
        body: CreateConversationRequest,
        response: { 201: ConversationResponse, 422: ValidationErrorResponse },
      },
    },
    async (request, reply) => {
      const created = await conversations.create(request.caller.userId, request.body);
      return reply.code(201).send(toConversationResponse(created));
    },
  );

  app.get(
    '/conversations/',
    {
      schema: {
        tags,
        security,
        summary: "List the caller's conversations, most recently active first",
        description: 'Conversations idle longer than SESSION_TTL_HOURS are expired: they no longer appear and answer 404.',
        querystring: ListConversationsQuery,
        response: { 200: ConversationListResponse, 422: ValidationErrorResponse },
      },
    },
    async (request) => {
      const { items, total } = await conversations.list(request.caller.userId, request.query.limit, request.query.offset);
      return { conversations: items.map(toConversationResponse), total };
    },
  );

  app.get(
    '/conversations/:conversation_id',
    {
      schema: {
        tags,
        security,
        summary: 'A conversation with its messages in order',
        params: ConversationParams,
        response: { 200: ConversationDetailResponse, ...ownedErrors },
      },
    },
    async (request) => {
      const conversation = await conversations.getOwned(request.params.conversation_id, request.caller.userId);
      const messages = await conversations.messages(conversation);
      return { ...toConversationResponse(conversation), messages: messages.map(toMessageResponse) };
    },
  );

  app.delete(
    '/conversations/:conversation_id',
    {
      schema: {
        tags,
        security,
        summary: 'Delete a conversation and all its messages',
        params: ConversationParams,
        response: { 204: z.undefined().describe('Deleted'), ...ownedErrors },
      },
    },
    async (request, reply) => {
      await conversations.delete(request.params.conversation_id, request.caller.userId);
      return reply.code(204).send();
    },
  );

  app.post(
    '/conversations/:conversation_id/save',
    {
      schema: {
        tags,
        security,
        summary: 'Store a user message and an assistant reply without running an agent',
        description: 'Used by clients that streamed a reply from /agents/stream. Does not run summarization.',
        params: ConversationParams,
        body: SaveMessagesRequest,
        response: { 200: SaveMessagesResponse, ...ownedErrors, 422: ValidationErrorResponse },
      },
    },
    async (request) => {
      const conversation = await conversations.getOwned(request.params.conversation_id, request.caller.userId);
      const stored = await conversations.append(conversation, [
        { role: 'user', content: request.body.user_content },
        { role: 'assistant', content: request.body.assistant_content },
      ]);
      const [user, assistant] = stored.messages.map(toMessageResponse);
      return { user_message: user!, assistant_message: assistant!, total_tokens: stored.conversation.totalTokens };
    },
  );
};
