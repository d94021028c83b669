import type { Readable } from 'node:stream';
import type { FastifyReply } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import {
  CancelledRunResponse,
  ErrorResponse,
  IdempotencyHeaders,
  ListRunsQuery,
  RunEventsHeaders,
  RunEventsQuery,
  RunListResponse,
  RunParams,
  RunEvent,
  RunResponse,
  StartRunRequest,
  ValidationErrorResponse,
} from '@mada/protocol';
import type { AgentEngine } from '../../agents/engine.js';
import type { ApprovalService } from '../../approvals/approval-service.js';
import { agentJob } from '../../runs/agent-job.js';
import { toRunResponse } from '../../runs/run-response.js';
import type { RunService } from '../../runs/run-service.js';
import { idempotencyOf } from '../idempotency-header.js';
import { assertMessageFits, type MessageLimits } from '../message-limit.js';
import { answerStarted } from '../run-started.js';
import { lastEventId } from '../last-event-id.js';
import { streamRunEvents } from '../run-event-stream.js';
import { hasLargeText, inlineRunResponse, streamedRun, streamedRunList, type RunTexts } from '../streamed-run.js';

export interface RunRoutesOptions {
  runs: RunService;
  engine: AgentEngine;
  approvals: ApprovalService;
  messageLimits: MessageLimits;
  pingIntervalMs?: number;
}

const tags = ['runs'];
const security = [{ ApiKey: [] }];
const ownedErrors = { 403: ErrorResponse, 404: ErrorResponse };

export const runRoutes: FastifyPluginAsyncZod<RunRoutesOptions> = async (app, { runs, engine, approvals, messageLimits, pingIntervalMs }) => {
  const texts: RunTexts = (runId, column) => runs.textSlices(runId, column);

  app.post(
    '/runs',
    {
      schema: {
        tags,
        security,
        summary: 'Start an agent run that outlives this request',
        description: [
          'Answers 202 at once with the stored run (`Location: /runs/{id}`); follow it with GET /runs/{id}/events.',
          'With an `Idempotency-Key` header, the same key and body within 24 h answer 200 with the first run and start nothing.',
        ].join(' '),
        body: StartRunRequest,
        headers: IdempotencyHeaders,
        // 422 is the validation shape, or a detail string for a reused Idempotency-Key.
        response: { 200: RunResponse, 202: RunResponse, 400: ErrorResponse, 413: ErrorResponse, 422: ValidationErrorResponse.or(ErrorResponse), 429: ErrorResponse, 503: ErrorResponse },
      },
    },
    async (request, reply) => {
      const { agent_type, prompt, working_dir, mode, on_ask } = request.body;
      await assertMessageFits(prompt, messageLimits);
      engine.agent(agent_type);
      const model = engine.model(request.body.model);
      const userId = request.caller.userId;
      const workspace = await runs.workspaceOf(userId);
      const workingDir = engine.workingDirectory(working_dir, workspace);
      const started = await runs.start(
        { userId, agentType: agent_type, prompt, workingDir, workspace, mode, model, idempotency: idempotencyOf(request, 'POST /runs') },
        (stored) => agentJob(engine, stored, true, approvals.gates(stored, on_ask)),
      );
      return answerStarted(reply, started);
    },
  );

  app.get(
    '/runs',
    {
      schema: {
        tags,
        security,
        summary: "List the caller's runs, newest first",
        querystring: ListRunsQuery,
        response: { 200: RunListResponse, 422: ValidationErrorResponse },
      },
    },
    async (request, reply) => {
      const { limit, offset, status } = request.query;
      const { items, total } = await runs.list(request.caller.userId, { limit, offset, ...(status ? { status } : {}) });
      if (items.some(hasLargeText)) return sendStreamed(reply, streamedRunList(items, total, texts));
      return { runs: items.map(inlineRunResponse), total };
    },
  );

  app.get(
    '/runs/:run_id',
    {
      schema: { tags, security, summary: 'One run', params: RunParams, response: { 200: RunResponse, ...ownedErrors } },
    },
    async (request, reply) => {
      const run = await runs.get(request.params.run_id, request.caller.userId);
      return hasLargeText(run) ? sendStreamed(reply, streamedRun(run, texts)) : inlineRunResponse(run);
    },
  );

  app.get(
    '/runs/:run_id/events',
    {
      schema: {
        tags,
        security,
        summary: "A run's events as Server-Sent Events: stored ones first, then live ones",
        description: [
          'Each frame is `id: <n>`, `data: <JSON>` and a blank line, n = 1, 2, 3 ... without gaps.',
          'The stream starts after the `Last-Event-ID` header (or `?after=N`), else at the first event,',
          'and closes after the final `done` or `error`. Closing it never cancels the run.',
        ].join(' '),
        params: RunParams,
        querystring: RunEventsQuery,
        headers: RunEventsHeaders,
        produces: ['text/event-stream'],
        response: {
          200: { description: 'text/event-stream of RunEvent, ending with DoneEvent, TurnDoneEvent or ErrorEvent', content: { 'text/event-stream': { schema: RunEvent } } },
          ...ownedErrors,
          422: ValidationErrorResponse,
        },
      },
    },
    async (request, reply) => {
      const run = await runs.get(request.params.run_id, request.caller.userId);
      const after = lastEventId(request.headers['last-event-id'], request.query.after);
      await streamRunEvents(reply, { runs, run, after, withIds: true, ...(pingIntervalMs === undefined ? {} : { pingIntervalMs }) });
    },
  );

  app.post(
    '/runs/:run_id/cancel',
    {
      schema: {
        tags,
        security,
        summary: 'Cancel a run',
        description: [
          'The run stops (model call aborted, every child process ended) and ends `cancelled` with a last `error` event `Run cancelled`.',
          "An admin may cancel any user's run; the answer then carries `prompt` and `response` as null.",
        ].join(' '),
        params: RunParams,
        response: { 202: CancelledRunResponse, ...ownedErrors, 409: ErrorResponse },
      },
    },
    async (request, reply) => {
      const { userId, role } = request.caller;
      const run = await runs.cancel(request.params.run_id, userId, role === 'admin');
      // An admin may stop anyone's run, never read it: another user's prompt and answer stay theirs.
      const answer = run.userId === userId ? toRunResponse(run) : { ...toRunResponse(run), prompt: null, response: null };
      return reply.code(202).send(answer);
    },
  );
};

/** The schemas above document these bodies; a stream goes out as written, past the serializer. */
function sendStreamed(reply: FastifyReply, body: Readable): FastifyReply {
  return reply.type('application/json; charset=utf-8').send(body);
}
