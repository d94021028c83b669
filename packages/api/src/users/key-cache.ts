import type { KeyOwner, UserRepository } from '../db/user-repository.js';

/**
 * How long a stored key's lookup is trusted. A revocation, an expiry change or a disabled user
 * made on another replica (or by `npm run users`) is seen here at most this long after it
 * committed: the lookup a cached entry came from was issued after `loadedAt`, so it saw every
 * change committed before then.
 */
export const KEY_CACHE_TTL_MS = 500;
/** last_used_at is written at most this often per key: a write per request would cost more than the request. */
const TOUCH_INTERVAL_MS = 60_000;
/** Entries kept at most; the oldest go first (a Map iterates in insertion order). */
const MAX_ENTRIES = 10_000;

interface Entry {
  owner: KeyOwner;
  loadedAt: number;
}

/**
 * Stored keys by digest, each trusted for KEY_CACHE_TTL_MS. Only keys that exist are kept: a key
 * created a moment ago (by another replica, or the CLI) is found on its first use, and unknown
 * keys cost a lookup each, which the failed-credential limit bounds.
 */
export class StoredKeyCache {
  private readonly entries = new Map<string, Entry>();
  /** Lookups under way, shared by the requests that arrive meanwhile with the same key. */
  private readonly loading = new Map<string, Promise<KeyOwner | undefined>>();
  private readonly touched = new Map<string, number>();
  /** Bumped by clear(): a lookup issued before a local change does not put its answer back. */
  private generation = 0;

  constructor(
    private readonly store: UserRepository,
    private readonly onTouchError: (error: unknown) => void,
    private readonly now: () => number = Date.now,
  ) {}

  /** The key's owner as stored at most KEY_CACHE_TTL_MS ago; undefined for a key nobody stored. */
  async find(digest: string): Promise<KeyOwner | undefined> {
    const cached = this.entries.get(digest);
    if (cached && this.now() - cached.loadedAt < KEY_CACHE_TTL_MS) return cached.owner;
    let pending = this.loading.get(digest);
    if (!pending) {
      const loading = this.load(digest).finally(() => {
        if (this.loading.get(digest) === loading) this.loading.delete(digest);
      });
      pending = loading;
      this.loading.set(digest, loading);
    }
    return pending;
  }

  /** A change made here (revocation, disabled user) applies to this replica's next request at once. */
  clear(): void {
    this.generation += 1;
    this.loading.clear();
    this.entries.clear();
  }

  /** Records a use of the key, writing it at most once a minute, off the request's path. */
  used(keyId: string): void {
    const now = this.now();
    const last = this.touched.get(keyId);
    if (last !== undefined && now - last < TOUCH_INTERVAL_MS) return;
    this.touched.set(keyId, now);
    if (this.touched.size > MAX_ENTRIES) this.touched.delete(this.touched.keys().next().value!);
    this.store.touchKey(keyId, new Date(now)).catch(this.onTouchError);
  }

  private async load(digest: string): Promise<KeyOwner | undefined> {
    const loadedAt = this.now();
    const generation = this.generation;
    const owner = await this.store.findKeyByDigest(digest);
    if (generation !== this.generation) return owner;
    this.entries.delete(digest);
    if (owner) {
      this.entries.set(digest, { owner, loadedAt });
      if (this.entries.size > MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!);
    }
    return owner;
  }
}
