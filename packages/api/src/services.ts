import { join } from 'node:path';
import { AgentEngine, type EngineDeps } from './agents/engine.js';
import { ExpirySweeper } from './conversations/expiry-sweeper.js';
import { ConversationService } from './conversations/service.js';
import { ConsoleSessions } from './users/console-sessions.js';
import { TurnService } from './conversations/turn-service.js';
import { openRepository } from './db/open.js';
import type { ConversationRepository } from './db/repository.js';
import { observeModel } from './metrics/observe-model.js';
import { observeToolSource, observeTools } from './metrics/observe-tools.js';
import { ServiceMetrics } from './metrics/service-metrics.js';
import { ModelCatalogue, openModelCatalogue, runtimeUnreachable, type ModelClient } from './model/index.js';
import type { Settings } from './settings.js';
import { createToolRegistry } from './tools/registry.js';
import type { Log } from './util/log.js';
import { createToolHost, type ToolHost } from './tools/tool-host.js';
import { hostNetworkWarning } from './tools/sandbox/network-reach.js';
import { hiddenPathsFor, toolPathSandbox } from './tool-paths.js';
import { addressFilter, showAddresses, type AddressFilter } from './util/address-hiding.js';
import { asDatabaseUnavailable } from './db/unavailable.js';
import { errorMessage } from './util/error-message.js';
import { loggableError } from './util/loggable-error.js';
import { LocalEventBus, PostgresEventBus, type RunEventBus } from './runs/event-bus.js';
import { RunQueue } from './runs/run-queue.js';
import { RunService } from './runs/run-service.js';
import { RunSweeper } from './runs/run-sweeper.js';
import { ApprovalService } from './approvals/approval-service.js';
import { ApprovalRuleSet } from './tools/sandbox/command-policy/index.js';
import { CheckpointService } from './checkpoints/checkpoint-service.js';
import { sqliteRuntimeWarning } from './db/sqlite-runtime.js';
import { StoredKeyCache } from './users/key-cache.js';
import { UserDirectory } from './users/user-directory.js';
import { openWorkspaces } from './users/workspace-paths.js';
import { AuditLog } from './audit/audit-log.js';
import { SYSTEM_ACTOR } from './db/audit-repository.js';
import { revertedEntry } from './checkpoints/audit-entry.js';
import { VERSION } from './version.js';
import { WorkspaceSandboxes } from './workspace-sandboxes.js';
import { McpConnections } from './mcp/connections.js';
import { McpToolSource } from './mcp/tool-source.js';
import type { ToolSource } from './tools/tool.js';
import { WebhookService } from './webhooks/webhook-service.js';
import { WebhookDispatcher } from './webhooks/dispatcher.js';
import { HostResolver } from './webhooks/host-resolver.js';

export interface Services {
  conversations: ConversationService;
  /** The configured models and what the runtime says of each: window, tool-call mode (`/models`, `/health`). */
  models: ModelCatalogue;
  engine: AgentEngine;
  turns: TurnService;
  metrics: ServiceMetrics;
  runs: RunService;
  approvals: ApprovalService;
  checkpoints: CheckpointService;
  /** What the tools found of this machine at start-up; `/health` reports the sandbox from it. */
  toolHost: ToolHost;
  /** Users of API_KEYS and of the database, their keys; whether the service is keyed. */
  users: UserDirectory;
  /** The hash-chained audit log: read and verified by admins. */
  audit: AuditLog;
  /** The browser console's sign-ins, stored in the database. */
  sessions: ConsoleSessions;
  /** Users' webhooks; their deliveries are sent by a dispatcher this object owns. */
  webhooks: WebhookService;
  close(): Promise<void>;
}

const SWEEP_INTERVAL_MS = 5 * 60_000;


export interface ServiceOptions {
  /** Where relative working directories (`.`) start: the service's start directory. */
  startDir?: string;
  /** Replaces the configured model runtime (benchmarks). */
  model?: ModelClient;
  /** An already open repository (tests); it is left open on close(). */
  repository?: ConversationRepository;
  now?: () => Date;
  /**
   * A host that has already probed this machine (tests open hundreds of services in one process,
   * and each probe starts a sandbox); by default each service probes for itself.
   */
  toolHost?: ToolHost;
}

/** Keyed users do not learn where the runtime and search engine live; the owner in local mode may. */
const addressFilterFor = (settings: Settings, keyed: boolean): AddressFilter =>
  keyed ? addressFilter([settings.llmBaseUrl, settings.searchEngineUrl]) : showAddresses;

/**
 * The engine, its models' clients and its tools report what they do into `metrics`. A bare
 * client is served as LLM_MODEL with LLM_NUM_CTX and native tool calls (benchmarks).
 */
export function createEngine(
  settings: Settings,
  models: ModelCatalogue | ModelClient,
  startDir: string,
  metrics: ServiceMetrics,
  toolHost: ToolHost,
  keyed = settings.apiKeys.length > 0,
  toolSource?: ToolSource,
): AgentEngine {
  const catalogue =
    models instanceof ModelCatalogue ? models : ModelCatalogue.single(models, { name: settings.llmModel, contextWindow: settings.llmNumCtx, toolCalls: 'native' });
  const deps: EngineDeps = {
    models: catalogue.mapClients((client, name) => observeModel(client, metrics, name)),
    tools: observeTools(createToolRegistry(), metrics),
    sandbox: toolPathSandbox(settings, startDir),
    toolSettings: settings,
    toolHost,
    limits: { maxSteps: settings.agentMaxSteps, toolTimeoutSeconds: settings.toolTimeoutSeconds },
    startDir,
    approvalRules: new ApprovalRuleSet(settings.approvalRules),
    hideAddresses: addressFilterFor(settings, keyed),
    ...(toolSource === undefined ? {} : { toolSource: observeToolSource(toolSource, metrics) }),
    ...(settings.agentsMd ? { instructionsMaxBytes: settings.agentsMdMaxBytes } : {}),
  };
  return new AgentEngine(deps);
}

/** Says at start-up when shell tools will refuse, run under the text policy alone, or reach the host's loopback. */
async function logSandboxState(settings: Settings, toolHost: ToolHost, log: Log): Promise<void> {
  const sandbox = await toolHost.sandboxes.detect(settings);
  if (sandbox.state === 'disabled') log.warn({ sandbox: sandbox.state }, 'SANDBOX_ENABLED=false: tool processes run without the operating-system sandbox (text policy only)');
  if (sandbox.state === 'unavailable') log.warn({ sandbox: sandbox.state, reason: sandbox.reason }, 'the sandbox is not available: bash_readonly and bash will refuse to run');
  const network = hostNetworkWarning(settings, sandbox);
  if (network !== undefined) log.warn({ sandbox: sandbox.state, bash_network: 'host' }, network);
}

/**
 * What a failed run tells its user: never SQL or statement parameters, and for keyed users no
 * internal address of the runtime or search engine (the log keeps the whole error).
 */
function runFailureText(settings: Settings, keyed: boolean): (error: unknown) => string {
  const hide = addressFilterFor(settings, keyed);
  return (error) => {
    const unavailable = asDatabaseUnavailable(error);
    if (unavailable) return unavailable.message;
    const text = loggableError(error).type === 'DatabaseError' ? 'Internal error while storing the run' : errorMessage(error);
    return hide(text);
  };
}

async function openEventBus(settings: Settings, log: Log): Promise<RunEventBus> {
  if (settings.database.dialect !== 'postgres') return new LocalEventBus();
  const bus = new PostgresEventBus(settings.database.url, log);
  await bus.start();
  return bus;
}

/** Everything the routes need that holds resources: opened at start-up, closed at shutdown. */
export async function openServices(settings: Settings, log: Log, options: ServiceOptions = {}): Promise<Services> {
  const repository =
    options.repository ??
    (await openRepository(settings.database, {
      // The statement only: its parameters are users' messages and ids, which logs never carry.
      ...(settings.debug ? { logStatement: (entry) => log.info({ sql: entry.sql }, 'sql') } : {}),
    }));
  const now = options.now ?? (() => new Date());
  // Decided once: keyed with API_KEYS or any stored user, local mode otherwise (TEAMS.md section 8).
  const keyed = settings.apiKeys.length > 0 || (await repository.users.countUsers()) > 0;
  const users = new UserDirectory({
    store: repository.users,
    keys: new StoredKeyCache(repository.users, (error) => log.warn({ err: error }, 'could not record a key as used')),
    configuredUsers: [...new Set(settings.apiKeys.map((key) => key.userId))],
    adminUsers: settings.adminUsers,
    keyed,
    workspaces: await openWorkspaces(settings),
    defaultQuotas: { maxConcurrentRuns: settings.maxRunsPerUser, maxRunsPerDay: settings.maxRunsPerDay, maxTokensPerDay: settings.maxTokensPerDay },
    now,
  });
  const models = openModelCatalogue(settings, {
    // One line with the fix, no stack: a runtime not started yet is the usual first-hour state.
    onError: (error) => log.warn({}, runtimeUnreachable(settings, error)),
    onChange: (info) =>
      info.missing === undefined ? log.info({ model: info }, 'model runtime introspected') : log.warn({ model: info }, 'the model runtime does not have this model'),
    // A run's own logger when the call is a run's: the line then carries its run_id.
    onRetry: (error, attempt, delayMs, callLog) => (callLog ?? log).warn({ err: error, attempt, delayMs }, 'model runtime call retried'),
    ...(options.model ? { client: options.model } : {}),
  });
  // Awaited, but never fails: a runtime that is down leaves LLM_NUM_CTX in place until it answers.
  await models.start();
  const metrics = new ServiceMetrics();
  // Probed once here, for every run: the sandbox, the toolchains it shows, the search backend; and
  // one gitlink guard for the service's life: what it remembers of the gitlinks it took out must outlive each run.
  // Replicas on one PostgreSQL database take their first repository censuses only while none of the
  // others' bash commands runs under an overlapping path (tools/sandbox/census-coordinator.ts).
  const toolHost = options.toolHost ?? createToolHost({ sandboxActivity: repository.sandboxActivity });
  const startDir = options.startDir ?? process.cwd();
  // MCP servers start on a user's first run that needs them, never here (TEAMS.md section 12).
  const mcp =
    settings.mcpServers.length === 0
      ? undefined
      : new McpConnections({ tools: settings, idleSeconds: settings.mcpIdleSeconds, startTimeoutSeconds: settings.mcpStartTimeoutSeconds }, toolHost, log);
  if (mcp !== undefined) log.info({ mcp_servers: settings.mcpServers.map((server) => server.name) }, 'MCP servers configured');
  const toolSource = mcp === undefined ? undefined : new McpToolSource(settings.mcpServers, mcp, log);
  const engine = createEngine(settings, models, startDir, metrics, toolHost, keyed, toolSource);
  // Every check that once used ALLOWED_PATHS asks here for the user's own workspace.
  const workspaces = new WorkspaceSandboxes(users, settings, startDir);
  const conversations = new ConversationService(repository, {
    sessionTtlHours: settings.sessionTtlHours,
    maxConversationsPerUser: settings.maxConversationsPerUser,
    checkWorkingDir: async (dir, userId) => void engine.workingDirectory(dir, await workspaces.of(userId)),
    resolveModel: (name) => engine.model(name),
    now,
  });
  await logSandboxState(settings, toolHost, log);
  const sqliteWarning = settings.database.dialect === 'sqlite' ? sqliteRuntimeWarning(process.versions.node) : undefined;
  if (sqliteWarning !== undefined) log.warn({ node: process.versions.node }, sqliteWarning);
  const turns = new TurnService(conversations, repository, settings, now);
  const sweeper = new ExpirySweeper(
    conversations,
    SWEEP_INTERVAL_MS,
    (error) => log.error({ err: error }, 'expiry sweep failed'),
    (count) => count > 0 && log.info({ count }, 'expired conversations deleted'),
  );
  sweeper.start();
  const bus = await openEventBus(settings, log);
  // Deliveries left pending by a stopped service (this one, or a replica) are sent from here on.
  // One cap on webhook hosts' name lookups for the routes and the sender: they share libuv's pool with every file operation.
  const resolver = new HostResolver();
  const dispatcher = new WebhookDispatcher({
    store: repository.webhooks,
    resolver,
    allowPrivate: settings.webhookAllowPrivate,
    retryBaseMs: settings.webhookRetryBaseSeconds * 1000,
    userAgent: `mada/${VERSION}`,
    now,
    log,
  });
  const webhooks = new WebhookService({ store: repository.webhooks, resolver, allowPrivate: settings.webhookAllowPrivate, now });
  // Runs' ends and approvals store their deliveries in their own transactions; the sender hears after the commit.
  const stopWaking = repository.webhooks.onDeliveriesStored(dispatcher.notify);
  const checkpoints = new CheckpointService({
    root: join(settings.dataDir, 'checkpoints'),
    maxFileBytes: settings.checkpointMaxFileBytes,
    excludedPaths: hiddenPathsFor(settings, startDir),
    workspaces,
    sandbox: { enabled: settings.sandboxEnabled, memoryMb: settings.sandboxMemoryMb, maxProcesses: settings.sandboxMaxProcesses },
    floor: settings,
    log,
    // Only the run's owner may revert it (RunService.get), so the owner is the actor.
    onReverted: (run, paths) => repository.audit.append(revertedEntry(run, paths, now())).then(() => undefined),
  });
  const runs = new RunService({
    store: repository.runs,
    bus,
    queue: new RunQueue({ maxConcurrent: settings.maxConcurrentRuns, maxPerUser: settings.maxRunsPerUser }),
    workspaces,
    quotasOf: (userId) => users.quotasOf(userId),
    isDisabled: (userId) => users.isDisabled(userId),
    maxQueuedPerUser: settings.maxQueuedRunsPerUser,
    leaseMs: settings.runLeaseSeconds * 1000,
    retentionHours: settings.runRetentionHours,
    now,
    checkpoints,
    log,
    describeFailure: runFailureText(settings, keyed),
    metrics,
  });
  // Deleting a conversation cancels its running turn (model call aborted, child processes ended).
  conversations.onDeleted((id) => runs.cancelConversationRuns(id));
  users.onDisabled((id) => runs.cancelUserRuns(id));
  const stopCountingQueued = metrics.countQueuedRuns(() => runs.queued);
  // One SQLite process: whatever it left unfinished died with it. Replicas wait for leases to run out.
  const recovered = await runs.recoverInterrupted(repository.dialect === 'sqlite' ? 'all' : 'expired');
  if (recovered > 0) log.warn({ count: recovered }, 'runs of a stopped service marked interrupted');
  // End snapshots of interrupted runs, refs of runs deleted while the service was down.
  const sweepCheckpoints = (): Promise<void> => checkpoints.sweep((id) => repository.runs.viewRun(id));
  await sweepCheckpoints();
  const runSweeper = new RunSweeper(runs, {
    recoveryIntervalMs: Math.max(1000, (settings.runLeaseSeconds * 1000) / 2),
    retentionIntervalMs: SWEEP_INTERVAL_MS,
    onError: (error) => log.error({ err: error }, 'run sweep failed'),
    onRecovered: (count) => log.warn({ count }, 'runs whose service stopped marked interrupted'),
    afterSweep: sweepCheckpoints,
  });
  runSweeper.start();
  const approvals = new ApprovalService({
    store: repository.approvals,
    runs: repository.runs,
    bus,
    timeoutMs: settings.approvalTimeoutSeconds * 1000,
    now,
  });
  metrics.countPendingApprovals(() => approvals.waiting);
  const sessions = new ConsoleSessions(repository.consoleSessions, settings.consoleSessionHours * 3_600_000, () => now().getTime());
  sessions.startSweeping((error) => log.error({ err: error }, 'console session sweep failed'));
  const audit = new AuditLog(repository.audit);
  const serviceDetail = { version: VERSION, database: repository.dialect, keyed };
  await audit.append({ at: now(), actor: SYSTEM_ACTOR, action: 'service.started', target: null, detail: serviceDetail });
  dispatcher.start();
  return {
    webhooks,
    audit,
    approvals,
    conversations,
    models,
    engine,
    turns,
    metrics,
    runs,
    checkpoints,
    toolHost,
    users,
    sessions,
    async close() {
      sessions.stopSweeping();
      await runSweeper.stop();
      await runs.close();
      // The run_ended of runs just interrupted were stored with their ends; the next service sends what this one did not.
      stopWaking();
      await dispatcher.close();
      await mcp?.closeAll();
      // A host the caller passed in is the caller's to close.
      if (options.toolHost === undefined) await toolHost.gitlinks.close();
      stopCountingQueued();
      await sweeper.stop();
      await models.stop();
      await bus.close();
      // A database already gone must not keep the rest from closing: the log says what was lost.
      await audit
        .append({ at: now(), actor: SYSTEM_ACTOR, action: 'service.stopped', target: null, detail: serviceDetail })
        .catch((error: unknown) => log.warn({ err: error }, 'could not record service.stopped in the audit log'));
      if (!options.repository) await repository.close();
    },
  };
}
