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

/** Another replica's record as the registration reads it (tools/sandbox/census-coordinator.ts, OtherActivity). */
export interface OtherActivityRecord {
  kind: Kind;
  roots: string[];
  ageMs: number;
}

/** Every path a row covers; one that cannot be read as a list of strings covers them all (fails closed). */
function rootsOf(text: unknown): string[] {
  try {
    const parsed: unknown = JSON.parse(String(text));
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
   * commit, inserts, then reads every other replica's live record with its age (see
   * 0015_sandbox_activities.sql), so of two registrations at once the second sees the first. A record `withdrawIf` rejects is deleted at once: one that another
   * replica saw meanwhile only made it wait a little longer.
   */
  async register(activity: SandboxActivityRecord, withdrawIf: (others: OtherActivityRecord[]) => boolean): Promise<{ registered: boolean; others: OtherActivityRecord[] }> {
    const read = await this.adapter.run((db) =>
      db.execute(
        sql`select o_kind, o_roots, o_age_ms from sandbox_activity_register(${activity.id}, ${this.replica}, ${activity.kind}, ${JSON.stringify(activity.roots)}, ${Math.ceil(activity.ttlMs)})`,
      ),
    );
    // A kind this version does not know counts as both; an age it cannot read, as the oldest there is.
    const others = read.rows.flatMap((row): OtherActivityRecord[] => {
      const roots = rootsOf(row.o_roots);
      const age = Number(row.o_age_ms);
      const ageMs = Number.isFinite(age) ? Math.max(0, age) : Number.MAX_SAFE_INTEGER;
      const kinds: Kind[] = row.o_kind === 'command' || row.o_kind === 'census' ? [row.o_kind] : ['command', 'census'];
      return kinds.map((kind) => ({ kind, roots, ageMs }));
    });
    if (!withdrawIf(others)) return { registered: true, others };
    await this.end(activity.id);
    return { registered: false, others };
  }

  live(kind: Kind): Promise<string[][]> {
    return this.adapter.run(async (db) => {
      const read = await db.execute(sql`select roots from sandbox_activities where kind = ${kind} and replica <> ${this.replica} and expires_at > now()`);
      return read.rows.map((row) => rootsOf(row.roots));
    });
  }

  async end(id: string): Promise<void> {
    await this.adapter.run((db) => db.execute(sql`delete from sandbox_activities where id = ${id}`));
  }
}
