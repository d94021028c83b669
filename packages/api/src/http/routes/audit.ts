import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { AuditListResponse, AuditQuery, AuditVerifyResponse, ErrorResponse, ValidationErrorResponse } from '@mada/protocol';
import type { AuditLog, AuditView } from '../../audit/audit-log.js';
import { AdminOnlyError } from '../../users/errors.js';

export interface AuditRoutesOptions {
  audit: AuditLog;
}

const security = [{ ApiKey: [] }];

const toEntry = (entry: AuditView) => ({ ...entry, at: entry.at.toISOString() });

/** The audit log, for admins only (TEAMS.md section 10). */
export const auditRoutes: FastifyPluginAsyncZod<AuditRoutesOptions> = async (app, { audit }) => {
  const schema = { tags: ['audit'], security };

  // Before validation: a member learns nothing of the log, not even which parameters it takes.
  app.addHook('preValidation', async (request) => {
    if (request.caller.role !== 'admin') throw new AdminOnlyError();
  });

  app.get(
    '/audit',
    {
      schema: {
        ...schema,
        summary: 'Audit entries in seq order, after `after`, optionally of one actor or action',
        querystring: AuditQuery,
        response: { 200: AuditListResponse, 403: ErrorResponse, 422: ValidationErrorResponse },
      },
    },
    async (request) => {
      const { after, limit, actor, action } = request.query;
      const page = await audit.list({ after, limit, actor, action });
      return { entries: page.entries.map(toEntry), next_after: page.nextAfter };
    },
  );

  app.get(
    '/audit/verify',
    {
      schema: {
        ...schema,
        summary: 'Recompute the hash chain: ok false names the first entry changed or removed by hand',
        response: { 200: AuditVerifyResponse, 403: ErrorResponse },
      },
    },
    async () => {
      const result = await audit.verify();
      return { ok: result.ok, entries: result.entries, first_bad_seq: result.firstBadSeq };
    },
  );
};
