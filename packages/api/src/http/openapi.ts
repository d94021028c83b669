import fastifySwagger from '@fastify/swagger';
import fastifySwaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { jsonSchemaTransform, jsonSchemaTransformObject } from 'fastify-type-provider-zod';

const DESCRIPTION = `Runs LLM coding agents (explore, plan, task) against a working directory with sandboxed tools,
keeps per-user conversations with automatic summarization, and streams progress as Server-Sent Events.

Authentication: send \`X-API-Key\` on the /agents, /runs, /approvals, /conversations, /me, /users and /audit routes;
each user sees only their own. Keys come from \`API_KEYS\` or are stored (\`/me/keys\`, \`/users\`, admins only).
Without \`API_KEYS\` and stored users the service runs in local mode (loopback only): requests carry no key
and act as user \`local\`, an admin.`;

/** OpenAPI 3.1 generated from the zod route schemas, at /openapi.json, browsable at /docs. */
export async function registerOpenApi(app: FastifyInstance, version: string): Promise<void> {
  await app.register(fastifySwagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'mada API', version, description: DESCRIPTION },
      components: {
        securitySchemes: { ApiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' } },
      },
      tags: [
        { name: 'health', description: 'Liveness and dependency checks (no key needed)' },
        { name: 'agents', description: 'Agent catalogue and runs' },
        { name: 'models', description: 'The models runs and conversations may name' },
        { name: 'conversations', description: 'Per-user multi-turn conversations' },
      ],
    },
    transform: jsonSchemaTransform,
    transformObject: jsonSchemaTransformObject,
  });
  await app.register(fastifySwaggerUi, { routePrefix: '/docs', uiConfig: { docExpansion: 'list' } });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
}
