import { startFakeSearxng, startScriptedModel, type FakeSearxng, type ScriptedModel } from '@mada/testkit';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { PROBE_CACHE_MS } from '../../src/health/probes.js';
import { createTestApp, type TestApp } from '../support/app.js';

let model: ScriptedModel | undefined;
let search: FakeSearxng | undefined;
let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  await model?.close();
  await search?.close();
  t = model = search = undefined;
});

describe('a flood of GET /health', () => {
  it('asks the database, the model runtime and the search engine a few times, not once per request', async () => {
    model = await startScriptedModel();
    search = await startFakeSearxng();
    t = await createTestApp({ model: { url: model.url, protocol: 'openai' }, env: { SEARCH_ENGINE_URL: search.url } });
    let pings = 0;
    const ping = t.conversations.ping.bind(t.conversations);
    t.conversations.ping = () => {
      pings += 1;
      return ping();
    };
    // The probes the service itself would use: to the runtime's model list and the engine's /healthz.
    const app = await buildApp({ ...t, logger: pino({ level: 'silent' }) });
    const runtimeProbes = (): number => model!.introspections.filter((path) => path === '/v1/models').length;
    const searchProbes = (): number => search!.requests.filter((request) => request.path === '/healthz').length;
    const runtimeBefore = runtimeProbes();
    try {
      const started = performance.now();
      const concurrent = await Promise.all(Array.from({ length: 100 }, () => app.inject({ url: '/health' })));
      const sequential = [];
      for (let i = 0; i < 100; i++) sequential.push(await app.inject({ url: '/health' }));
      const elapsed = performance.now() - started;
      for (const response of [...concurrent, ...sequential]) {
        expect(response.json()).toMatchObject({ checks: { database: 'ok', model_runtime: 'ok', search_engine: 'ok' } });
      }
      // One asking per cache period at most (and one more for the period the flood began in).
      const most = Math.ceil(elapsed / PROBE_CACHE_MS) + 1;
      expect(pings).toBeGreaterThanOrEqual(1);
      expect(pings).toBeLessThanOrEqual(most);
      expect(runtimeProbes() - runtimeBefore).toBeLessThanOrEqual(most);
      expect(searchProbes()).toBeLessThanOrEqual(most);
    } finally {
      await app.close();
    }
  });

  it('asks again once the cache period is over: a runtime that went away shows', async () => {
    search = await startFakeSearxng();
    t = await createTestApp({ env: { SEARCH_ENGINE_URL: search.url } });
    const app = await buildApp({ ...t, logger: pino({ level: 'silent' }) });
    try {
      expect((await app.inject({ url: '/health' })).json()).toMatchObject({ checks: { search_engine: 'ok' } });
      await search.close();
      search = undefined;
      await new Promise((resolve) => setTimeout(resolve, PROBE_CACHE_MS + 100));
      expect((await app.inject({ url: '/health' })).json()).toMatchObject({ checks: { search_engine: 'unreachable' } });
    } finally {
      await app.close();
    }
  });
});
