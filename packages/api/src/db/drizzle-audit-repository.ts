import { and, asc, desc, eq, gt, sql, type SQL } from 'drizzle-orm';
import { auditHash, GENESIS_HASH } from './audit-chain.js';
import type { AuditEntry, AuditQuery, AuditRepository, NewAuditEntry, StoredAuditRow } from './audit-repository.js';
import { perAdapter, type Db, type DialectAdapter } from './dialect.js';

/** The advisory lock every append takes on PostgreSQL ("mada" then "audt" in ASCII). */
const AUDIT_LOCK = [0x6d616461, 0x61756474] as const;

/**
 * Appends one entry inside the caller's transaction `tx`, so it commits (or rolls back) with the
 * change it records. Appends take turns: on PostgreSQL through a transaction-scoped advisory lock
 * held until the commit, so the next append (on any replica) reads this entry as the last one and
 * the chain never forks; SQLite runs one transaction at a time. Call it last in the transaction:
 * the lock is held from here to the commit.
 */
export async function appendAuditIn(adapter: DialectAdapter, tx: Db, entry: NewAuditEntry): Promise<AuditEntry> {
  const statements = appendStatements(adapter);
  if (adapter.dialect === 'postgres') await tx.execute(sql`select pg_advisory_xact_lock(${AUDIT_LOCK[0]}, ${AUDIT_LOCK[1]})`);
  const [last] = await statements.last(tx, {});
  const seq = (last?.seq ?? 0) + 1;
  const hash = auditHash(last?.hash ?? GENESIS_HASH, { ...entry, seq });
  await statements.insert(tx, { ...entry, seq, hash, detail: JSON.stringify(entry.detail) });
  return { ...entry, seq, hash };
}

/** An append's two statements, prepared once: every run appends when it is created and when it ends. */
const appendStatements = perAdapter((adapter) => {
  const l = adapter.tables.auditLog;
  const p = (name: string) => sql.placeholder(name);
  return {
    last: adapter.prepared('audit_last', (db) => db.select({ seq: l.seq, hash: l.hash }).from(l).orderBy(desc(l.seq)).limit(1)),
    insert: adapter.prepared('audit_insert', (db) =>
      db.insert(l).values({ seq: p('seq'), at: p('at'), actor: p('actor'), action: p('action'), target: p('target'), detail: p('detail'), hash: p('hash') }),
    ),
  };
});

/** The audit log over drizzle, for both dialects. */
export class DrizzleAuditRepository implements AuditRepository {
  constructor(private readonly adapter: DialectAdapter) {}

  append(entry: NewAuditEntry): Promise<AuditEntry> {
    return this.adapter.transaction((tx) => appendAuditIn(this.adapter, tx, entry));
  }

  list(query: AuditQuery): Promise<StoredAuditRow[]> {
    const l = this.adapter.tables.auditLog;
    const where: SQL[] = [gt(l.seq, query.after)];
    if (query.actor !== undefined) where.push(eq(l.actor, query.actor));
    if (query.action !== undefined) where.push(eq(l.action, query.action));
    return this.adapter.run((db) =>
      db
        .select()
        .from(l)
        .where(and(...where))
        .orderBy(asc(l.seq))
        .limit(query.limit),
    );
  }

  chainAfter(after: number, limit: number): Promise<StoredAuditRow[]> {
    return this.list({ after, limit });
  }
}
