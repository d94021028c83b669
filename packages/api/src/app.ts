import fastifyCors from '@fastify/cors';
import fastifyRateLimit from '@fastify/rate-limit';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { serializerCompiler, validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import { AppError } from './errors.js';
import { httpProbe, type Probe } from './health/probes.js';
import { detectConfinement } from './tools/sandbox/bubblewrap.js';
import { Authenticator, declareCaller, requireCaller } from './http/auth.js';
import { closeConnectionsWhenDraining } from './http/drain.js';
import { installErrorHandling } from './http/error-handler.js';
import { registerOpenApi } from './http/openapi.js';
import { agentCatalogueRoutes } from './http/routes/agents.js';
import { agentRunRoutes } from './http/routes/agent-runs.js';
import { conversationTurnRoutes } from './http/routes/conversation-turns.js';
import { conversationRoutes } from './http/routes/conversations.js';
import type { AgentEngine } from './agents/engine.js';
import type { ConversationService } from './conversations/service.js';
import type { TurnService } from './conversations/turn-service.js';
import { healthRoutes } from './http/routes/health.js';
import type { Settings } from './settings.js';
import { VERSION } from './version.js';

export interface AppDeps {
  settings: Settings;
  conversations: ConversationService;
  engine: AgentEngine;
  turns: TurnService;
  /** Interval of the `: ping` comment on event streams (15 s). */
  pingIntervalMs?: number;
  /** Defaults to a pino logger at settings.logLevel that redacts credentials. */
  logger?: FastifyBaseLogger;
  /** Checks for GET /health beyond the database; defaults probe the configured runtimes. */
  probes?: { dependencies?: Record<string, Probe>; facts?: () => Promise<Record<string, string>> };
}

/** Headers that carry credentials: pino replaces them wherever a request is logged. */
const REDACT = ['req.headers["x-api-key"]', 'req.headers.authorization', 'req.headers.cookie'];

export function createLogger(settings: Pick<Settings, 'logLevel'>): FastifyBaseLogger {
  return pino({ level: settings.logLevel, redact: REDACT });
}

function defaultDependencies(settings: Settings): Record<string, Probe> {
  const modelUrl = settings.llmProvider === 'ollama' ? `${settings.llmBaseUrl}/api/tags` : `${settings.llmBaseUrl}/models`;
  const modelHeaders: Record<string, string> = settings.llmApiKey ? { authorization: `Bearer ${settings.llmApiKey}` } : {};
  return {
    model_runtime: httpProbe(modelUrl, 2000, modelHeaders),
    search_engine: httpProbe(`${settings.searchEngineUrl}/healthz`),
  };
}

async function sandboxFacts(settings: Settings): Promise<Record<string, string>> {
  const confinement = await detectConfinement(settings);
  return { sandbox: confinement.active ? 'bubblewrap' : `policy-only: ${confinement.reason}` };
}

function databaseProbe(conversations: ConversationService): Probe {
  return async () => {
    try {
      await conversations.repository.ping();
      return 'ok';
    } catch {
      return 'unreachable';
    }
  };
}

async function registerRateLimit(scope: FastifyInstance, perMinute: number): Promise<void> {
  if (perMinute === 0) return;
  await scope.register(fastifyRateLimit, {
    max: perMinute,
    timeWindow: 60_000,
    keyGenerator: (request) => request.caller.limitKey,
    errorResponseBuilder: (_request, context) =>
      new AppError(429, `Rate limit exceeded: ${context.max} requests per minute. Retry in ${context.after}.`),
  });
}

/** The whole HTTP application, not listening: tests inject requests, main.ts listens. */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const { settings } = deps;
  const app = Fastify({
    loggerInstance: deps.logger ?? createLogger(settings),
    bodyLimit: settings.maxBodyBytes,
    return503OnClosing: true,
  }).withTypeProvider<ZodTypeProvider>();
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  installErrorHandling(app);
  closeConnectionsWhenDraining(app);
  declareCaller(app);

  if (settings.corsOrigins.length > 0) {
    await app.register(fastifyCors, {
      origin: settings.corsOrigins.includes('*') ? true : settings.corsOrigins,
      credentials: settings.corsAllowCredentials,
      methods: settings.corsAllowMethods,
      allowedHeaders: settings.corsAllowHeaders,
    });
  }
  await registerOpenApi(app, VERSION);

  await app.register(healthRoutes, {
    version: VERSION,
    database: databaseProbe(deps.conversations),
    dependencies: deps.probes?.dependencies ?? defaultDependencies(settings),
    facts: deps.probes?.facts ?? (() => sandboxFacts(settings)),
  });

  const auth = new Authenticator(settings.apiKeys);
  const ping = deps.pingIntervalMs === undefined ? {} : { pingIntervalMs: deps.pingIntervalMs };
  await app.register(async (scope) => {
    requireCaller(scope, auth);
    await registerRateLimit(scope, settings.rateLimitPerMinute);
    await scope.register(agentCatalogueRoutes);
    await scope.register(agentRunRoutes, { engine: deps.engine, ...ping });
    await scope.register(conversationRoutes, { conversations: deps.conversations });
    await scope.register(conversationTurnRoutes, { turns: deps.turns, ...ping });
  });
  return app;
}
