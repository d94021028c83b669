import { sql } from 'drizzle-orm';
import { bigint, boolean, index, integer, pgTable, primaryKey, text, timestamp, uniqueIndex, uuid, varchar } from 'drizzle-orm/pg-core';
import type { ApprovalStatus } from '../approval-repository.js';
import type { RunStatus } from '../run-repository.js';

/*
 * The one schema, written with drizzle's PostgreSQL builders. SQLite's tables are derived from it
 * (derive-sqlite.ts), so a table, column or index is declared here once for both databases, and
 * `npm run db:generate` writes each dialect's migration from it.
 */

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date', precision: 3 });

export const conversations = pgTable(
  'conversations',
  {
    id: uuid('id').primaryKey(),
    userId: varchar('user_id', { length: 255 }).notNull(),
    agentType: varchar('agent_type', { length: 50 }).notNull().default('explore'),
    title: varchar('title', { length: 255 }),
    workingDir: varchar('working_dir', { length: 1024 }).notNull().default('.'),
    /** The configured model (LLM_MODELS) its turns use; null for conversations from before models were chosen: the default. */
    model: varchar('model', { length: 255 }),
    totalTokens: integer('total_tokens').notNull().default(0),
    /** Sequence number of the latest message: messages order by it, ties impossible. */
    lastSeq: integer('last_seq').notNull().default(0),
    createdAt: ts('created_at').notNull(),
    updatedAt: ts('updated_at'),
    /** updated_at, or created_at while that is null: what lists order by and expiry measures. */
    lastActivityAt: ts('last_activity_at').notNull(),
  },
  (t) => [
    index('conversations_user_recent_idx').on(t.userId, t.lastActivityAt, t.id),
    index('conversations_activity_idx').on(t.lastActivityAt),
  ],
);

export const messages = pgTable(
  'messages',
  {
    id: uuid('id').primaryKey(),
    conversationId: uuid('conversation_id')
      .notNull()
      .references(() => conversations.id, { onDelete: 'cascade' }),
    seq: integer('seq').notNull(),
    role: varchar('role', { length: 20 }).notNull(),
    content: text('content').notNull(),
    tokenCount: integer('token_count').notNull().default(0),
    isSummary: boolean('is_summary').notNull().default(false),
    summarizesUpTo: uuid('summarizes_up_to'),
    createdAt: ts('created_at').notNull(),
  },
  (t) => [
    uniqueIndex('messages_conversation_seq_idx').on(t.conversationId, t.seq),
    index('messages_conversation_active_idx').on(t.conversationId, t.isSummary, t.seq),
    index('messages_conversation_role_idx').on(t.conversationId, t.role, t.seq),
  ],
);

/** Per-user conversation count, kept in the same transactions, so list totals cost O(1). */
export const userConversationCounts = pgTable('user_conversation_counts', {
  userId: varchar('user_id', { length: 255 }).primaryKey(),
  count: integer('count').notNull().default(0),
});

/**
 * What each user used per UTC day (the day a run was created): the daily quotas and `/me` count
 * from here, never from the runs table, whose rows go when a conversation is deleted or runs pass
 * their retention, and with them what they cost.
 */
export const userDailyUsage = pgTable(
  'user_daily_usage',
  {
    userId: varchar('user_id', { length: 255 }).notNull(),
    day: ts('day').notNull(),
    runs: integer('runs').notNull().default(0),
    // 64-bit: a team's day of tokens passes 2^31 (a 32-bit sum would fail every run's last write).
    // Read as a JS number, exact below 2^53.
    tokens: bigint('tokens', { mode: 'number' }).notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.userId, t.day] })],
);

/**
 * The same ledger per model: what each user's runs created on a UTC day used of each configured
 * model (`/me`'s `usage.by_model`). A table of its own beside user_daily_usage, which the quotas
 * keep reading: adding it leaves the ledger's key as it was, so replicas of the version before keep
 * writing theirs during a rolling upgrade. Written in the same transactions as the ledger, for runs
 * that name a model; what the ledger counts beyond these rows was used before models were counted.
 */
export const userModelDailyUsage = pgTable(
  'user_model_daily_usage',
  {
    userId: varchar('user_id', { length: 255 }).notNull(),
    day: ts('day').notNull(),
    model: varchar('model', { length: 255 }).notNull(),
    runs: integer('runs').notNull().default(0),
    tokens: bigint('tokens', { mode: 'number' }).notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.userId, t.day, t.model] })],
);

/**
 * Stored agent runs. last_event_id is the seq of the run's latest event: appending an event
 * increments it first, which serializes concurrent appends on the run row. A key that names an
 * idempotent request is unique per user while it is set (NULLs never collide).
 */
export const runs = pgTable(
  'runs',
  {
    id: uuid('id').primaryKey(),
    userId: varchar('user_id', { length: 255 }).notNull(),
    agentType: varchar('agent_type', { length: 50 }).notNull(),
    mode: varchar('mode', { length: 20 }).notNull(),
    status: varchar('status', { length: 20 }).$type<RunStatus>().notNull(),
    prompt: text('prompt').notNull(),
    workingDir: varchar('working_dir', { length: 1024 }).notNull(),
    /** The configured model (LLM_MODELS) the run was sent to; null for runs from before models were chosen. */
    model: varchar('model', { length: 255 }),
    conversationId: uuid('conversation_id').references(() => conversations.id, { onDelete: 'cascade' }),
    response: text('response'),
    error: text('error'),
    createdAt: ts('created_at').notNull(),
    startedAt: ts('started_at'),
    endedAt: ts('ended_at'),
    modelCalls: integer('model_calls').notNull().default(0),
    toolCalls: integer('tool_calls').notNull().default(0),
    inputTokens: integer('input_tokens').notNull().default(0),
    outputTokens: integer('output_tokens').notNull().default(0),
    lastEventId: integer('last_event_id').notNull().default(0),
    idempotencyKey: varchar('idempotency_key', { length: 255 }),
    requestHash: varchar('request_hash', { length: 128 }),
    /** The replica executing the run, and until when its lease holds without a renewal. */
    leaseOwner: varchar('lease_owner', { length: 255 }),
    leaseUntil: ts('lease_until'),
  },
  (t) => [
    index('runs_user_recent_idx').on(t.userId, t.createdAt, t.id),
    index('runs_user_status_idx').on(t.userId, t.status, t.createdAt),
    uniqueIndex('runs_user_idempotency_idx').on(t.userId, t.idempotencyKey),
    index('runs_status_lease_idx').on(t.status, t.leaseUntil),
    index('runs_ended_idx').on(t.endedAt),
    index('runs_conversation_idx').on(t.conversationId),
    // One turn at a time per conversation: a second active run of it cannot be stored (409 busy).
    // The statuses are ACTIVE_RUN_STATUSES'; an index cannot take them as a parameter.
    uniqueIndex('runs_conversation_active_idx')
      .on(t.conversationId)
      .where(sql`${t.status} in ('queued', 'running', 'waiting_approval')`),
  ],
);

/** A run's events as sent: seq 1, 2, 3 ... without gaps; data is the event's JSON text, kept byte for byte. */
export const runEvents = pgTable(
  'run_events',
  {
    runId: uuid('run_id')
      .notNull()
      .references(() => runs.id, { onDelete: 'cascade' }),
    seq: integer('seq').notNull(),
    data: text('data').notNull(),
    createdAt: ts('created_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.runId, t.seq] })],
);

/**
 * An ended run's events again, as SSE frames with their `id:` lines, joined into pages of about
 * 64 KiB (first_seq..last_seq): a replay of a long run reads a few rows instead of one per event.
 * Derived from run_events once the run has ended and never changed; run_events stays the record.
 */
export const runEventPages = pgTable(
  'run_event_pages',
  {
    runId: uuid('run_id')
      .notNull()
      .references(() => runs.id, { onDelete: 'cascade' }),
    firstSeq: integer('first_seq').notNull(),
    lastSeq: integer('last_seq').notNull(),
    frames: text('frames').notNull(),
  },
  (t) => [primaryKey({ columns: [t.runId, t.firstSeq] })],
);

/** An `ask` waiting for (or given) its answer; `grant_match` is what an approve_always grant stores. */
export const approvals = pgTable(
  'approvals',
  {
    id: uuid('id').primaryKey(),
    runId: uuid('run_id')
      .notNull()
      .references(() => runs.id, { onDelete: 'cascade' }),
    userId: varchar('user_id', { length: 255 }).notNull(),
    // An MCP tool's name (mcp__<server>__<tool>) may be 64 characters; 128 leaves room.
    tool: varchar('tool', { length: 128 }).notNull(),
    args: text('args').notNull(),
    reason: text('reason').notNull(),
    status: varchar('status', { length: 20 }).$type<ApprovalStatus>().notNull(),
    workingDir: varchar('working_dir', { length: 1024 }).notNull(),
    grantMatch: text('grant_match').notNull(),
    createdAt: ts('created_at').notNull(),
    expiresAt: ts('expires_at').notNull(),
    decidedAt: ts('decided_at'),
    message: text('message'),
  },
  (t) => [index('approvals_user_status_idx').on(t.userId, t.status, t.createdAt), index('approvals_run_status_idx').on(t.runId, t.status)],
);

/** `approve_always`: a user's standing yes for one rule's match in one working directory. */
export const approvalGrants = pgTable(
  'approval_grants',
  {
    userId: varchar('user_id', { length: 255 }).notNull(),
    workingDir: varchar('working_dir', { length: 1024 }).notNull(),
    // An MCP tool's name (mcp__<server>__<tool>) may be 64 characters; 128 leaves room.
    tool: varchar('tool', { length: 128 }).notNull(),
    match: text('match').notNull(),
    createdAt: ts('created_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.userId, t.workingDir, t.tool, t.match] })],
);

/**
 * Users stored in the database (TEAMS.md section 8); those of API_KEYS live in the setting only.
 * workspace_paths is a JSON list of absolute paths ('[]': the service's ALLOWED_PATHS). A quota of
 * 0 means no limit, -1 that the user has none of their own and the service's setting applies
 * (QUOTA_UNSET in user-repository.ts).
 */
export const users = pgTable('users', {
  id: varchar('id', { length: 64 }).primaryKey(),
  role: varchar('role', { length: 20 }).$type<'admin' | 'member'>().notNull(),
  disabled: boolean('disabled').notNull().default(false),
  createdAt: ts('created_at').notNull(),
  workspacePaths: text('workspace_paths').notNull().default('[]'),
  maxConcurrentRuns: integer('max_concurrent_runs').notNull().default(0),
  maxRunsPerDay: integer('max_runs_per_day').notNull().default(0),
  maxTokensPerDay: integer('max_tokens_per_day').notNull().default(0),
});

/**
 * A stored user's keys. Only the SHA-256 digest (hex) of a key is kept; authentication finds a key
 * by it through the unique index, so no request compares against every key. `prefix` is the key's
 * first 12 characters, which say which key it is without being usable.
 */
export const apiKeys = pgTable(
  'api_keys',
  {
    id: uuid('id').primaryKey(),
    userId: varchar('user_id', { length: 64 })
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    name: varchar('name', { length: 100 }).notNull(),
    prefix: varchar('prefix', { length: 12 }).notNull(),
    digest: varchar('digest', { length: 64 }).notNull(),
    createdAt: ts('created_at').notNull(),
    expiresAt: ts('expires_at'),
    lastUsedAt: ts('last_used_at'),
    revokedAt: ts('revoked_at'),
  },
  (t) => [uniqueIndex('api_keys_digest_idx').on(t.digest), index('api_keys_user_idx').on(t.userId, t.createdAt)],
);

/**
 * The audit log (TEAMS.md section 10): append-only, one row per change of access or files. `seq`
 * is given by the appender (the last seq + 1, under the append lock), so the primary key also
 * refuses a second entry with the same place in the chain. `detail` is a JSON object; `hash`
 * chains each entry to the one before it (audit-chain.ts).
 */
export const auditLog = pgTable(
  'audit_log',
  {
    seq: integer('seq').primaryKey(),
    at: ts('at').notNull(),
    actor: varchar('actor', { length: 64 }).notNull(),
    action: varchar('action', { length: 50 }).notNull(),
    target: varchar('target', { length: 255 }),
    detail: text('detail').notNull(),
    hash: varchar('hash', { length: 64 }).notNull(),
  },
  (t) => [index('audit_log_actor_idx').on(t.actor, t.seq), index('audit_log_action_idx').on(t.action, t.seq)],
);

/**
 * The browser console's sign-ins (TEAMS.md section 11), kept here so that a restart signs nobody
 * out and every replica accepts every session. `digest` is the SHA-256 (hex) of the random session
 * id the cookie carries: the table gives nobody a cookie to replay. `key_digest` is the digest of
 * the key signed in with (as api_keys.digest, or of an API_KEYS key): every request checks that
 * key again, so revoking it or disabling its user ends the session.
 */
export const consoleSessions = pgTable(
  'console_sessions',
  {
    digest: varchar('digest', { length: 64 }).primaryKey(),
    keyDigest: varchar('key_digest', { length: 64 }).notNull(),
    createdAt: ts('created_at').notNull(),
    expiresAt: ts('expires_at').notNull(),
  },
  (t) => [index('console_sessions_key_idx').on(t.keyDigest, t.createdAt), index('console_sessions_expiry_idx').on(t.expiresAt)],
);

/**
 * A user's webhooks (TEAMS.md section 13). `user_id` has no foreign key: users of API_KEYS have no
 * row. `events` is a JSON list of event names. `secret` signs each delivery (HMAC-SHA256), so it
 * is kept as given: it is a signing key the service must use, not a credential it only checks.
 */
export const webhooks = pgTable(
  'webhooks',
  {
    id: uuid('id').primaryKey(),
    userId: varchar('user_id', { length: 64 }).notNull(),
    url: varchar('url', { length: 2048 }).notNull(),
    events: text('events').notNull(),
    secret: varchar('secret', { length: 256 }).notNull(),
    createdAt: ts('created_at').notNull(),
  },
  (t) => [index('webhooks_user_idx').on(t.userId, t.createdAt)],
);

/**
 * Each delivery of an event to a webhook: the body exactly as signed, its state and last outcome.
 * A sender claims a due row by moving `claimed_until` forward in one UPDATE that re-checks it, so
 * two replicas never send the same attempt; a claim that outlives its sender (a crash) runs out
 * and the delivery is tried again.
 */
export const webhookDeliveries = pgTable(
  'webhook_deliveries',
  {
    id: uuid('id').primaryKey(),
    webhookId: uuid('webhook_id')
      .notNull()
      .references(() => webhooks.id, { onDelete: 'cascade' }),
    event: varchar('event', { length: 50 }).notNull(),
    body: text('body').notNull(),
    status: varchar('status', { length: 20 }).$type<'pending' | 'delivered' | 'failed'>().notNull(),
    attempts: integer('attempts').notNull().default(0),
    createdAt: ts('created_at').notNull(),
    nextAttemptAt: ts('next_attempt_at').notNull(),
    claimedUntil: ts('claimed_until'),
    lastAttemptAt: ts('last_attempt_at'),
    lastStatusCode: integer('last_status_code'),
    lastError: varchar('last_error', { length: 50 }),
    deliveredAt: ts('delivered_at'),
  },
  (t) => [index('webhook_deliveries_due_idx').on(t.status, t.nextAttemptAt), index('webhook_deliveries_webhook_idx').on(t.webhookId, t.createdAt)],
);

/**
 * The `bash` commands and first repository censuses in flight on each service replica, so that a
 * replica never takes its first census of a directory while another one's command may be planting
 * a hook there (tools/sandbox/census-coordinator.ts). `roots` is a JSON list of the allowed paths
 * covered, each a byte string (every character one byte). A row lapses at `expires_at` (its
 * command's timeout plus a margin): a crashed replica's rows stop counting then. PostgreSQL only:
 * one SQLite process needs none, yet the table is declared for both like every other.
 */
export const sandboxActivities = pgTable(
  'sandbox_activities',
  {
    id: uuid('id').primaryKey(),
    replica: uuid('replica').notNull(),
    kind: varchar('kind', { length: 16 }).$type<'command' | 'census'>().notNull(),
    roots: text('roots').notNull(),
    /** When it was recorded: another replica's check counts a change since then as possibly the command's. */
    startedAt: ts('started_at').notNull(),
    expiresAt: ts('expires_at').notNull(),
  },
  (t) => [index('sandbox_activities_kind_idx').on(t.kind, t.expiresAt)],
);
