import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { KeyRecord } from '../db/user-repository.js';

export const KEY_PREFIX = 'mada_';
/** Random bytes per key: 256 bits, beyond guessing. */
const KEY_BYTES = 32;
/** Base62 digits 32 bytes need at most (62^43 > 2^256), so every key has the same length. */
const KEY_DIGITS = 43;
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
/** Characters of a key shown in listings: enough to tell keys apart, too few to use. */
export const SHOWN_PREFIX = 12;

function base62(bytes: Buffer): string {
  let value = BigInt(`0x${bytes.toString('hex')}`);
  let digits = '';
  for (let i = 0; i < KEY_DIGITS; i++) {
    digits = BASE62[Number(value % 62n)]! + digits;
    value /= 62n;
  }
  return digits;
}

/** SHA-256 of a key, hex: all the database keeps of it. */
export const keyDigest = (key: string): string => createHash('sha256').update(key, 'utf8').digest('hex');

/** A new key for `userId`: the key itself, to be shown once, and the record that stores its digest. */
export function newKey(userId: string, name: string, now: Date, expiresInDays?: number): { key: string; record: KeyRecord } {
  const key = KEY_PREFIX + base62(randomBytes(KEY_BYTES));
  const record: KeyRecord = {
    id: randomUUID(),
    userId,
    name,
    prefix: key.slice(0, SHOWN_PREFIX),
    digest: keyDigest(key),
    createdAt: now,
    expiresAt: expiresInDays === undefined ? null : new Date(now.getTime() + expiresInDays * 86_400_000),
    lastUsedAt: null,
    revokedAt: null,
  };
  return { key, record };
}
