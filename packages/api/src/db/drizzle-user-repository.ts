import { and, count, desc, eq, inArray, isNull, sql } from 'drizzle-orm';
import type { AuditDetail } from './audit-repository.js';
import type { Db, DialectAdapter } from './dialect.js';
import { appendAuditIn } from './drizzle-audit-repository.js';
import { dailyUsageByModelSince, dailyUsageSince } from './daily-usage.js';
import { QUOTA_UNSET, type KeyOwner, type KeyRecord, type UserChanges, type UserRecord, type UserRepository, type UserUsage, type WorkspaceCheck } from './user-repository.js';

/** The advisory lock every workspace change takes on PostgreSQL ("mada" then "wksp" in ASCII). */
const WORKSPACE_LOCK = [0x6d616461, 0x776b7370] as const;

/** Users and keys over drizzle, for both dialects. */
export class DrizzleUserRepository implements UserRepository {
  private readonly t;

  constructor(private readonly adapter: DialectAdapter) {
    this.t = adapter.tables;
  }

  countUsers(): Promise<number> {
    const u = this.t.users;
    return this.adapter.run(async (db) => (await db.select({ n: count() }).from(u))[0]?.n ?? 0);
  }

  createUser(user: UserRecord, key: KeyRecord | undefined, actor: string, check?: WorkspaceCheck): Promise<UserRecord | undefined> {
    const { users: u, apiKeys: k } = this.t;
    return this.adapter.transaction(async (tx) => {
      await this.checkWorkspace(tx, check);
      const [stored] = await tx.insert(u).values(user).onConflictDoNothing().returning();
      if (!stored) return undefined;
      if (key) await tx.insert(k).values(key);
      const at = user.createdAt;
      await appendAuditIn(this.adapter, tx, { at, actor, action: 'user.created', target: `user:${user.id}`, detail: userDetail(stored) });
      if (key) await appendAuditIn(this.adapter, tx, { at, actor, action: 'key.created', target: `key:${key.id}`, detail: keyDetail(key) });
      return stored;
    });
  }

  findUser(id: string): Promise<UserRecord | undefined> {
    const u = this.t.users;
    return this.adapter.run(async (db) => (await db.select().from(u).where(eq(u.id, id)))[0]);
  }

  listUsers(): Promise<UserRecord[]> {
    const u = this.t.users;
    return this.adapter.run((db) => db.select().from(u).orderBy(u.id));
  }

  updateUser(id: string, changes: UserChanges, actor: string, now: Date, check?: WorkspaceCheck): Promise<UserRecord | undefined> {
    const u = this.t.users;
    if (Object.keys(changes).length === 0) return this.findUser(id);
    return this.adapter.transaction(async (tx) => {
      await this.checkWorkspace(tx, check);
      const [stored] = await tx.update(u).set(changes).where(eq(u.id, id)).returning();
      if (!stored) return undefined;
      // A disabled user's console sessions end with the change, on every replica.
      if (changes.disabled === true) {
        const s = this.t.consoleSessions;
        const k = this.t.apiKeys;
        await tx.delete(s).where(inArray(s.keyDigest, tx.select({ digest: k.digest }).from(k).where(eq(k.userId, id))));
      }
      // The fields the request set, with their new values: what was decided, not the whole user.
      const detail: AuditDetail = Object.fromEntries(Object.keys(changes).map((field) => [snakeCase(field), userDetail(stored)[snakeCase(field)] ?? null]));
      await appendAuditIn(this.adapter, tx, { at: now, actor, action: 'user.updated', target: `user:${id}`, detail });
      return stored;
    });
  }

  /**
   * Runs a workspace change's check in its transaction `tx`, workspace changes taking turns: on
   * PostgreSQL through a transaction-scoped advisory lock held until the commit, so the users read
   * here include every change committed before (on any replica) and none can commit meanwhile; on
   * SQLite the transaction holds the database's write lock (BEGIN IMMEDIATE) from its start. Taken
   * first in the transaction, before the audit log's lock, so the two are always taken in one order.
   */
  private async checkWorkspace(tx: Db, check: WorkspaceCheck | undefined): Promise<void> {
    if (!check) return;
    if (this.adapter.dialect === 'postgres') await tx.execute(sql`select pg_advisory_xact_lock(${WORKSPACE_LOCK[0]}, ${WORKSPACE_LOCK[1]})`);
    const u = this.t.users;
    await check(await tx.select().from(u).orderBy(u.id));
  }

  createKey(key: KeyRecord, actor: string): Promise<KeyRecord> {
    const k = this.t.apiKeys;
    return this.adapter.transaction(async (tx) => {
      const [stored] = await tx.insert(k).values(key).returning();
      await appendAuditIn(this.adapter, tx, { at: key.createdAt, actor, action: 'key.created', target: `key:${key.id}`, detail: keyDetail(key) });
      return stored!;
    });
  }

  listKeys(userId: string): Promise<KeyRecord[]> {
    const k = this.t.apiKeys;
    return this.adapter.run((db) => db.select().from(k).where(eq(k.userId, userId)).orderBy(desc(k.createdAt), desc(k.id)));
  }

  revokeKey(userId: string, keyId: string, now: Date, actor: string): Promise<KeyRecord | undefined> {
    const k = this.t.apiKeys;
    const mine = and(eq(k.id, keyId), eq(k.userId, userId));
    return this.adapter.transaction(async (tx) => {
      const revoked = await tx
        .update(k)
        .set({ revokedAt: now })
        .where(and(mine, isNull(k.revokedAt)))
        .returning({ id: k.id, digest: k.digest });
      const s = this.t.consoleSessions;
      // The console sessions signed in with the key end with it.
      for (const { digest } of revoked) await tx.delete(s).where(eq(s.keyDigest, digest));
      // A second revocation changes nothing, so it records nothing.
      if (revoked.length > 0) await appendAuditIn(this.adapter, tx, { at: now, actor, action: 'key.revoked', target: `key:${keyId}`, detail: { user: userId } });
      return (await tx.select().from(k).where(mine))[0];
    });
  }

  findKeyByDigest(digest: string): Promise<KeyOwner | undefined> {
    const { users: u, apiKeys: k } = this.t;
    return this.adapter.run(
      async (db) =>
        (
          await db
            .select({
              keyId: k.id,
              userId: k.userId,
              role: u.role,
              userDisabled: u.disabled,
              expiresAt: k.expiresAt,
              revokedAt: k.revokedAt,
              lastUsedAt: k.lastUsedAt,
            })
            .from(k)
            .innerJoin(u, eq(u.id, k.userId))
            .where(eq(k.digest, digest))
        )[0],
    );
  }

  async touchKey(keyId: string, now: Date): Promise<void> {
    const k = this.t.apiKeys;
    await this.adapter.run((db) => db.update(k).set({ lastUsedAt: now }).where(eq(k.id, keyId)));
  }

  usage(userId: string, since: Date): Promise<UserUsage> {
    const r = this.t.runs;
    return this.adapter.run(async (db) => {
      const today = await dailyUsageSince(this.t, db, userId, since);
      const byModel = await dailyUsageByModelSince(this.t, db, userId, since, today);
      // Counted apart: a run started before midnight may still be running.
      const [active] = await db
        .select({ n: count() })
        .from(r)
        .where(and(eq(r.userId, userId), inArray(r.status, ['running', 'waiting_approval'])));
      return { runsToday: today.runs, tokensToday: today.tokens, running: active?.n ?? 0, byModel };
    });
  }
}

/** A user as the audit log records it: role, state, workspace and quotas. */
/** Details are named as the API names its fields. */
const snakeCase = (field: string): string => field.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);

/** null: the user has no quota of their own (the setting applies), as the API takes it. */
const ownQuota = (stored: number): number | null => (stored === QUOTA_UNSET ? null : stored);

function userDetail(user: UserRecord): AuditDetail {
  return {
    user: user.id,
    role: user.role,
    disabled: user.disabled,
    workspace_paths: JSON.parse(user.workspacePaths) as string[],
    max_concurrent_runs: ownQuota(user.maxConcurrentRuns),
    max_runs_per_day: ownQuota(user.maxRunsPerDay),
    max_tokens_per_day: ownQuota(user.maxTokensPerDay),
  };
}

/** A key as the audit log records it: whose, its name, prefix and expiry; never the key or its digest. */
const keyDetail = (key: KeyRecord): AuditDetail => ({
  user: key.userId,
  name: key.name,
  prefix: key.prefix,
  expires_at: key.expiresAt?.toISOString() ?? null,
});
