import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';

/** The hash before the first entry. */
export const GENESIS_HASH = '0'.repeat(64);

/** An entry as it is hashed: everything but its hash, the time as ISO 8601 (milliseconds, UTC). */
export interface HashedFields {
  seq: number;
  at: Date;
  actor: string;
  action: string;
  target: string | null;
  detail: unknown;
}

/**
 * hex SHA-256 of the previous entry's hash followed by this entry (without its hash) as RFC 8785
 * canonical JSON: sorted keys, no whitespace, numbers and strings in one spelling. Anyone holding
 * the rows can recompute it with any RFC 8785 implementation.
 */
export function auditHash(previous: string, entry: HashedFields): string {
  const canonical = canonicalize({
    seq: entry.seq,
    at: entry.at.toISOString(),
    actor: entry.actor,
    action: entry.action,
    target: entry.target,
    detail: entry.detail,
  });
  return createHash('sha256').update(previous).update(canonical!).digest('hex');
}
