import { z } from 'zod';
import { describeTool } from '../model/index.js';
import { countTokens } from '../tokens/count.js';
import { succeed, type Tool } from '../tools/tool.js';

/**
 * MCP tools whose definitions would crowd the model's window (TEAMS.md section 12: more than a
 * quarter of it) are not offered one by one: the agent gets this one tool, which finds them by
 * what they do and loads the ones it finds for the rest of the run.
 */
export const TOOL_SEARCH = 'mcp_tools';

/** The most tools one search loads: a vague query must not load everything back. */
const MAX_FOUND = 5;
/** Words of a query looked at: a query is a few words, not a document. */
const MAX_QUERY_WORDS = 16;
const STOP_WORDS = new Set(['a', 'an', 'and', 'any', 'for', 'from', 'in', 'is', 'it', 'of', 'on', 'or', 'that', 'the', 'to', 'tool', 'tools', 'with', 'mcp']);

const parameters = z.object({
  query: z.string().min(1).max(500).describe("What the tool should do, in a few words (for example 'add two numbers'), or a tool's name"),
});

/**
 * Lower-case words of a name or a text: `get-tinyImage`, `get_tiny_image` and `get tiny image` give
 * the same words; a word in camelCase counts whole too (`GitHub` is `github`, `git` and `hub`).
 */
function wordsOf(text: string): string[] {
  const words: string[] = [];
  for (const token of text.split(/[^A-Za-z0-9]+/)) {
    if (token === '') continue;
    const whole = token.toLowerCase();
    words.push(whole);
    const parts = token.replace(/([a-z0-9])([A-Z])/g, '$1 $2').toLowerCase().split(' ');
    if (parts.length > 1) words.push(...parts);
  }
  return words.filter((word) => !STOP_WORDS.has(word));
}

/** Equal, or one a prefix of the other of at least four letters (`add`/`adds` no, `search`/`searching` yes). */
function matches(word: string, candidates: ReadonlySet<string>): boolean {
  if (candidates.has(word)) return true;
  if (word.length < 4) return false;
  for (const candidate of candidates) {
    if (candidate.length >= 4 && (candidate.startsWith(word) || word.startsWith(candidate))) return true;
  }
  return false;
}

interface Indexed {
  tool: Tool;
  /** The tool's name as its server gives it (`mcp__<server>__<tool>` without the prefix and server). */
  ownName: string;
  nameWords: ReadonlySet<string>;
  descriptionWords: ReadonlySet<string>;
}

const ownNameOf = (name: string): string => name.replace(/^mcp__.+?__/, '');

function index(tool: Tool): Indexed {
  const ownName = ownNameOf(tool.name);
  return {
    tool,
    ownName,
    nameWords: new Set(wordsOf(ownName)),
    descriptionWords: new Set(wordsOf(tool.description)),
  };
}

const isNamed = (entry: Indexed, query: string): boolean => query === entry.tool.name || query === entry.ownName;

/** A tool's score for the query's words: a word of its name counts three times one of its description. */
function score(entry: Indexed, words: readonly string[]): number {
  let total = 0;
  for (const word of words) {
    if (matches(word, entry.nameWords)) total += 3;
    else if (matches(word, entry.descriptionWords)) total += 1;
  }
  return total;
}

/** The servers the tools come from, for the search tool's description. */
const serversOf = (tools: readonly Tool[]): string[] => [...new Set(tools.map((tool) => /^mcp__(.+?)__/.exec(tool.name)?.[1] ?? tool.name))].sort();

const line = (tool: Tool): string => `- ${tool.name}: ${tool.description.split('\n')[0]!.slice(0, 200)}`;

/**
 * The `mcp_tools` tool over `deferred`. `load` adds found tools to the run's tool set; the tools
 * it loads in all keep their definitions within `budgetTokens` (a quarter of the window), so
 * searching cannot bring back the crowding it stands in for.
 */
export function toolSearch(deferred: readonly Tool[], budgetTokens: number, load: (tools: readonly Tool[]) => void): Tool<typeof parameters> {
  // Indexed on the first search: most runs never search, and their start should not pay for it.
  let entries: Indexed[] | undefined;
  const loaded = new Set<string>();
  let used = 0;
  const servers = serversOf(deferred);
  return {
    name: TOOL_SEARCH,
    description:
      `Finds MCP tools by what they do and loads them. ${deferred.length} tools of the MCP server(s) ${servers.join(', ')} are not listed, ` +
      'to keep the context small. Describe what you need in a few words (or give a tool name); the tools found can be called from your next answer.',
    parameters,
    readOnly: true,
    startArgs: (params) => params,
    execute(params) {
      const words = wordsOf(params.query).slice(0, MAX_QUERY_WORDS);
      entries ??= deferred.map(index);
      // A tool's name finds that tool alone; words find the best few.
      const named = entries.filter((entry) => isNamed(entry, params.query.trim()));
      const found =
        named.length > 0
          ? named
          : entries
              .map((entry) => ({ entry, score: score(entry, words) }))
              .filter((candidate) => candidate.score > 0)
              .sort((a, b) => b.score - a.score || a.entry.tool.name.localeCompare(b.entry.tool.name))
              .slice(0, MAX_FOUND)
              .map((candidate) => candidate.entry);
      if (found.length === 0) {
        return Promise.resolve(succeed(`No MCP tool matches "${params.query.slice(0, 100)}". Try other words for what the tool should do.`));
      }
      const fresh: Indexed[] = [];
      const already: Indexed[] = [];
      const over: Indexed[] = [];
      for (const entry of found) {
        if (loaded.has(entry.tool.name)) {
          already.push(entry);
          continue;
        }
        const tokens = countTokens(JSON.stringify(describeTool(entry.tool)));
        if (used + tokens > budgetTokens) {
          over.push(entry);
          continue;
        }
        fresh.push(entry);
        loaded.add(entry.tool.name);
        used += tokens;
      }
      if (fresh.length > 0) load(fresh.map((entry) => entry.tool));
      const parts = [
        ...(fresh.length > 0 ? [`Loaded, callable from your next answer:\n${fresh.map((entry) => line(entry.tool)).join('\n')}`] : []),
        ...(already.length > 0 ? [`Already loaded:\n${already.map((entry) => line(entry.tool)).join('\n')}`] : []),
        ...(over.length > 0
          ? [`Found but not loaded (the loaded tools would take more than a quarter of the context window):\n${over.map((entry) => line(entry.tool)).join('\n')}`]
          : []),
      ];
      return Promise.resolve(succeed(parts.join('\n\n')));
    },
  };
}
