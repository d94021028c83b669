import { auditHash, GENESIS_HASH, type HashedFields } from '../db/audit-chain.js';
import type { AuditQuery, AuditRepository, NewAuditEntry, StoredAuditRow } from '../db/audit-repository.js';

/** An entry as the routes show it: the fields its hash covers (`detail` parsed back from its stored JSON), and the hash. */
export interface AuditView extends HashedFields {
  hash: string;
}

export interface AuditVerification {
  ok: boolean;
  /** How many entries were read. */
  entries: number;
  /** The first seq whose entry was changed, removed or is out of the chain; null when ok. */
  firstBadSeq: number | null;
}

/** How many rows verification holds at once. */
const VERIFY_PAGE = 1000;

/** A detail edited by hand into something that is no JSON reads back as the text itself: the hash then tells. */
function parseDetail(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

const toView = (row: StoredAuditRow): AuditView => ({ ...row, detail: parseDetail(row.detail) });

/** Reads and checks the audit log (TEAMS.md section 10); the repositories append to it with each change. */
export class AuditLog {
  constructor(
    private readonly store: AuditRepository,
    private readonly pageSize = VERIFY_PAGE,
  ) {}

  /** Appends an entry of its own (what the service does by itself); changes append theirs in their own transaction. */
  async append(entry: NewAuditEntry): Promise<void> {
    await this.store.append(entry);
  }

  /** A page of entries and the seq to ask for the next one after (null at the end). */
  async list(query: AuditQuery): Promise<{ entries: AuditView[]; nextAfter: number | null }> {
    const rows = await this.store.list(query);
    const nextAfter = rows.length === query.limit ? rows[rows.length - 1]!.seq : null;
    return { entries: rows.map(toView), nextAfter };
  }

  /**
   * Recomputes the chain from the first entry, a page at a time (the log may outgrow memory): each
   * seq must follow the one before (a gap is a removed entry) and each hash must be the hash of the
   * previous one followed by the entry as stored. The first entry that fails is named; nothing is
   * repaired. Removing the newest entries leaves a shorter chain that still verifies: only a copy
   * of the last hash kept elsewhere can tell.
   */
  async verify(): Promise<AuditVerification> {
    let previous = GENESIS_HASH;
    let lastSeq = 0;
    let entries = 0;
    for (;;) {
      const rows = await this.store.chainAfter(lastSeq, this.pageSize);
      for (const row of rows) {
        entries++;
        if (row.seq !== lastSeq + 1) return { ok: false, entries, firstBadSeq: lastSeq + 1 };
        if (auditHash(previous, { ...row, detail: parseDetail(row.detail) }) !== row.hash) return { ok: false, entries, firstBadSeq: row.seq };
        previous = row.hash;
        lastSeq = row.seq;
      }
      if (rows.length < this.pageSize) return { ok: true, entries, firstBadSeq: null };
    }
  }
}
