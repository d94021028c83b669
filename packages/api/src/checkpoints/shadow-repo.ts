import { createHash } from 'node:crypto';
import { lstatSync, readFileSync, rmSync, writeFileSync, type Stats } from 'node:fs';
import { mkdir, realpath, rename, rm, stat, writeFile } from 'node:fs/promises';
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { join } from 'node:path';
import { DEFAULT_IGNORED_DIRS } from '../tools/search/backend.js';
import { walkFiles } from '../tools/search/walk.js';
import type { ConfinedTree } from './confined-git.js';
import { GIT_TIMEOUT_MS, nulFields, runGit, type GitTarget } from './git.js';
import { EMPTY_TREE, writeCommit, writeObject, writeRef } from './loose-store.js';
import { overlayTree, type OverlayFile } from './overlay-tree.js';
import { outerIgnoreLines } from './outer-ignores.js';
import { GlobVerdict, isSearchIgnoreFile, SearchIgnores } from './search-ignores.js';
import { asBytes, SnapshotRules } from './snapshot-rules.js';
import { readRegularFileWithStatsSync } from '../util/regular-file.js';
import { walkToParent } from '../util/held-dir.js';

/**
 * Attributes that win over any `.gitattributes` in the working directory ($GIT_DIR/info/attributes
 * ranks first): files are stored byte for byte, never through a filter or a line-ending conversion,
 * and a diff tells text from binary by content: a planted `binary` or `-diff` would otherwise show
 * a run's changes to a file as `Binary files ... differ`, hidden from the user reviewing them.
 */
const INFO_ATTRIBUTES = '* -text -filter -ident -working-tree-encoding -eol !diff\n';

/** The shadow repository's config, all of it written by the service. */
const CONFIG: readonly (readonly [string, string])[] = [
  ['core.bare', 'false'],
  ['core.logAllRefUpdates', 'false'],
  ['core.fileMode', 'true'],
  ['core.symlinks', 'true'],
  // A file rewritten and given its old mtime back still has a new ctime: the stat cache sees it.
  ['core.trustctime', 'true'],
  // `status` reads again only the directories whose stats changed since the last snapshot, and
  // lists the files of new directories one by one.
  ['core.untrackedCache', 'true'],
  ['status.showUntrackedFiles', 'all'],
  // Each update writes only the entries it changed, not the whole index (2 MB for 20,000 files,
  // checksummed on every write); a shared index that is replaced is deleted at once.
  ['core.splitIndex', 'true'],
  ['splitIndex.sharedIndexExpire', 'now'],
  ['gc.auto', '0'],
  ['gc.reflogExpire', 'now'],
];

/**
 * What changed in the working directory since the last snapshot, as git's stat cache and untracked
 * cache tell it: one pass that costs about what `git status` costs in the user's own repository.
 * Submodules are never entered (the shadow index holds none, and a nested repository's config
 * must not be read).
 */
const STATUS = ['status', '--porcelain', '-z', '--untracked-files=all', '--ignore-submodules=all', '--no-renames'];

/** One snapshot: its tree, the files left out for their size and the directories git could not read. */
export interface Snapshot {
  tree: string;
  skipped: string[];
  /**
   * Directories git could not open (a path past PATH_MAX, no permission) or the walk of nested
   * repositories could not name, with the reason: what lies below them is not in the snapshot,
   * and a revert cannot touch it. Said, never silent.
   */
  unread: string[];
  /**
   * A commit of `tree` for HEAD, when HEAD is not on one yet: the caller records it with its own
   * refs (`record`). HEAD is what `status` compares the index with; until it follows, the next
   * snapshot merely writes the tree again.
   */
  head?: string;
}

export interface SnapshotLimits {
  maxFileBytes: number;
  excludedPaths: readonly string[];
}

/**
 * At most this many files, of at most this many bytes in all, differing from the index go on top
 * of HEAD's tree without updating the index (see `overlaid`); more, and updating the index costs
 * less than reading them again at each snapshot.
 */
const OVERLAY_MAX_FILES = 64;
const OVERLAY_MAX_BYTES = 1024 * 1024;

/** What `status` reported, paths as byte strings. */
interface StatusReport {
  /** Files in the index that differ from the working directory (changed, deleted, type changed). */
  changed: string[];
  untracked: string[];
  /** Untracked directories git did not enter because they hold a repository of their own (`dir/`). */
  nested: string[];
  /** The index differs from HEAD: a snapshot was interrupted before HEAD followed it. */
  indexMoved: boolean;
}

function parseStatus(output: Buffer): StatusReport {
  const report: StatusReport = { changed: [], untracked: [], nested: [], indexMoved: false };
  for (const record of nulFields(output, 'latin1')) {
    const [staged, unstaged, path] = [record[0], record[1], record.slice(3)];
    if (staged === '?') (path.endsWith('/') ? report.nested : report.untracked).push(path);
    else {
      if (staged !== ' ') report.indexMoved = true;
      if (unstaged !== ' ') report.changed.push(path);
    }
  }
  return report;
}

/** What changed since the last snapshot, as `lookForChanges` found it. */
interface Changes {
  report: StatusReport;
  /** Files the index does not hold yet. */
  found: string[];
  /** The rules changed, and the files they now leave out left the index. */
  rulesChanged: boolean;
  /** glob_files' verdict, while a `.ignore` or `.rgignore` file takes part. */
  verdict: GlobVerdict | undefined;
  /** See Snapshot. */
  unread: string[];
}

/** Rounds of `status` a snapshot takes at most to meet new `.ignore`/`.rgignore` files (one when none is new). */
const MAX_LOOKS = 4;

/** How the index follows the working directory: paths to (re)hash, paths to drop, files too large. */
interface IndexUpdate {
  add: string[];
  /** What lstat found at each path of `add`, when it was found inside the working directory. */
  addStats: Stats[];
  /** The size of the files in `add`, in bytes. */
  addBytes: number;
  drop: string[];
  skipped: string[];
}

/**
 * How a snapshot reaches the working directory, whatever its path leads to meanwhile: the service
 * reads through the directory it holds open, and git, with the sandbox on, inside it over that
 * same directory.
 */
export interface TreeAccess {
  /** A path that resolves through the held directory's descriptor (PinnedDir.path). */
  root: string;
  /** Absent only with the sandbox off (SANDBOX_ENABLED=false): git then reads by the path. */
  confined?: ConfinedTree;
}

/** The shadow repository of one working directory, under `<root>/<digest of the path>.git`. */
export class ShadowRepo {
  readonly target: GitTarget;
  private ready: Promise<void> | undefined;
  /** Where the service itself reads the working tree's files (see TreeAccess). */
  private readonly readRoot: string;

  constructor(target: GitTarget, readRoot: string = target.workTree) {
    this.target = target;
    this.readRoot = readRoot;
  }

  /** This repository, its snapshots reading the tree as `access` says (the caller holds the directory meanwhile). */
  through(access: TreeAccess): ShadowRepo {
    const view = new ShadowRepo({ ...this.target, ...(access.confined ? { confined: access.confined } : {}) }, access.root);
    view.ready = this.ensure();
    return view;
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
    for (const [key, value] of CONFIG) await this.git(['config', key, value]);
    await mkdir(join(gitDir, 'info'), { recursive: true });
    await writeFile(join(gitDir, 'info', 'attributes'), INFO_ATTRIBUTES);
  }

  git(args: readonly string[], options?: Parameters<typeof runGit>[2]): ReturnType<typeof runGit> {
    return runGit(this.target, args, options);
  }

  /**
   * Records the working directory as a tree: its files under git's ignore rules and the service's
   * own (SnapshotRules), except those over `maxFileBytes`. git's stat and untracked caches say what
   * changed since the last snapshot; only those paths are looked at, and hashed. A file that
   * vanishes meanwhile simply drops out.
   */
  async snapshot(limits: SnapshotLimits): Promise<Snapshot> {
    await this.ensure();
    this.removeStaleIndexLock();
    const rules = new SnapshotRules(this.workingDir, limits.excludedPaths);
    const head = this.head();
    const { report, found, rulesChanged, verdict, unread } = await this.lookForChanges(rules, limits.maxFileBytes);
    const nowIgnored = withoutRuleFiles(await this.trackedButIgnored([...report.changed, ...found], verdict));
    const globHidden = withoutRuleFiles(verdict ? await verdict.hidden([...report.changed, ...found]) : new Set<string>());
    const hidden = (path: string): boolean => rules.hides(path) || nowIgnored.has(path) || globHidden.has(path);
    const update = await this.sortOut(report.changed, found, hidden, limits.maxFileBytes);
    update.drop = [...new Set([...update.drop, ...nowIgnored])];
    const skipped = update.skipped.map(fromBytes).sort();
    // The index is as HEAD's tree says and nothing leaves it: the files it lacks may go on top.
    const settled = head !== undefined && !rulesChanged && !report.indexMoved && update.drop.length === 0 && report.nested.length === 0;
    if (settled && update.add.length === 0) return { tree: head.tree, skipped, unread };
    const overlaid = settled ? this.overlaid(head.tree, update, limits.maxFileBytes) : undefined;
    if (overlaid !== undefined) return { tree: overlaid, skipped, unread };
    if (update.add.length > 0) await this.git(['update-index', '--add', '-z', '--stdin'], { input: this.pathList(update.add) });
    if (update.drop.length > 0) await this.git(['update-index', '--force-remove', '-z', '--stdin'], { input: this.pathList(update.drop) });
    const tree = (await this.git(['write-tree'])).stdout.toString('utf8').trim() || EMPTY_TREE;
    return head?.tree === tree ? { tree, skipped, unread } : { tree, skipped, unread, head: this.commitOf(tree) };
  }

  /**
   * The snapshot's tree when a few files differ from the index (a run that edited some): those
   * files hashed and put into HEAD's tree without starting git, two processes fewer than
   * update-index and write-tree. The index stays as it was, so `status` reports them again next
   * time and they are read again, until a snapshot with more to do brings the index up to date.
   * Undefined when git has to write this one.
   */
  private overlaid(base: string, update: IndexUpdate, maxFileBytes: number): string | undefined {
    if (update.add.length > OVERLAY_MAX_FILES || update.addBytes > OVERLAY_MAX_BYTES) return undefined;
    // Rules that changed go into the index at once: every later snapshot reads them from there.
    if (update.add.some((path) => isGitignore(path) || isSearchIgnoreFile(path))) return undefined;
    const files: OverlayFile[] = [];
    for (const [i, path] of update.add.entries()) {
      // The file found inside the working directory, not a link put in its place or in the place
      // of a directory above it since: walked to from the held directory, no link followed.
      const file = this.readHeld(path, maxFileBytes);
      if (!file || file.stats.ino !== update.addStats[i]?.ino || file.stats.dev !== update.addStats[i]?.dev) return undefined;
      // git's mode for a regular file: executable when its owner may run it.
      files.push({ path, mode: file.stats.mode & 0o100 ? '100755' : '100644', blob: writeObject(this.target.gitDir, 'blob', file.bytes) });
    }
    return overlayTree(this.target.gitDir, base, files);
  }

  /**
   * What `status` reports under the current rules, with the files a `!` rule of a `.ignore` or
   * `.rgignore` takes back from git's ignored ones. A `.ignore` or `.rgignore` among them that no
   * snapshot met before joins the rules, and git looks again (a few rounds at most: each round can
   * only reveal files in directories the last one opened).
   */
  private async lookForChanges(rules: SnapshotRules, maxFileBytes: number): Promise<Changes> {
    const { paths: known, recorded } = await this.knownSearchIgnores();
    let searchIgnores = new SearchIgnores(this.workingDir, known, this.readRoot);
    let rulesChanged = await this.applyRules(rules, searchIgnores, maxFileBytes);
    const met = new Set(known);
    for (let round = 1; ; round++) {
      const [status, hiddenRules] = await Promise.all([this.git(STATUS), this.ignoredRuleFiles(rules)]);
      const report = parseStatus(status.stdout);
      const nested = report.nested.filter(isText);
      const found = [...report.untracked, ...hiddenRules, ...(await this.nestedFiles(nested))];
      const verdict = searchIgnores.active ? new GlobVerdict(this.workingDir) : undefined;
      if (verdict) found.push(...(await this.reincluded(searchIgnores, verdict, rules)).filter((path) => !hiddenRules.includes(path)));
      const discovered = [...report.changed, ...found].filter((path) => isSearchIgnoreFile(path) && !met.has(path));
      let again = false;
      if (discovered.length > 0 && round < MAX_LOOKS) {
        for (const path of discovered) met.add(path);
        const wasActive = searchIgnores.active;
        searchIgnores = new SearchIgnores(this.workingDir, [...searchIgnores.present, ...discovered], this.readRoot);
        again = (await this.applyRules(rules, searchIgnores, maxFileBytes)) || searchIgnores.active !== wasActive;
        rulesChanged ||= again;
      }
      if (!again) {
        if (!recorded || searchIgnores.present.join('\0') !== known.join('\0')) this.recordSearchIgnores(searchIgnores.present);
        // The walk below a nested repository goes by text paths: one whose name is not UTF-8 is
        // out of reach, and said so.
        const unnamed = report.nested.filter((dir) => !isText(dir)).map((dir) => `${fromBytes(dir)} (a repository of its own whose name is not UTF-8)`);
        const unread = [...status.warnings.flatMap(unreadDirectory), ...unnamed];
        return { report, found, rulesChanged, verdict: searchIgnores.active ? (verdict ?? new GlobVerdict(this.workingDir)) : undefined, unread };
      }
    }
  }

  /**
   * Ignore files that their own rules, or others, leave out (`tools/.gitignore` holding `*`, a
   * `.gitignore` listing `.gitignore`) in the directories git walks: git still obeys them, so
   * without them a run could hide what it adds, and its changes and revert would not show the
   * rule that hid it. Ignored directories are listed whole (`--directory`), never entered.
   */
  private async ignoredRuleFiles(rules: SnapshotRules): Promise<string[]> {
    const { stdout } = await this.git(['ls-files', '-z', '--others', '--ignored', '--exclude-standard', '--directory', '--', ...RULE_FILE_PATHSPECS]);
    return nulFields(stdout, 'latin1').filter((path) => isRuleFile(path) && !rules.hides(path));
  }

  /**
   * Files git leaves out for a `.gitignore` rule that a `!` rule of a `.ignore` or `.rgignore`
   * re-includes (ripgrep ranks those files above `.gitignore`, git ranks any `.gitignore` above
   * info/exclude): git lists the ignored files below the directories holding such rules, and
   * glob_files' verdict picks those it lists. Only while such a rule exists.
   */
  private async reincluded(searchIgnores: SearchIgnores, verdict: GlobVerdict, rules: SnapshotRules): Promise<string[]> {
    if (searchIgnores.reincluding.length === 0) return [];
    const pathspecs = [
      ...searchIgnores.reincluding.map((dir) => `:(literal)${dir === '' ? '.' : dir}`),
      ...DEFAULT_IGNORED_DIRS.map((name) => `:(exclude,glob)**/${name}/**`),
    ];
    const { stdout } = await this.git(['ls-files', '-z', '--others', '--ignored', '--exclude-standard', '--', ...pathspecs]);
    const ignored = nulFields(stdout, 'latin1').filter((path) => !rules.hides(path));
    const hidden = await verdict.hidden(ignored);
    return ignored.filter((path) => !hidden.has(path));
  }

  private get searchIgnoresFile(): string {
    return join(this.target.gitDir, 'mada-search-ignores');
  }

  /**
   * The `.ignore` and `.rgignore` files inside the working directory that earlier snapshots came
   * across, or undefined when none kept the list: a shadow repository made before snapshots kept
   * it may hold such files, unchanged since, that `status` will never report.
   */
  private recordedSearchIgnores(): string[] | undefined {
    return readSmallFile(this.searchIgnoresFile, 'latin1')?.split('\0').filter(Boolean);
  }

  private async knownSearchIgnores(): Promise<{ paths: string[]; recorded: boolean }> {
    const recorded = this.recordedSearchIgnores();
    if (recorded) return { paths: recorded, recorded: true };
    const { stdout } = await this.git(['ls-files', '-z', '--', ':(glob)**/.ignore', ':(glob)**/.rgignore']);
    return { paths: nulFields(stdout, 'latin1'), recorded: false };
  }

  private recordSearchIgnores(paths: readonly string[]): void {
    writeFileSync(this.searchIgnoresFile, paths.join('\0'), 'latin1');
  }

  /**
   * `status` takes the index lock to write back what it refreshed; a service killed meanwhile
   * leaves the lock behind, and every later update of the index would fail. No git process of the
   * service lives longer than GIT_TIMEOUT_MS, so an older lock belongs to none.
   */
  private removeStaleIndexLock(): void {
    const lock = join(this.target.gitDir, 'index.lock');
    const stats = lstatSync(lock, { throwIfNoEntry: false });
    if (stats && Date.now() - stats.mtimeMs > 2 * GIT_TIMEOUT_MS) rmSync(lock, { force: true });
  }

  /** Points each ref at its object, in the order given (a run's snapshot ref last, once all else is in place). */
  record(refs: readonly (readonly [name: string, id: string])[]): void {
    for (const [name, id] of refs) writeRef(this.target.gitDir, name, id);
  }

  private get limitFile(): string {
    return join(this.target.gitDir, 'mada-max-file-bytes');
  }

  private get excludeFile(): string {
    return join(this.target.gitDir, 'info', 'exclude');
  }

  /** `commit tree` of the commit HEAD was last pointed at (see `head`). */
  private get headFile(): string {
    return join(this.target.gitDir, 'mada-head');
  }

  /**
   * When the size limit (CHECKPOINT_MAX_FILE_BYTES may change between starts), the excluded paths
   * or the ignore rules above the working directory changed since the last snapshot, drops from
   * the index every file they now leave out. True when they changed.
   */
  private async applyRules(rules: SnapshotRules, searchIgnores: SearchIgnores, maxFileBytes: number): Promise<boolean> {
    const excludeText = rules.excludeFile([...outerIgnoreLines(this.workingDir), ...searchIgnores.lines]);
    const [lastLimit, lastExclude] = [readSmallFile(this.limitFile, 'utf8'), readSmallFile(this.excludeFile, 'latin1')];
    if (lastLimit === String(maxFileBytes) && lastExclude === excludeText) return false;
    // The limit file goes first and comes back last: a pass interrupted in between is done again.
    rmSync(this.limitFile, { force: true });
    writeFileSync(this.excludeFile, excludeText, 'latin1');
    const indexed = nulFields((await this.git(['ls-files', '-z'])).stdout, 'latin1');
    const ignored = searchIgnores.active ? await new GlobVerdict(this.workingDir).hidden(indexed) : await this.ignoredInIndex();
    const stats = await statsOf(indexed.map((path) => this.absolute(path)));
    const drop = indexed.filter((path, i) => rules.hides(path) || (ignored.has(path) && !isRuleFile(path)) || (stats[i]?.size ?? 0) > maxFileBytes);
    if (drop.length > 0) await this.git(['update-index', '--force-remove', '-z', '--stdin'], { input: this.pathList(drop) });
    writeFileSync(this.limitFile, String(maxFileBytes));
    return true;
  }

  /**
   * The files of nested repositories, which git lists as one untracked directory: found with
   * glob_files' walk from there. Once some are in the index, git walks those directories itself.
   */
  private async nestedFiles(dirs: readonly string[]): Promise<string[]> {
    const files: string[] = [];
    const prefix = `${this.workingDir}/`;
    for (const dir of dirs) {
      await walkFiles(join(this.workingDir, fromBytes(dir.slice(0, -1))), new AbortController().signal, (path) => {
        if (path.startsWith(prefix)) files.push(asBytes(path.slice(prefix.length)));
      });
    }
    return files;
  }

  /**
   * Decides, from one lstat each, what becomes of the paths status reported: regular files within
   * the size limit are hashed into the index; anything else that the index holds (gone, too large,
   * now a link or a directory, reached through a link, hidden by the service's rules) leaves it.
   */
  private async sortOut(changed: readonly string[], untracked: readonly string[], hidden: (path: string) => boolean, maxFileBytes: number): Promise<IndexUpdate> {
    const update: IndexUpdate = { add: [], addStats: [], addBytes: 0, drop: [], skipped: [] };
    const visible: { path: string; tracked: boolean }[] = [];
    for (const [list, tracked] of [
      [changed, true],
      [untracked, false],
    ] as const) {
      for (const path of list) {
        if (!hidden(path)) visible.push({ path, tracked });
        else if (tracked) update.drop.push(path);
      }
    }
    const stats = await statsOf(visible.map(({ path }) => this.absolute(path)));
    const realParents = await this.realParents(visible.filter((_, i) => stats[i]?.isFile()).map(({ path }) => path));
    visible.forEach(({ path, tracked }, i) => {
      const file = stats[i];
      if (file?.isFile() && realParents.has(parentOf(path))) {
        if (file.size <= maxFileBytes) {
          update.add.push(path);
          update.addStats.push(file);
          update.addBytes += file.size;
        } else {
          update.skipped.push(path);
          if (tracked) update.drop.push(path);
        }
      } else if (tracked) update.drop.push(path);
    });
    return update;
  }

  /**
   * When an ignore file changed, the files the index holds that its rules now cover: they leave
   * the snapshot, as they leave glob_files' listing (git itself would keep tracking them).
   */
  private async trackedButIgnored(reported: readonly string[], verdict: GlobVerdict | undefined): Promise<Set<string>> {
    if (!reported.some(isGitignore)) return new Set();
    if (verdict) return verdict.hidden(nulFields((await this.git(['ls-files', '-z'])).stdout, 'latin1'));
    return this.ignoredInIndex();
  }

  private async ignoredInIndex(): Promise<Set<string>> {
    const { stdout } = await this.git(['ls-files', '-z', '--cached', '--ignored', '--exclude-standard']);
    return new Set(nulFields(stdout, 'latin1'));
  }

  /** The parent directories, among those of `paths`, reached without a symbolic link (git refuses the others). */
  private async realParents(paths: readonly string[]): Promise<Set<string>> {
    const parents = [...new Set(paths.map(parentOf))];
    if (parents.length === 0) return new Set();
    // From the held directory: its name now, and each parent resolved below it.
    const top = asBytes(await realpath(this.readRoot));
    const real = new Set<string>();
    await Promise.all(
      parents.map(async (parent) => {
        const expected = parent === '' ? top : `${top}/${parent}`;
        const through = Buffer.from(parent === '' ? asBytes(this.readRoot) : `${asBytes(this.readRoot)}/${parent}`, 'latin1');
        const found = await realpath(through, { encoding: 'latin1' }).catch(() => undefined);
        if (found === expected) real.add(parent);
      }),
    );
    return real;
  }

  /** HEAD's commit and its tree, when HEAD is still where the last snapshot pointed it. */
  private head(): { commit: string; tree: string } | undefined {
    const head = readSmallFile(join(this.target.gitDir, 'HEAD'), 'utf8') ?? '';
    const recorded = readSmallFile(this.headFile, 'utf8') ?? '';
    const [commit = '', tree = ''] = recorded.trim().split(' ');
    return commit !== '' && head.trim() === commit ? { commit, tree } : undefined;
  }

  /** A commit of `tree`, remembered as the one HEAD is about to be on. */
  private commitOf(tree: string): string {
    const commit = writeCommit(this.target.gitDir, tree);
    writeFileSync(this.headFile, `${commit} ${tree}\n`);
    return commit;
  }

  private absolute(path: string): Buffer {
    return Buffer.from(`${asBytes(this.readRoot)}/${path}`, 'latin1');
  }

  /** A regular file of the tree walked to from the held directory with no link followed, and its stats. */
  private readHeld(path: string, maxFileBytes: number): ReturnType<typeof readRegularFileWithStatsSync> {
    let walked: ReturnType<typeof walkToParent>;
    try {
      walked = walkToParent(this.readRoot, path, false);
    } catch {
      return undefined;
    }
    if (!('dir' in walked)) return undefined;
    try {
      return readRegularFileWithStatsSync(walked.dir.entry(walked.name), maxFileBytes, true);
    } finally {
      walked.dir.close();
    }
  }

  private pathList(paths: readonly string[]): Buffer {
    return Buffer.from(paths.join('\0') + '\0', 'latin1');
  }
}

/**
 * A file of the shadow repository's own (a few bytes to a few hundred), read synchronously: a
 * tenth of the cost of the asynchronous call. Undefined when it is missing.
 */
export function readSmallFile(path: string, encoding: 'utf8' | 'latin1'): string | undefined {
  try {
    return readFileSync(path, encoding);
  } catch {
    return undefined;
  }
}

/**
 * The directory and reason of git's warning that it could not walk one, as `path (reason)`. git
 * cuts a warning at about 4 KiB: a path near PATH_MAX arrives cut, without its reason.
 */
function unreadDirectory(warning: string): string[] {
  const prefix = "could not open directory '";
  if (!warning.startsWith(prefix)) return [];
  const rest = warning.slice(prefix.length);
  const end = rest.lastIndexOf("': ");
  return [end < 0 ? `${rest}... (path cut by git)` : `${rest.slice(0, end)} (${rest.slice(end + 3)})`];
}

const isGitignore = (path: string): boolean => path === '.gitignore' || path.endsWith('/.gitignore');

/** The files whose rules decide what a snapshot holds: always in it themselves (see `ignoredRuleFiles`). */
const isRuleFile = (path: string): boolean => isGitignore(path) || isSearchIgnoreFile(path);

const RULE_FILE_PATHSPECS = ['.gitignore', '.ignore', '.rgignore'].map((name) => `:(glob)**/${name}`);

function withoutRuleFiles(paths: Set<string>): Set<string> {
  for (const path of paths) if (isRuleFile(path)) paths.delete(path);
  return paths;
}

const parentOf = (path: string): string => path.slice(0, Math.max(path.lastIndexOf('/'), 0));

/** Whether a byte-string path is valid UTF-8, so that it survives as text. */
const isText = (path: string): boolean => asBytes(fromBytes(path)) === path;

/** A byte-string path as text (a byte that is not UTF-8 shows as U+FFFD). */
export const fromBytes = (path: string): string => Buffer.from(path, 'latin1').toString('utf8');

/**
 * lstat of each path, read synchronously (a tenth of the cost of the asynchronous call for small
 * files) in slices of about 10 ms, so other requests are served meanwhile. A vanished file has none.
 */
async function statsOf(paths: readonly Buffer[]): Promise<(Stats | undefined)[]> {
  const stats: (Stats | undefined)[] = [];
  let sliceStart = performance.now();
  for (const path of paths) {
    if (performance.now() - sliceStart > 10) {
      await yieldToEventLoop();
      sliceStart = performance.now();
    }
    stats.push(lstatSync(path, { throwIfNoEntry: false }));
  }
  return stats;
}
