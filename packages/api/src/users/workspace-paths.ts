import { constants } from 'node:fs';
import { lstat, mkdir, open, realpath, stat } from 'node:fs/promises';
import { isAbsolute, join, relative, sep } from 'node:path';
import { UserId } from '@mada/protocol';
import { SettingsError, type Settings } from '../settings.js';
import { UnsafeWorkspaceError, WorkspaceOverlapError, WorkspacePathError } from './errors.js';

/**
 * Which paths a user's agents may reach (TEAMS.md section 9), decided here and nowhere else:
 *
 * 1. the paths an admin stored for the user;
 * 2. else `WORKSPACES_DIR/<user id>`, when WORKSPACES_DIR is set (made 0700 on first use);
 * 3. else ALLOWED_PATHS, shared by every such user, as in version 1.1.
 *
 * Stored paths are resolved (symbolic links followed) when they are stored, and refused if they
 * overlap another user's; the tools resolve them again on every use, so a link swapped in later
 * reaches no further than the path's target did then.
 */

/** `shared`: several users reach the same ALLOWED_PATHS; `per_user`: nobody shares. */
export type Tenancy = 'shared' | 'per_user';

/** A user as far as workspaces go: the id and what an admin stored (empty: none). */
export interface WorkspaceOwner {
  id: string;
  storedPaths: readonly string[];
}

/** Whether `inner` is `outer` or lies below it; both absolute and normalized. */
function contains(outer: string, inner: string): boolean {
  const rel = relative(outer, inner);
  return rel === '' || (!isAbsolute(rel) && rel !== '..' && !rel.startsWith(`..${sep}`));
}

const overlap = (a: string, b: string): boolean => contains(a, b) || contains(b, a);

/** The index of the first of `mine` that overlaps any of `theirs`, or -1. */
const overlappingIndex = (mine: readonly string[], theirs: readonly string[]): number =>
  mine.findIndex((path) => theirs.some((their) => overlap(path, their)));

const codeOf = (error: unknown): string | undefined => (error as NodeJS.ErrnoException).code;

/** The service's own uid: every workspace directory must be its own. */
const serviceUid = (): number | undefined => process.getuid?.();

/**
 * WORKSPACES_DIR, ready to hold users' directories: made (0700, parents too) when missing, its
 * symbolic links resolved once here. It must be a directory of the service's own that no other
 * account may write: one that could would let that account swap a user's directory for a link.
 */
export async function prepareWorkspacesDir(dir: string): Promise<string> {
  try {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const real = await realpath(dir);
    const stats = await stat(real);
    if (!stats.isDirectory()) throw new SettingsError('WORKSPACES_DIR', `not a directory: ${dir}`);
    const uid = serviceUid();
    if (uid !== undefined && stats.uid !== uid) throw new SettingsError('WORKSPACES_DIR', `${real} belongs to uid ${stats.uid}, not to the service's (${uid})`);
    if ((stats.mode & 0o022) !== 0) throw new SettingsError('WORKSPACES_DIR', `${real} is writable by other accounts (mode ${(stats.mode & 0o777).toString(8)}): chmod go-w it`);
    return real;
  } catch (error) {
    if (error instanceof SettingsError) throw error;
    throw new SettingsError('WORKSPACES_DIR', `${dir}: ${(error as Error).message}`);
  }
}

/** The workspaces the settings describe; WORKSPACES_DIR, when set, is made ready first. */
export async function openWorkspaces(settings: Pick<Settings, 'workspacesDir' | 'allowedPaths'>): Promise<Workspaces> {
  const root = settings.workspacesDir === '' ? undefined : await prepareWorkspacesDir(settings.workspacesDir);
  return new Workspaces({ root, allowedPaths: settings.allowedPaths });
}

export interface WorkspacesOptions {
  /** prepareWorkspacesDir's answer, or undefined when WORKSPACES_DIR is unset. */
  root: string | undefined;
  /** ALLOWED_PATHS, resolved: the fallback every user without a workspace of their own shares. */
  allowedPaths: readonly string[];
}

export class Workspaces {
  constructor(private readonly options: WorkspacesOptions) {}

  /** Whether a user given no paths gets a directory of their own. */
  get perUserDirectories(): boolean {
    return this.options.root !== undefined;
  }

  /** The user's workspace paths, as they are shown; nothing is created. */
  pathsOf(owner: WorkspaceOwner): string[] {
    if (owner.storedPaths.length > 0) return [...owner.storedPaths];
    const own = this.ownDirectory(owner.id);
    return own === undefined ? [...this.options.allowedPaths] : [own];
  }

  /**
   * The user's workspace paths for use: their own directory under WORKSPACES_DIR is made (0700)
   * the first time, and refused if what is there is not a directory of the service's own (a
   * symbolic link, a file, another account's directory).
   */
  async prepare(owner: WorkspaceOwner): Promise<string[]> {
    const paths = this.pathsOf(owner);
    if (owner.storedPaths.length === 0 && this.options.root !== undefined) await ensureOwnDirectory(paths[0]!);
    return paths;
  }

  /** Whether the user falls back to ALLOWED_PATHS (which others may share). */
  sharesAllowedPaths(owner: WorkspaceOwner): boolean {
    return owner.storedPaths.length === 0 && this.options.root === undefined;
  }

  /** `shared` when two or more of `owners` fall back to ALLOWED_PATHS. */
  tenancy(owners: readonly WorkspaceOwner[]): Tenancy {
    return owners.filter((owner) => this.sharesAllowedPaths(owner)).length > 1 ? 'shared' : 'per_user';
  }

  /**
   * Paths an admin asks to store, each resolved through its symbolic links (duplicates kept). A
   * path that does not exist or is not a directory is refused (422).
   */
  async resolveRequested(paths: readonly string[]): Promise<string[]> {
    const resolved: string[] = [];
    for (const path of paths) {
      // The schema already asks for absolute paths; the CLI and other callers are checked here.
      if (!isAbsolute(path)) throw new WorkspacePathError(`Workspace path is not absolute: ${path}`);
      let real: string;
      try {
        real = await realpath(path);
      } catch (error) {
        const code = codeOf(error);
        if (code === 'ENOENT' || code === 'ENOTDIR') throw new WorkspacePathError(`Workspace path does not exist: ${path}`);
        throw new WorkspacePathError(`Workspace path cannot be read: ${path}`);
      }
      if (!(await stat(real)).isDirectory()) throw new WorkspacePathError(`Workspace path is not a directory: ${path}`);
      // In the order given, one for one: checkOverlap names a refused path as it was given.
      resolved.push(real);
    }
    return resolved;
  }

  /**
   * Refuses (409) a workspace for `owner` that contains or lies inside another user's, compared
   * after resolving symbolic links on both sides. Users who both fall back to ALLOWED_PATHS share
   * it by design (version 1.1); anyone else overlapping them does not. `shown` names the paths as
   * the admin gave them, for the message.
   */
  async checkOverlap(owner: WorkspaceOwner, others: readonly WorkspaceOwner[], shown: readonly string[] = owner.storedPaths): Promise<void> {
    const mine = await this.comparable(owner);
    const names = owner.storedPaths.length > 0 ? shown : mine;
    for (const other of others) {
      if (!this.mayOverlap(owner, other)) continue;
      const index = overlappingIndex(mine, await this.comparable(other));
      if (index >= 0) throw new WorkspaceOverlapError(names[index] ?? mine[index]!);
    }
  }

  /**
   * The first two users whose workspaces overlap, if any. Storing a user checks them against the
   * others, but API_KEYS can gain a user at any restart whose WORKSPACES_DIR directory lies inside
   * paths stored earlier for someone else: start-up asks this of everyone.
   */
  async findOverlap(owners: readonly WorkspaceOwner[]): Promise<{ owner: string; other: string; path: string } | undefined> {
    // Each user's paths resolved once: the pairs are then compared as text.
    const resolved = await Promise.all(owners.map((owner) => this.comparable(owner)));
    for (let i = 0; i < owners.length; i += 1) {
      for (let j = i + 1; j < owners.length; j += 1) {
        if (!this.mayOverlap(owners[i]!, owners[j]!)) continue;
        const index = overlappingIndex(resolved[i]!, resolved[j]!);
        if (index >= 0) return { owner: owners[i]!.id, other: owners[j]!.id, path: resolved[i]![index]! };
      }
    }
    return undefined;
  }

  /** Two users who both fall back to ALLOWED_PATHS share it by design (version 1.1). */
  private mayOverlap(owner: WorkspaceOwner, other: WorkspaceOwner): boolean {
    return other.id !== owner.id && !(this.sharesAllowedPaths(owner) && this.sharesAllowedPaths(other));
  }

  /**
   * The paths a user reaches, symbolic links resolved as they are now; a directory not made yet,
   * or one gone, counts by its name (the tools would refuse it anyway).
   */
  private async comparable(owner: WorkspaceOwner): Promise<string[]> {
    const paths = this.pathsOf(owner);
    // A user's own directory is never followed: a link there is refused on use, not trusted here.
    if (owner.storedPaths.length === 0 && this.options.root !== undefined) return paths;
    return Promise.all(paths.map((path) => realpath(path).catch(() => path)));
  }

  private ownDirectory(id: string): string | undefined {
    if (this.options.root === undefined) return undefined;
    // Ids are checked when users are stored and, with WORKSPACES_DIR, at start-up: never trusted to join.
    if (!UserId.safeParse(id).success) throw new UnsafeWorkspaceError(`Workspace cannot be named after user id ${JSON.stringify(id)}`);
    return join(this.options.root, id);
  }
}

/**
 * Makes `path` (mode 0700) if it is missing, then checks the entry through a descriptor opened
 * without following a link, so what is checked is what is there: a directory, owned by the service.
 */
async function ensureOwnDirectory(path: string): Promise<void> {
  let made = false;
  try {
    await mkdir(path, { mode: 0o700 });
    made = true;
  } catch (error) {
    if (codeOf(error) !== 'EEXIST') throw new UnsafeWorkspaceError(`Workspace cannot be made: ${path} (${codeOf(error) ?? 'error'})`);
  }
  let handle;
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    // A link fails O_NOFOLLOW or O_DIRECTORY, depending on its target: say which it is.
    const link = await lstat(path).then((stats) => stats.isSymbolicLink(), () => false);
    const code = codeOf(error);
    const what = link ? 'is a symbolic link' : code === 'ENOTDIR' ? 'is not a directory' : `cannot be opened (${code ?? 'error'})`;
    throw new UnsafeWorkspaceError(`Workspace ${what}: ${path}`);
  }
  try {
    const stats = await handle.stat();
    const uid = serviceUid();
    if (uid !== undefined && stats.uid !== uid) throw new UnsafeWorkspaceError(`Workspace belongs to another account: ${path}`);
    // mkdir's mode passes through the umask, which may take bits away but must not leave any more.
    if (made) await handle.chmod(0o700);
  } finally {
    await handle.close();
  }
}
