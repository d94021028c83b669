import { join } from 'node:path';
import { AgentEngine } from './agents/engine.js';
import { ExpirySweeper } from './conversations/expiry-sweeper.js';
import { ConversationService } from './conversations/service.js';
import { TurnService } from './conversations/turn-service.js';
import { openRepository } from './db/open.js';
import type { ConversationRepository } from './db/repository.js';
import { createModelClient, type ModelClient } from './model/index.js';
import type { Settings } from './settings.js';
import { createToolRegistry } from './tools/registry.js';
import { PathSandbox } from './tools/sandbox/paths.js';

export interface Services {
  conversations: ConversationService;
  engine: AgentEngine;
  turns: TurnService;
  close(): Promise<void>;
}

const SWEEP_INTERVAL_MS = 5 * 60_000;

interface Log {
  info(object: object, message: string): void;
  warn(object: object, message: string): void;
  error(object: object, message: string): void;
}

export interface ServiceOptions {
  /** Where relative working directories (`.`) start: the service's start directory. */
  startDir?: string;
  /** Replaces the configured model runtime (benchmarks). */
  model?: ModelClient;
  /** An already open repository (tests); it is left open on close(). */
  repository?: ConversationRepository;
  now?: () => Date;
}

export function createEngine(settings: Settings, model: ModelClient, startDir: string): AgentEngine {
  return new AgentEngine({
    model,
    tools: createToolRegistry(),
    // The .env main.ts reads at start-up: no agent may rewrite the service's settings.
    sandbox: new PathSandbox(settings.allowedPaths, [join(startDir, '.env')]),
    toolSettings: settings,
    limits: { maxSteps: settings.agentMaxSteps, contextTokens: settings.llmNumCtx, toolTimeoutSeconds: settings.toolTimeoutSeconds },
    startDir,
  });
}

/** Everything the routes need that holds resources: opened at start-up, closed at shutdown. */
export async function openServices(settings: Settings, log: Log, options: ServiceOptions = {}): Promise<Services> {
  const repository =
    options.repository ??
    (await openRepository(settings.database, {
      ...(settings.debug ? { logStatement: (entry) => log.info(entry, 'sql') } : {}),
    }));
  const now = options.now ?? (() => new Date());
  const conversations = new ConversationService(repository, { sessionTtlHours: settings.sessionTtlHours, now });
  const model =
    options.model ??
    createModelClient(settings, { onRetry: (error, attempt, delayMs) => log.warn({ err: error, attempt, delayMs }, 'model runtime call retried') });
  const engine = createEngine(settings, model, options.startDir ?? process.cwd());
  const turns = new TurnService(
    conversations,
    settings,
    (invocation) =>
      engine.run({
        ...invocation,
        streaming: invocation.onFrame !== undefined,
        ...(invocation.onFrame ? { emit: invocation.onFrame } : {}),
      }),
    now,
  );
  const sweeper = new ExpirySweeper(
    conversations,
    SWEEP_INTERVAL_MS,
    (error) => log.error({ err: error }, 'expiry sweep failed'),
    (count) => count > 0 && log.info({ count }, 'expired conversations deleted'),
  );
  sweeper.start();
  return {
    conversations,
    engine,
    turns,
    async close() {
      await sweeper.stop();
      if (!options.repository) await repository.close();
    },
  };
}
