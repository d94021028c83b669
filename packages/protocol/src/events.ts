import { z } from 'zod';
import { PermissionMode } from './agents.js';

/*
 * Stream events, one schema per kind, told apart by `event`. Each kind has its own required
 * fields, so a reader that narrows on `event` never has to guess a missing field. Fields that are
 * absent are left out of the JSON (never sent as null). docs/api.md, "Stream events", describes
 * each kind for clients.
 */

export const ToolStartEvent = z
  .object({ event: z.literal('tool_start'), tool: z.string(), args: z.record(z.string(), z.unknown()) })
  .meta({ id: 'ToolStartEvent' });
export type ToolStartEvent = z.infer<typeof ToolStartEvent>;

/**
 * How a tool call ended: `ok`, `failed` (the tool, its arguments or its time ran out), `refused`
 * (a rule, the mode, or a run that cannot wait for an approval) or `denied` (by the user, or the
 * approval expired). This service always sends it; older ones did not, so it stays optional.
 */
export const ToolOutcome = z.enum(['ok', 'failed', 'refused', 'denied']).meta({ id: 'ToolOutcome' });
export type ToolOutcome = z.infer<typeof ToolOutcome>;

export const ToolDoneEvent = z
  .object({ event: z.literal('tool_done'), tool: z.string(), result_summary: z.string(), outcome: ToolOutcome.optional() })
  .meta({ id: 'ToolDoneEvent' });
export type ToolDoneEvent = z.infer<typeof ToolDoneEvent>;

export const ThinkingEvent = z.object({ event: z.literal('thinking'), message: z.string() }).meta({ id: 'ThinkingEvent' });
export type ThinkingEvent = z.infer<typeof ThinkingEvent>;

/** A piece of the `task` agent's answer. */
export const ResponseEvent = z.object({ event: z.literal('response'), text: z.string() }).meta({ id: 'ResponseEvent' });
export type ResponseEvent = z.infer<typeof ResponseEvent>;

/** A piece of the answer of `explore` and `plan`: the original service's text frame, kept as it was. */
export const ChunkEvent = z.object({ event: z.literal('chunk'), data: z.string() }).meta({ id: 'ChunkEvent' });
export type ChunkEvent = z.infer<typeof ChunkEvent>;

/** A rule asked before a tool call: the run waits (status `waiting_approval`) for POST /approvals/{id}. */
export const ApprovalRequestedEvent = z
  .object({
    event: z.literal('approval_requested'),
    approval_id: z.uuid(),
    tool: z.string(),
    args: z.record(z.string(), z.unknown()),
    reason: z.string(),
    expires_at: z.string(),
  })
  .meta({ id: 'ApprovalRequestedEvent' });
export type ApprovalRequestedEvent = z.infer<typeof ApprovalRequestedEvent>;

/** The answer to an approval (or its expiry); the run goes on. */
export const ApprovalResolvedEvent = z
  .object({
    event: z.literal('approval_resolved'),
    approval_id: z.uuid(),
    decision: z.enum(['approved', 'denied']),
    /** Left out when the answer came without one. */
    message: z.string().optional(),
  })
  .meta({ id: 'ApprovalResolvedEvent' });
export type ApprovalResolvedEvent = z.infer<typeof ApprovalResolvedEvent>;

/** The run failed; always the last frame. This service sends this form. */
export const ErrorEvent = z.object({ event: z.literal('error'), error_message: z.string() }).meta({ id: 'ErrorEvent' });
export type ErrorEvent = z.infer<typeof ErrorEvent>;

/** The older error form, text in `data`: clients still read it from older servers; this service never sends it. */
export const LegacyErrorEvent = z.object({ event: z.literal('error'), data: z.string() }).meta({ id: 'LegacyErrorEvent' });
export type LegacyErrorEvent = z.infer<typeof LegacyErrorEvent>;

/** The run finished; the last frame of `/agents/stream`. */
export const DoneEvent = z.object({ event: z.literal('done'), mode: PermissionMode }).meta({ id: 'DoneEvent' });
export type DoneEvent = z.infer<typeof DoneEvent>;

/** The last frame of a streamed conversation turn: `done` plus what the turn stored. */
export const TurnDoneEvent = DoneEvent.extend({
  user_message_id: z.uuid(),
  assistant_message_id: z.uuid(),
  total_tokens: z.number().int(),
  summarized: z.boolean(),
}).meta({ id: 'TurnDoneEvent' });
export type TurnDoneEvent = z.infer<typeof TurnDoneEvent>;

/** What an agent emits while it runs (the route adds the final `done` or `error`). */
export const AgentEvent = z
  .discriminatedUnion('event', [ToolStartEvent, ToolDoneEvent, ThinkingEvent, ResponseEvent, ChunkEvent, ApprovalRequestedEvent, ApprovalResolvedEvent])
  .meta({ id: 'AgentEvent' });
export type AgentEvent = z.infer<typeof AgentEvent>;

/** Every frame `/agents/stream` sends. */
export const AgentStreamFrame = z
  .discriminatedUnion('event', [...AgentEvent.options, ErrorEvent, DoneEvent])
  .meta({ id: 'AgentStreamFrame' });
export type AgentStreamFrame = z.infer<typeof AgentStreamFrame>;

/** Every frame `/conversations/{id}/stream` sends. */
export const TurnStreamFrame = z
  .discriminatedUnion('event', [...AgentEvent.options, ErrorEvent, TurnDoneEvent])
  .meta({ id: 'TurnStreamFrame' });
export type TurnStreamFrame = z.infer<typeof TurnStreamFrame>;

/** The frame a run ends with: `done` (a conversation turn's carries what the turn stored) or `error`. */
export const RunEndEvent = z.union([ErrorEvent, TurnDoneEvent, DoneEvent]);
export type RunEndEvent = z.infer<typeof RunEndEvent>;

/**
 * Every event a stored run holds, as GET /runs/{id}/events streams it: what its agent emitted,
 * then its end. A plain union, tried in order, because the two `done` forms share a kind: the
 * turn's, with more fields, is tried first, so it keeps them.
 */
export const RunEvent = z.union([...AgentEvent.options, ...RunEndEvent.options]).meta({ id: 'RunEvent' });
export type RunEvent = z.infer<typeof RunEvent>;

/**
 * Every frame a client may meet on either stream, from this service or an older one: the legacy
 * error form is accepted, and a `done` keeps the turn's extra fields when it has them. A plain
 * union, tried in order, because two of its members share a kind; TypeScript still narrows it on
 * `event`.
 */
export const StreamFrame = z.union([...AgentEvent.options, ErrorEvent, LegacyErrorEvent, TurnDoneEvent, DoneEvent]);
export type StreamFrame = z.infer<typeof StreamFrame>;
