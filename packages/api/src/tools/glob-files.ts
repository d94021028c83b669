import { lstatSync, type Stats } from 'node:fs';
import { z } from 'zod';
import type { FileListRequest, SearchBackend } from './search/backend.js';
import { rootGlob } from './search/patterns.js';
import { searchSession } from './search-sandbox.js';
import { searchRoot, shownBySearch } from './search-root.js';
import { succeed, type Tool } from './tool.js';
import { failureFor, ToolError } from './tool-errors.js';

export const GLOB_DEFAULT_LIMIT = 100;

const parameters = z.object({
  pattern: z
    .string()
    .min(1)
    .describe('Glob relative to path: "**/*.ts" (any depth), "*.md" (top level only), "src/**/test_*.py", "*.{json,yaml}"'),
  path: z.string().optional().describe('Directory to search, absolute or relative to the working directory (default: the working directory)'),
  limit: z.number().int().min(1).default(GLOB_DEFAULT_LIMIT).describe(`Most files to list (default ${GLOB_DEFAULT_LIMIT})`),
});

/** The pattern relative to `root`: an absolute pattern inside `root` is accepted and made relative. */
function relativePattern(pattern: string, root: string): string {
  if (!pattern.startsWith('/')) return pattern;
  if (pattern.startsWith(`${root}/`)) return pattern.slice(root.length + 1);
  throw new ToolError(`Pattern must be relative to path (${root}): ${pattern}`);
}

/**
 * The matching files, newest modification first; equal times by path, so the order never depends
 * on the backend. Each file is stat'ed as soon as the backend reports it, while the search goes
 * on, and synchronously: a few microseconds each, far less than a round trip to the thread pool.
 */
async function newestFirst(search: SearchBackend, request: FileListRequest, shown: (path: string, stats: Stats) => boolean): Promise<string[]> {
  const dated: { path: string; mtime: number }[] = [];
  await search.listFiles(request, (path) => {
    const stats = lstatSync(path, { throwIfNoEntry: false });
    if (stats?.isFile() && shown(path, stats)) dated.push({ path, mtime: stats.mtimeMs });
  });
  dated.sort((a, b) => b.mtime - a.mtime || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return dated.map((entry) => entry.path);
}

/** glob_files with a given search backend (tests force one; the service uses the default). */
export function createGlobFilesTool(backend?: SearchBackend): Tool<typeof parameters> {
  return {
    name: 'glob_files',
    description:
      'Find files by name pattern. Returns absolute paths, most recently modified first. Honours .gitignore/.ignore and skips ' +
      'dependency and cache directories (node_modules, .git, .venv, __pycache__, ...).',
    parameters,
    readOnly: true,
    startArgs: (params) => ({ pattern: params.pattern, path: params.path ?? null }),
    async execute(params, context) {
      try {
        const { root, stats } = await searchRoot(params.path, context);
        if (!stats.isDirectory()) throw new ToolError(`Not a directory: ${params.path ?? root}`);
        const glob = rootGlob(relativePattern(params.pattern, root));
        const session = backend === undefined ? await searchSession(context, root) : { backend, dispose: () => {} };
        const search = session.backend;
        let files: string[];
        try {
          // DATA_DIR, `.env` and files the rules deny are never listed, whatever the backend saw.
          const shown = shownBySearch('glob_files', context);
          files = await newestFirst(search, { root, glob, signal: context.signal }, shown);
        } finally {
          session.dispose();
        }
        const shown = files.slice(0, params.limit);
        const metadata = { pattern: params.pattern, path: root, count: shown.length, total: files.length, truncated: files.length > shown.length, backend: search.name };
        if (files.length === 0) return succeed(`No files found matching ${params.pattern} in ${root}`, metadata);
        const more =
          files.length > shown.length
            ? `\n(${files.length} files match; showing the ${shown.length} most recently modified. Narrow the pattern or path to see the others.)`
            : '';
        return succeed(shown.join('\n') + more, metadata);
      } catch (error) {
        return failureFor(error, context.signal);
      }
    },
  };
}

export const globFilesTool = createGlobFilesTool();
