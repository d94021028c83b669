import { createHash } from 'node:crypto';
import { lstatSync } from 'node:fs';
import { mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { join, sep } from 'node:path';
import { walkFiles } from '../tools/search/walk.js';
import { nulFields, runGit, type GitTarget } from './git.js';

/**
 * Attributes that win over any `.gitattributes` in the working directory ($GIT_DIR/info/attributes
 * ranks first): files are stored byte for byte, never through a filter or a line-ending conversion.
 */
const INFO_ATTRIBUTES = '* -text -filter -ident -working-tree-encoding -eol\n';

/** What one snapshot left out: files over CHECKPOINT_MAX_FILE_BYTES. */
export interface Snapshot {
  tree: string;
  skipped: string[];
}

export interface SnapshotLimits {
  maxFileBytes: number;
  excludedPaths: readonly string[];
}

const EMPTY_TREE = '4b825dc642cb6eb9a060e54bf8d69288fbee4904';

/** The shadow repository of one working directory, under `<root>/<digest of the path>.git`. */
export class ShadowRepo {
  readonly target: GitTarget;
  private ready: Promise<void> | undefined;

  constructor(target: GitTarget) {
    this.target = target;
  }

  static gitDirFor(root: string, workingDir: string): string {
    return join(root, `${createHash('sha256').update(workingDir).digest('hex').slice(0, 24)}.git`);
  }

  get workingDir(): string {
    return this.target.workTree;
  }

  /** Creates the repository once, with a config of the service's own making. */
  ensure(): Promise<void> {
    this.ready ??= this.create().catch((error: unknown) => {
      this.ready = undefined;
      throw error;
    });
    return this.ready;
  }

  /** Whether the repository was ever created (reading a run's refs never creates it). */
  exists(): Promise<boolean> {
    return stat(join(this.target.gitDir, 'HEAD')).then(
      () => true,
      () => false,
    );
  }

  private async create(): Promise<void> {
    const { gitDir } = this.target;
    if (!(await this.exists())) {
      // Made aside and renamed into place, so a crash never leaves half a repository.
      const staging = `${gitDir}.${process.pid}.tmp`;
      await rm(staging, { recursive: true, force: true });
      await mkdir(staging, { recursive: true });
      await runGit({ gitDir: staging, workTree: '' }, ['init', '--quiet', '--bare']);
      await rename(staging, gitDir).catch(async (error: unknown) => {
        await rm(staging, { recursive: true, force: true });
        if ((error as NodeJS.ErrnoException).code !== 'ENOTEMPTY' && (error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      });
    }
    for (const [key, value] of [
      ['core.bare', 'false'],
      ['core.logAllRefUpdates', 'false'],
      ['core.fileMode', 'true'],
      ['core.symlinks', 'true'],
      ['gc.auto', '0'],
      ['gc.reflogExpire', 'now'],
    ] as const) {
      await this.git(['config', key, value]);
    }
    await mkdir(join(gitDir, 'info'), { recursive: true });
    await writeFile(join(gitDir, 'info', 'attributes'), INFO_ATTRIBUTES);
  }

  git(args: readonly string[], options?: Parameters<typeof runGit>[2]): ReturnType<typeof runGit> {
    return runGit(this.target, args, options);
  }

  /**
   * Records the working directory as a tree: the files glob_files would list, except those over
   * `maxFileBytes`. Only what changed since the last snapshot is handed to git: files new to the
   * listing, files git finds changed against the index's cached stats, files gone. The listing
   * and git's two reads run at once. A file that vanishes meanwhile simply drops out.
   */
  async snapshot(limits: SnapshotLimits): Promise<Snapshot> {
    await this.ensure();
    const sameLimit = await this.limitUnchanged(limits.maxFileBytes);
    const [listed, indexed, changed] = await Promise.all([
      this.listFiles(limits.excludedPaths),
      this.git(['ls-files', '-z']).then((result) => nulFields(result.stdout)),
      this.git(['diff-files', '--name-only', '-z']).then((result) => nulFields(result.stdout)),
    ]);
    const inIndex = new Set(indexed);
    // With a new size limit every listed file is measured again; otherwise a tracked file that git
    // finds unchanged was under the limit when it was added.
    const candidates = sameLimit ? [...listed].filter((path) => !inIndex.has(path)).concat(changed.filter((path) => listed.has(path))) : [...listed];
    const { included, skipped } = await this.bySize(candidates, limits.maxFileBytes);
    // A tracked file that grew past the limit leaves the index through --force-remove alone:
    // with --add it would be hashed first, for nothing.
    const tooLarge = skipped.filter((path) => inIndex.has(path));
    // A file gone from the listing leaves through --force-remove too: with --remove git looks at
    // the path again, and a directory the run replaced by a symlink makes it fail the snapshot
    // ("beyond a symbolic link"), which would leave the run without a checkpoint to revert.
    const leaving = [...tooLarge, ...indexed.filter((path) => !listed.has(path))];
    if (included.length > 0) await this.git(['update-index', '--add', '--remove', '-z', '--stdin'], { input: included.join('\0') + '\0' });
    if (leaving.length > 0) await this.git(['update-index', '--force-remove', '-z', '--stdin'], { input: leaving.join('\0') + '\0' });
    if (!sameLimit) await writeFile(this.limitFile, String(limits.maxFileBytes));
    const tree = (await this.git(['write-tree'])).stdout.toString('utf8').trim();
    return { tree: tree || EMPTY_TREE, skipped: skipped.sort() };
  }

  private get limitFile(): string {
    return join(this.target.gitDir, 'mada-max-file-bytes');
  }

  /** Whether the last snapshot used this size limit (CHECKPOINT_MAX_FILE_BYTES may change between starts). */
  private async limitUnchanged(maxFileBytes: number): Promise<boolean> {
    const last = await readFile(this.limitFile, 'utf8').catch(() => undefined);
    return last === String(maxFileBytes);
  }

  /** The working directory's files as paths relative to it, `/`-separated, without `.git` and excluded paths. */
  private async listFiles(excludedPaths: readonly string[]): Promise<Set<string>> {
    const found = new Set<string>();
    const prefix = this.workingDir.endsWith(sep) ? this.workingDir : this.workingDir + sep;
    const excluded = (path: string): boolean => excludedPaths.some((dir) => path === dir || path.startsWith(dir + sep));
    await walkFiles(this.workingDir, new AbortController().signal, (path) => {
      if (excluded(path) || !path.startsWith(prefix)) return;
      const rel = path.slice(prefix.length).split(sep).join('/');
      if (!rel.split('/').includes('.git')) found.add(rel);
    });
    return found;
  }

  /** Splits relative paths by size; a file that vanished is in neither list. */
  private async bySize(paths: readonly string[], maxFileBytes: number): Promise<{ included: string[]; skipped: string[] }> {
    const sizes = await sizesOf(paths.map((path) => join(this.workingDir, path)));
    const included: string[] = [];
    const skipped: string[] = [];
    paths.forEach((path, i) => {
      const size = sizes[i];
      if (size !== undefined) (size > maxFileBytes ? skipped : included).push(path);
    });
    return { included, skipped };
  }
}

/**
 * File sizes, read with synchronous lstat (a tenth of the cost of the asynchronous call for small
 * files) in slices of about 10 ms, so other requests are served meanwhile. A vanished file has none.
 */
async function sizesOf(paths: readonly string[]): Promise<(number | undefined)[]> {
  const sizes: (number | undefined)[] = [];
  let sliceStart = performance.now();
  for (const path of paths) {
    if (performance.now() - sliceStart > 10) {
      await yieldToEventLoop();
      sliceStart = performance.now();
    }
    sizes.push(lstatSync(path, { throwIfNoEntry: false })?.size);
  }
  return sizes;
}
