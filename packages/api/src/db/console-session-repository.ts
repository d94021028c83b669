/** The browser console's sessions (TEAMS.md section 11), for both dialects. */

export interface ConsoleSessionRecord {
  /** SHA-256 (hex) of the session id the cookie carries; the id itself is never stored. */
  digest: string;
  /** SHA-256 (hex) of the key signed in with. */
  keyDigest: string;
  createdAt: Date;
  expiresAt: Date;
}

export interface ConsoleSessionRepository {
  /** Stores the session; past `keep` sessions of the same key, the oldest of them end. */
  createSession(session: ConsoleSessionRecord, keep: number): Promise<void>;
  /** The session with this digest unless it has expired by `now`. */
  findSession(digest: string, now: Date): Promise<ConsoleSessionRecord | undefined>;
  deleteSession(digest: string): Promise<void>;
  /** Deletes the sessions expired by `now`; how many. */
  deleteExpiredSessions(now: Date): Promise<number>;
}
