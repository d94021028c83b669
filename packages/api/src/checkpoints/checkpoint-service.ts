import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { RunHead } from '../db/run-repository.js';
import { ACTIVE_RUN_STATUSES } from '../db/run-repository.js';
import { NotFoundError } from '../errors.js';
import { errorMessage } from '../util/error-message.js';
import type { PathSandbox } from '../tools/sandbox/paths.js';
import { detectSandbox, isAvailable, SandboxProbes } from '../tools/sandbox/launcher.js';
import { changedPaths, describeChanges, type Changes } from './changes.js';
import {
  FilesChangedError,
  NoCheckpointError,
  OutsideWorkspaceError,
  RevertRefusedError,
  RevertSandboxUnavailableError,
  RunInProgressError,
  SnapshotBelowDiskFloorError,
  SnapshotSandboxUnavailableError,
  WorkingDirChangedError,
} from './errors.js';
import { floorBreach, type FloorSettings } from '../tools/sandbox/disk-floor.js';
import { writeObject } from './loose-store.js';
import { changedSinceRun, restore } from './revert.js';
import { restoreInSandbox } from './sandboxed-restore.js';
import { fromBytes, ShadowRepo, type Snapshot, type TreeAccess } from './shadow-repo.js';
import { openWorkingDir, stillLeadsTo, type DirIdentity, type PinnedDir } from './working-dir-pin.js';

export interface CheckpointOptions {
  /** Where the shadow repositories live: a folder under DATA_DIR, never inside a working directory. */
  root: string;
  /** CHECKPOINT_MAX_FILE_BYTES: larger files are left out of snapshots and listed. */
  maxFileBytes: number;
  /** Never snapshotted, even inside a working directory: DATA_DIR itself, the database files. */
  excludedPaths: readonly string[];
  /** The address space of each shadow git process (git.ts, DEFAULT_GIT_MEMORY_BYTES when absent). */
  gitMemoryBytes?: number;
  log: { warn(object: object, message: string): void };
  /**
   * SANDBOX_ENABLED, SANDBOX_MEMORY_MB, SANDBOX_MAX_PROCESSES: a snapshot's git reads and a revert
   * writes inside the sandbox, and both refuse when it is on but not working. Absent: on, with the
   * default limits.
   */
  sandbox?: { enabled: boolean; memoryMb: number; maxProcesses: number };
  /** The free-space floor on `root`'s file system: below it no snapshot is taken. Absent: none. */
  floor?: FloorSettings;
  /**
   * Each user's workspace, as it is now: a run's checkpoint is read (changes, the end snapshot a
   * stopped service left to take) and reverted only while its working directory is still in its
   * owner's. Absent: no such check (the service always passes it).
   */
  workspaces?: { of(userId: string): Promise<PathSandbox> };
  /** Told of each revert that put files back (the audit log's `checkpoint.reverted`). */
  onReverted?: (run: RunHead, paths: readonly string[]) => Promise<void>;
}

const DEFAULT_SANDBOX = { enabled: true, memoryMb: 2048, maxProcesses: 256 };

/** What a run's checkpoint holds besides its two trees. */
interface RunMeta {
  skipped: string[];
  /** Directories a snapshot could not read, with the reason (Snapshot.unread). */
  unread?: string[];
  error?: string;
  /**
   * The working directory the run started in (working-dir-pin.ts): its end snapshot and any revert
   * work on that directory or not at all. Absent in checkpoints of earlier versions.
   */
  pin?: DirIdentity;
}

interface RunRefs {
  before?: string;
  after?: string;
  meta: RunMeta;
}

/** The hooks a run gets: the first is awaited before each modifying tool call, the second once at its end. */
export interface RunCheckpoint {
  beforeModify(): Promise<void>;
  finish(): Promise<void>;
}

const refsOf = (runId: string): string => `refs/mada/runs/${runId}/`;

/** Failures remembered in memory when even the reason cannot be written to the shadow repository (a full disk). */
const REMEMBERED_FAILURES = 1000;

/**
 * Checkpoints of runs (EXTENSIONS.md section 4): a snapshot of the working directory before a
 * run's first modifying tool call and one at its end, kept as trees under per-run refs of a shadow
 * repository per working directory. A failed snapshot is recorded with its reason and never fails
 * the run. Work on one shadow repository is serialized (one lock per repository).
 */
export class CheckpointService {
  private readonly repos = new Map<string, ShadowRepo>();
  private readonly locks = new Map<string, Promise<unknown>>();
  private readonly failures = new Map<string, string>();
  /** Whether snapshots can run git sandboxed: probed once, like the tools' sandbox. */
  private readonly probes = new SandboxProbes();

  constructor(private readonly options: CheckpointOptions) {}

  forRun(runId: string, workingDir: string): RunCheckpoint {
    let before: Promise<boolean> | undefined;
    // Held for the whole run: its identity is what the run's snapshots must find at its path.
    let pinned: PinnedDir | undefined;
    try {
      pinned = openWorkingDir(workingDir);
    } catch {
      // The snapshot before the run records that it could not be taken.
    }
    const pin = pinned?.identity;
    return {
      beforeModify: async () => {
        before ??= this.take(runId, workingDir, 'before', pin);
        await before;
      },
      finish: async () => {
        try {
          if (before && (await before)) await this.take(runId, workingDir, 'after', pin);
        } finally {
          pinned?.close();
        }
      },
    };
  }

  /** GET /runs/{id}/changes: what the run changed, between its two snapshots. */
  async changes(run: RunHead): Promise<Changes> {
    const { repo, refs } = await this.endedCheckpoint(run);
    const notes = [
      ...refs.meta.skipped.map((path) => `Not in the checkpoint (over CHECKPOINT_MAX_FILE_BYTES): ${path}`),
      ...(refs.meta.unread ?? []).map((dir) => `Not in the checkpoint, nor undone by a revert: ${dir}`),
    ];
    return describeChanges(repo, refs.before!, refs.after!, notes);
  }

  /** POST /runs/{id}/revert: every file the run changed back as it was before; the paths reverted. */
  async revert(run: RunHead, force: boolean): Promise<string[]> {
    const reverted = await this.putBack(run, force);
    // The files are back whatever the log says: a failure to record it is logged, not the revert's.
    await this.options.onReverted?.(run, reverted).catch((error: unknown) => this.options.log.warn({ err: error, run_id: run.id }, 'could not record a revert in the audit log'));
    return reverted;
  }

  private async putBack(run: RunHead, force: boolean): Promise<string[]> {
    const { repo, refs } = await this.endedCheckpoint(run);
    const pin = refs.meta.pin;
    if (!pin) throw new NoCheckpointError('it was taken by an earlier version, which did not record which directory the run worked in');
    return this.locked(repo, async () => {
      const paths = await changedPaths(repo, refs.before!, refs.after!);
      const dir = this.reopen(run.workingDir, pin);
      try {
        if (!force) {
          const changed = await changedSinceRun(repo, dir.path, refs.after!, paths);
          if (changed.length > 0) throw new FilesChangedError(changed.map(fromBytes));
        }
        await this.restore(repo, dir, refs.before!, paths);
      } catch (error) {
        throw error instanceof WorkingDirChangedError ? new RevertRefusedError(error) : error;
      } finally {
        dir.close();
      }
      return paths.map(fromBytes);
    });
  }

  private reopen(workingDir: string, pin: DirIdentity): PinnedDir {
    try {
      return openWorkingDir(workingDir, pin);
    } catch (error) {
      throw error instanceof WorkingDirChangedError ? new RevertRefusedError(error) : error;
    }
  }

  /**
   * Inside the sandbox with only the held directory writable; in the service itself only when the
   * operator turned the sandbox off (SANDBOX_ENABLED=false), as the shell tools then run unconfined too.
   */
  private async restore(repo: ShadowRepo, dir: PinnedDir, before: string, paths: readonly string[]): Promise<void> {
    const { enabled, memoryMb, maxProcesses } = this.options.sandbox ?? DEFAULT_SANDBOX;
    const availability = await detectSandbox({ sandboxEnabled: enabled });
    if (availability.state === 'disabled') return restore(repo, dir.path, before, paths);
    if (!isAvailable(availability)) throw new RevertSandboxUnavailableError(availability.reason);
    await restoreInSandbox(repo, dir, before, paths, { availability, memoryMb, maxProcesses });
  }

  /**
   * Housekeeping over every shadow repository: refs of runs that no longer exist (retention,
   * deleted conversations) are removed and the repository garbage-collected; an ended run without
   * an end snapshot (interrupted by a stopped service) gets it now.
   */
  async sweep(findRun: (id: string) => Promise<RunHead | undefined>): Promise<void> {
    const names = await readdir(this.options.root).catch(() => [] as string[]);
    for (const name of names.filter((n) => n.endsWith('.git'))) {
      const repo = new ShadowRepo({ gitDir: join(this.options.root, name), workTree: '', ...this.memoryCap() });
      await this.sweepRepo(repo, findRun).catch((error: unknown) => this.options.log.warn({ err: error, repo: name }, 'checkpoint sweep failed'));
    }
  }

  private async sweepRepo(repo: ShadowRepo, findRun: (id: string) => Promise<RunHead | undefined>): Promise<void> {
    const { stdout } = await repo.git(['for-each-ref', '--format=%(refname)', 'refs/mada/runs/']);
    // refs/mada/runs/<id>/<label>: one listing tells which runs lack their end snapshot.
    const labels = new Map<string, Set<string>>();
    for (const ref of stdout.toString('utf8').split('\n').filter(Boolean)) {
      const [, , , id = '', label = ''] = ref.split('/');
      labels.set(id, (labels.get(id) ?? new Set()).add(label));
    }
    const gone: string[] = [];
    for (const [id, held] of labels) {
      const run = await findRun(id);
      if (!run) gone.push(id);
      else if (held.has('before') && !held.has('after') && !ACTIVE_RUN_STATUSES.includes(run.status)) {
        await this.endedCheckpoint(run).catch(() => undefined);
      }
    }
    if (gone.length === 0) return;
    await this.locked(repo, async () => {
      const { stdout: listed } = await repo.git(['for-each-ref', '--format=%(refname)', ...gone.map(refsOf)]);
      const refs = listed.toString('utf8').split('\n').filter(Boolean);
      await repo.git(['update-ref', '--stdin'], { input: refs.map((ref) => `delete ${ref}\n`).join('') });
      await repo.git(['gc', '--quiet', '--prune=now']);
    });
  }

  /** The run's refs, with its end snapshot taken now if its service stopped before taking it. */
  private async endedCheckpoint(run: RunHead): Promise<{ repo: ShadowRepo; refs: RunRefs }> {
    if (ACTIVE_RUN_STATUSES.includes(run.status)) throw new RunInProgressError();
    await this.confine(run);
    const repo = this.repoFor(run.workingDir);
    const remembered = this.failures.get(run.id);
    if (remembered) throw new NoCheckpointError(remembered);
    let refs = await this.readRefs(repo, run.id);
    if (refs.meta.error) throw new NoCheckpointError(refs.meta.error);
    if (!refs.before) throw new NoCheckpointError();
    if (!refs.after) {
      await this.take(run.id, run.workingDir, 'after', refs.meta.pin);
      refs = await this.readRefs(repo, run.id);
      if (refs.meta.error || !refs.after) throw new NoCheckpointError(refs.meta.error);
    }
    return { repo, refs };
  }

  /**
   * OutsideWorkspaceError unless the run's working directory is still inside its owner's
   * workspace. Compared as stored (resolved when the run was created), not resolved again: what
   * the path leads to now is the pin's business (working-dir-pin.ts), which refuses a swapped
   * directory with its own reason; this check is about the owner's paths having changed.
   */
  private async confine(run: RunHead): Promise<void> {
    if (!this.options.workspaces) return;
    let workspace: PathSandbox;
    try {
      workspace = await this.options.workspaces.of(run.userId);
    } catch (error) {
      // An owner gone from API_KEYS has no workspace left.
      if (error instanceof NotFoundError) throw new OutsideWorkspaceError(run.workingDir);
      throw error;
    }
    if (!workspace.contains(run.workingDir)) throw new OutsideWorkspaceError(run.workingDir);
  }

  private repoFor(workingDir: string): ShadowRepo {
    let repo = this.repos.get(workingDir);
    if (!repo) {
      repo = new ShadowRepo({ gitDir: ShadowRepo.gitDirFor(this.options.root, workingDir), workTree: workingDir, ...this.memoryCap() });
      this.repos.set(workingDir, repo);
    }
    return repo;
  }

  private memoryCap(): { maxMemoryBytes?: number } {
    return this.options.gitMemoryBytes === undefined ? {} : { maxMemoryBytes: this.options.gitMemoryBytes };
  }

  /**
   * Takes one snapshot of the pinned working directory; true when it was stored, false when it
   * failed (the reason is recorded). The path must lead to the pinned directory before and after
   * the snapshot, which reads the tree through that directory held open meanwhile (treeAccess): a
   * run that swaps the path for a link and back while git reads still gets only its own files.
   */
  private async take(runId: string, workingDir: string, label: 'before' | 'after', pin: DirIdentity | undefined): Promise<boolean> {
    const repo = this.repoFor(workingDir);
    try {
      return await this.locked(repo, async () => {
        if (!pin) throw new WorkingDirChangedError(workingDir);
        const dir = openWorkingDir(workingDir, pin);
        let snapshot: Snapshot;
        try {
          await this.keepFloor();
          await repo.ensure();
          const access = await this.treeAccess(dir);
          snapshot = await repo.through(access).snapshot({ maxFileBytes: this.options.maxFileBytes, excludedPaths: this.options.excludedPaths });
        } finally {
          dir.close();
        }
        this.checkPin(workingDir, pin);
        const refs: [string, string][] = snapshot.head ? [['HEAD', snapshot.head]] : [];
        if (label === 'before') {
          // The first record of the run: the pin goes with it, whatever else the meta holds.
          const unread = snapshot.unread.length > 0 ? { unread: snapshot.unread } : {};
          refs.push([`${refsOf(runId)}meta`, this.metaBlob(repo, { skipped: snapshot.skipped, ...unread, pin })]);
        } else if (snapshot.skipped.length > 0 || snapshot.unread.length > 0) {
          // Nothing left out adds nothing to the run's list.
          const meta = (await this.readRefs(repo, runId)).meta;
          const skipped = [...new Set([...meta.skipped, ...snapshot.skipped])].sort();
          const unread = [...new Set([...(meta.unread ?? []), ...snapshot.unread])].sort();
          refs.push([`${refsOf(runId)}meta`, this.metaBlob(repo, { ...meta, skipped, ...(unread.length > 0 ? { unread } : {}) })]);
        }
        refs.push([`${refsOf(runId)}${label}`, snapshot.tree]);
        repo.record(refs);
        return true;
      });
    } catch (error) {
      const reason = `the ${label === 'before' ? 'snapshot before the run' : 'snapshot at the end of the run'} failed: ${errorMessage(error)}`;
      this.options.log.warn({ err: error, run_id: runId }, 'checkpoint snapshot failed');
      await this.locked(repo, async () => this.writeMeta(repo, runId, { ...(await this.readRefs(repo, runId)).meta, error: reason })).catch(() =>
        this.remember(runId, reason),
      );
      return false;
    }
  }

  /** Checked before each snapshot, not during it: one snapshot writes at most what the tree holds, in files of at most maxFileBytes. */
  private async keepFloor(): Promise<void> {
    const { floor } = this.options;
    const reason = floor === undefined ? undefined : await floorBreach([{ path: this.options.root, name: "the service's data" }], floor);
    if (reason !== undefined) throw new SnapshotBelowDiskFloorError(reason);
  }

  /**
   * How a snapshot reads the held directory: git inside the sandbox, bound to it by descriptor.
   * With the sandbox on but not working, no snapshot (fail closed); only the operator's
   * SANDBOX_ENABLED=false lets git read by the path, between the two checks of the pin.
   */
  private async treeAccess(dir: PinnedDir): Promise<TreeAccess> {
    const { enabled } = this.options.sandbox ?? DEFAULT_SANDBOX;
    const availability = await this.probes.detect({ sandboxEnabled: enabled });
    if (availability.state === 'disabled') return { root: dir.path };
    if (!isAvailable(availability)) throw new SnapshotSandboxUnavailableError(availability.reason);
    return { root: dir.path, confined: { availability, dirFd: dir.fd } };
  }

  private checkPin(workingDir: string, pin: DirIdentity): void {
    if (!stillLeadsTo(workingDir, pin)) throw new WorkingDirChangedError(workingDir);
  }

  private remember(runId: string, reason: string): void {
    this.failures.set(runId, reason);
    const oldest = this.failures.keys().next().value;
    if (this.failures.size > REMEMBERED_FAILURES && oldest !== undefined) this.failures.delete(oldest);
  }

  private async writeMeta(repo: ShadowRepo, runId: string, meta: RunMeta): Promise<void> {
    await repo.ensure();
    repo.record([[`${refsOf(runId)}meta`, this.metaBlob(repo, meta)]]);
  }

  /** Written loose by the service: no git process for a few bytes. */
  private metaBlob(repo: ShadowRepo, meta: RunMeta): string {
    return writeObject(repo.target.gitDir, 'blob', Buffer.from(JSON.stringify(meta)));
  }

  private async readRefs(repo: ShadowRepo, runId: string): Promise<RunRefs> {
    const refs: RunRefs = { meta: { skipped: [] } };
    if (!(await repo.exists())) return refs;
    const { stdout } = await repo.git(['for-each-ref', '--format=%(refname) %(objectname)', refsOf(runId)]);
    for (const record of stdout.toString('utf8').split('\n').filter(Boolean)) {
      const [ref = '', object = ''] = record.split(' ');
      const label = ref.slice(refsOf(runId).length);
      if (label === 'before' || label === 'after') refs[label] = object;
      if (label === 'meta') refs.meta = JSON.parse((await repo.git(['cat-file', 'blob', object])).stdout.toString('utf8')) as RunMeta;
    }
    return refs;
  }

  /** Runs `work` when every earlier piece of work on this shadow repository has finished. */
  private locked<T>(repo: ShadowRepo, work: () => Promise<T>): Promise<T> {
    const key = repo.target.gitDir;
    const previous = this.locks.get(key) ?? Promise.resolve();
    const next = previous.then(work, work);
    // One entry per working directory ever checkpointed: small, and never a dangling promise.
    this.locks.set(key, next.catch(() => undefined));
    return next;
  }
}
