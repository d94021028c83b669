import { lstatSync, type Stats } from 'node:fs';
import { z } from 'zod';
import type { FileListRequest, SearchBackend } from './search/backend.js';
import { NewestFirst } from './search/newest-first.js';
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
 * The `limit` newest matching files (equal times by path, so the order never depends on the
 * backend) and how many matched. Each file is stat'ed as soon as the backend reports it, while the
 * search goes on, and synchronously: a few microseconds each, far less than a round trip to the
 * thread pool.
 */
async function newestFirst(
  search: SearchBackend,
  request: FileListRequest,
  limit: number,
  shown: (path: string, stats: Stats) => boolean,
): Promise<{ files: string[]; total: number }> {
  const newest = new NewestFirst(limit);
  await search.listFiles(request, (path) => {
    const stats = lstatSync(path, { throwIfNoEntry: false });
    if (stats?.isFile() && shown(path, stats)) newest.add(path, stats.mtimeMs);
  });
  return { files: newest.newest(), total: newest.total };
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
        let found: { files: string[]; total: number };
        try {
          // DATA_DIR, `.env` and files the rules deny are never listed, whatever the backend saw.
          const shown = shownBySearch('glob_files', context);
          found = await newestFirst(search, { root, glob, signal: context.signal }, params.limit, shown);
        } finally {
          session.dispose();
        }
        const { files: shown, total } = found;
        const metadata = { pattern: params.pattern, path: root, count: shown.length, total, truncated: total > shown.length, backend: search.name };
        if (total === 0) return succeed(`No files found matching ${params.pattern} in ${root}`, metadata);
        const more =
          total > shown.length ? `\n(${total} files match; showing the ${shown.length} most recently modified. Narrow the pattern or path to see the others.)` : '';
        return succeed(shown.join('\n') + more, metadata);
      } catch (error) {
        return failureFor(error, context.signal);
      }
    },
  };
}

export const globFilesTool = createGlobFilesTool();
