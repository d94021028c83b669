/**
 * What glob_files and grep_content ask of a search backend. Two backends implement it, ripgrep and
 * pure JavaScript, and for the same request they must give the same answer: the same files and
 * the same lines (order is not part of the contract; the tools sort).
 *
 * Which files are searched, in both backends:
 * - ignore files are honoured: `.gitignore` (also outside a git repository, and those of parent
 *   directories up to the repository root), `.ignore` and `.rgignore` (parent directories up to
 *   `/`), with ripgrep's precedence; git's global excludes and `.git/info/exclude` are not read;
 * - the directories in DEFAULT_IGNORED_DIRS are skipped at any depth below the search root, even
 *   when an ignore file re-includes them;
 * - hidden files are searched (`.github/`, `.env.example`, ...);
 * - symbolic links are not followed, so a link cannot lead a search out of the sandbox, and
 *   special files (FIFOs, sockets, devices) are skipped;
 * - a search root given explicitly is searched even when it lies inside an ignored directory.
 *
 * Lines are split at `\n`; a `\r` before it is a terminator (`--crlf`). Patterns are regular
 * expressions in the common subset of Rust's and JavaScript's syntax; ripgrep switches to PCRE2
 * for look-around and back-references. Known divergences, all on text that is not UTF-8: ripgrep
 * matches bytes where the fallback matches decoded text (an invalid byte becomes U+FFFD, which
 * `.` matches in JavaScript and not in ripgrep), and under PCRE2 ripgrep skips such lines.
 *
 * Neither backend can stall the service, whatever the pattern, the globs or the ignore files:
 * globs are matched in linear time (glob.ts), the JavaScript backend's regular expressions run on
 * worker threads that the request's signal terminates, and its walk gives the event loop a turn
 * every few milliseconds.
 */

/**
 * Directories nobody means to search: version-control internals, dependency trees, virtual
 * environments and tool caches. Build outputs (`dist`, `build`, `target`) are not on the list:
 * projects ignore them in `.gitignore` when they are generated, and some projects keep sources
 * under such names.
 */
export const DEFAULT_IGNORED_DIRS: readonly string[] = [
  '.git',
  '.hg',
  '.svn',
  'node_modules',
  '.venv',
  'venv',
  '__pycache__',
  '.mypy_cache',
  '.pytest_cache',
  '.ruff_cache',
  '.tox',
];

/** A compiled glob over paths relative to the search root. */
export interface PathGlob {
  /** The pattern as the user wrote it. */
  source: string;
  matches(relativePath: string): boolean;
  /**
   * A glob every matching file's name satisfies, when there is one; a backend may use it to skip
   * other files early. `matches` still decides.
   */
  nameGlob?: string;
}

export interface FileListRequest {
  /** Absolute, symlink-free directory. */
  root: string;
  glob?: PathGlob;
  signal: AbortSignal;
}

export interface ContentSearchRequest {
  /** Absolute, symlink-free directory or regular file. A file is searched whatever `glob` says. */
  root: string;
  /** A regular expression, already checked with `compileSearchRegex`. */
  pattern: string;
  caseSensitive: boolean;
  contextLines: number;
  glob?: PathGlob;
  signal: AbortSignal;
}

export interface LineRecord {
  /** 1-based. */
  line: number;
  /** Without the line terminator (`\n` or `\r\n`). */
  text: string;
  match: boolean;
}

/** The matching lines of one file with their context lines, in line order. */
export interface FileMatches {
  path: string;
  lines: LineRecord[];
}

export interface SearchBackend {
  readonly name: 'ripgrep' | 'javascript';
  /**
   * Calls `onFile` with the absolute path of each regular file under `root` that `glob` matches,
   * as they are found (callers can work while the search goes on).
   */
  listFiles(request: FileListRequest, onFile: (path: string) => void): Promise<void>;
  /**
   * Calls `onFile` once per text file with at least one matching line. Files containing a NUL
   * byte are binary and never reported.
   */
  searchContent(request: ContentSearchRequest, onFile: (matches: FileMatches) => void): Promise<void>;
}

/** The path of `path` below `root` (`root` itself gives ''). */
export const relativeToRoot = (root: string, path: string): string =>
  path === root ? '' : root === '/' ? path.slice(1) : path.slice(root.length + 1);
