import { createHash, randomBytes } from 'node:crypto';

/** Sessions kept at most; past it the oldest end first (a Map iterates in insertion order). */
export const MAX_CONSOLE_SESSIONS = 50_000;

export interface ConsoleSession {
  /** SHA-256 of the key signed in with: every request checks that key again, so revoking it ends the session. */
  keyDigest: Buffer;
  expiresAt: number;
}

const digestOf = (id: string): string => createHash('sha256').update(id, 'utf8').digest('hex');

/**
 * The browser console's sign-ins, kept by the service: the browser holds only a random session id
 * (256 bits, in an HttpOnly cookie), never the key. Ids are kept as digests, so a memory dump or a
 * log of this map gives nobody a cookie to replay.
 *
 * A session lives in this process: several replicas behind one address need sticky routing (or
 * the user signs in again on the replica they reach). A restart ends every session.
 */
export class ConsoleSessions {
  private readonly sessions = new Map<string, ConsoleSession>();

  constructor(
    private readonly lifetimeMs: number,
    private readonly now: () => number = Date.now,
    private readonly maxSessions = MAX_CONSOLE_SESSIONS,
  ) {}

  /** A new session for the key with this digest: its id, for the cookie, and when it ends. */
  start(keyDigest: Buffer): { id: string; expiresAt: Date } {
    this.forgetEnded();
    while (this.sessions.size >= this.maxSessions) {
      const oldest = this.sessions.keys().next().value;
      if (oldest === undefined) break;
      this.sessions.delete(oldest);
    }
    const id = randomBytes(32).toString('base64url');
    const expiresAt = this.now() + this.lifetimeMs;
    this.sessions.set(digestOf(id), { keyDigest, expiresAt });
    return { id, expiresAt: new Date(expiresAt) };
  }

  /** The live session with this id; an ended one is forgotten on the way. */
  find(id: string): ConsoleSession | undefined {
    const key = digestOf(id);
    const session = this.sessions.get(key);
    if (session === undefined) return undefined;
    if (session.expiresAt <= this.now()) {
      this.sessions.delete(key);
      return undefined;
    }
    return session;
  }

  end(id: string): void {
    this.sessions.delete(digestOf(id));
  }

  get size(): number {
    return this.sessions.size;
  }

  /** Sessions all live equally long, so those in insertion order end in that order: stop at the first live one. */
  private forgetEnded(): void {
    const now = this.now();
    for (const [id, session] of this.sessions) {
      if (session.expiresAt > now) break;
      this.sessions.delete(id);
    }
  }
}
