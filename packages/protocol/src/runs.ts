import { z } from 'zod';
import { AgentRunRequest, ModelName, PERMISSION_MODES, PermissionMode, Prompt } from './agents.js';
import { RUN_STATUSES } from './run-statuses.js';

/*
 * Runs as stored resources (`/runs*`): the wire shapes. The routes that use them come with the
 * runs service; the database stores the same statuses.
 */

export { RUN_STATUSES };
export const RunStatus = z.enum(RUN_STATUSES).meta({ id: 'RunStatus' });
export type RunStatus = z.infer<typeof RunStatus>;

const Timestamp = z.string().meta({ description: 'UTC ISO 8601 with milliseconds and Z' });
const Count = z.number().int().min(0);

export const RunUsage = z
  .object({ model_calls: Count, tool_calls: Count, input_tokens: Count, output_tokens: Count })
  .meta({ id: 'RunUsage' });
export type RunUsage = z.infer<typeof RunUsage>;

export const RunResponse = z
  .object({
    id: z.uuid(),
    agent_type: z.string(),
    // Documented as the closed set it is; not enforced on output, so an old row cannot fail a read.
    mode: z.string().meta({ enum: [...PERMISSION_MODES] }),
    status: RunStatus,
    prompt: z.string(),
    working_dir: z.string().meta({ description: 'Absolute and resolved.' }),
    // Optional for clients of services from before it: every service since sends it.
    model: z.string().nullable().optional().meta({ description: 'The model the run was sent to; null for runs stored before models could be chosen.' }),
    conversation_id: z.uuid().nullable(),
    response: z.string().nullable(),
    error: z.string().nullable(),
    created_at: Timestamp,
    started_at: Timestamp.nullable(),
    ended_at: Timestamp.nullable(),
    usage: RunUsage,
    last_event_id: Count.meta({ description: 'Id of the latest stored event; events are numbered 1, 2, 3 … per run.' }),
  })
  .meta({ id: 'RunResponse' });
export type RunResponse = z.infer<typeof RunResponse>;

/** A cancelled run as its canceller sees it: an admin cancelling another user's run reads neither prompt nor response. */
export const CancelledRunResponse = RunResponse.extend({ prompt: z.string().nullable(), response: z.string().nullable() }).meta({
  id: 'CancelledRunResponse',
  description: "`prompt` and `response` are null when an admin cancels another user's run",
});
export type CancelledRunResponse = z.infer<typeof CancelledRunResponse>;

export const ListRunsQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(50),
  offset: z.coerce.number().int().min(0).default(0),
  status: RunStatus.optional(),
});
export type ListRunsQuery = z.infer<typeof ListRunsQuery>;

export const RunListResponse = z.object({ runs: z.array(RunResponse), total: z.number().int() }).meta({ id: 'RunListResponse' });
export type RunListResponse = z.infer<typeof RunListResponse>;

/** What a run does when a rule says `ask`: wait for an answer, or take it as denied at once. */
export const OnAsk = z.enum(['wait', 'deny']).meta({ id: 'OnAsk' });
export type OnAsk = z.infer<typeof OnAsk>;

export const StartRunRequest = AgentRunRequest.extend({ on_ask: OnAsk.default('wait') }).meta({ id: 'StartRunRequest' });
export type StartRunRequest = z.infer<typeof StartRunRequest>;
export type StartRunInput = z.input<typeof StartRunRequest>;

export const ConversationRunRequest = z
  .object({
    content: Prompt,
    mode: PermissionMode.default('default'),
    on_ask: OnAsk.default('wait'),
    model: ModelName.optional().meta({ description: "This turn's model; absent: the conversation's." }),
  })
  .meta({ id: 'ConversationRunRequest' });
export type ConversationRunRequest = z.infer<typeof ConversationRunRequest>;
export type ConversationRunInput = z.input<typeof ConversationRunRequest>;

export const RunParams = z.object({ run_id: z.string() });

/** `after`: replay the events after this id (the `Last-Event-ID` header wins when both are given). */
export const RunEventsQuery = z.object({
  after: z
    .string()
    .regex(/^\d+$/, 'expected a non-negative integer')
    .transform((value) => Number(value))
    .optional(),
});

/** A retried start with the same key returns the first run instead of starting another. */
export const IdempotencyHeaders = z.object({ 'idempotency-key': z.string().min(1).max(255).optional() }).loose();

/** The id of the last event a reconnecting client saw (EventSource sends it by itself). */
export const RunEventsHeaders = z
  .object({ 'last-event-id': z.string().regex(/^\d+$/, 'expected a non-negative integer').optional() })
  .loose();
