import { AgentEngine, type EngineDeps, type RunOptions } from '../agents/engine.js';
import { emptyUsage } from '../agents/run-usage.js';
import { InterruptSignal } from '../runs/run-service.js';
import type { RunStatus, ServiceMetrics } from './service-metrics.js';

/**
 * The engine, counting its runs. A run started from inside another (spawn_agent) is part of
 * that run and is not counted again: the engine starts those through `runSubAgent`, which is not
 * observed. (An AsyncLocalStorage told them apart before; on Node 20 each one in use adds work
 * to every promise the process creates, several per streamed token.)
 */
export class ObservedEngine extends AgentEngine {
  constructor(
    deps: EngineDeps,
    private readonly metrics: ServiceMetrics,
  ) {
    super(deps);
  }

  override async run(options: RunOptions): Promise<string> {
    // Refusals (unknown agent, working directory not allowed) happen before a run starts: they
    // are not runs, and only defined agent names ever become labels.
    const agent = this.agent(options.agentType).name;
    const loop = this.prepare(options, options.usage ?? emptyUsage());
    return this.measure(agent, options, () => this.start(loop, options.signal));
  }

  private async measure(agent: string, options: RunOptions, run: () => Promise<string>): Promise<string> {
    const started = performance.now();
    const end = (status: RunStatus): void => {
      this.metrics.runsActive.dec({ agent });
      this.metrics.runEnded(agent, status, (performance.now() - started) / 1000);
    };
    this.metrics.runsActive.inc({ agent });
    try {
      const answer = await run();
      end('succeeded');
      return answer;
    } catch (error) {
      end(options.signal.aborted ? abortStatus(options.signal.reason) : 'failed');
      throw error;
    }
  }
}

/** A run stopped by shutdown ends `interrupted`, one stopped by a user or a gone client `cancelled`. */
const abortStatus = (reason: unknown): RunStatus => (reason instanceof InterruptSignal ? 'interrupted' : 'cancelled');
