import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AGENT_TYPES, PERMISSION_MODES } from '@mada/protocol';
import { createTestApp, type TestApp } from '../support/app.js';
import { resolve, sample, type Schema } from '../support/openapi-sample.js';

interface Operation {
  security?: unknown;
  requestBody?: { content?: Record<string, { schema: Schema; example?: unknown }> };
}
interface Document {
  info: { title: string };
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema>; securitySchemes?: Record<string, unknown> };
}

const bodyOf = (document: Document, method: string, path: string): Schema =>
  document.paths[path]![method]!.requestBody!.content!['application/json']!.schema;

describe('the OpenAPI document in local mode', () => {
  let t: TestApp;
  let document: Document;
  beforeAll(async () => {
    t = await createTestApp();
    document = (await t.app.inject({ url: '/openapi.json' })).json<Document>();
  });
  afterAll(async () => t.close());

  it('is titled mada, and so is the docs page', async () => {
    expect(document.info.title).toBe('mada');
    let page = await t.app.inject({ url: '/docs' });
    for (let hops = 0; page.statusCode >= 300 && page.statusCode < 400 && hops < 3; hops++) {
      page = await t.app.inject({ url: new URL(page.headers.location!, 'http://127.0.0.1/docs').pathname });
    }
    expect(page.statusCode).toBe(200);
    expect(page.body).toMatch(/<title>mada<\/title>/);
  });

  it('lists the agent types and permission modes a request may name', () => {
    for (const [method, path] of [['post', '/agents/run'], ['post', '/runs'], ['post', '/conversations/']] as const) {
      const body = resolve(bodyOf(document, method, path), document);
      expect(resolve(body.properties!.agent_type!, document).enum, path).toEqual([...AGENT_TYPES]);
    }
    const run = resolve(bodyOf(document, 'post', '/runs'), document);
    expect(resolve(run.properties!.mode!, document).enum).toEqual([...PERMISSION_MODES]);
    expect(resolve(run.properties!.on_ask!, document).enum?.length).toBeGreaterThan(1);
  });

  it('names each schema once: no …Input twin of a schema', () => {
    const names = Object.keys(document.components.schemas);
    expect(names.filter((name) => name.endsWith('Input'))).toEqual([]);
    for (const name of ['CreateConversationRequest', 'StartRunRequest', 'RunResponse', 'ErrorResponse']) expect(names).toContain(name);
    // Every reference still leads somewhere.
    const refs = [...JSON.stringify(document).matchAll(/"#\/components\/schemas\/([^"]+)"/g)].map((match) => match[1]!);
    for (const ref of refs) expect(names).toContain(ref);
  });

  it('offers no Authorize: no security scheme and no per-route security', () => {
    expect(document.components.securitySchemes ?? {}).toEqual({});
    const secured = Object.entries(document.paths).flatMap(([path, item]) =>
      Object.entries(item).flatMap(([method, operation]) => (operation.security ? [`${method} ${path}`] : [])),
    );
    expect(secured).toEqual([]);
  });

  it('offers request examples with no "string" placeholder', () => {
    const placeholders = Object.entries(document.paths).flatMap(([path, item]) =>
      Object.entries(item).flatMap(([method, operation]) => {
        const media = operation.requestBody?.content?.['application/json'];
        // The session route takes the caller's own key: no example can stand for it.
        if (!media?.schema || path === '/session') return [];
        // Swagger UI fills in the media type's own example first (POST /mcp's body has no fields to sample).
        const filled = media.example ?? sample(media.schema, document);
        return JSON.stringify(filled).includes('"string"') ? [`${method} ${path}`] : [];
      }),
    );
    expect(placeholders).toEqual([]);
  });

  it('offers examples that work when tried', async () => {
    const conversation = await t.app.inject({ method: 'POST', url: '/conversations/', payload: sample(bodyOf(document, 'post', '/conversations/'), document) as object });
    expect(conversation.statusCode, conversation.body).toBe(201);
    const run = await t.app.inject({ method: 'POST', url: '/runs', payload: sample(bodyOf(document, 'post', '/runs'), document) as object });
    expect(run.statusCode, run.body).toBe(202);
  });
});

describe('the OpenAPI document in keyed mode', () => {
  it('declares the X-API-Key scheme and asks for it on the keyed routes', async () => {
    const t = await createTestApp({ env: { API_KEYS: 'alice:key-for-alice-0123456789' } });
    try {
      const document = (await t.app.inject({ url: '/openapi.json' })).json<Document>();
      expect(document.components.securitySchemes).toEqual({ ApiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' } });
      expect(document.paths['/runs']!.post!.security).toEqual([{ ApiKey: [] }]);
    } finally {
      await t.close();
    }
  });
});
