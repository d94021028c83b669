import { afterEach, describe, expect, it } from 'vitest';
import { MAX_AUTH_FAILURES_PER_MINUTE } from '../../src/http/auth-failures.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { sample, scrape } from '../support/metrics.js';

describe('GET /metrics', () => {
  const apps: TestApp[] = [];
  const open = async (env: Record<string, string> = {}) => {
    const t = await createTestApp({ env });
    apps.push(t);
    return t;
  };
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((t) => t.close()));
  });

  it('is open in local mode and speaks the Prometheus text format, with the process metrics', async () => {
    const t = await open();
    const response = await t.app.inject({ method: 'GET', url: '/metrics' });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(response.body).toContain('# TYPE mada_http_requests_total counter');
    expect(sample(response.body, 'process_resident_memory_bytes')).toBeGreaterThan(0);
    expect(sample(response.body, 'nodejs_eventloop_lag_seconds')).toBeDefined();
  });

  it('labels requests by route pattern and status, never by the URL or the user', async () => {
    const t = await open();
    const id = 'a1b2c3d4-0000-4000-8000-000000000001';
    await t.app.inject({ method: 'GET', url: `/conversations/${id}` });
    await t.app.inject({ method: 'GET', url: `/conversations/${id}` });
    await t.app.inject({ method: 'GET', url: '/no/such/route/secret-token' });
    await t.app.inject({ method: 'GET', url: '/conversations/?limit=5' });
    const text = await scrape(t.app);
    expect(sample(text, 'mada_http_requests_total', { method: 'GET', route: '/conversations/:conversation_id', status: '404' })).toBe(2);
    expect(sample(text, 'mada_http_requests_total', { method: 'GET', route: 'unmatched', status: '404' })).toBe(1);
    expect(sample(text, 'mada_http_requests_total', { method: 'GET', route: '/conversations/', status: '200' })).toBe(1);
    expect(sample(text, 'mada_http_request_duration_seconds_count', { route: '/conversations/:conversation_id' })).toBe(2);
    expect(text).not.toContain(id);
    expect(text).not.toContain('secret-token');
    expect(text).not.toContain('local');
  });

  it('keeps one registry per app: two apps in one process count apart', async () => {
    const first = await open();
    const second = await open();
    await first.app.inject({ method: 'GET', url: '/agents/' });
    await first.app.inject({ method: 'GET', url: '/agents/' });
    expect(sample(await scrape(first.app), 'mada_http_requests_total', { route: '/agents/', status: '200' })).toBe(2);
    expect(sample(await scrape(second.app), 'mada_http_requests_total', { route: '/agents/', status: '200' })).toBeUndefined();
  });

  describe('with API_KEYS', () => {
    const keys = { API_KEYS: 'alice:alice-key-0123456789' };

    it('answers 404 when METRICS_TOKEN is unset, whatever is sent', async () => {
      const t = await open(keys);
      for (const headers of [{}, { 'x-api-key': 'alice-key-0123456789' }, { authorization: 'Bearer anything' }]) {
        const response = await t.app.inject({ method: 'GET', url: '/metrics', headers });
        expect(response.statusCode).toBe(404);
        expect(response.json()).toEqual({ detail: 'Not Found' });
      }
    });

    it('needs the bearer METRICS_TOKEN: an API key alone gets 401', async () => {
      const t = await open({ ...keys, METRICS_TOKEN: 'scrape-token-abcdef' });
      const get = (headers: Record<string, string>) => t.app.inject({ method: 'GET', url: '/metrics', headers });
      const withKey = await get({ 'x-api-key': 'alice-key-0123456789' });
      expect(withKey.statusCode).toBe(401);
      expect(withKey.json()).toEqual({ detail: 'Missing metrics token' });
      const wrong = await get({ authorization: 'Bearer scrape-token-abcdeX' });
      expect(wrong.statusCode).toBe(401);
      expect(wrong.json()).toEqual({ detail: 'Invalid metrics token' });
      const keyAsBearer = await get({ authorization: 'Bearer alice-key-0123456789' });
      expect(keyAsBearer.statusCode).toBe(401);
      const right = await get({ authorization: 'Bearer scrape-token-abcdef' });
      expect(right.statusCode).toBe(200);
      expect(right.body).toContain('mada_http_requests_total');
    });

    it('counts wrong tokens with wrong API keys: past 30 a minute the client gets 429 for both', async () => {
      const t = await open({ ...keys, METRICS_TOKEN: 'scrape-token-abcdef' });
      const guess = (i: number) => t.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer guess-${i}` } });
      const statuses: number[] = [];
      for (let i = 0; i < MAX_AUTH_FAILURES_PER_MINUTE + 1; i++) statuses.push((await guess(i)).statusCode);
      expect(statuses).toEqual([...Array<number>(MAX_AUTH_FAILURES_PER_MINUTE).fill(401), 429]);
      // The right token from the same client now waits out the minute too, and so does its API key.
      const right = await t.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: 'Bearer scrape-token-abcdef' } });
      expect(right.statusCode).toBe(429);
      expect(right.json().detail).toMatch(/^Too many failed authentication attempts\. Retry in \d+ seconds\.$/);
      expect(right.headers['retry-after']).toBeDefined();
      expect((await t.app.inject({ url: '/runs', headers: { 'x-api-key': 'alice-key-0123456789' } })).statusCode).toBe(429);
      // Another client is not held up.
      const elsewhere = await t.app.inject({ url: '/metrics', remoteAddress: '192.0.2.7', headers: { authorization: 'Bearer scrape-token-abcdef' } });
      expect(elsewhere.statusCode).toBe(200);
    });
  });
});
