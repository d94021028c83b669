import { z } from 'zod';

export const STREAM_EVENT_TYPES = ['tool_start', 'tool_done', 'thinking', 'response', 'error', 'done'] as const;
export const StreamEventType = z.enum(STREAM_EVENT_TYPES);
export type StreamEventType = z.infer<typeof StreamEventType>;

/** A structured progress event. Absent (null) fields are omitted on the wire. */
export const StreamEvent = z
  .object({
    event: StreamEventType,
    tool: z.string().optional(),
    args: z.record(z.string(), z.unknown()).optional(),
    result_summary: z.string().optional(),
    message: z.string().optional(),
    text: z.string().optional(),
    error_message: z.string().optional(),
    mode: z.string().optional(),
  })
  .meta({ id: 'StreamEvent' });
export type StreamEvent = z.infer<typeof StreamEvent>;

/** Legacy text frame sent by `explore` and `plan`. */
export const ChunkFrame = z.object({ event: z.literal('chunk'), data: z.string() }).meta({ id: 'ChunkFrame' });
export type ChunkFrame = z.infer<typeof ChunkFrame>;

export const StreamFrame = z.union([StreamEvent, ChunkFrame]);
export type StreamFrame = z.infer<typeof StreamFrame>;
