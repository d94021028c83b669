import { openRepository } from '../../src/db/open.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';
import { ownPostgresUnavailable, startOwnPostgres, type OwnPostgres } from '../support/own-postgres.js';

const unavailable = ownPostgresUnavailable();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Traffic {
  statuses: number[];
  /** Ids of messages the service said it stored (200). */
  stored: string[];
  saves: () => number;
  stop(): Promise<void>;
}

/** Clients saving messages and listing conversations without pause, whatever the database does. */
function startTraffic(base: string, conversationId: string): Traffic {
  const statuses: number[] = [];
  const stored: string[] = [];
  let running = true;
  let saved = 0;
  const saver = async () => {
    for (let n = 0; running; n++) {
      const response = await fetch(`${base}/conversations/${conversationId}/save`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ user_content: `question ${n}`, assistant_content: `answer ${n}` }),
      });
      statuses.push(response.status);
      const body = (await response.json()) as { user_message?: { id: string }; assistant_message?: { id: string }; detail?: string };
      if (response.status === 200) {
        stored.push(body.user_message!.id, body.assistant_message!.id);
        saved++;
      } else if (response.status === 503) expect(body).toEqual({ detail: 'Database unavailable' });
      await sleep(10);
    }
  };
  const lister = async () => {
    while (running) {
      const response = await fetch(`${base}/conversations/`);
      statuses.push(response.status);
      await response.arrayBuffer();
      await sleep(10);
    }
  };
  const loops = Promise.all([saver(), lister()]);
  return {
    statuses,
    stored,
    saves: () => saved,
    async stop() {
      running = false;
      await loops;
    },
  };
}

describe.skipIf(unavailable !== undefined)('PostgreSQL stopped and started again during traffic', () => {
  let server: OwnPostgres;
  let t: TestApp;
  let base: string;

  beforeAll(async () => {
    server = await startOwnPostgres();
    const repository = await openRepository({ dialect: 'postgres', url: server.url });
    t = await createTestApp({ database: { repository, url: server.url, drop: () => repository.close() } });
    base = await t.app.listen({ host: '127.0.0.1', port: 0 });
  }, 60_000);
  afterAll(async () => {
    // In the full suite on Node 24 (twice, never alone or on Node 20), t.close() has not returned
    // after the restart. The cluster goes first, so no pool connection can wait on it, and the
    // close is bounded and said, so the next run's log shows it if it happens again.
    await server?.destroy();
    const closed = t === undefined || (await Promise.race([t.close().then(() => true), sleep(20_000).then(() => false)]));
    if (!closed) console.warn('postgres-restart: the app did not close within 20 s of its database going away');
  }, 60_000);

  const call = async (method: string, path: string, body?: object) => {
    const response = await fetch(`${base}${path}`, {
      method,
      ...(body ? { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) } : {}),
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };

  it('answers 503 Database unavailable while it is down, then resumes without losing a stored message', async () => {
    const created = await call('POST', '/conversations/', { agent_type: 'explore' });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    const traffic = startTraffic(base, id);
    await expect.poll(traffic.saves, { timeout: 10_000 }).toBeGreaterThanOrEqual(3);

    await server.stop();
    const down = { detail: 'Database unavailable' };
    const needDatabase: [string, string, object?][] = [
      ['GET', '/conversations/'],
      ['POST', '/conversations/', { agent_type: 'explore' }],
      ['GET', `/conversations/${id}`],
      ['POST', `/conversations/${id}/save`, { user_content: 'q', assistant_content: 'a' }],
      ['POST', `/conversations/${id}/messages`, { content: 'hello' }],
      ['POST', `/conversations/${id}/stream`, { content: 'hello' }],
      ['DELETE', `/conversations/${id}`],
    ];
    for (const [method, path, body] of needDatabase) {
      expect({ method, path, ...(await call(method, path, body)) }).toEqual({ method, path, status: 503, body: down });
    }
    const health = await call('GET', '/health');
    expect(health.status).toBe(503);
    expect(health.body).toMatchObject({ status: 'unhealthy', checks: { database: 'unreachable' } });
    const catalogue = await call('GET', '/agents/');
    expect(catalogue.status).toBe(200);

    await server.start();
    await expect.poll(async () => (await call('GET', '/conversations/')).status, { timeout: 15_000 }).toBe(200);
    const before = traffic.saves();
    await expect.poll(traffic.saves, { timeout: 10_000 }).toBeGreaterThanOrEqual(before + 3);
    await traffic.stop();

    expect(traffic.statuses.filter((status) => status !== 200 && status !== 503)).toEqual([]);
    expect(traffic.statuses).toContain(503);
    const detail = await call('GET', `/conversations/${id}`);
    expect(detail.status).toBe(200);
    const kept = new Set((detail.body.messages as { id: string }[]).map((message) => message.id));
    expect(traffic.stored.filter((stored) => !kept.has(stored))).toEqual([]);
    // /health keeps each check's answer for 2 s, so it says healthy again within that.
    await expect.poll(async () => (await call('GET', '/health')).status, { timeout: 5_000 }).toBe(200);
  }, 60_000);
});
