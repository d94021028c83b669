import { z } from 'zod';
import type { FileMatches, SearchBackend } from './search/backend.js';
import { MatchCollector } from './search/match-collector.js';
import { compileSearchRegex, fileFilterGlob } from './search/patterns.js';
import { searchSession } from './search-sandbox.js';
import { searchRoot, shownBySearch } from './search-root.js';
import { shortenLine } from './text.js';
import { fail, succeed, type Tool } from './tool.js';
import { failureFor, ToolError } from './tool-errors.js';

/** At most 500 matching lines, with a note when cut: an agent cannot read more in one go. */
export const GREP_MAX_MATCHES = 500;
/** A matching line of minified code can be huge; the agent needs where it is, not all of it. */
export const GREP_MAX_LINE_CHARS = 500;
/**
 * Longest pattern taken. ripgrep gets it as one argument, and Linux refuses an argument over
 * 128 KiB (E2BIG: the agent read only `grep_content failed: spawn E2BIG`); 32,768 characters stay
 * under that even at 4 UTF-8 bytes each.
 */
export const GREP_MAX_PATTERN_CHARS = 32_768;

const parameters = z.object({
  pattern: z
    .string()
    .max(GREP_MAX_PATTERN_CHARS, `pattern is longer than ${GREP_MAX_PATTERN_CHARS} characters; search for a shorter one`)
    .describe('Regular expression searched line by line, e.g. "def test_\\w+", "TODO|FIXME"'),
  path: z.string().optional().describe('File or directory to search, absolute or relative to the working directory (default: the working directory)'),
  file_glob: z.string().optional().describe('Only search files matching this glob: "*.py" (any depth), "src/**/*.ts" (from path), "!*.test.ts" (exclude)'),
  context_lines: z.number().int().min(0).max(50).default(0).describe('Lines of context to show before and after each match (default 0)'),
  case_sensitive: z.boolean().default(true).describe('Match letter case exactly (default true)'),
});

/** `path:N: text` for matches, `path-N- text` for context, `--` between groups when context is shown. */
function formatMatches(files: readonly FileMatches[], contextLines: number): string {
  const out: string[] = [];
  for (const file of files) {
    let previous: number | undefined;
    for (const record of file.lines) {
      if (contextLines > 0 && out.length > 0 && record.line !== (previous ?? -1) + 1) out.push('--');
      const mark = record.match ? ':' : '-';
      out.push(`${file.path}${mark}${record.line}${mark} ${shortenLine(record.text, GREP_MAX_LINE_CHARS)}`);
      previous = record.line;
    }
  }
  return out.join('\n');
}

/** grep_content with a given search backend (tests force one; the service uses the default). */
export function createGrepContentTool(backend?: SearchBackend): Tool<typeof parameters> {
  return {
    name: 'grep_content',
    description:
      'Search file contents with a regular expression. Returns `path:line: text` lines (context lines as `path-line- text`), ' +
      'sorted by path and line, at most 500 matching lines. Honours .gitignore/.ignore, skips binary files and dependency directories.',
    parameters,
    readOnly: true,
    startArgs: (params) => ({ pattern: params.pattern, path: params.path ?? null, file_glob: params.file_glob ?? null }),
    async execute(params, context) {
      try {
        if (params.pattern === '') return fail('Pattern cannot be empty');
        compileSearchRegex(params.pattern, params.case_sensitive);
        const { root, stats } = await searchRoot(params.path, context);
        if (!stats.isDirectory() && !stats.isFile()) throw new ToolError(`Not a regular file or directory: ${params.path ?? root}`);
        const glob = params.file_glob === undefined ? undefined : fileFilterGlob(params.file_glob);
        const session = backend === undefined ? await searchSession(context, root) : { backend, dispose: () => {} };
        const search = session.backend;
        const collector = new MatchCollector(GREP_MAX_MATCHES);
        const request = { root, pattern: params.pattern, caseSensitive: params.case_sensitive, contextLines: params.context_lines, ...(glob === undefined ? {} : { glob }), signal: context.signal };
        try {
          // Matches in DATA_DIR, `.env` or a file the rules deny are never shown, whatever the backend read.
          const shown = shownBySearch('grep_content', context);
          await search.searchContent(request, (matches) => {
            if (shown(matches.path)) collector.add(matches);
          });
        } finally {
          session.dispose();
        }
        const found = collector.result(params.context_lines);
        const metadata = {
          pattern: params.pattern,
          path: root,
          match_count: found.totalMatches,
          file_count: found.totalFiles,
          shown_matches: found.shownMatches,
          truncated: found.shownMatches < found.totalMatches,
          backend: search.name,
        };
        if (found.totalMatches === 0) return succeed(`No matches found for pattern ${params.pattern} in ${root}`, metadata);
        const note = metadata.truncated
          ? `\n(Showing the first ${found.shownMatches} of ${found.totalMatches} matching lines in ${found.totalFiles} files. Narrow the pattern, path or file_glob to see the rest.)`
          : '';
        return succeed(formatMatches(found.files, params.context_lines) + note, metadata);
      } catch (error) {
        return failureFor(error, context.signal);
      }
    },
  };
}

export const grepContentTool = createGrepContentTool();
