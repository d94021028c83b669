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

export interface ApprovalRoutesOptions {
  approvals: ApprovalService;
}

const tags = ['approvals'];
const security = [{ ApiKey: [] }];

export const approvalRoutes: FastifyPluginAsyncZod<ApprovalRoutesOptions> = async (app, { approvals }) => {
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
