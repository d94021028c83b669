import { createServer } from 'node:net';
import { Writable } from 'node:stream';
import { scripted, startScriptedModel, type ScriptedModel } from '@mada/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { buildApp, createLogger } from '../../src/app.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { send } from '../support/raw-http.js';
import { parseFrames } from '../support/sse.js';

const ALICE = { 'x-api-key': 'alice-key-0123456789' };
const KEYS = { API_KEYS: 'alice:alice-key-0123456789' };

/** A loopback port that refuses connections: bound once to learn a free number, then closed. */
async function refusedAddress(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
  return `127.0.0.1:${port}`;
}

describe('a tool failing on the service\'s own infrastructure', () => {
  let model: ScriptedModel;
  let t: TestApp;
  let app: Awaited<ReturnType<typeof buildApp>>;
  afterEach(async () => {
    await app.close();
    await t.close();
    await model.close();
  });

  /** Streams a task whose one web_search meets a refused connection: its frames, what the model read, the log. */
  async function searchAgainstRefusedEngine(env: Record<string, string>, headers: Record<string, string>) {
    const engine = await refusedAddress();
    model = await startScriptedModel({
      turns: [scripted.toolCalls({ name: 'web_search', arguments: { query: 'alert rules' } }), scripted.text('Search is down.')],
    });
    const lines: string[] = [];
    const sink = new Writable({ write: (chunk, _enc, done) => (lines.push(String(chunk)), done()) });
    const logger = createLogger({ logLevel: 'info' }, sink);
    t = await createTestApp({ model: { url: model.url }, env: { ...env, SEARCH_ENGINE_URL: `http://${engine}`, SEARCH_ENGINE_TIMEOUT: '2' }, logger });
    app = await buildApp({ ...t, logger });
    const base = await app.listen({ port: 0, host: '127.0.0.1' });
    const response = await send(base, {
      method: 'POST',
      path: '/agents/stream',
      headers,
      body: { agent_type: 'task', prompt: 'Find alert rules', working_dir: t.workdir, mode: 'auto_accept' },
    });
    expect(response.status).toBe(200);
    const toolDone = parseFrames(response.text).find((frame) => frame.event === 'tool_done');
    const modelRead = String(model.requests[1]?.messages.at(-1)?.content);
    return { engine, toolDone, modelRead, response: response.text, log: lines.join('') };
  }

  it('hides the search engine\'s address from a keyed user, in tool_done and in what the model reads; the log keeps it', async () => {
    const { engine, toolDone, modelRead, response, log } = await searchAgainstRefusedEngine(KEYS, ALICE);
    expect(toolDone).toEqual({ event: 'tool_done', tool: 'web_search', result_summary: 'Search request failed: connect ECONNREFUSED <internal address>', outcome: 'failed' });
    expect(modelRead).toBe('Search request failed: connect ECONNREFUSED <internal address>');
    expect(response).not.toContain(engine);
    expect(log).toContain(engine);
  });

  it('shows it to the owner in local mode, who runs the search engine themselves', async () => {
    const { engine, toolDone, modelRead } = await searchAgainstRefusedEngine({}, {});
    expect(toolDone).toMatchObject({ result_summary: `Search request failed: connect ECONNREFUSED ${engine}` });
    expect(modelRead).toBe(`Search request failed: connect ECONNREFUSED ${engine}`);
  });
});
