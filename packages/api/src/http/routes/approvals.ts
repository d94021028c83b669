import { setMaxListeners } from 'node:events';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import {
  ApprovalListResponse,
  ApprovalParams,
  ApprovalResponse,
  DecideApprovalRequest,
  ErrorResponse,
  ListApprovalsQuery,
  ValidationErrorResponse,
} from '@mada/protocol';
import { toApprovalResponse } from '../../approvals/approval-response.js';
import type { ApprovalService } from '../../approvals/approval-service.js';
import { streamPendingApprovals } from '../approval-stream.js';

export interface ApprovalRoutesOptions {
  approvals: ApprovalService;
  pingIntervalMs?: number;
}

const tags = ['approvals'];
const security = [{ ApiKey: [] }];

export const approvalRoutes: FastifyPluginAsyncZod<ApprovalRoutesOptions> = async (app, { approvals, pingIntervalMs }) => {
  // The streams never end on their own: closing the service ends them, or its close would wait on them.
  const closing = new AbortController();
  // One listener per open stream: many are expected.
  setMaxListeners(0, closing.signal);
  app.addHook('preClose', async () => closing.abort());

  app.get(
    '/approvals/events',
    {
      schema: {
        tags,
        security,
        summary: "The caller's pending approvals as Server-Sent Events, sent again each time they change",
        description: [
          'Each frame is `data: <JSON>` and a blank line, the JSON as `GET /approvals?status=pending` answers:',
          'the whole list on opening, then again whenever an approval of the caller is asked, answered, expires or ends with its run,',
          'on this replica or another (within about a second; a lost notice within 2 s on PostgreSQL).',
          "Only the caller's own approvals, admins included: only the owner may answer one. A `: ping` comment keeps the connection open; the stream does not end on its own.",
        ].join(' '),
        produces: ['text/event-stream'],
        response: {
          200: { description: 'text/event-stream of ApprovalListResponse frames', content: { 'text/event-stream': { schema: ApprovalListResponse } } },
        },
      },
    },
    async (request, reply) => {
      await streamPendingApprovals(reply, {
        approvals,
        userId: request.caller.userId,
        signal: closing.signal,
        onError: (error) => request.log.warn({ err: error }, 'approval stream ended by an error'),
        ...(pingIntervalMs === undefined ? {} : { pingIntervalMs }),
      });
    },
  );

  app.get(
    '/approvals',
    {
      schema: {
        tags,
        security,
        summary: "The caller's approvals across runs, newest first (`?status=pending`: those waiting for an answer)",
        querystring: ListApprovalsQuery,
        response: { 200: ApprovalListResponse, 422: ValidationErrorResponse },
      },
    },
    async (request) => {
      const { items, total } = await approvals.list(request.caller.userId, request.query.status);
      return { approvals: items.map(toApprovalResponse), total };
    },
  );

  app.post(
    '/approvals/:approval_id',
    {
      schema: {
        tags,
        security,
        summary: 'Answer an approval: the waiting run goes on',
        description: [
          '`approve` runs the call; `deny` gives the agent `Denied by the user: <message>` instead;',
          '`approve_always` also stops asking this user, in this working directory, for what the rule matched.',
        ].join(' '),
        params: ApprovalParams,
        body: DecideApprovalRequest,
        response: { 200: ApprovalResponse, 403: ErrorResponse, 404: ErrorResponse, 409: ErrorResponse, 422: ValidationErrorResponse },
      },
    },
    async (request) => {
      const { decision, message } = request.body;
      return toApprovalResponse(await approvals.decide(request.params.approval_id, request.caller.userId, decision, message));
    },
  );
};
