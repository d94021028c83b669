import { z } from 'zod';
import { HttpStatusError, isRetryable, retryAsync } from '../util/retry.js';
import { fail, succeed, type Tool, type ToolContext, type ToolSettings } from './tool.js';
import { errorMessage } from '../util/error-message.js';
import { infrastructureFailure } from './infrastructure-failure.js';
import { withDeadline } from '../util/deadline.js';

export const SEARCH_CATEGORIES = ['general', 'images', 'news', 'science', 'it'] as const;
const MAX_SNIPPET_CHARS = 500;

const parameters = z.object({
  query: z.string().describe('What to search the web for'),
  num_results: z.number().default(5).describe('How many results to return, 1 to 10 (default 5)'),
  engines: z.string().optional().describe('Comma-separated search engines to use, e.g. "duckduckgo,wikipedia" (default: the instance decides)'),
  categories: z.enum(SEARCH_CATEGORIES).optional().describe('Kind of results: general, images, news, science or it'),
});

type SearchParams = z.output<typeof parameters>;

/** One SearXNG result; anything else in it is ignored, results without a URL are skipped. */
const resultSchema = z.object({
  url: z.string(),
  title: z.string().nullish(),
  content: z.string().nullish(),
  engine: z.string().nullish(),
  engines: z.array(z.string()).nullish(),
  publishedDate: z.string().nullish(),
});
type SearchResult = z.output<typeof resultSchema>;

const responseSchema = z.object({ results: z.array(z.unknown()) });

export const clampResults = (n: number): number => Math.min(10, Math.max(1, Math.trunc(n)));

function searchUrl(settings: ToolSettings, params: SearchParams, query: string): URL {
  const url = new URL(`${settings.searchEngineUrl.replace(/\/+$/, '')}/search`);
  url.searchParams.set('q', query);
  url.searchParams.set('format', 'json');
  const engines = params.engines?.trim();
  if (engines) url.searchParams.set('engines', engines);
  if (params.categories) url.searchParams.set('categories', params.categories);
  return url;
}

/** One request, bounded by search_engine_timeout; statuses other than 2xx become HttpStatusError. */
async function requestOnce(url: URL, timeoutSeconds: number, signal: AbortSignal): Promise<unknown> {
  const deadline = withDeadline(signal, timeoutSeconds * 1000);
  try {
    const response = await fetch(url, { headers: { accept: 'application/json' }, signal: deadline.signal });
    if (!response.ok) {
      await response.body?.cancel();
      throw new HttpStatusError(response.status);
    }
    return await response.json();
  } finally {
    deadline.dispose();
  }
}

const causes = (error: unknown): unknown[] => {
  const chain: unknown[] = [];
  for (let current = error; current instanceof Error && chain.length < 10; current = current.cause) chain.push(current);
  return chain;
};

const TIMEOUT_CODES = new Set(['ETIMEDOUT', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);
const isTimeout = (error: unknown): boolean =>
  causes(error).some((e) => (e as Error).name === 'TimeoutError' || TIMEOUT_CODES.has(String((e as { code?: unknown }).code)));

/** The failure texts the agent reads, kept word for word from the original service. */
function failureMessage(error: unknown, settings: ToolSettings): string {
  if (error instanceof HttpStatusError) return `Search failed: HTTP ${error.status}`;
  if (isTimeout(error)) return `Search timed out after ${settings.searchEngineTimeout}s (all retries exhausted)`;
  const innermost = causes(error).at(-1);
  const text = errorMessage(innermost ?? error);
  return isRetryable(error) ? `Search request failed: ${text}` : `Search error: ${text}`;
}

function parseResults(body: unknown): SearchResult[] {
  const parsed = responseSchema.safeParse(body);
  if (!parsed.success) throw new Error('unexpected response from the search engine (no results list)');
  return parsed.data.results.flatMap((item) => {
    const result = resultSchema.safeParse(item);
    return result.success ? [result.data] : [];
  });
}

const snippetOf = (content: string | null | undefined): string => {
  const text = (content ?? '').replace(/\s+/g, ' ').trim();
  return text.length > MAX_SNIPPET_CHARS ? `${text.slice(0, MAX_SNIPPET_CHARS)}...` : text;
};

function formatResult(result: SearchResult, index: number): string {
  const lines = [`${index + 1}. ${result.title?.trim() || '(no title)'}`, `   URL: ${result.url}`];
  const snippet = snippetOf(result.content);
  if (snippet) lines.push(`   ${snippet}`);
  if (result.publishedDate) lines.push(`   Published: ${result.publishedDate}`);
  return lines.join('\n');
}

const enginesOf = (results: readonly SearchResult[]): string[] => [
  ...new Set(results.flatMap((result) => result.engines ?? (result.engine ? [result.engine] : []))),
];

async function search(params: SearchParams, context: ToolContext) {
  const query = params.query.trim();
  if (query === '') return fail('Query cannot be empty');
  const { settings } = context;
  const url = searchUrl(settings, params, query);
  let body: unknown;
  try {
    body = await retryAsync(() => requestOnce(url, settings.searchEngineTimeout, context.signal), {
      maxAttempts: settings.retryMaxAttempts,
      baseDelay: settings.retryBaseDelay,
      maxDelay: settings.retryMaxDelay,
      signal: context.signal,
    });
  } catch (error) {
    if (context.signal.aborted) throw error;
    return fail(infrastructureFailure(failureMessage(error, settings), error, context), { query });
  }
  const results = parseResults(body).slice(0, clampResults(params.num_results));
  const metadata = { result_count: results.length, query, engines_used: enginesOf(results) };
  if (results.length === 0) return succeed(`No results found for: ${query}`, metadata);
  return succeed(`Search results for: ${query}\n\n${results.map(formatResult).join('\n\n')}`, metadata);
}

/** web_search: a SearXNG instance's JSON API. */
export const webSearchTool: Tool<typeof parameters> = {
  name: 'web_search',
  description:
    'Search the web and get titles, URLs and snippets of the top results. Use it for documentation, error messages and ' +
    'anything newer than your training. num_results is 1 to 10 (default 5).',
  parameters,
  readOnly: false,
  startArgs: (params) => ({ query: params.query, num_results: params.num_results }),
  async execute(params, context) {
    try {
      return await search(params, context);
    } catch (error) {
      if (context.signal.aborted) throw error;
      return fail(`Search error: ${errorMessage(error)}`, { query: params.query.trim() });
    }
  },
};
