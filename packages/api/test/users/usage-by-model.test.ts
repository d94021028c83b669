import { scripted, startScriptedModel } from '@mada/testkit';
import { describe, expect, it, onTestFinished } from 'vitest';
import { call, type Json } from '../support/api-call.js';
import { createTestApp } from '../support/app.js';
import { DIALECTS } from '../support/databases.js';
import { until } from '../support/until.js';

/*
 * Usage per model (TEAMS.md section 13): `/me` (and an admin's `GET /users/{id}`) shows today's
 * runs and tokens of each model, from a ledger that deleting the runs leaves as it was.
 */

const LARGE = 'large-coder:32b';
const SMALL = 'small-coder:1b';
const ROOT_KEY = 'root-key-7e20c4b19d5f';
const BOB_KEY = 'bob-key-3a81f6d02c94';

describe.each(DIALECTS)('usage per model on %s', (dialect) => {
  it("counts each model's runs and tokens, and keeps them when the conversation and its runs are deleted", async () => {
    const model = await startScriptedModel({ models: [LARGE, SMALL] });
    onTestFinished(() => model.close());
    const t = await createTestApp({
      dialect,
      model: { url: model.url },
      env: { LLM_MODEL: LARGE, LLM_MODELS: `${SMALL},${LARGE}`, API_KEYS: `root:${ROOT_KEY},bob:${BOB_KEY}`, ADMIN_USERS: 'root', RATE_LIMIT_PER_MINUTE: '0' },
    });
    onTestFinished(() => t.close());
    const address = await t.app.listen({ port: 0, host: '127.0.0.1' });
    const bob = (method: string, path: string, body?: Json) => call(address, BOB_KEY, method, path, body);
    const ended = (id: string): Promise<Json> =>
      until(
        async () => (await bob('GET', `/runs/${id}`)).body,
        (run) => !['queued', 'running', 'waiting_approval'].includes(String(run.status)),
        `run ${id} to end`,
      );
    const tokensOf = (run: Json): number => {
      const usage = run.usage as { input_tokens: number; output_tokens: number };
      return usage.input_tokens + usage.output_tokens;
    };

    expect((await bob('GET', '/me')).body.usage).toEqual({ runs_today: 0, tokens_today: 0, running: 0, by_model: [] });

    // A conversation on the small model: one turn on it, one on the large model.
    const conversation = await bob('POST', '/conversations/', { model: SMALL });
    expect(conversation.status).toBe(201);
    const conversationId = String(conversation.body.id);
    model.push(scripted.text('first answer from the small model'));
    const first = await bob('POST', `/conversations/${conversationId}/runs`, { content: 'hello' });
    expect(first.status).toBe(202);
    const smallRun = await ended(String(first.body.id));
    expect(smallRun).toMatchObject({ status: 'succeeded', model: SMALL });
    model.push(scripted.text('second answer, from the large model, a little longer than the first'));
    const second = await bob('POST', `/conversations/${conversationId}/runs`, { content: 'again', model: LARGE });
    expect(second.status).toBe(202);
    const largeTurn = await ended(String(second.body.id));
    expect(largeTurn).toMatchObject({ status: 'succeeded', model: LARGE });
    // And a run of its own, on the default model.
    model.push(scripted.text('a third answer'));
    const third = await bob('POST', '/runs', { agent_type: 'explore', prompt: 'look around' });
    expect(third.status).toBe(202);
    const largeRun = await ended(String(third.body.id));
    expect(largeRun).toMatchObject({ status: 'succeeded', model: LARGE });
    expect(model.requests.map((request) => request.model)).toEqual([SMALL, LARGE, LARGE]);

    const small = tokensOf(smallRun);
    const large = tokensOf(largeTurn) + tokensOf(largeRun);
    expect(small).toBeGreaterThan(0);
    expect(large).toBeGreaterThan(0);
    const usage = {
      runs_today: 3,
      tokens_today: small + large,
      running: 0,
      by_model: [
        { model: LARGE, runs: 2, tokens: large },
        { model: SMALL, runs: 1, tokens: small },
      ],
    };
    expect((await bob('GET', '/me')).body.usage).toEqual(usage);

    // Deleting the conversation deletes its two runs; what they used stays counted.
    expect((await bob('DELETE', `/conversations/${conversationId}`)).status).toBe(204);
    expect((await bob('GET', `/runs/${String(first.body.id)}`)).status).toBe(404);
    expect((await bob('GET', `/runs/${String(second.body.id)}`)).status).toBe(404);
    expect((await bob('GET', '/me')).body.usage).toEqual(usage);

    // An admin sees the same of bob; bob may not look at himself through the admin route.
    const seen = await call(address, ROOT_KEY, 'GET', '/users/bob');
    expect(seen.status).toBe(200);
    expect(seen.body).toMatchObject({ id: 'bob', role: 'member', usage });
    expect((await call(address, ROOT_KEY, 'GET', '/me')).body.usage).toEqual({ runs_today: 0, tokens_today: 0, running: 0, by_model: [] });
    expect(await bob('GET', '/users/bob')).toEqual({ status: 403, body: { detail: 'Admin only' } });
  });
});
