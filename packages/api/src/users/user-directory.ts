import { UserId } from '@mada/protocol';
import type { KeyOwner, KeyRecord, UserChanges, UserRecord, UserRepository, UserRole, UserUsage } from '../db/user-repository.js';
import { keyDigest, newKey } from './api-keys.js';
import { ConfiguredUserError, KeyNotFoundError, LocalModeError, UserExistsError, UserNotFoundError } from './errors.js';
import type { StoredKeyCache } from './key-cache.js';

/** The user of local mode, the only one there is then. */
export const LOCAL_USER = 'local';

export interface Quotas {
  maxConcurrentRuns: number;
  maxRunsPerDay: number;
  maxTokensPerDay: number;
}

const NO_LIMITS: Quotas = { maxConcurrentRuns: 0, maxRunsPerDay: 0, maxTokensPerDay: 0 };

export interface User {
  id: string;
  role: UserRole;
  disabled: boolean;
  /** null for users of API_KEYS (and local mode's user): nothing records when they appeared. */
  createdAt: Date | null;
  workspacePaths: string[];
  quotas: Quotas;
  source: 'config' | 'stored';
}

export interface NewUser {
  id: string;
  role: UserRole;
  workspacePaths?: string[];
  quotas?: Partial<Quotas>;
}

export interface UserUpdate {
  role?: UserRole;
  disabled?: boolean;
  workspacePaths?: string[];
  quotas?: Partial<Quotas>;
}

export interface UserDirectoryOptions {
  store: UserRepository;
  keys: StoredKeyCache;
  /** Ids of the users of API_KEYS; empty with no API_KEYS. */
  configuredUsers: readonly string[];
  /** ADMIN_USERS. */
  adminUsers: readonly string[];
  /** Whether the service asks for keys: decided once, at start-up. */
  keyed: boolean;
  /** ALLOWED_PATHS: the workspace of configured users and of stored users given none. */
  allowedPaths: readonly string[];
  now: () => Date;
}

/** The start of the UTC day `now` is in: where `runs_today` and `tokens_today` start counting. */
const startOfDay = (now: Date): Date => new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));

/**
 * Every user the service knows: those of API_KEYS (`source: "config"`, changed only there), those
 * stored in the database, and in local mode the one user `local`. Changes that take a user's or a
 * key's access away clear this replica's key cache at once; other replicas see them within the
 * cache's lifetime (key-cache.ts).
 */
export class UserDirectory {
  private readonly configured: ReadonlySet<string>;
  private readonly admins: ReadonlySet<string>;
  private readonly disabledListeners: ((userId: string) => Promise<void>)[] = [];

  constructor(private readonly options: UserDirectoryOptions) {
    this.configured = new Set(options.configuredUsers);
    this.admins = new Set(options.adminUsers);
  }

  get keyed(): boolean {
    return this.options.keyed;
  }

  /** Called (and awaited) after a user is disabled: their runs are cancelled there. */
  onDisabled(listener: (userId: string) => Promise<void>): void {
    this.disabledListeners.push(listener);
  }

  /** The owner of a stored key if it may be used now: not revoked, not expired, its user enabled. */
  authenticate(presented: string): Promise<KeyOwner | undefined> {
    return this.authenticateDigest(keyDigest(presented));
  }

  /** authenticate() for a key known by its SHA-256 digest (hex): a console session's. */
  async authenticateDigest(digest: string): Promise<KeyOwner | undefined> {
    const owner = await this.options.keys.find(digest);
    if (!owner || owner.revokedAt !== null || owner.userDisabled) return undefined;
    if (owner.expiresAt !== null && owner.expiresAt.getTime() <= this.options.now().getTime()) return undefined;
    this.options.keys.used(owner.keyId);
    return { ...owner, role: this.roleOf(owner.userId, owner.role) };
  }

  /** The role of a configured user (or `local`). */
  configuredRole(userId: string): UserRole {
    return this.roleOf(userId, this.options.keyed ? 'member' : 'admin');
  }

  async get(id: string): Promise<User> {
    const configured = this.configuredUser(id);
    if (configured) return configured;
    const stored = await this.findStored(id);
    if (!stored) throw new UserNotFoundError();
    return this.fromRecord(stored);
  }

  async list(): Promise<User[]> {
    const configured = this.configuredIds().map((id) => this.configuredUser(id)!);
    const stored = (await this.options.store.listUsers()).map((record) => this.fromRecord(record));
    return [...configured, ...stored];
  }

  async create(actor: string, input: NewUser, firstKeyName?: string): Promise<{ user: User; key?: string }> {
    if (this.configuredUser(input.id)) throw new UserExistsError();
    const now = this.options.now();
    const record: UserRecord = {
      id: input.id,
      role: input.role,
      disabled: false,
      createdAt: now,
      workspacePaths: JSON.stringify(input.workspacePaths ?? []),
      ...NO_LIMITS,
      ...input.quotas,
    };
    const key = firstKeyName === undefined ? undefined : newKey(input.id, firstKeyName, now);
    const stored = await this.options.store.createUser(record, key?.record, actor);
    if (!stored) throw new UserExistsError();
    return { user: this.fromRecord(stored), ...(key ? { key: key.key } : {}) };
  }

  async update(actor: string, id: string, update: UserUpdate): Promise<User> {
    if (this.configuredUser(id)) throw new ConfiguredUserError();
    const changes: UserChanges = {
      ...(update.role === undefined ? {} : { role: update.role }),
      ...(update.disabled === undefined ? {} : { disabled: update.disabled }),
      ...(update.workspacePaths === undefined ? {} : { workspacePaths: JSON.stringify(update.workspacePaths) }),
      ...update.quotas,
    };
    if (!isStoredId(id)) throw new UserNotFoundError();
    const stored = await this.options.store.updateUser(id, changes, actor, this.options.now());
    if (!stored) throw new UserNotFoundError();
    // Access taken away (or given back) applies to this replica's next request.
    this.options.keys.clear();
    if (update.disabled === true) for (const listener of this.disabledListeners) await listener(id);
    return this.fromRecord(stored);
  }

  /** The user's stored keys, newest first; a configured user has none (their key is in API_KEYS). */
  async keysOf(userId: string): Promise<KeyRecord[]> {
    this.requireKeyed();
    if (this.configuredUser(userId)) return [];
    return this.options.store.listKeys(userId);
  }

  /** A new key for a stored user: the record and the key itself, which nothing shows again. */
  async createKey(actor: string, userId: string, name: string, expiresInDays?: number): Promise<{ record: KeyRecord; key: string }> {
    this.requireKeyed();
    if (this.configuredUser(userId)) throw new ConfiguredUserError();
    if (!(await this.findStored(userId))) throw new UserNotFoundError();
    const { key, record } = newKey(userId, name, this.options.now(), expiresInDays);
    return { record: await this.options.store.createKey(record, actor), key };
  }

  async revokeKey(actor: string, userId: string, keyId: string): Promise<void> {
    this.requireKeyed();
    // PostgreSQL refuses to compare a uuid column with text that is not one.
    if (!UUID.test(keyId) || !isStoredId(userId)) throw new KeyNotFoundError();
    const revoked = await this.options.store.revokeKey(userId, keyId.toLowerCase(), this.options.now(), actor);
    if (!revoked) throw new KeyNotFoundError();
    this.options.keys.clear();
  }

  usage(userId: string): Promise<UserUsage> {
    return this.options.store.usage(userId, startOfDay(this.options.now()));
  }

  /** A stored user; an id no stored user can have (a NUL byte, 300 characters) is not looked up. */
  private findStored(id: string): Promise<UserRecord | undefined> {
    return isStoredId(id) ? this.options.store.findUser(id) : Promise.resolve(undefined);
  }

  private requireKeyed(): void {
    if (!this.options.keyed) throw new LocalModeError();
  }

  private roleOf(userId: string, stored: UserRole): UserRole {
    return this.admins.has(userId) ? 'admin' : stored;
  }

  private configuredIds(): string[] {
    return this.options.keyed ? [...this.configured] : [LOCAL_USER];
  }

  private configuredUser(id: string): User | undefined {
    if (!this.configuredIds().includes(id)) return undefined;
    return {
      id,
      role: this.configuredRole(id),
      disabled: false,
      createdAt: null,
      workspacePaths: [...this.options.allowedPaths],
      quotas: NO_LIMITS,
      source: 'config',
    };
  }

  private fromRecord(record: UserRecord): User {
    const paths = JSON.parse(record.workspacePaths) as string[];
    return {
      id: record.id,
      role: this.roleOf(record.id, record.role),
      disabled: record.disabled,
      createdAt: record.createdAt,
      workspacePaths: paths.length > 0 ? paths : [...this.options.allowedPaths],
      quotas: { maxConcurrentRuns: record.maxConcurrentRuns, maxRunsPerDay: record.maxRunsPerDay, maxTokensPerDay: record.maxTokensPerDay },
      source: 'stored',
    };
  }
}

/** Stored users' ids are checked at creation: anything else names no stored user. */
const isStoredId = (id: string): boolean => UserId.safeParse(id).success;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
