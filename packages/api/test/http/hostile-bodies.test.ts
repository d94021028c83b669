import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';
import { send } from '../support/raw-http.js';

/** Malformed or hostile input must get 4xx with a detail, never 500 or a stack trace. */
const BODIES: unknown[] = [
  null,
  [],
  'text',
  42,
  { agent_type: 'explore', prompt: 'x', working_dir: 'a\u0000b' },
  { agent_type: 'explore', prompt: 'x', working_dir: '../../../../etc' },
  { agent_type: 'explore', prompt: 'x', mode: 'root' },
  { agent_type: 'x'.repeat(10_000), prompt: 'x' },
  { agent_type: { $ne: 1 }, prompt: ['x'] },
  { content: '', mode: 'plan' },
  { content: 'x', mode: 'sudo' },
  { user_content: 'x', assistant_content: null },
  { title: 'x'.repeat(300) },
  { working_dir: 'x'.repeat(2000) },
  { __proto__: { polluted: true }, content: 'x' },
];

const ROUTES = [
  '/agents/run',
  '/agents/stream',
  '/conversations/',
  '/conversations/not-a-uuid/messages',
  '/conversations/00000000-0000-4000-8000-000000000000/messages',
  '/conversations/00000000-0000-4000-8000-000000000000/stream',
  '/conversations/00000000-0000-4000-8000-000000000000/save',
  "/conversations/'%20OR%201=1--/save",
];

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

describe('hostile request bodies', () => {
  it.each(ROUTES)('%s answers every one with a 4xx and a detail', async (url) => {
    for (const body of BODIES) {
      const response = await t.app.inject({ method: 'POST', url, headers: { 'content-type': 'application/json' }, payload: JSON.stringify(body) });
      if (response.statusCode === 201) continue; // a valid create is fine
      expect(response.statusCode, `${url} ${JSON.stringify(body)?.slice(0, 80)}`).toBeGreaterThanOrEqual(400);
      expect(response.statusCode, `${url} ${JSON.stringify(body)?.slice(0, 80)}`).toBeLessThan(500);
      expect(response.json()).toHaveProperty('detail');
      expect(response.body).not.toMatch(/at .+\(.+:\d+:\d+\)/);
    }
  });
});

describe('deeply nested bodies', () => {
  // JSON.parse builds these without complaint; a recursive walk of them overflowed the stack (500).
  const nested = (depth: number, open: string, close: string): string => open.repeat(depth) + '1' + close.repeat(depth);
  let served: TestApp;
  let base: string;
  beforeAll(async () => {
    served = await createTestApp();
    base = await served.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => served.close());

  it.each(['/conversations/', '/agents/run', '/runs', '/approvals/00000000-0000-4000-8000-000000000000'])(
    '%s answers 422 with a detail, over loopback, and stores nothing',
    async (path) => {
      for (const body of [nested(100_000, '[', ']'), nested(20_000, '{"a":', '}'), `{"agent_type":"task","x":${nested(5_000, '[', ']')}}`]) {
          const response = await send(base, { method: 'POST', path, body });
          expect([response.status, response.json()], path).toEqual([
            422,
            { detail: [{ loc: ['body'], msg: 'Body should be nested at most 32 levels deep', type: 'too_deep' }] },
          ]);
      }
      expect((await send(base, { path: '/conversations/' })).json()).toMatchObject({ total: 0 });
      expect((await send(base, { path: '/runs' })).json()).toMatchObject({ total: 0 });
    },
  );

  it('still takes a body nested 32 levels deep (only the fields the route knows count)', async () => {
    const response = await served.app.inject({
      method: 'POST',
      url: '/conversations/',
      headers: { 'content-type': 'application/json' },
      payload: `{"agent_type":"task","extra":${nested(31, '[', ']')}}`,
    });
    expect(response.statusCode).toBe(201);
  });
});
