import type { FastifyReply } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Readable } from 'node:stream';
import {
  ConversationDetailResponse,
  ConversationListResponse,
  ConversationParams,
  ConversationResponse,
  CreateConversationRequest,
  ErrorResponse,
  ListConversationsQuery,
  MessagePageQuery,
  MessagePageResponse,
  SaveMessagesRequest,
  SaveMessagesResponse,
  ValidationErrorResponse,
} from '@mada/protocol';
import { assertMessageFits, type MessageLimits } from '../message-limit.js';
import { toConversationResponse, toMessageResponse, type ConversationService } from '../../conversations/service.js';
import { streamedDetail, streamedPage } from '../streamed-detail.js';
import { queryValidationError } from '../validation-error.js';

export interface ConversationRoutesOptions {
  conversations: ConversationService;
  messageLimits: MessageLimits;
}

const ownedErrors = { 403: ErrorResponse, 404: ErrorResponse };
const tags = ['conversations'];
const security = [{ ApiKey: [] }];

export const conversationRoutes: FastifyPluginAsyncZod<ConversationRoutesOptions> = async (app, { conversations, messageLimits }) => {
  app.post(
    '/conversations/',
    {
      schema: {
        tags,
        security,
        summary: 'Create an empty conversation',
        description: 'The working directory must be allowed (400); past MAX_CONVERSATIONS_PER_USER live conversations, 403.',
        body: CreateConversationRequest,
        response: { 201: ConversationResponse, 400: ErrorResponse, 403: ErrorResponse, 422: ValidationErrorResponse },
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
    async (request, reply) => {
      const conversation = await conversations.getOwned(request.params.conversation_id, request.caller.userId);
      return sendStreamed(reply, streamedDetail(toConversationResponse(conversation), conversations.messagePages(conversation)));
    },
  );

  app.get(
    '/conversations/:conversation_id/messages',
    {
      schema: {
        tags,
        security,
        summary: 'A page of messages, walking back through the history',
        description:
          'The `limit` messages just before the message `before` (or the latest ones), oldest first; `has_more` says older ones exist. ' +
          'To read further back, pass the first message id of a page as the next `before`. An unknown `before` answers 422.',
        params: ConversationParams,
        querystring: MessagePageQuery,
        response: { 200: MessagePageResponse, ...ownedErrors, 422: ValidationErrorResponse },
      },
    },
    async (request, reply) => {
      const conversation = await conversations.getOwned(request.params.conversation_id, request.caller.userId);
      const { limit, before } = request.query;
      const page = await conversations.messagePage(conversation, limit, before);
      if (!page) throw queryValidationError('before', 'Not a message of this conversation');
      return sendStreamed(reply, streamedPage(page.messages, page.hasMore));
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
        response: { 200: SaveMessagesResponse, ...ownedErrors, 413: ErrorResponse, 422: ValidationErrorResponse },
      },
    },
    async (request) => {
      await assertMessageFits(request.body.user_content, messageLimits);
      await assertMessageFits(request.body.assistant_content, messageLimits);
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

/** The schemas above document these bodies; a stream goes out as written, past the serializer. */
function sendStreamed(reply: FastifyReply, body: Readable): FastifyReply {
  return reply.type('application/json; charset=utf-8').send(body);
}
