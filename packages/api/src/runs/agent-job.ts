import type { AgentEngine } from '../agents/engine.js';
import type { GateFactory, RunJob } from './run-service.js';
import type { RunRecord } from '../db/run-repository.js';
import { modeOf } from './mode.js';

export type { GateFactory };

/**
 * A run of an agent on a prompt (`POST /runs`, `/agents/run`, `/agents/stream`). Blocking runs
 * make non-streaming model calls, as the legacy contract says; everything else streams.
 */
export function agentJob(engine: AgentEngine, run: RunRecord, streaming: boolean, gate?: GateFactory): RunJob {
  return {
    ...(gate ? { gate } : {}),
    async execute(context) {
      const mode = modeOf(run.mode);
      const task = { agentType: run.agentType, prompt: run.prompt, workingDir: run.workingDir, mode, streaming, ...(run.model === null ? {} : { model: run.model }) };
      const response = await engine.execute(task, context);
      return { response, done: { event: 'done', mode } };
    },
  };
}
