import * as protocol from '@mada/protocol';
import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { createTestApp } from '../support/app.js';

type JsonSchema = { $ref?: string; properties?: Record<string, JsonSchema>; const?: unknown; enum?: unknown[] } & Record<string, unknown>;
interface Document {
  paths: Record<string, Record<string, { responses?: Record<string, { content?: Record<string, { schema: JsonSchema }> }> }>>;
  components: { schemas: Record<string, JsonSchema> };
}

/** Every `event` kind a schema of the document allows, following its references. */
function eventKinds(schema: unknown, document: Document, seen = new Set<string>()): Set<string> {
  const kinds = new Set<string>();
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(walk);
    if (node === null || typeof node !== 'object') return;
    const object = node as JsonSchema;
    if (typeof object.$ref === 'string' && !seen.has(object.$ref)) {
      seen.add(object.$ref);
      walk(document.components.schemas[object.$ref.replace('#/components/schemas/', '')]);
    }
    const event = object.properties?.event;
    if (typeof event?.const === 'string') kinds.add(event.const);
    for (const value of event?.enum ?? []) if (typeof value === 'string') kinds.add(value);
    for (const [key, value] of Object.entries(object)) if (key !== 'properties') walk(value);
    for (const value of Object.values(object.properties ?? {})) walk(value);
  };
  walk(schema);
  return kinds;
}

/** The `event` kind of every event schema the protocol package exports. */
function protocolKinds(): Set<string> {
  const kinds = new Set<string>();
  for (const value of Object.values(protocol)) {
    if (!(value instanceof z.ZodObject)) continue;
    const event = (value.shape as Record<string, unknown>).event;
    if (event instanceof z.ZodLiteral) for (const kind of event.values) if (typeof kind === 'string') kinds.add(kind);
  }
  return kinds;
}

describe('the OpenAPI document of the event streams', () => {
  it('describes every stream with the protocol event union, naming every event kind the protocol defines', async () => {
    const t = await createTestApp();
    try {
      const document = (await t.app.inject({ url: '/openapi.json' })).json<Document>();
      const streams = Object.entries(document.paths).flatMap(([path, operations]) =>
        Object.entries(operations).flatMap(([method, operation]) => {
          const schema = operation.responses?.['200']?.content?.['text/event-stream']?.schema;
          return schema ? [[`${method.toUpperCase()} ${path}`, schema] as const] : [];
        }),
      );
      expect(streams.map(([route]) => route).sort()).toEqual(['GET /approvals/events', 'GET /runs/{run_id}/events', 'POST /agents/stream', 'POST /conversations/{conversation_id}/stream']);
      const defined = [...protocolKinds()].sort();
      expect(defined).toEqual(expect.arrayContaining(['tool_start', 'response', 'approval_requested', 'done', 'error']));
      // The approvals stream sends lists of pending approvals, not a run's events.
      const [, approvals] = streams.find(([route]) => route === 'GET /approvals/events')!;
      expect(approvals.$ref).toBe('#/components/schemas/ApprovalListResponse');
      for (const [route, schema] of streams.filter(([route]) => route !== 'GET /approvals/events')) expect({ route, kinds: [...eventKinds(schema, document)].sort() }).toEqual({ route, kinds: defined });
    } finally {
      await t.close();
    }
  });
});
