import type { AgentEngine } from '../agents/engine.js';
import type { ApprovalGate } from '../tools/tool.js';
import type { RunFrame, RunJob } from './run-service.js';
import type { RunRecord } from '../db/run-repository.js';
import { modeOf } from './mode.js';

/** The run's approval gate, made once the run can emit events (approval-service.ts). */
export type GateFactory = (emit: (frame: RunFrame) => void) => ApprovalGate;

/**
 * A run of an agent on a prompt (`POST /runs`, `/agents/run`, `/agents/stream`). Blocking runs
 * make non-streaming model calls, as the legacy contract says; everything else streams.
 */
export function agentJob(engine: AgentEngine, run: RunRecord, streaming: boolean, gate?: GateFactory): RunJob {
  return {
    async execute({ signal, emit, usage, beforeModify, log }) {
      const response = await engine.run({
        agentType: run.agentType,
        prompt: run.prompt,
        workingDir: run.workingDir,
        mode: modeOf(run.mode),
        signal,
        streaming,
        emit,
        usage,
        ...(gate ? { approvalGate: gate(emit) } : {}),
        ...(beforeModify ? { beforeModify } : {}),
        log,
      });
      return { response, done: { event: 'done', mode: run.mode } };
    },
  };
}
