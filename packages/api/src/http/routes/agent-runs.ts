import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { AgentRunRequest, AgentRunResponse, AgentStreamFrame, ErrorResponse, ValidationErrorResponse } from '@mada/protocol';
import type { AgentEngine } from '../../agents/engine.js';
import type { ApprovalService } from '../../approvals/approval-service.js';
import { agentJob } from '../../runs/agent-job.js';
import type { RunService } from '../../runs/run-service.js';
import type { AddressFilter } from '../../util/address-hiding.js';
import { awaitRun, streamLegacyRun } from '../legacy-run.js';
import { assertMessageFits, type MessageLimits } from '../message-limit.js';

export interface AgentRunRoutesOptions {
  engine: AgentEngine;
  runs: RunService;
  messageLimits: MessageLimits;
  /** What error texts may show of internal addresses. */
  filter: AddressFilter;
  approvals: ApprovalService;
  pingIntervalMs?: number;
}

const tags = ['agents'];
const security = [{ ApiKey: [] }];

export const agentRunRoutes: FastifyPluginAsyncZod<AgentRunRoutesOptions> = async (app, { engine, runs, approvals, messageLimits, filter, pingIntervalMs }) => {
  /**
   * Checks a request the way both routes do (400/413 before anything is stored) and stores its run.
   * A streamed run waits for the user's answer to an ask; nobody watches a blocking one, so its
   * asks are denied at once (on_ask=deny).
   */
  const start = async (userId: string, body: AgentRunRequest, streamed: boolean) => {
    const { agent_type, prompt, working_dir, mode } = body;
    await assertMessageFits(prompt, messageLimits);
    engine.agent(agent_type);
    const model = engine.model(body.model);
    const workspace = await runs.workspaceOf(userId);
    const workingDir = engine.workingDirectory(working_dir, workspace);
    const { run } = await runs.start({ userId, agentType: agent_type, prompt, workingDir, workspace, mode, model }, (stored) =>
      agentJob(engine, stored, streamed, approvals.gates(stored, streamed ? 'wait' : 'deny')),
    );
    return run;
  };

  app.post(
    '/agents/run',
    {
      schema: {
        tags,
        security,
        summary: 'Run an agent to completion (blocking)',
        description: [
          'Failures during the run answer 200 with `success: false`, an empty `response` and `error`.',
          'The run is stored like those of POST /runs; its id is in the `X-Run-Id` header. Closing the connection cancels it;',
          'so does the key (or console session) being revoked meanwhile, which answers 401 `Invalid API key`.',
        ].join(' '),
        body: AgentRunRequest,
        response: { 200: AgentRunResponse, 400: ErrorResponse, 413: ErrorResponse, 422: ValidationErrorResponse, 429: ErrorResponse, 503: ErrorResponse },
      },
    },
    async (request, reply) => {
      const { agent_type, mode } = request.body;
      const run = await start(request.caller.userId, request.body, false);
      const ended = await awaitRun(runs, reply, run);
      if (ended.status === 'succeeded') return { response: ended.response ?? '', agent_type, mode, success: true };
      return { response: '', agent_type, mode, success: false, error: filter(ended.error ?? 'Run failed') };
    },
  );

  app.post(
    '/agents/stream',
    {
      schema: {
        tags,
        security,
        summary: 'Run an agent and stream its progress as Server-Sent Events',
        description: [
          'Each frame is `data: <JSON>` and a blank line: AgentStreamFrame objects (`tool_start`, `tool_done`, `thinking`,',
          '`response`, `error`, `done`) and, from explore and plan, legacy `{"event":"chunk","data":"..."}` text frames.',
          'Every stream ends with `done` (carrying `mode`) or `error`. A `: ping` comment is sent every 15 s.',
          'The run is stored (its id is in the `X-Run-Id` header); closing the connection cancels it.',
        ].join(' '),
        body: AgentRunRequest,
        produces: ['text/event-stream'],
        response: {
          200: { description: 'text/event-stream of AgentStreamFrame', content: { 'text/event-stream': { schema: AgentStreamFrame } } },
          400: ErrorResponse,
          413: ErrorResponse,
          422: ValidationErrorResponse,
          429: ErrorResponse,
          503: ErrorResponse,
        },
      },
    },
    async (request, reply) => {
      const run = await start(request.caller.userId, request.body, true);
      await streamLegacyRun(runs, reply, run, pingIntervalMs);
    },
  );
};
