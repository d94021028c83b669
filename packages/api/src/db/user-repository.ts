/** Stored users and their API keys (TEAMS.md section 8), for both dialects. */

import type { UsageOfModel } from './daily-usage.js';

export type UserRole = 'admin' | 'member';

/**
 * A stored quota the user was not given: the service's setting applies (MAX_RUNS_PER_USER,
 * MAX_RUNS_PER_DAY, MAX_TOKENS_PER_DAY), and follows it when it changes. Not NULL: the columns
 * were made NOT NULL, and loosening that on SQLite means rebuilding the users table, whose drop
 * would cascade to every stored key.
 */
export const QUOTA_UNSET = -1;

export interface UserRecord {
  id: string;
  role: UserRole;
  disabled: boolean;
  createdAt: Date;
  /** JSON list of absolute paths; '[]' means the service's ALLOWED_PATHS. */
  workspacePaths: string;
  /** The quotas: 0 no limit, QUOTA_UNSET the service's default. */
  maxConcurrentRuns: number;
  maxRunsPerDay: number;
  maxTokensPerDay: number;
}

export type UserChanges = Partial<Omit<UserRecord, 'id' | 'createdAt'>>;

export interface KeyRecord {
  id: string;
  userId: string;
  name: string;
  prefix: string;
  /** SHA-256 of the key, hex. */
  digest: string;
  createdAt: Date;
  expiresAt: Date | null;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
}

/** What authentication needs of a key: the key's own state and its user's. */
export interface KeyOwner {
  keyId: string;
  userId: string;
  role: UserRole;
  userDisabled: boolean;
  expiresAt: Date | null;
  revokedAt: Date | null;
  lastUsedAt: Date | null;
}

export interface UserUsage {
  runsToday: number;
  tokensToday: number;
  running: number;
  /** Today's runs and tokens per model, by name; what is not attributed to one last (model null). */
  byModel: UsageOfModel[];
}

/**
 * A workspace change's check against every stored user (as they are inside the change's
 * transaction); it throws to refuse the change, and nothing is written.
 */
export type WorkspaceCheck = (stored: readonly UserRecord[]) => Promise<void>;

export interface UserRepository {
  countUsers(): Promise<number>;
  /*
   * The writes below record what they did in the audit log, as `actor`, in their own transaction:
   * a change and its entry commit together or not at all.
   */
  /*
   * A `check` given to createUser or updateUser runs in the write's transaction, after every other
   * workspace change (on any replica) has committed or rolled back and before any other starts:
   * two changes can never each pass the overlap check against the other's old paths.
   */
  /** Stores the user (and its first key, in the same transaction); undefined when the id is taken. */
  createUser(user: UserRecord, key: KeyRecord | undefined, actor: string, check?: WorkspaceCheck): Promise<UserRecord | undefined>;
  findUser(id: string): Promise<UserRecord | undefined>;
  listUsers(): Promise<UserRecord[]>;
  updateUser(id: string, changes: UserChanges, actor: string, now: Date, check?: WorkspaceCheck): Promise<UserRecord | undefined>;
  createKey(key: KeyRecord, actor: string): Promise<KeyRecord>;
  /** The user's keys, newest first. */
  listKeys(userId: string): Promise<KeyRecord[]>;
  /** Revokes one of the user's keys (a second revocation keeps the first time); undefined if the user has no such key. */
  revokeKey(userId: string, keyId: string, now: Date, actor: string): Promise<KeyRecord | undefined>;
  /** The key with this digest and its user, through the digest's unique index. */
  findKeyByDigest(digest: string): Promise<KeyOwner | undefined>;
  touchKey(keyId: string, now: Date): Promise<void>;
  /** The user's runs created since `since`, their tokens, and how many run (or wait for an approval) now. */
  usage(userId: string, since: Date): Promise<UserUsage>;
}
