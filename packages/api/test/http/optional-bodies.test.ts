import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

describe('a route whose body fields are all optional', () => {
  const bodies: [string, { payload?: string; headers?: Record<string, string> }][] = [
    ['no body and no content type', {}],
    ['no body with a JSON content type', { headers: { 'content-type': 'application/json' } }],
    ['an empty JSON body', { payload: '', headers: { 'content-type': 'application/json' } }],
    ['{}', { payload: '{}', headers: { 'content-type': 'application/json' } }],
  ];

  it.each(bodies)('POST /conversations/ accepts %s', async (_name, request) => {
    const response = await t.app.inject({ method: 'POST', url: '/conversations/', ...request });
    expect(response.statusCode, response.body).toBe(201);
    expect(response.json<{ id: string }>().id).toMatch(/^[0-9a-f-]{36}$/);
  });

  it.each(bodies)('POST /runs/{id}/revert reaches the run with %s', async (_name, request) => {
    // An unknown run: the route got past body validation to look the run up.
    const response = await t.app.inject({ method: 'POST', url: `/runs/${randomUUID()}/revert`, ...request });
    expect(response.statusCode, response.body).toBe(404);
  });

  it('still answers a route with a required field that an empty body misses it', async () => {
    const response = await t.app.inject({ method: 'POST', url: '/agents/run', payload: '', headers: { 'content-type': 'application/json' } });
    expect([response.statusCode, response.json()]).toEqual([422, { detail: [{ loc: ['body'], msg: 'Field required', type: 'missing' }] }]);
  });

  it('still refuses malformed JSON with a detail', async () => {
    const response = await t.app.inject({ method: 'POST', url: '/conversations/', payload: '{"title":', headers: { 'content-type': 'application/json' } });
    expect([400, 422]).toContain(response.statusCode);
    expect(response.json<{ detail: unknown }>().detail).toBeTruthy();
  });

  it('still refuses a body that is not an object', async () => {
    const response = await t.app.inject({ method: 'POST', url: '/conversations/', payload: '[]', headers: { 'content-type': 'application/json' } });
    expect(response.statusCode).toBe(422);
  });
});
