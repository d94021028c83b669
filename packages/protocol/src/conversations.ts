import { z } from 'zod';
import { AgentTypeName, ModelName, PermissionMode, Prompt } from './agents.js';

const Timestamp = z.string().meta({ description: 'UTC ISO 8601 with milliseconds and Z' });

export const MessageResponse = z
  .object({
    id: z.uuid(),
    role: z.string(),
    content: z.string(),
    token_count: z.number().int(),
    is_summary: z.boolean(),
    created_at: Timestamp,
  })
  .meta({ id: 'MessageResponse' });
export type MessageResponse = z.infer<typeof MessageResponse>;

export const ConversationResponse = z
  .object({
    id: z.uuid(),
    agent_type: z.string(),
    title: z.string().nullable(),
    working_dir: z.string(),
    // Optional for clients of services from before it: every service since sends it.
    model: z.string().nullable().optional().meta({ description: 'The model its turns use unless a turn names another; null (conversations from before models could be chosen): the default.' }),
    total_tokens: z.number().int(),
    created_at: Timestamp,
    updated_at: Timestamp.nullable(),
  })
  .meta({ id: 'ConversationResponse' });
export type ConversationResponse = z.infer<typeof ConversationResponse>;

export const ConversationDetailResponse = ConversationResponse.extend({
  messages: z.array(MessageResponse),
}).meta({ id: 'ConversationDetailResponse' });
export type ConversationDetailResponse = z.infer<typeof ConversationDetailResponse>;

export const ConversationListResponse = z
  .object({ conversations: z.array(ConversationResponse), total: z.number().int() })
  .meta({ id: 'ConversationListResponse' });
export type ConversationListResponse = z.infer<typeof ConversationListResponse>;

export const CreateConversationRequest = z
  .object({
    agent_type: AgentTypeName.default('explore'),
    working_dir: z.string().min(1).max(1024).default('.'),
    title: z.string().max(255).nullable().default(null).meta({ examples: ['Tour of the code'] }),
    model: ModelName.optional(),
  })
  .meta({ id: 'CreateConversationRequest' });
export type CreateConversationRequest = z.infer<typeof CreateConversationRequest>;

/** `GET /conversations/{id}/messages`: a page of history, walking back with `before`. */
export const MessagePageQuery = z.object({
  limit: z.coerce.number().int().min(1).max(200).default(50),
  before: z.string().optional().meta({ description: 'A message id of this conversation: the page ends just before it (default: the latest).' }),
});
export type MessagePageQuery = z.infer<typeof MessagePageQuery>;

export const MessagePageResponse = z
  .object({
    messages: z.array(MessageResponse).meta({ description: 'Oldest first.' }),
    has_more: z.boolean().meta({ description: 'Older messages exist before the first one.' }),
  })
  .meta({ id: 'MessagePageResponse' });
export type MessagePageResponse = z.infer<typeof MessagePageResponse>;

export const ListConversationsQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(50),
  offset: z.coerce.number().int().min(0).default(0),
});
export type ListConversationsQuery = z.infer<typeof ListConversationsQuery>;

export const ConversationParams = z.object({ conversation_id: z.string() });

/** A turn: the message, and the permission mode the conversation's agent runs in (default `default`). */
export const AddMessageRequest = z
  .object({
    content: Prompt,
    mode: PermissionMode.default('default'),
    model: ModelName.optional().meta({ description: "This turn's model; absent: the conversation's." }),
  })
  .meta({ id: 'AddMessageRequest' });
export type AddMessageRequest = z.infer<typeof AddMessageRequest>;
/** What a client sends (mode may be left out). */
export type AddMessageInput = z.input<typeof AddMessageRequest>;

export const AddMessageResponse = z
  .object({
    user_message: MessageResponse,
    assistant_message: MessageResponse,
    total_tokens: z.number().int(),
    summarized: z.boolean().default(false),
  })
  .meta({ id: 'AddMessageResponse' });
export type AddMessageResponse = z.infer<typeof AddMessageResponse>;

export const SaveMessagesRequest = z
  .object({
    user_content: z.string().min(1).meta({ examples: ['What does this project do?'] }),
    assistant_content: z.string().meta({ examples: ['It is a small web shop.'] }),
  })
  .meta({ id: 'SaveMessagesRequest' });
export type SaveMessagesRequest = z.infer<typeof SaveMessagesRequest>;

export const SaveMessagesResponse = z
  .object({ user_message: MessageResponse, assistant_message: MessageResponse, total_tokens: z.number().int() })
  .meta({ id: 'SaveMessagesResponse' });
export type SaveMessagesResponse = z.infer<typeof SaveMessagesResponse>;
