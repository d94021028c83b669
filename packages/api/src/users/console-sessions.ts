import { createHash, randomBytes } from 'node:crypto';
import type { ConsoleSessionRecord, ConsoleSessionRepository } from '../db/console-session-repository.js';
import { KEY_CACHE_TTL_MS } from './key-cache.js';

/** Sessions one key keeps at most; signing in again past it ends that key's oldest session. */
export const MAX_SESSIONS_PER_KEY = 50;
/** Sessions whose lookup this process remembers at most; the oldest go first (a Map keeps insertion order). */
const MAX_CACHED = 10_000;
/** How often sessions that expired are deleted (each is refused from its expiry on regardless). */
export const SESSION_SWEEP_MS = 5 * 60_000;

export interface ConsoleSession {
  /** SHA-256 of the key signed in with: every request checks that key again, so revoking it ends the session. */
  keyDigest: Buffer;
  expiresAt: number;
}

interface Cached {
  session: ConsoleSession;
  loadedAt: number;
}

const digestOf = (id: string): string => createHash('sha256').update(id, 'utf8').digest('hex');

const toSession = (record: ConsoleSessionRecord): ConsoleSession => ({ keyDigest: Buffer.from(record.keyDigest, 'hex'), expiresAt: record.expiresAt.getTime() });

/**
 * The browser console's sign-ins, stored in the database: the browser holds only a random session
 * id (256 bits, in an HttpOnly cookie), never the key, and the table holds only the id's digest.
 * A restart signs nobody out, and every replica accepts every session.
 *
 * A lookup is trusted for KEY_CACHE_TTL_MS, as a key's is: a sign-out on another replica is seen
 * here within that, and the key behind the session is checked through the key cache on every
 * request, so a revoked key or a disabled user ends the session everywhere within about a second.
 * Only sessions found are remembered: one made a moment ago on another replica is found at once.
 */
export class ConsoleSessions {
  private readonly cache = new Map<string, Cached>();
  private sweeper: NodeJS.Timeout | undefined;

  constructor(
    private readonly store: ConsoleSessionRepository,
    private readonly lifetimeMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** A new session for the key with this digest: its id, for the cookie, and when it ends. */
  async start(keyDigest: Buffer): Promise<{ id: string; expiresAt: Date }> {
    const id = randomBytes(32).toString('base64url');
    const createdAt = this.now();
    const expiresAt = new Date(createdAt + this.lifetimeMs);
    await this.store.createSession({ digest: digestOf(id), keyDigest: keyDigest.toString('hex'), createdAt: new Date(createdAt), expiresAt }, MAX_SESSIONS_PER_KEY);
    return { id, expiresAt };
  }

  /** The live session with this id, or undefined when it ended (expired, signed out, never was). */
  async find(id: string): Promise<ConsoleSession | undefined> {
    const digest = digestOf(id);
    const now = this.now();
    const cached = this.cache.get(digest);
    if (cached && now - cached.loadedAt < KEY_CACHE_TTL_MS) return cached.session.expiresAt > now ? cached.session : undefined;
    const record = await this.store.findSession(digest, new Date(now));
    this.cache.delete(digest);
    if (record === undefined) return undefined;
    const session = toSession(record);
    this.cache.set(digest, { session, loadedAt: now });
    if (this.cache.size > MAX_CACHED) this.cache.delete(this.cache.keys().next().value!);
    return session;
  }

  async end(id: string): Promise<void> {
    const digest = digestOf(id);
    this.cache.delete(digest);
    await this.store.deleteSession(digest);
    // A lookup that began before the delete may have put it back meanwhile.
    this.cache.delete(digest);
  }

  /** Deletes expired sessions every SESSION_SWEEP_MS; a failed sweep is reported and tried again next time. */
  startSweeping(onError: (error: unknown) => void, intervalMs = SESSION_SWEEP_MS): void {
    this.stopSweeping();
    this.sweeper = setInterval(() => {
      this.sweep().catch(onError);
    }, intervalMs);
    this.sweeper.unref();
  }

  stopSweeping(): void {
    clearInterval(this.sweeper);
    this.sweeper = undefined;
  }

  /** Deletes the sessions that expired; how many. */
  sweep(): Promise<number> {
    return this.store.deleteExpiredSessions(new Date(this.now()));
  }
}
