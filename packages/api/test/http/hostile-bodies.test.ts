import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';

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
