import { and, desc, eq, gt, lte, notInArray } from 'drizzle-orm';
import type { ConsoleSessionRecord, ConsoleSessionRepository } from './console-session-repository.js';
import type { DialectAdapter } from './dialect.js';

/** Console sessions over drizzle, for both dialects. */
export class DrizzleConsoleSessionRepository implements ConsoleSessionRepository {
  private readonly t;

  constructor(private readonly adapter: DialectAdapter) {
    this.t = adapter.tables;
  }

  createSession(session: ConsoleSessionRecord, keep: number): Promise<void> {
    const s = this.t.consoleSessions;
    return this.adapter.transaction(async (tx) => {
      await tx.insert(s).values(session);
      // One key signing in over and over fills no table: its newest `keep` sessions stay.
      const newest = tx.select({ digest: s.digest }).from(s).where(eq(s.keyDigest, session.keyDigest)).orderBy(desc(s.createdAt)).limit(keep);
      await tx.delete(s).where(and(eq(s.keyDigest, session.keyDigest), notInArray(s.digest, newest)));
    });
  }

  findSession(digest: string, now: Date): Promise<ConsoleSessionRecord | undefined> {
    const s = this.t.consoleSessions;
    return this.adapter.run(async (db) => (await db.select().from(s).where(and(eq(s.digest, digest), gt(s.expiresAt, now))))[0]);
  }

  async deleteSession(digest: string): Promise<void> {
    const s = this.t.consoleSessions;
    await this.adapter.run((db) => db.delete(s).where(eq(s.digest, digest)));
  }

  deleteExpiredSessions(now: Date): Promise<number> {
    const s = this.t.consoleSessions;
    return this.adapter.run(async (db) => (await db.delete(s).where(lte(s.expiresAt, now)).returning({ digest: s.digest })).length);
  }
}
