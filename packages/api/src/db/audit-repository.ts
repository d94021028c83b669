/** The audit log (TEAMS.md section 10): append-only entries, each chained to the one before by its hash. */

export type AuditAction =
  | 'user.created'
  | 'user.updated'
  | 'key.created'
  | 'key.revoked'
  | 'run.created'
  | 'run.cancelled'
  | 'approval.decided'
  | 'approval.expired'
  | 'rule.added'
  | 'checkpoint.reverted'
  | 'webhook.created'
  | 'webhook.deleted'
  | 'auth.locked'
  | 'service.started'
  | 'service.stopped';

/** The actor of what the service does by itself (start, stop, expiry) and of the users command. */
export const SYSTEM_ACTOR = 'system';

/** JSON values only: `detail` is hashed as canonical JSON, so it must read back as written. */
export type AuditDetail = { [key: string]: string | number | boolean | null | string[] };

/** What a change records: the appender gives it its seq and hash. */
export interface NewAuditEntry {
  at: Date;
  /** A user id, or `system`. */
  actor: string;
  action: AuditAction;
  /** What was acted on (`user:alice`, `key:<id>`, `run:<id>`), or null. */
  target: string | null;
  /** What was decided; never a key, a prompt or file contents. */
  detail: AuditDetail;
}

export interface AuditEntry extends NewAuditEntry {
  seq: number;
  hash: string;
}

/** A row as stored: `detail` is the JSON text, which someone may have edited into anything. */
export interface StoredAuditRow {
  seq: number;
  at: Date;
  actor: string;
  action: string;
  target: string | null;
  detail: string;
  hash: string;
}

export interface AuditQuery {
  /** Entries with a seq above this one. */
  after: number;
  limit: number;
  actor?: string | undefined;
  action?: string | undefined;
}

export interface AuditRepository {
  /** Appends one entry in a transaction of its own. */
  append(entry: NewAuditEntry): Promise<AuditEntry>;
  /** Entries in seq order, filtered. */
  list(query: AuditQuery): Promise<StoredAuditRow[]>;
  /** Up to `limit` rows after seq `after`, in seq order, unfiltered: what verification reads page by page. */
  chainAfter(after: number, limit: number): Promise<StoredAuditRow[]>;
}
