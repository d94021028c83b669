import { UserId } from '@mada/protocol';
import { QUOTA_UNSET, type KeyOwner, type KeyRecord, type UserChanges, type UserRecord, type UserRepository, type UserRole, type UserUsage, type WorkspaceCheck } from '../db/user-repository.js';
import { keyDigest, newKey } from './api-keys.js';
import { ConfiguredUserError, KeyNotFoundError, LocalModeError, UserExistsError, UserNotFoundError, WorkspacesOverlapAtStartError } from './errors.js';
import { startOfUtcDay } from '../util/utc-day.js';
import type { StoredKeyCache } from './key-cache.js';
import type { Tenancy, WorkspaceOwner, Workspaces } from './workspace-paths.js';

/** The user of local mode, the only one there is then. */
export const LOCAL_USER = 'local';

export interface Quotas {
  maxConcurrentRuns: number;
  maxRunsPerDay: number;
  maxTokensPerDay: number;
}

const NO_LIMITS: Quotas = { maxConcurrentRuns: 0, maxRunsPerDay: 0, maxTokensPerDay: 0 };

const UNSET_QUOTAS: Quotas = { maxConcurrentRuns: QUOTA_UNSET, maxRunsPerDay: QUOTA_UNSET, maxTokensPerDay: QUOTA_UNSET };

/** A quota given as null: the user follows the service's default for it (QUOTA_UNSET when stored). */
export type QuotaChanges = { [K in keyof Quotas]?: number | null };

export interface User {
  id: string;
  role: UserRole;
  disabled: boolean;
  /** null for users of API_KEYS (and local mode's user): nothing records when they appeared. */
  createdAt: Date | null;
  /**
   * The paths the user's agents may reach, resolved (workspace-paths.ts): those stored for the user,
   * else their directory under WORKSPACES_DIR, else ALLOWED_PATHS. From get(), the directory under
   * WORKSPACES_DIR exists and was checked; list() only names it.
   */
  workspacePaths: string[];
  quotas: Quotas;
  source: 'config' | 'stored';
}

export interface NewUser {
  id: string;
  role: UserRole;
  workspacePaths?: string[];
  quotas?: QuotaChanges;
}

export interface UserUpdate {
  role?: UserRole;
  disabled?: boolean;
  workspacePaths?: string[];
  quotas?: QuotaChanges;
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
  /** Decides each user's workspace paths: stored ones, WORKSPACES_DIR/<id>, or ALLOWED_PATHS. */
  workspaces: Workspaces;
  /**
   * The quotas of a user who has none of their own: MAX_RUNS_PER_USER, MAX_RUNS_PER_DAY and
   * MAX_TOKENS_PER_DAY. Absent: no limits (the users command, which enforces nothing).
   */
  defaultQuotas?: Quotas;
  now: () => Date;
}

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
  /** What /health says when the database cannot be asked: the last answer it gave. */
  private lastTenancy: Tenancy = 'per_user';

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

  /** One user, their own directory under WORKSPACES_DIR made and checked: what runs use. */
  async get(id: string): Promise<User> {
    const { user, storedPaths } = await this.lookUp(id);
    return { ...user, workspacePaths: await this.options.workspaces.prepare({ id, storedPaths }) };
  }

  /** One user as they are shown, their directory under WORKSPACES_DIR named but not made. */
  async find(id: string): Promise<User> {
    return (await this.lookUp(id)).user;
  }

  private async lookUp(id: string): Promise<{ user: User; storedPaths: string[] }> {
    const configured = this.configuredUser(id);
    if (configured) return { user: configured, storedPaths: [] };
    const stored = await this.findStored(id);
    if (!stored) throw new UserNotFoundError();
    return { user: this.fromRecord(stored), storedPaths: storedPathsOf(stored) };
  }

  /**
   * `shared` when two or more users fall back to ALLOWED_PATHS (keyed, no WORKSPACES_DIR, no
   * paths of their own); local mode has one user, who shares with nobody.
   */
  async tenancy(): Promise<Tenancy> {
    if (!this.options.keyed) return 'per_user';
    try {
      this.lastTenancy = this.options.workspaces.tenancy(await this.owners());
    } catch {
      // The database is down (/health says so): the last answer stands.
    }
    return this.lastTenancy;
  }

  /**
   * Start-up's check that no two users' workspaces overlap: one whose paths hold another's would
   * let that user's agents reach the other's files. Throws WorkspaceOverlapError naming both.
   */
  async assertWorkspacesApart(): Promise<void> {
    if (!this.options.keyed) return;
    const found = await this.options.workspaces.findOverlap(await this.owners());
    if (found) throw new WorkspacesOverlapAtStartError(found.owner, found.other, found.path);
  }

  async list(): Promise<User[]> {
    const configured = this.configuredIds().map((id) => this.configuredUser(id)!);
    const stored = (await this.options.store.listUsers()).map((record) => this.fromRecord(record));
    return [...configured, ...stored];
  }

  async create(actor: string, input: NewUser, firstKeyName?: string): Promise<{ user: User; key?: string }> {
    if (this.configuredUser(input.id)) throw new UserExistsError();
    if (await this.findStored(input.id)) throw new UserExistsError();
    const requested = input.workspacePaths ?? [];
    const storedPaths = await this.options.workspaces.resolveRequested(requested);
    const now = this.options.now();
    const record: UserRecord = {
      id: input.id,
      role: input.role,
      disabled: false,
      createdAt: now,
      workspacePaths: JSON.stringify([...new Set(storedPaths)]),
      ...UNSET_QUOTAS,
      ...storedQuotas(input.quotas ?? {}),
    };
    const key = firstKeyName === undefined ? undefined : newKey(input.id, firstKeyName, now);
    // Every new user is checked: one given no paths gets WORKSPACES_DIR/<id> or ALLOWED_PATHS,
    // either of which may overlap a path stored for someone else.
    const stored = await this.options.store.createUser(record, key?.record, actor, this.overlapCheck(input.id, storedPaths, requested));
    if (!stored) throw new UserExistsError();
    return { user: this.fromRecord(stored), ...(key ? { key: key.key } : {}) };
  }

  async update(actor: string, id: string, update: UserUpdate): Promise<User> {
    if (this.configuredUser(id)) throw new ConfiguredUserError();
    if (!isStoredId(id)) throw new UserNotFoundError();
    const requested = update.workspacePaths;
    if (requested === undefined) return this.change(actor, id, update, undefined);
    if (!(await this.options.store.findUser(id))) throw new UserNotFoundError();
    const storedPaths = await this.options.workspaces.resolveRequested(requested);
    return this.change(actor, id, update, { paths: [...new Set(storedPaths)], check: this.overlapCheck(id, storedPaths, requested) });
  }

  private async change(actor: string, id: string, update: UserUpdate, workspace: { paths: string[]; check: WorkspaceCheck } | undefined): Promise<User> {
    const workspacePaths = workspace?.paths;
    const changes: UserChanges = {
      ...(update.role === undefined ? {} : { role: update.role }),
      ...(update.disabled === undefined ? {} : { disabled: update.disabled }),
      ...(workspacePaths === undefined ? {} : { workspacePaths: JSON.stringify(workspacePaths) }),
      ...storedQuotas(update.quotas ?? {}),
    };
    const stored = await this.options.store.updateUser(id, changes, actor, this.options.now(), workspace?.check);
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

  /**
   * Refuses (409) a workspace for `id` of `storedPaths` (resolved through their links; empty: none
   * of their own) that overlaps another user's: run by the repository inside the write's
   * transaction, against the stored users as they are there, so that two changes on two replicas
   * take turns instead of each passing against the other's old paths.
   */
  private overlapCheck(id: string, storedPaths: readonly string[], requested: readonly string[]): WorkspaceCheck {
    return (records) => this.options.workspaces.checkOverlap({ id, storedPaths }, this.ownersOf(records), requested);
  }

  /** Every user (configured and stored) with the paths stored for them. */
  private async owners(): Promise<WorkspaceOwner[]> {
    return this.ownersOf(await this.options.store.listUsers());
  }

  private ownersOf(records: readonly UserRecord[]): WorkspaceOwner[] {
    const configured = this.configuredIds().map((id) => ({ id, storedPaths: [] }));
    const stored = records.map((record) => ({ id: record.id, storedPaths: storedPathsOf(record) }));
    return [...configured, ...stored];
  }

  /**
   * The quotas that apply to a user's next run: their own, else the service's defaults. A user
   * that does not exist (deleted meanwhile) gets the defaults: its runs are refused elsewhere.
   */
  async quotasOf(userId: string): Promise<Quotas> {
    const configured = this.configuredUser(userId);
    if (configured) return configured.quotas;
    const stored = await this.findStored(userId);
    return stored ? this.quotasFrom(stored) : this.defaults;
  }

  /** Whether a stored user is disabled now (a configured one never is; an unknown one is refused elsewhere). */
  async isDisabled(userId: string): Promise<boolean> {
    if (this.configuredUser(userId)) return false;
    return (await this.findStored(userId))?.disabled === true;
  }

  usage(userId: string): Promise<UserUsage> {
    return this.options.store.usage(userId, startOfUtcDay(this.options.now()));
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
      workspacePaths: this.options.workspaces.pathsOf({ id, storedPaths: [] }),
      quotas: this.defaults,
      source: 'config',
    };
  }

  private fromRecord(record: UserRecord): User {
    return {
      id: record.id,
      role: this.roleOf(record.id, record.role),
      disabled: record.disabled,
      createdAt: record.createdAt,
      workspacePaths: this.options.workspaces.pathsOf({ id: record.id, storedPaths: storedPathsOf(record) }),
      quotas: this.quotasFrom(record),
      source: 'stored',
    };
  }

  private get defaults(): Quotas {
    return this.options.defaultQuotas ?? NO_LIMITS;
  }

  private quotasFrom(record: UserRecord): Quotas {
    const own = (stored: number, fallback: number): number => (stored === QUOTA_UNSET ? fallback : stored);
    const d = this.defaults;
    return {
      maxConcurrentRuns: own(record.maxConcurrentRuns, d.maxConcurrentRuns),
      maxRunsPerDay: own(record.maxRunsPerDay, d.maxRunsPerDay),
      maxTokensPerDay: own(record.maxTokensPerDay, d.maxTokensPerDay),
    };
  }
}

/** Quotas as stored: null (the default applies) becomes QUOTA_UNSET; those not given stay out. */
function storedQuotas(quotas: QuotaChanges): Partial<Quotas> {
  return Object.fromEntries(Object.entries(quotas).filter(([, v]) => v !== undefined).map(([k, v]) => [k, v ?? QUOTA_UNSET]));
}

const storedPathsOf = (record: UserRecord): string[] => JSON.parse(record.workspacePaths) as string[];

/** Stored users' ids are checked at creation: anything else names no stored user. */
const isStoredId = (id: string): boolean => UserId.safeParse(id).success;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
