import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import type { DialectAdapter } from './dialect.js';

/** The advisory lock every registration takes ("mada" then "cnss" in ASCII): of two at once, the second sees the first. */
const REGISTRATION_LOCK = [0x6d616461, 0x636e7373] as const;

type Kind = 'command' | 'census';

/** A command's or a first census's record (tools/sandbox/census-coordinator.ts, SandboxActivity). */
export interface SandboxActivityRecord {
  id: string;
  kind: Kind;
  /** Byte strings (every character one byte): JSON keeps them as they are. */
  roots: string[];
  ttlMs: number;
}

const other = (kind: Kind): Kind => (kind === 'command' ? 'census' : 'command');

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
 * Each call is a short statement or transaction: no connection is held while a command runs.
 */
export class SandboxActivityTable {
  private readonly replica = randomUUID();

  constructor(private readonly adapter: DialectAdapter) {
    if (adapter.dialect !== 'postgres') throw new Error('sandbox activities are shared through PostgreSQL only');
  }

  /**
   * One transaction under an advisory lock: the second of two registrations waits for the first's
   * commit and its read then sees the first's row. Insert and read are one statement (the read does
   * not see the row it inserts, nor needs to). A census's registration also clears lapsed rows.
   */
  register(activity: SandboxActivityRecord, withdrawIf: (others: string[][]) => boolean): Promise<{ registered: boolean; others: string[][] }> {
    return this.adapter.transaction(async (tx) => {
      await tx.execute(sql`select pg_advisory_xact_lock(${REGISTRATION_LOCK[0]}, ${REGISTRATION_LOCK[1]})`);
      if (activity.kind === 'census') await tx.execute(sql`delete from sandbox_activities where expires_at < now()`);
      const read = await tx.execute(sql`
        with mine as (
          insert into sandbox_activities (id, replica, kind, roots, expires_at)
          values (${activity.id}, ${this.replica}, ${activity.kind}, ${JSON.stringify(activity.roots)}, now() + ${Math.ceil(activity.ttlMs)}::integer * interval '1 millisecond')
        )
        select roots from sandbox_activities where kind = ${other(activity.kind)} and replica <> ${this.replica} and expires_at > now()`);
      const others = read.rows.map(rootsOf);
      if (!withdrawIf(others)) return { registered: true, others };
      await tx.execute(sql`delete from sandbox_activities where id = ${activity.id}`);
      return { registered: false, others };
    });
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
