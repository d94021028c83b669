import { Writable } from 'node:stream';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { createTestApp } from '../support/app.js';

const KEYS = { API_KEYS: 'alice:alice-secret-key-123,bob:bob-secret-key-456' };

describe('authentication with API_KEYS', () => {
  it('answers 401 Missing API key without a key', async () => {
    const t = await createTestApp({ env: KEYS });
    const response = await t.app.inject({ url: '/agents/' });
    expect([response.statusCode, response.json()]).toEqual([401, { detail: 'Missing API key' }]);
    await t.close();
  });

  it('answers 401 Invalid API key for an unknown key, also one that is a prefix of a real one', async () => {
    const t = await createTestApp({ env: KEYS });
    for (const key of ['nope', 'alice-secret-key-12', 'alice-secret-key-1234', 'alice']) {
      const response = await t.app.inject({ url: '/conversations/', headers: { 'x-api-key': key } });
      expect([response.statusCode, response.json()]).toEqual([401, { detail: 'Invalid API key' }]);
    }
    await t.close();
  });

  it('serves a caller with a valid key and keeps health and docs open', async () => {
    const t = await createTestApp({ env: KEYS });
    expect((await t.app.inject({ url: '/agents/', headers: { 'x-api-key': 'bob-secret-key-456' } })).statusCode).toBe(200);
    for (const url of ['/', '/health', '/openapi.json', '/docs/']) expect((await t.app.inject({ url })).statusCode).toBe(200);
    await t.close();
  });
});

describe('local mode (no API_KEYS)', () => {
  it('serves requests without a key as user local', async () => {
    const t = await createTestApp();
    const created = await t.app.inject({ method: 'POST', url: '/conversations/', payload: {} });
    expect(created.statusCode).toBe(201);
    expect((await t.database.repository.findConversation(created.json().id))?.userId).toBe('local');
    await t.close();
  });

  it('refuses a request that carries a key', async () => {
    const t = await createTestApp();
    const response = await t.app.inject({ url: '/agents/', headers: { 'x-api-key': 'anything' } });
    expect([response.statusCode, response.json()]).toEqual([401, { detail: 'Invalid API key' }]);
    await t.close();
  });
});

describe('rate limiting', () => {
  it('answers 429 with Retry-After once a key spends its requests per minute, per key', async () => {
    const t = await createTestApp({ env: { ...KEYS, RATE_LIMIT_PER_MINUTE: '3' } });
    const alice = { 'x-api-key': 'alice-secret-key-123' };
    for (let i = 0; i < 3; i++) expect((await t.app.inject({ url: '/agents/', headers: alice })).statusCode).toBe(200);
    const limited = await t.app.inject({ url: '/agents/', headers: alice });
    expect(limited.statusCode).toBe(429);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect(limited.json()).toEqual({ detail: expect.stringMatching(/^Rate limit exceeded: 3 requests per minute\. Retry in /) });
    expect((await t.app.inject({ url: '/agents/', headers: { 'x-api-key': 'bob-secret-key-456' } })).statusCode).toBe(200);
    expect((await t.app.inject({ url: '/health' })).statusCode).toBe(200);
    await t.close();
  });
});

describe('request logs', () => {
  it('never contain an API key, valid or not', async () => {
    const lines: string[] = [];
    const sink = new Writable({ write: (chunk, _enc, done) => (lines.push(String(chunk)), done()) });
    const t = await createTestApp({ env: KEYS });
    const app = await buildApp({ ...t, logger: pino({ level: 'trace' }, sink) });
    await app.inject({ url: '/agents/', headers: { 'x-api-key': 'alice-secret-key-123' } });
    await app.inject({ url: '/agents/', headers: { 'x-api-key': 'wrong-secret-key-789' } });
    await app.close();
    await t.close();
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.join('\n')).not.toMatch(/secret-key/);
  });
});
