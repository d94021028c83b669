import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import type { AddressInfo } from 'node:net';
import { searxng, startFakeSearxng, type FakeSearxng } from '@mada/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PathSandbox } from '../../src/tools/sandbox/paths.js';
import type { ToolContext, ToolSettings } from '../../src/tools/tool.js';
import { webSearchTool } from '../../src/tools/web-search.js';
import { testSettings } from './workspace.js';
import { createToolHost } from '../../src/tools/tool-host.js';

let fake: FakeSearxng;
beforeEach(async () => {
  fake = await startFakeSearxng();
});
afterEach(async () => {
  await fake.close();
});

/** Fast retries so failure paths take milliseconds. */
const fastRetries: Partial<ToolSettings> = { retryMaxAttempts: 3, retryBaseDelay: 0.01, retryMaxDelay: 0.02, searchEngineTimeout: 2 };

function contextFor(settings: Partial<ToolSettings> = {}, signal = new AbortController().signal): ToolContext {
  return {
    workingDir: tmpdir(),
    sandbox: new PathSandbox([tmpdir()]),
    settings: { ...testSettings, searchEngineUrl: fake.url, ...fastRetries, ...settings },
    host: createToolHost(),
    signal,
  };
}

const search = (args: Record<string, unknown>, settings?: Partial<ToolSettings>, signal?: AbortSignal) =>
  webSearchTool.execute(webSearchTool.parameters.parse(args), contextFor(settings, signal));

const result = (n: number) => ({ url: `https://example.com/${n}`, title: `Result ${n}`, content: `Snippet ${n}`, engines: ['duckduckgo'] });

describe('web_search', () => {
  it('asks the instance for JSON at /search with q, engines and categories', async () => {
    await search({ query: '  vitest fake timers ', engines: 'duckduckgo,wikipedia', categories: 'it' });
    expect(fake.requests).toHaveLength(1);
    expect(fake.requests[0]).toMatchObject({
      method: 'GET',
      path: '/search',
      params: { q: 'vitest fake timers', format: 'json', engines: 'duckduckgo,wikipedia', categories: 'it' },
    });
  });

  it('sends neither engines nor categories when not given', async () => {
    await search({ query: 'zod' });
    expect(fake.requests[0]?.params).toEqual({ q: 'zod', format: 'json' });
  });

  it('lists numbered results with title, URL, snippet and published date', async () => {
    fake.script(
      searxng.results([
        { url: 'https://zod.dev', title: 'Zod', content: 'TypeScript-first   schema\nvalidation', engines: ['duckduckgo', 'brave'] },
        { url: 'https://news.example/zod-4', title: 'Zod 4 released', content: 'Faster.', engine: 'bing', engines: ['bing'], publishedDate: '2025-05-19T00:00:00' },
        { url: 'https://bare.example', title: '', content: '' },
      ]),
    );
    const answer = await search({ query: 'zod' });
    expect(answer.success).toBe(true);
    expect(answer.data).toBe(
      [
        'Search results for: zod',
        '',
        '1. Zod',
        '   URL: https://zod.dev',
        '   TypeScript-first schema validation',
        '',
        '2. Zod 4 released',
        '   URL: https://news.example/zod-4',
        '   Faster.',
        '   Published: 2025-05-19T00:00:00',
        '',
        '3. (no title)',
        '   URL: https://bare.example',
      ].join('\n'),
    );
    expect(answer.metadata).toEqual({ result_count: 3, query: 'zod', engines_used: ['duckduckgo', 'brave', 'bing'] });
  });

  it('returns 5 results by default', async () => {
    fake.script(searxng.results([1, 2, 3, 4, 5, 6, 7, 8].map(result)));
    const answer = await search({ query: 'many' });
    expect(answer.metadata.result_count).toBe(5);
    expect(answer.data).toContain('5. Result 5');
    expect(answer.data).not.toContain('6. Result 6');
  });

  it.each([
    [50, 10],
    [10, 10],
    [3, 3],
    [0, 1],
    [-4, 1],
    [2.7, 2],
  ])('clamps num_results %d to %d', async (asked, shown) => {
    fake.script(searxng.results(Array.from({ length: 15 }, (_, i) => result(i + 1))));
    expect((await search({ query: 'q', num_results: asked })).metadata.result_count).toBe(shown);
  });

  it('succeeds with a clear text when there are no results', async () => {
    fake.script(searxng.empty());
    expect(await search({ query: 'xyzzy plugh' })).toMatchObject({
      success: true,
      data: 'No results found for: xyzzy plugh',
      metadata: { result_count: 0, query: 'xyzzy plugh', engines_used: [] },
    });
  });

  it.each(['', '   ', '\n\t'])('refuses an empty query (%j) without asking the instance', async (query) => {
    expect(await search({ query })).toMatchObject({ success: false, error: 'Query cannot be empty' });
    expect(fake.requests).toHaveLength(0);
  });

  describe('failures and retries', () => {
    it('retries 5xx answers and succeeds when the instance recovers', async () => {
      fake.script(searxng.status(502), searxng.status(503), searxng.results([result(1)]));
      const answer = await search({ query: 'flaky' });
      expect(answer).toMatchObject({ success: true, metadata: { result_count: 1 } });
      expect(fake.requests).toHaveLength(3);
    });

    it('gives up after retry_max_attempts calls with the last status', async () => {
      fake.setDefault(searxng.status(500));
      fake.script(searxng.status(503), searxng.status(429));
      expect(await search({ query: 'down' }, { retryMaxAttempts: 4 })).toMatchObject({ success: false, error: 'Search failed: HTTP 500' });
      expect(fake.requests).toHaveLength(4);
    });

    it.each([400, 401, 403, 404])('does not retry HTTP %d', async (status) => {
      fake.setDefault(searxng.status(status));
      expect(await search({ query: 'bad' })).toMatchObject({ success: false, error: `Search failed: HTTP ${status}` });
      expect(fake.requests).toHaveLength(1);
    });

    it('retries dropped connections', async () => {
      fake.script(searxng.drop(), searxng.results([result(1)]));
      expect((await search({ query: 'drop once' })).success).toBe(true);
      expect(fake.requests).toHaveLength(2);
    });

    it('reports a request failure when every connection drops', async () => {
      fake.setDefault(searxng.drop());
      const answer = await search({ query: 'always dropped' });
      expect(answer.success).toBe(false);
      expect(answer.error).toMatch(/^Search request failed: \S/);
      expect(fake.requests).toHaveLength(3);
    });

    it('reports a request failure when nothing listens', async () => {
      const port = await closedPort();
      const answer = await search({ query: 'nobody home' }, { searchEngineUrl: `http://127.0.0.1:${port}` });
      expect(answer.error).toMatch(/^Search request failed: .*ECONNREFUSED/);
    });

    it('times out each request after search_engine_timeout and retries', async () => {
      fake.script(searxng.slow(2000, searxng.results([result(1)])), searxng.results([result(2)]));
      const answer = await search({ query: 'slow once' }, { searchEngineTimeout: 0.2 });
      expect(answer).toMatchObject({ success: true });
      expect(answer.data).toContain('Result 2');
      expect(fake.requests).toHaveLength(2);
    });

    it('says the search timed out once every attempt did', async () => {
      fake.setDefault(searxng.slow(2000));
      const started = Date.now();
      const answer = await search({ query: 'always slow' }, { searchEngineTimeout: 0.2, retryMaxAttempts: 2 });
      expect(answer).toMatchObject({ success: false, error: 'Search timed out after 0.2s (all retries exhausted)' });
      expect(fake.requests).toHaveLength(2);
      expect(Date.now() - started).toBeLessThan(1500);
    });

    it('does not retry an answer that is not JSON', async () => {
      fake.setDefault(searxng.raw('<html>maintenance</html>', 'text/html'));
      const answer = await search({ query: 'html' });
      expect(answer.success).toBe(false);
      expect(answer.error).toMatch(/^Search error: /);
      expect(fake.requests).toHaveLength(1);
    });

    it('reports an answer without a results list', async () => {
      fake.setDefault(searxng.raw('{"error": "engine unavailable"}'));
      expect((await search({ query: 'odd' })).error).toBe('Search error: unexpected response from the search engine (no results list)');
    });

    it('stops at once when the run is cancelled, leaving the report to the agent engine', async () => {
      fake.setDefault(searxng.slow(5000));
      const controller = new AbortController();
      const pending = search({ query: 'cancel me' }, {}, controller.signal);
      setTimeout(() => controller.abort(new Error('client gone')), 100);
      await expect(pending).rejects.toThrow('client gone');
      expect(fake.requests).toHaveLength(1);
    });
  });

  it('validates categories and announces query and num_results', () => {
    expect(webSearchTool.parameters.safeParse({ query: 'q', categories: 'music' }).success).toBe(false);
    const params = webSearchTool.parameters.parse({ query: 'q' });
    expect(params.num_results).toBe(5);
    expect(webSearchTool.startArgs(params)).toEqual({ query: 'q', num_results: 5 });
  });
});

/** A port on which nothing listens (bound, then released). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
