import fastifyCookie from '@fastify/cookie';
import fastifyCors from '@fastify/cors';
import fastifyRateLimit from '@fastify/rate-limit';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { pino, type DestinationStream } from 'pino';
import pretty from 'pino-pretty';
import { serializerCompiler, validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import { TooManyRequestsError } from './errors.js';
import { httpProbe, type Probe } from './health/probes.js';
import { runtimeProbes, type RuntimeProbes } from './health/runtime-probes.js';
import { locateProgram } from './tools/sandbox/exec/program-path.js';
import { SandboxProbes } from './tools/sandbox/launcher.js';
import type { ToolHost } from './tools/tool-host.js';
import { bashNetwork } from './tools/sandbox/network-reach.js';
import { addressFilter, showAddresses } from './util/address-hiding.js';
import { addressRanges } from './util/ip-ranges.js';
import { Authenticator, declareCaller, requireCaller } from './http/auth.js';
import { AuthFailureLimiter } from './http/auth-failures.js';
import { CredentialFailures } from './http/credential-failures.js';
import { normalizeBodyText } from './http/body-text.js';
import { allowOmittedBodies } from './http/optional-body.js';
import { forbidFraming } from './http/frame-guard.js';
import { forbidStoring } from './http/no-store.js';
import { ConnectionGuard } from './http/connections.js';
import { closeConnectionsWhenDraining } from './http/drain.js';
import { installErrorHandling } from './http/error-handler.js';
import { guardHostAndOrigin } from './http/host-guard.js';
import { serializeRequest } from './http/log-redaction.js';
import { RequestLog } from './http/request-log.js';
import { answerFrameworkError, MAX_HEADER_BYTES, refuseExpectation, refuseTunnel } from './http/server-errors.js';
import { registerOpenApi } from './http/openapi.js';
import { agentCatalogueRoutes } from './http/routes/agents.js';
import { agentRunRoutes } from './http/routes/agent-runs.js';
import { conversationTurnRoutes } from './http/routes/conversation-turns.js';
import { conversationRoutes } from './http/routes/conversations.js';
import type { AgentEngine } from './agents/engine.js';
import type { ModelCatalogue } from './model/index.js';
import { modelRoutes, toModelInfo } from './http/routes/models.js';
import type { AddressFilter } from './util/address-hiding.js';
import type { ConversationService } from './conversations/service.js';
import type { TurnService } from './conversations/turn-service.js';
import type { RunService } from './runs/run-service.js';
import type { ApprovalService } from './approvals/approval-service.js';
import { approvalRoutes } from './http/routes/approvals.js';
import { runRoutes } from './http/routes/runs.js';
import { ConversationTurns } from './runs/conversation-turns.js';
import { checkpointRoutes } from './http/routes/checkpoints.js';
import type { CheckpointService } from './checkpoints/checkpoint-service.js';
import { healthRoutes } from './http/routes/health.js';
import { metricsRoutes } from './http/routes/metrics.js';
import { mcpRoutes } from './http/routes/mcp.js';
import { recordRequestMetrics } from './http/request-metrics.js';
import { ServiceMetrics } from './metrics/service-metrics.js';
import type { Settings } from './settings.js';
import type { UserDirectory } from './users/user-directory.js';
import { userRoutes } from './http/routes/users.js';
import { auditRoutes } from './http/routes/audit.js';
import { consoleRoutes } from './http/routes/console.js';
import { sessionRoutes } from './http/routes/session.js';
import { sessionCaller } from './http/console-session.js';
import type { ConsoleSessions } from './users/console-sessions.js';
import type { AuditLog } from './audit/audit-log.js';
import { SYSTEM_ACTOR } from './db/audit-repository.js';
import { VERSION } from './version.js';
import type { WebhookService } from './webhooks/webhook-service.js';
import { webhookRoutes } from './http/routes/webhooks.js';

export interface AppDeps {
  settings: Settings;
  conversations: ConversationService;
  engine: AgentEngine;
  turns: TurnService;
  runs: RunService;
  /** The configured models, their windows and tool-call modes, for `/models` and `/health`. */
  models?: ModelCatalogue;
  approvals: ApprovalService;
  checkpoints: CheckpointService;
  users: UserDirectory;
  audit: AuditLog;
  sessions: ConsoleSessions;
  webhooks: WebhookService;
  /** Interval of the `: ping` comment on event streams (15 s). */
  pingIntervalMs?: number;
  /** Defaults to a pino logger at settings.logLevel that redacts credentials. */
  logger?: FastifyBaseLogger;
  /** Checks for GET /health beyond the database; defaults probe the configured runtimes. */
  probes?: { dependencies?: Record<string, Probe>; unlistedModels?: () => Promise<string[] | undefined>; facts?: () => Promise<Record<string, string>> };
  /** What the services found of this machine; absent: the app probes the sandbox for itself. */
  toolHost?: ToolHost;
  /** The instruments openServices made (its engine, model and tools report into them). */
  metrics?: ServiceMetrics;
  /** The built browser console served at /app/ (default: packages/web/dist). */
  consoleDir?: string;
}

/** Pretty lines (LOG_FORMAT=pretty, or auto on a terminal) or JSON lines. */
function prettyLogs(settings: Partial<Pick<Settings, 'logFormat'>>, destination: DestinationStream | undefined): boolean {
  if ((settings.logFormat ?? 'auto') === 'auto') return destination === undefined && process.stdout.isTTY;
  return settings.logFormat === 'pretty';
}

/** The service's logger; `destination` (stdout by default) lets tests read what it writes. */
export function createLogger(settings: Pick<Settings, 'logLevel'> & Partial<Pick<Settings, 'logFormat'>>, destination?: DestinationStream): FastifyBaseLogger {
  // The `req` serializer keeps no header, so no credential header reaches a line (and pino's
  // redaction, which copied every request's fields for each line, has nothing to do).
  const options = { level: settings.logLevel, serializers: { req: serializeRequest } };
  if (prettyLogs(settings, destination)) {
    // In this thread, not a worker: a line written just before exit is not lost.
    const stream = pretty({
      destination: destination ?? 1,
      sync: true,
      colorize: destination === undefined && process.stdout.isTTY,
      singleLine: true,
      translateTime: 'SYS:HH:MM:ss',
      ignore: 'pid,hostname',
    });
    return pino(options, stream);
  }
  return destination ? pino(options, destination) : pino(options);
}

/** The runtime's reason is its own text: keyed users do not learn its address from it. */
function missingModels(models: ModelCatalogue, filter: AddressFilter): { name: string; reason: string }[] {
  return models.all().flatMap((model) => {
    const reason = model.runtime.current().missing;
    return reason === undefined ? [] : [{ name: model.name, reason: filter(reason) }];
  });
}

/** Idle keep-alive sockets and unfinished requests are checked this often (Node's default is 30 s). */
const checkingIntervalMs = (settings: Settings): number => Math.min(30_000, Math.max(100, (settings.requestTimeoutSeconds * 1000) / 4));

function defaultDependencies(settings: Settings, runtime: RuntimeProbes): Record<string, Probe> {
  return {
    model_runtime: runtime.model_runtime,
    model: runtime.model,
    search_engine: httpProbe(`${settings.searchEngineUrl}/healthz`),
  };
}

async function sandboxFacts(settings: Settings, probes: SandboxProbes): Promise<Record<string, string>> {
  // 'bubblewrap', 'unavailable' (shell tools refuse) or 'disabled' (SANDBOX_ENABLED=false);
  // bash_network 'host' says bash reaches the host's loopback services too; 'own' that it does not.
  const sandbox = await probes.detect(settings);
  // ripgrep (else the slower JavaScript search) and git (checkpoints), looked for where the tools look.
  const found = (name: string): string => (locateProgram(name, process.env.PATH ?? '') === undefined ? 'missing' : 'ok');
  return { sandbox: sandbox.state, bash_network: bashNetwork(settings, sandbox), ripgrep: found('rg'), git: found('git') };
}

function databaseProbe(conversations: ConversationService): Probe {
  return async () => {
    try {
      await conversations.ping();
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
      new TooManyRequestsError(`Rate limit exceeded: ${context.max} requests per minute. Retry in ${context.after}.`, Math.ceil(context.ttl / 1000)),
  });
}

/** The whole HTTP application, not listening: tests inject requests, main.ts listens. */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const { settings } = deps;
  const sandboxProbes = deps.toolHost?.sandboxes ?? new SandboxProbes();
  const localMode = !deps.users.keyed;
  // TRUST_PROXY: the peers whose X-Forwarded-For names the client (request.ip) for every limit and log line.
  const trustedProxy = settings.trustProxy.length === 0 ? undefined : addressRanges(settings.trustProxy);
  const connections = new ConnectionGuard(settings.maxConnectionsPerAddress, settings.maxConnections, trustedProxy);
  const requestTimeoutMs = Math.round(settings.requestTimeoutSeconds * 1000);
  const app = Fastify({
    loggerInstance: deps.logger ?? createLogger(settings),
    logController: new RequestLog(),
    bodyLimit: settings.maxBodyBytes,
    return503OnClosing: true,
    // Fastify takes the right-most address of X-Forwarded-For that is not a trusted proxy's.
    ...(trustedProxy === undefined ? {} : { trustProxy: (address: string) => trustedProxy(address) }),
    requestTimeout: requestTimeoutMs,
    keepAliveTimeout: Math.round(settings.keepAliveTimeoutSeconds * 1000),
    // Long ids reach the routes (and get their 404) instead of the router's own error.
    routerOptions: { maxParamLength: MAX_HEADER_BYTES },
    // Node's own answer to a missing Host has no body; the host guard answers it with a detail.
    http: { requireHostHeader: false, maxHeaderSize: MAX_HEADER_BYTES, headersTimeout: requestTimeoutMs, connectionsCheckingInterval: checkingIntervalMs(settings) },
    clientErrorHandler: connections.onClientError,
    frameworkErrors: answerFrameworkError,
  }).withTypeProvider<ZodTypeProvider>();
  connections.attach(app.server);
  app.server.on('connect', refuseTunnel);
  app.server.on('checkExpectation', refuseExpectation);
  // Only JSON bodies: a text/plain one is what a cross-site form or sendBeacon can send without
  // a CORS preflight, and Fastify would parse it and run a route whose body is optional.
  app.removeContentTypeParser('text/plain');
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  // Keyed users must not learn where the runtime and search engine live; the owner in local mode may.
  const filter = localMode ? showAddresses : addressFilter([settings.llmBaseUrl, settings.searchEngineUrl]);
  installErrorHandling(app, filter);
  forbidFraming(app);
  closeConnectionsWhenDraining(app);
  declareCaller(app);
  const metrics = deps.metrics ?? new ServiceMetrics();
  const models = deps.models;
  recordRequestMetrics(app, metrics);
  guardHostAndOrigin(app, { localMode, allowedHosts: settings.allowedHosts, corsOrigins: settings.corsOrigins });
  allowOmittedBodies(app);
  normalizeBodyText(app);
  await app.register(fastifyCookie);

  if (settings.corsOrigins.length > 0) {
    await app.register(fastifyCors, {
      origin: settings.corsOrigins.includes('*') ? true : settings.corsOrigins,
      credentials: settings.corsAllowCredentials,
      methods: settings.corsAllowMethods,
      allowedHeaders: settings.corsAllowHeaders,
    });
  }
  await registerOpenApi(app, VERSION, localMode, settings.llmModel);

  // Given probes (tests) replace the runtime's; one listing answers `model` and names what it lacks.
  const runtime = deps.probes?.dependencies === undefined ? runtimeProbes(settings) : undefined;
  const unlistedModels = deps.probes?.unlistedModels ?? runtime?.unlisted;
  await app.register(healthRoutes, {
    version: VERSION,
    database: databaseProbe(deps.conversations),
    dependencies: deps.probes?.dependencies ?? defaultDependencies(settings, runtime!),
    ...(unlistedModels === undefined ? {} : { unlistedModels }),
    facts: deps.probes?.facts ?? (() => sandboxFacts(settings, sandboxProbes)),
    ...(models === undefined ? {} : { model: () => toModelInfo(models.get().runtime.current()), missingModels: () => missingModels(models, filter) }),
    tenancy: () => deps.users.tenancy(),
  });

  const auth = new Authenticator(settings.apiKeys, deps.users);
  const failures = new CredentialFailures(
    new AuthFailureLimiter(undefined, undefined, (client) => {
      // Not awaited: the request that crossed the limit gets its 401 now; a failure to record is logged.
      deps.audit
        .append({ at: new Date(), actor: SYSTEM_ACTOR, action: 'auth.locked', target: `client:${client}`, detail: { client } })
        .catch((error: unknown) => app.log.warn({ err: error }, 'could not record auth.locked in the audit log'));
    }),
  );
  await app.register(metricsRoutes, { metrics, localMode: auth.localMode, token: settings.metricsToken, failures });
  const { sessions } = deps;
  await app.register(sessionRoutes, { auth, sessions, failures });
  await app.register(consoleRoutes, deps.consoleDir === undefined ? {} : { dir: deps.consoleDir });
  const ping = deps.pingIntervalMs === undefined ? {} : { pingIntervalMs: deps.pingIntervalMs };
  const messageLimits = { tokens: settings.maxMessageTokens, bytes: settings.maxMessageBytes };
  await app.register(async (scope) => {
    // Before the caller is known, so that a 401 or 429 is not stored either.
    forbidStoring(scope);
    requireCaller(scope, auth, failures, sessionCaller(auth, sessions));
    await registerRateLimit(scope, settings.rateLimitPerMinute);
    await scope.register(agentCatalogueRoutes);
    if (models !== undefined) await scope.register(modelRoutes, { models });
    await scope.register(agentRunRoutes, { engine: deps.engine, runs: deps.runs, approvals: deps.approvals, messageLimits, filter, ...ping });
    await scope.register(conversationRoutes, { conversations: deps.conversations, messageLimits });
    const gates = deps.approvals.gates.bind(deps.approvals);
    const turns = new ConversationTurns({ runs: deps.runs, turns: deps.turns, conversations: deps.conversations, engine: deps.engine, gates });
    await scope.register(conversationTurnRoutes, { turns, runs: deps.runs, messageLimits, ...ping });
    await scope.register(runRoutes, { runs: deps.runs, engine: deps.engine, approvals: deps.approvals, messageLimits, ...ping });
    await scope.register(approvalRoutes, { approvals: deps.approvals, ...ping });
    await scope.register(checkpointRoutes, { runs: deps.runs, checkpoints: deps.checkpoints });
    await scope.register(userRoutes, { users: deps.users });
    await scope.register(webhookRoutes, { webhooks: deps.webhooks });
    await scope.register(auditRoutes, { audit: deps.audit });
    await scope.register(mcpRoutes, { engine: deps.engine, runs: deps.runs, approvals: deps.approvals, messageLimits, filter });
  });
  return app;
}
