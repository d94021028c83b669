import fastifySwagger from '@fastify/swagger';
import fastifySwaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { jsonSchemaTransform, jsonSchemaTransformObject } from 'fastify-type-provider-zod';
import { oneSchemaPerShape } from './openapi-components.js';

const DESCRIPTION = `Runs LLM coding agents (explore, plan, task) against a working directory with sandboxed tools,
keeps per-user conversations with automatic summarization, and streams progress as Server-Sent Events.

Authentication: send \`X-API-Key\` on the /agents, /runs, /approvals, /conversations, /me, /users and /audit routes;
each user sees only their own. Keys come from \`API_KEYS\` or are stored (\`/me/keys\`, \`/users\`, admins only).
Without \`API_KEYS\` and stored users the service runs in local mode (loopback only): requests carry no key
and act as user \`local\`, an admin.`;

const TITLE = 'mada';

type Untyped = Record<string, unknown>;

/**
 * Local mode takes no key: without a security scheme the docs page shows no Authorize button
 * (and no padlock on each route) that would ask for one.
 */
function withoutSecurity<T extends object>(document: T): T {
  const { paths = {}, components = {}, ...rest } = document as Untyped & { paths?: Record<string, Untyped>; components?: Untyped };
  const open = (operation: unknown): unknown => {
    if (operation === null || typeof operation !== 'object') return operation;
    const { security: _security, ...kept } = operation as Untyped;
    return kept;
  };
  const { securitySchemes: _schemes, ...otherComponents } = components;
  const openPaths = Object.fromEntries(
    Object.entries(paths).map(([path, item]) => [path, Object.fromEntries(Object.entries(item).map(([method, operation]) => [method, open(operation)]))]),
  );
  return { ...rest, paths: openPaths, components: otherComponents } as T;
}

/**
 * The only model name an example can offer that works when sent is one the service has: its
 * default (a placeholder `"string"` would be a 400 `Unknown model`).
 */
function withModelExample<T extends object>(document: T, defaultModel: string): T {
  const { components = {} } = document as Untyped & { components?: Untyped & { schemas?: Record<string, Untyped> } };
  const schemas = (components as { schemas?: Record<string, Untyped> }).schemas;
  if (schemas?.ModelName === undefined) return document;
  return { ...document, components: { ...components, schemas: { ...schemas, ModelName: { ...schemas.ModelName, examples: [defaultModel] } } } } as T;
}

/**
 * OpenAPI 3.1 generated from the zod route schemas, at /openapi.json, browsable at /docs.
 * `localMode`: the service takes no key (fixed for the life of the process).
 */
export async function registerOpenApi(app: FastifyInstance, version: string, localMode: boolean, defaultModel: string): Promise<void> {
  await app.register(fastifySwagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: TITLE, version, description: DESCRIPTION },
      // Declared in every mode: the routes' `security` is checked against it; local mode drops both below.
      components: { securitySchemes: { ApiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' } } },
      tags: [
        { name: 'health', description: 'Liveness and dependency checks (no key needed)' },
        { name: 'agents', description: 'Agent catalogue and runs' },
        { name: 'models', description: 'The models runs and conversations may name' },
        { name: 'conversations', description: 'Per-user multi-turn conversations' },
        { name: 'mcp', description: "mada's agents as tools of another agent, over the Model Context Protocol" },
      ],
    },
    transform: jsonSchemaTransform,
    transformObject: (input) => {
      const document = withModelExample(oneSchemaPerShape(jsonSchemaTransformObject(input)), defaultModel);
      return localMode ? withoutSecurity(document) : document;
    },
  });
  await app.register(fastifySwaggerUi, { routePrefix: '/docs', uiConfig: { docExpansion: 'list' }, theme: { title: TITLE } });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
}
