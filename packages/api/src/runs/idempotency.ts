import { createHash } from 'node:crypto';

/** How long a key keeps answering with its first run. */
export const IDEMPOTENCY_WINDOW_MS = 24 * 3_600_000;

/** A stable digest of what a request asked for, so a reused key with another body is told apart. */
export function requestHash(route: string, body: unknown): string {
  return createHash('sha256').update(route).update('\0').update(canonicalJson(body)).digest('hex');
}

/** JSON with object keys sorted, so the same body hashes the same whatever the key order. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
