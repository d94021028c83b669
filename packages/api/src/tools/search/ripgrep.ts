import { stat } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { dirname } from 'node:path';
import {
  DEFAULT_IGNORED_DIRS,
  relativeToRoot,
  type ContentSearchRequest,
  type FileMatches,
  type LineRecord,
  type PathGlob,
  type SearchBackend,
} from './backend.js';
import type { FifoPlaces } from '../../util/fifo-release.js';
import { runProcess, type ProcessOutcome, type ProcessWrapper } from './run-process.js';

/** A failure of `rg` itself (not "no match"); the message is what the agent reads. */
export class RipgrepError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RipgrepError';
  }
}

/**
 * Flags that pin down which files rg searches, so that neither the user's rg configuration nor git's
 * global settings change the answer, and it matches the JavaScript backend (see backend.ts).
 */
const FILE_SELECTION = [
  '--no-config',
  '--no-messages',
  '--hidden',
  '--no-require-git',
  '--no-ignore-global',
  '--no-ignore-exclude',
  ...DEFAULT_IGNORED_DIRS.flatMap((name) => ['--glob', `!${name}/`]),
];

/** The ignore files rg reads, in the searched tree and the directories above it: a FIFO among them would hold it. */
const IGNORE_FILES: ReadonlySet<string> = new Set(['.gitignore', '.ignore', '.rgignore']);
const ignoreFiles = (tree: string): FifoPlaces => ({ tree, names: IGNORE_FILES, ancestors: true });

/**
 * rg's threads for a listing. The service stats every file rg lists, on its one event-loop thread,
 * while rg goes on: with rg on every core the two fought for the same cores, and on a 2-core
 * machine glob_files took twice as long as rg alone where one rg thread and the event loop side by
 * side are a pipeline. Content searches read every file, so they keep all of rg's threads.
 */
const LISTING_THREADS = ['--threads', String(Math.max(1, availableParallelism() - 1))];

/** Content search flags: JSON output (exact paths and text, binary files flagged), lines as the fallback reads them. */
const CONTENT_SEARCH = ['--json', '--no-mmap', '--crlf', '--encoding', 'none', '--engine', 'auto'];

/**
 * Lets rg skip files whose name cannot match, as a file type (types, unlike `--glob`, never override
 * ignore files). The full glob is still checked on each path rg returns. Classes and escapes are
 * left out: rg would reject some that JavaScript accepts, and the pre-selection is optional.
 */
const nameFilter = (glob: PathGlob | undefined): string[] =>
  glob?.nameGlob && !/[[\\]/.test(glob.nameGlob) ? ['--type-add', `madaglob:${glob.nameGlob}`, '--type', 'madaglob'] : [];

interface RgText {
  text?: string;
  bytes?: string;
}

interface RgMessage {
  type: string;
  data: { path?: RgText; lines?: RgText; line_number?: number | null; binary_offset?: number | null };
}

const decode = (value: RgText | undefined): string => value?.text ?? Buffer.from(value?.bytes ?? '', 'base64').toString('utf8');

const withoutTerminator = (line: string): string => {
  const text = line.endsWith('\n') ? line.slice(0, -1) : line;
  return text.endsWith('\r') ? text.slice(0, -1) : text;
};

/** Turns rg's JSON messages into one FileMatches per text file, dropping files rg found binary. */
function jsonCollector(onFile: (matches: FileMatches) => void): (record: string) => void {
  const open = new Map<string, LineRecord[]>();
  return (record) => {
    if (record === '') return;
    const message = JSON.parse(record) as RgMessage;
    const path = decode(message.data.path);
    if (message.type === 'begin') open.set(path, []);
    else if (message.type === 'match' || message.type === 'context') {
      open.get(path)?.push({ line: message.data.line_number ?? 0, text: withoutTerminator(decode(message.data.lines)), match: message.type === 'match' });
    } else if (message.type === 'end') {
      const lines = open.get(path) ?? [];
      open.delete(path);
      if (message.data.binary_offset == null && lines.some((line) => line.match)) onFile({ path, lines });
    }
  };
}

function checkOutcome(outcome: ProcessOutcome): void {
  // 0: found, 1: nothing found, 2: an error (file errors are silenced by --no-messages, so
  // anything on stderr is about the request itself, e.g. a pattern rg cannot compile).
  if (outcome.code === 0 || outcome.code === 1 || (outcome.code === 2 && outcome.stderr.trim() === '')) return;
  const detail = outcome.stderr.trim() || `exit code ${String(outcome.code)}`;
  throw new RipgrepError(`ripgrep failed: ${detail}`);
}

async function processRoot(root: string): Promise<{ cwd: string; isFile: boolean }> {
  const isFile = (await stat(root)).isFile();
  return { cwd: isFile ? dirname(root) : root, isFile };
}

/** The backend used when `rg` is on PATH: `binary` is its absolute path; `wrap` starts it in the sandbox. */
export function createRipgrepBackend(binary: string, wrap?: ProcessWrapper): SearchBackend {
  const extra = wrap === undefined ? {} : { wrap };
  return {
    name: 'ripgrep',

    async listFiles({ root, glob, signal }, onFile) {
      const args = [...FILE_SELECTION, ...LISTING_THREADS, '--files', '--null', ...nameFilter(glob), '--', root];
      const onRecord = (path: string): void => {
        if (path !== '' && (!glob || glob.matches(relativeToRoot(root, path)))) onFile(path);
      };
      checkOutcome(await runProcess(binary, args, { cwd: root, signal, separator: '\0', onRecord, fifos: ignoreFiles(root), ...extra }));
    },

    async searchContent(request: ContentSearchRequest, onFile) {
      const { cwd, isFile } = await processRoot(request.root);
      const glob = isFile ? undefined : request.glob;
      const args = [
        ...FILE_SELECTION,
        ...CONTENT_SEARCH,
        request.caseSensitive ? '--case-sensitive' : '--ignore-case',
        '--context',
        String(request.contextLines),
        ...nameFilter(glob),
        '--regexp',
        request.pattern,
        '--',
        request.root,
      ];
      const selected = (matches: FileMatches): void => {
        if (!glob || glob.matches(relativeToRoot(request.root, matches.path))) onFile(matches);
      };
      checkOutcome(await runProcess(binary, args, { cwd, signal: request.signal, separator: '\n', onRecord: jsonCollector(selected), fifos: ignoreFiles(cwd), ...extra }));
    },
  };
}
