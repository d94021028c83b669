import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import type { DialectAdapter } from './dialect.js';

type Kind = 'command' | 'census';

/** A command's or a first census's record (tools/sandbox/census-coordinator.ts, SandboxActivity). */
export interface SandboxActivityRecord {
  id: string;
  kind: Kind;
  /** Byte strings (every character one byte): JSON keeps them as they are. */
  roots: string[];
  ttlMs: number;
}

/** Every path a row covers; one that cannot be read as a list of strings covers them all (fails closed). */
function rootsOf(row: Record<string, unknown>): string[] {
  try {
    const parsed: unknown = JSON.parse(String(row.roots));
    if (Array.isArray(parsed) && parsed.every((root) => typeof root === 'string')) return parsed as string[];
  } catch {
    // below
  }
  return ['/'];
}

/**
 * The `sandbox_activities` table of one replica (PostgreSQL): its own records, and what it reads
 * of the other replicas' live ones. The sandbox's SandboxActivityStore; a replica is one instance,
 * with an id of its own for its life. Times are the database's, so replicas' clocks never matter.
 * Each call is one short statement: no connection is held while a command runs.
 */
export class SandboxActivityTable {
  private readonly replica = randomUUID();

  constructor(private readonly adapter: DialectAdapter) {
    if (adapter.dialect !== 'postgres') throw new Error('sandbox activities are shared through PostgreSQL only');
  }

  /**
   * One round trip: the migration's `sandbox_activity_register` takes an advisory lock until its
   * commit, inserts, then reads (see 0015_sandbox_activities.sql), so of two registrations at once
   * the second sees the first. A record `withdrawIf` rejects is deleted at once: one that another
   * replica saw meanwhile only made it wait a little longer.
   */
  async register(activity: SandboxActivityRecord, withdrawIf: (others: string[][]) => boolean): Promise<{ registered: boolean; others: string[][] }> {
    const read = await this.adapter.run((db) =>
      db.execute(
        sql`select sandbox_activity_register(${activity.id}, ${this.replica}, ${activity.kind}, ${JSON.stringify(activity.roots)}, ${Math.ceil(activity.ttlMs)}) as roots`,
      ),
    );
    const others = read.rows.map(rootsOf);
    if (!withdrawIf(others)) return { registered: true, others };
    await this.end(activity.id);
    return { registered: false, others };
  }

  live(kind: Kind): Promise<string[][]> {
    return this.adapter.run(async (db) => {
      const read = await db.execute(sql`select roots from sandbox_activities where kind = ${kind} and replica <> ${this.replica} and expires_at > now()`);
      return read.rows.map(rootsOf);
    });
  }

  async end(id: string): Promise<void> {
    await this.adapter.run((db) => db.execute(sql`delete from sandbox_activities where id = ${id}`));
  }
}
