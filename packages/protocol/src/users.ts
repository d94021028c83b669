import { z } from 'zod';

/* Users, keys and roles (`/me*`, `/users*`, TEAMS.md section 8): the wire shapes. */

const Timestamp = z.string().meta({ description: 'UTC ISO 8601 with milliseconds and Z' });
const Count = z.number().int().min(0);

/** Letters, digits, `.`, `_` and `-`, starting with a letter or digit: safe as a directory name. */
export const UserId = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, 'A user id is 1 to 64 letters, digits, ".", "_" or "-", starting with a letter or digit')
  .meta({ id: 'UserId', examples: ['alice'] });

export const UserRole = z.enum(['admin', 'member']).meta({ id: 'UserRole' });
export type UserRole = z.infer<typeof UserRole>;

const Limit = z.number().int().min(0).max(1_000_000_000);
export const Quotas = z
  .object({ max_concurrent_runs: Limit, max_runs_per_day: Limit, max_tokens_per_day: Limit })
  .meta({ id: 'Quotas', description: '`0` means no limit.' });
export type Quotas = z.infer<typeof Quotas>;

const QuotaChange = Limit.nullable().optional();
/** Quotas an admin sets: those left out stay as they are; `null` makes the service's default apply. */
export const QuotaChanges = z
  .object({ max_concurrent_runs: QuotaChange, max_runs_per_day: QuotaChange, max_tokens_per_day: QuotaChange })
  .meta({ id: 'QuotaChanges', description: '`0` means no limit; `null` (or, at creation, leaving it out) means the service default (`MAX_RUNS_PER_USER`, `MAX_RUNS_PER_DAY`, `MAX_TOKENS_PER_DAY`).' });
export type QuotaChanges = z.infer<typeof QuotaChanges>;

const AbsolutePath = z
  .string()
  .min(1)
  .max(1024)
  .regex(/^\//, 'A workspace path is absolute')
  .meta({ examples: ['/srv/mada/alice'] });
export const Workspace = z.object({ paths: z.array(z.string()) }).meta({ id: 'Workspace' });

export const UserResponse = z
  .object({
    id: z.string(),
    role: UserRole,
    disabled: z.boolean(),
    created_at: Timestamp.nullable().meta({ description: 'null for a user configured in API_KEYS' }),
    workspace: Workspace,
    quotas: Quotas,
    source: z.enum(['config', 'stored']),
  })
  .meta({ id: 'UserResponse' });
export type UserResponse = z.infer<typeof UserResponse>;

export const UserListResponse = z.object({ users: z.array(UserResponse), total: Count }).meta({ id: 'UserListResponse' });
export type UserListResponse = z.infer<typeof UserListResponse>;

export const UsageOfModel = z
  .object({
    model: z.string().nullable().meta({ description: 'The configured model; null: what was counted before usage was kept per model' }),
    runs: Count.meta({ description: 'Runs created since 00:00 UTC that were sent to this model' }),
    tokens: Count.meta({ description: 'Their input and output tokens' }),
  })
  .meta({ id: 'UsageOfModel' });
export type UsageOfModel = z.infer<typeof UsageOfModel>;

export const Usage = z
  .object({
    runs_today: Count.meta({ description: 'Runs created since 00:00 UTC' }),
    tokens_today: Count.meta({ description: 'Input and output tokens of those runs' }),
    running: Count.meta({ description: 'Runs running or waiting for an approval now' }),
    by_model: z.array(UsageOfModel).meta({
      description: 'runs_today and tokens_today per model, by name; an entry with model null last, if any. Kept when the runs are deleted, as the totals are.',
    }),
  })
  .meta({ id: 'Usage' });
export type Usage = z.infer<typeof Usage>;

/** One user as `GET /users/{id}` shows it to an admin: with what they used today, as `/me` shows it. */
export const UserDetailResponse = UserResponse.extend({ usage: Usage }).meta({ id: 'UserDetailResponse' });
export type UserDetailResponse = z.infer<typeof UserDetailResponse>;

export const MeResponse = z
  .object({ id: z.string(), role: UserRole, workspace: Workspace, quotas: Quotas, usage: Usage })
  .meta({ id: 'MeResponse' });
export type MeResponse = z.infer<typeof MeResponse>;

export const KeyResponse = z
  .object({
    id: z.uuid(),
    name: z.string(),
    prefix: z.string().meta({ description: "The key's first 12 characters" }),
    created_at: Timestamp,
    expires_at: Timestamp.nullable(),
    last_used_at: Timestamp.nullable().meta({ description: 'Updated at most once a minute' }),
    revoked_at: Timestamp.nullable(),
  })
  .meta({ id: 'KeyResponse' });
export type KeyResponse = z.infer<typeof KeyResponse>;

export const CreatedKeyResponse = KeyResponse.extend({ key: z.string().meta({ description: 'Shown here once; only its SHA-256 digest is stored' }) }).meta({
  id: 'CreatedKeyResponse',
});
export type CreatedKeyResponse = z.infer<typeof CreatedKeyResponse>;

export const KeyListResponse = z.object({ keys: z.array(KeyResponse) }).meta({ id: 'KeyListResponse' });
export type KeyListResponse = z.infer<typeof KeyListResponse>;

export const CreateKeyRequest = z
  .object({ name: z.string().trim().min(1).max(100).meta({ examples: ['laptop'] }), expires_in_days: z.number().int().min(1).max(3650).optional() })
  .meta({ id: 'CreateKeyRequest' });
export type CreateKeyRequest = z.infer<typeof CreateKeyRequest>;

export const CreateUserRequest = z
  .object({ id: UserId, role: UserRole.default('member'), workspace_paths: z.array(AbsolutePath).max(64).optional(), quotas: QuotaChanges.optional() })
  .meta({ id: 'CreateUserRequest' });
export type CreateUserRequest = z.infer<typeof CreateUserRequest>;

export const UpdateUserRequest = z
  .object({ role: UserRole.optional(), disabled: z.boolean().optional(), workspace_paths: z.array(AbsolutePath).max(64).optional(), quotas: QuotaChanges.optional() })
  .meta({ id: 'UpdateUserRequest' });
export type UpdateUserRequest = z.infer<typeof UpdateUserRequest>;

export const UserParams = z.object({ user_id: z.string() });
export const KeyParams = z.object({ key_id: z.string() });
export const UserKeyParams = z.object({ user_id: z.string(), key_id: z.string() });
