import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import {
  CreatedKeyResponse,
  CreateKeyRequest,
  CreateUserRequest,
  ErrorResponse,
  KeyListResponse,
  KeyParams,
  MeResponse,
  type QuotaChanges,
  UpdateUserRequest,
  UserDetailResponse,
  UserKeyParams,
  UserListResponse,
  UserParams,
  UserResponse,
  ValidationErrorResponse,
} from '@mada/protocol';
import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { KeyRecord, UserUsage } from '../../db/user-repository.js';
import { AdminOnlyError } from '../../users/errors.js';
import type { QuotaChanges as UserQuotaChanges, Quotas, User, UserDirectory } from '../../users/user-directory.js';

export interface UserRoutesOptions {
  users: UserDirectory;
}

const security = [{ ApiKey: [] }];

const quotasOut = (q: Quotas) => ({ max_concurrent_runs: q.maxConcurrentRuns, max_runs_per_day: q.maxRunsPerDay, max_tokens_per_day: q.maxTokensPerDay });

const quotasIn = (q: QuotaChanges | undefined): UserQuotaChanges => ({
  ...(q?.max_concurrent_runs === undefined ? {} : { maxConcurrentRuns: q.max_concurrent_runs }),
  ...(q?.max_runs_per_day === undefined ? {} : { maxRunsPerDay: q.max_runs_per_day }),
  ...(q?.max_tokens_per_day === undefined ? {} : { maxTokensPerDay: q.max_tokens_per_day }),
});

const toUserResponse = (user: User): UserResponse => ({
  id: user.id,
  role: user.role,
  disabled: user.disabled,
  created_at: user.createdAt?.toISOString() ?? null,
  workspace: { paths: user.workspacePaths },
  quotas: quotasOut(user.quotas),
  source: user.source,
});

const usageOut = (usage: UserUsage) => ({ runs_today: usage.runsToday, tokens_today: usage.tokensToday, running: usage.running, by_model: usage.byModel });

const toKeyResponse = (key: KeyRecord) => ({
  id: key.id,
  name: key.name,
  prefix: key.prefix,
  created_at: key.createdAt.toISOString(),
  expires_at: key.expiresAt?.toISOString() ?? null,
  last_used_at: key.lastUsedAt?.toISOString() ?? null,
  revoked_at: key.revokedAt?.toISOString() ?? null,
});

function requireAdmin(request: FastifyRequest): void {
  if (request.caller.role !== 'admin') throw new AdminOnlyError();
}

/** The caller's own account (`/me*`) and, for admins, everyone's (`/users*`): TEAMS.md section 8. */
export const userRoutes: FastifyPluginAsyncZod<UserRoutesOptions> = async (app, { users }) => {
  const me = { tags: ['me'], security };
  const admin = { tags: ['users'], security };

  app.get(
    '/me',
    {
      schema: {
        ...me,
        summary: 'The caller: role, workspace, quotas and what they used today (UTC)',
        // 409: what stands at the caller's place under WORKSPACES_DIR is a link, a file or not the service's.
        response: { 200: MeResponse, 409: ErrorResponse },
      },
    },
    async (request) => {
      const [user, usage] = await Promise.all([users.get(request.caller.userId), users.usage(request.caller.userId)]);
      return {
        id: user.id,
        role: request.caller.role,
        workspace: { paths: user.workspacePaths },
        quotas: quotasOut(user.quotas),
        usage: usageOut(usage),
      };
    },
  );

  app.get(
    '/me/keys',
    { schema: { ...me, summary: "The caller's stored keys, newest first (revoked ones too)", response: { 200: KeyListResponse, 409: ErrorResponse } } },
    async (request) => ({ keys: (await users.keysOf(request.caller.userId)).map(toKeyResponse) }),
  );

  app.post(
    '/me/keys',
    {
      schema: {
        ...me,
        summary: 'A new key for the caller; the key itself is in this response only',
        body: CreateKeyRequest,
        response: { 201: CreatedKeyResponse, 409: ErrorResponse, 422: ValidationErrorResponse },
      },
    },
    async (request, reply) => {
      const { record, key } = await users.createKey(request.caller.userId, request.caller.userId, request.body.name, request.body.expires_in_days);
      return reply.code(201).send({ ...toKeyResponse(record), key });
    },
  );

  app.delete(
    '/me/keys/:key_id',
    {
      schema: { ...me, summary: 'Revoke one of the caller\'s keys: it is refused from then on, on every replica within a second', params: KeyParams, response: { 204: z.undefined().describe('Revoked'), 404: ErrorResponse, 409: ErrorResponse } },
    },
    async (request, reply) => {
      await users.revokeKey(request.caller.userId, request.caller.userId, request.params.key_id);
      return reply.code(204).send();
    },
  );

  app.get(
    '/users',
    { schema: { ...admin, summary: 'Every user: those of API_KEYS, then the stored ones by id', response: { 200: UserListResponse, 403: ErrorResponse } } },
    async (request) => {
      requireAdmin(request);
      const list = await users.list();
      return { users: list.map(toUserResponse), total: list.length };
    },
  );

  app.post(
    '/users',
    {
      schema: {
        ...admin,
        summary: 'Store a user (no key yet: POST /users/{id}/keys makes one)',
        body: CreateUserRequest,
        // 422 with a detail string: a workspace path that is missing or not a directory.
        response: { 201: UserResponse, 403: ErrorResponse, 409: ErrorResponse, 422: ValidationErrorResponse.or(ErrorResponse) },
      },
    },
    async (request, reply) => {
      requireAdmin(request);
      const { id, role, workspace_paths, quotas } = request.body;
      const { user } = await users.create(request.caller.userId, { id, role, quotas: quotasIn(quotas), ...(workspace_paths ? { workspacePaths: workspace_paths } : {}) });
      return reply.code(201).send(toUserResponse(user));
    },
  );

  app.get(
    '/users/:user_id',
    {
      schema: {
        ...admin,
        summary: 'One user, with what they used today (UTC) as /me shows it',
        params: UserParams,
        response: { 200: UserDetailResponse, 403: ErrorResponse, 404: ErrorResponse },
      },
    },
    async (request) => {
      requireAdmin(request);
      // Looking at a user is no use of their workspace: their directory is named, not made.
      const user = await users.find(request.params.user_id);
      return { ...toUserResponse(user), usage: usageOut(await users.usage(user.id)) };
    },
  );

  app.patch(
    '/users/:user_id',
    {
      schema: {
        ...admin,
        summary: 'Change a stored user; `disabled: true` refuses their keys and cancels their unfinished runs',
        params: UserParams,
        body: UpdateUserRequest,
        response: { 200: UserResponse, 403: ErrorResponse, 404: ErrorResponse, 409: ErrorResponse, 422: ValidationErrorResponse.or(ErrorResponse) },
      },
    },
    async (request) => {
      requireAdmin(request);
      const { role, disabled, workspace_paths, quotas } = request.body;
      const update = {
        ...(role === undefined ? {} : { role }),
        ...(disabled === undefined ? {} : { disabled }),
        ...(workspace_paths === undefined ? {} : { workspacePaths: workspace_paths }),
        ...(quotas === undefined ? {} : { quotas: quotasIn(quotas) }),
      };
      return toUserResponse(await users.update(request.caller.userId, request.params.user_id, update));
    },
  );

  app.post(
    '/users/:user_id/keys',
    {
      schema: {
        ...admin,
        summary: "A new key for a stored user; the key itself is in this response only",
        params: UserParams,
        body: CreateKeyRequest,
        response: { 201: CreatedKeyResponse, 403: ErrorResponse, 404: ErrorResponse, 409: ErrorResponse, 422: ValidationErrorResponse },
      },
    },
    async (request, reply) => {
      requireAdmin(request);
      const { record, key } = await users.createKey(request.caller.userId, request.params.user_id, request.body.name, request.body.expires_in_days);
      return reply.code(201).send({ ...toKeyResponse(record), key });
    },
  );

  app.delete(
    '/users/:user_id/keys/:key_id',
    {
      schema: { ...admin, summary: "Revoke a user's key", params: UserKeyParams, response: { 204: z.undefined().describe('Revoked'), 403: ErrorResponse, 404: ErrorResponse, 409: ErrorResponse } },
    },
    async (request, reply) => {
      requireAdmin(request);
      await users.revokeKey(request.caller.userId, request.params.user_id, request.params.key_id);
      return reply.code(204).send();
    },
  );
};
