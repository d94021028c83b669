import { scripted, startScriptedModel, type ScriptedModel } from '@mada/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';
import { DIALECTS } from '../support/databases.js';
import { followRunEventsOver, readRunEvents } from '../support/run-events.js';
import { until } from '../support/until.js';

const KEYS = { ann: 'ann-key-0123456789', bob: 'bob-key-0123456789' };


/** A promise and its resolve function (Promise.withResolvers needs Node 22). */
function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve: () => void = () => undefined;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

const ENDED = new Set(['succeeded', 'failed', 'cancelled', 'interrupted']);

describe.each(DIALECTS)('stored runs on %s', (dialect) => {
  let model: ScriptedModel;
  let t: TestApp;
  let address: string;

  async function boot(env: Record<string, string> = {}): Promise<void> {
    t = await createTestApp({ dialect, model: { url: model.url }, env: { API_KEYS: `ann:${KEYS.ann},bob:${KEYS.bob}`, RATE_LIMIT_PER_MINUTE: '0', ...env } });
    address = await t.app.listen({ port: 0, host: '127.0.0.1' });
  }

  beforeEach(async () => {
    model = await startScriptedModel();
    await boot();
  });
  afterEach(async () => {
    await t.close();
    await model.close();
  });

  const as = (user: keyof typeof KEYS, extra: Record<string, string> = {}) => ({ 'x-api-key': KEYS[user], 'content-type': 'application/json', ...extra });
  const post = (path: string, body: unknown, user: keyof typeof KEYS = 'ann', headers: Record<string, string> = {}) =>
    fetch(`${address}${path}`, { method: 'POST', headers: as(user, headers), body: JSON.stringify(body) });
  const get = (path: string, user: keyof typeof KEYS = 'ann') => fetch(`${address}${path}`, { headers: as(user) });
  const runOf = async (id: string, user: keyof typeof KEYS = 'ann') => (await (await get(`/runs/${id}`, user)).json()) as Record<string, unknown>;
  const ended = (id: string) => until(() => runOf(id), (run) => ENDED.has(run.status as string), `run ${id} to end`);

  it('answers 202 with the stored run and its Location, then records the end, the answer and the counts', async () => {
    model.push(scripted.toolCalls({ name: 'glob_files', arguments: { pattern: '*' } }), scripted.text('nothing here'));
    const response = await post('/runs', { agent_type: 'explore', prompt: 'look around', working_dir: '.' });
    expect(response.status).toBe(202);
    const run = (await response.json()) as Record<string, unknown>;
    expect(response.headers.get('location')).toBe(`/runs/${run.id as string}`);
    expect(run).toMatchObject({ agent_type: 'explore', mode: 'default', prompt: 'look around', working_dir: t.workdir, conversation_id: null, response: null, error: null });
    expect(['queued', 'running']).toContain(run.status);
    const done = await ended(run.id as string);
    expect(done).toMatchObject({ status: 'succeeded', response: 'nothing here', error: null });
    const usage = done.usage as Record<string, number>;
    expect([usage.model_calls, usage.tool_calls]).toEqual([2, 1]);
    expect(usage.input_tokens).toBeGreaterThan(0);
    expect(usage.output_tokens).toBeGreaterThan(0);
    expect(done.started_at).not.toBeNull();
    expect(done.ended_at).not.toBeNull();
    const { frames, closedByServer } = await readRunEvents(address, run.id as string, { headers: as('ann') });
    expect(closedByServer).toBe(true);
    expect(frames.map((f) => f.id)).toEqual(frames.map((_, i) => i + 1));
    expect(done.last_event_id).toBe(frames.length);
    expect(frames.at(-1)?.data).toBe('{"event":"done","mode":"default"}');
  });

  it('replays exactly the frames of one uninterrupted read to a client that drops the stream three times', async () => {
    const pieces = Array.from({ length: 16 }, (_, i) => `piece${i} `);
    // Further apart than TEXT_FRAME_INTERVAL_MS: each piece is a frame of its own.
    model.push(scripted.chunks(...pieces.flatMap((piece) => [piece, scripted.pause(40)])));
    const run = (await (await post('/runs', { agent_type: 'plan', prompt: 'go' })).json()) as { id: string };
    const seen: { id: number; data: string }[] = [];
    for (let drop = 0; drop < 3; drop++) {
      const part = await readRunEvents(address, run.id, { headers: as('ann'), maxFrames: 3, ...(seen.length > 0 ? { lastEventId: seen.at(-1)!.id } : {}) });
      seen.push(...part.frames);
    }
    const rest = await readRunEvents(address, run.id, { headers: as('ann'), lastEventId: seen.at(-1)!.id });
    seen.push(...rest.frames);
    const whole = await readRunEvents(address, run.id, { headers: as('ann') });
    expect(seen).toEqual(whole.frames);
    expect(whole.frames.map((f) => f.id)).toEqual(whole.frames.map((_, i) => i + 1));
    expect(whole.frames.filter((f) => f.data.startsWith('{"event":"chunk"')).map((f) => JSON.parse(f.data).data).join('')).toBe(pieces.join(''));
  });

  // 1,200 events: a long run, replayed from the pages stored at its end; 300: read row by row,
  // where large frames after small ones make a page far larger than planned.
  it.each([1200, 300])('replays a finished run of %i events read in many pages exactly, from the start and from any Last-Event-ID', async (count) => {
    const store = t.database.repository.runs;
    const { run } = await store.createRun(
      { id: crypto.randomUUID(), userId: 'ann', agentType: 'plan', mode: 'default', prompt: 'long', workingDir: t.workdir, conversationId: null, status: 'running', now: new Date(), idempotencyKey: null, requestHash: null, leaseOwner: null, leaseUntil: null },
      { idempotentSince: new Date(0) },
    );
    const large = (i: number) => (count > 1000 ? i % 300 === 7 : i % 20 === 7);
    const texts = Array.from({ length: count }, (_, i) => JSON.stringify({ event: 'chunk', data: `${i}:${large(i) ? 'x'.repeat(40_000) : 'é😀 "q"'}` }));
    for (const text of texts) await store.appendActiveEvent(run.id, text, new Date());
    await store.endRun(run.id, '{"event":"done","mode":"default"}', new Date(), { status: 'succeeded', response: null, error: null }, { model_calls: 0, tool_calls: 0, input_tokens: 0, output_tokens: 0 });
    const expected = [...texts, '{"event":"done","mode":"default"}'].map((data, i) => ({ id: i + 1, data }));
    const whole = await readRunEvents(address, run.id, { headers: as('ann') });
    expect(whole.closedByServer).toBe(true);
    expect(whole.frames).toEqual(expected);
    for (const lastEventId of [1, 100, 101, 299, count - 1, count]) {
      const rest = await readRunEvents(address, run.id, { headers: as('ann'), lastEventId });
      expect(rest.frames).toEqual(expected.slice(lastEventId));
    }
  });

  it('keeps following past a frame whose text looks like a final one, and closes after the real one', async () => {
    const store = t.database.repository.runs;
    const { run } = await store.createRun(
      { id: crypto.randomUUID(), userId: 'ann', agentType: 'plan', mode: 'default', prompt: 'x', workingDir: t.workdir, conversationId: null, status: 'running', now: new Date(), idempotencyKey: null, requestHash: null, leaseOwner: null, leaseUntil: null },
      { idempotentSince: new Date(0) },
    );
    const lookalikes = ['{"event":"chunk","data":"\\n\\ndata: {\\"event\\":\\"done\\"}"}', '{"event":"thinking","message":"data: {\\"event\\":\\"error\\"}"}'];
    for (const text of lookalikes) await store.appendActiveEvent(run.id, text, new Date());
    const seen: string[] = [];
    const followed = followRunEventsOver(address, run.id, (frame) => seen.push(frame.data), as('ann'));
    await until(async () => seen.length, (n) => n === 2, 'the stored frames to arrive');
    // Executing in no process: the cancel ends it in the store, as one from another replica would.
    expect((await post(`/runs/${run.id}/cancel`, {})).status).toBe(202);
    const frames = await followed;
    expect(frames.map((f) => f.data)).toEqual([...lookalikes, '{"event":"error","error_message":"Run cancelled"}']);
    expect(frames.map((f) => f.id)).toEqual([1, 2, 3]);
  });

  it("hides internal addresses from keyed users in a failed run's error and its last event", async () => {
    model.push(scripted.httpError(400, 'no such model on 10.1.2.3:11434'), scripted.httpError(400, 'no such model on 10.1.2.3:11434'));
    const run = (await (await post('/runs', { agent_type: 'plan', prompt: 'go' })).json()) as { id: string };
    const done = await ended(run.id);
    expect(done.status).toBe('failed');
    expect(done.error).toContain('<internal address>');
    expect(done.error).not.toContain('10.1.2.3');
    const { frames } = await readRunEvents(address, run.id, { headers: as('ann') });
    expect(frames.at(-1)?.data).not.toContain('10.1.2.3');
    const legacy = await post('/agents/stream', { agent_type: 'plan', prompt: 'again' });
    expect(await legacy.text()).not.toContain('10.1.2.3');
  });

  it('starts after ?after=N, and closes at once when Last-Event-ID is past the end of an ended run', async () => {
    model.push(scripted.chunks('one ', 'two'));
    const run = (await (await post('/runs', { agent_type: 'plan', prompt: 'go' })).json()) as { id: string };
    const done = await ended(run.id);
    const all = await readRunEvents(address, run.id, { headers: as('ann') });
    const after = await fetch(`${address}/runs/${run.id}/events?after=1`, { headers: as('ann') });
    expect((await after.text()).startsWith('id: 2\n')).toBe(true);
    const beyond = await readRunEvents(address, run.id, { headers: as('ann'), lastEventId: (done.last_event_id as number) + 5 });
    expect([beyond.status, beyond.frames, beyond.closedByServer]).toEqual([200, [], true]);
    expect(all.frames).toHaveLength(done.last_event_id as number);
  });

  it.each(['-1', 'x', '1.5'])('answers 422 for after=%s', async (after) => {
    model.push(scripted.text('x'));
    const run = (await (await post('/runs', { agent_type: 'plan', prompt: 'go' })).json()) as { id: string };
    const response = await get(`/runs/${run.id}/events?after=${after}`);
    expect(response.status).toBe(422);
    await ended(run.id);
  });

  it("answers 404 for an unknown run and 403 for another user's, on every run route", async () => {
    model.push(scripted.text('mine'));
    const run = (await (await post('/runs', { agent_type: 'plan', prompt: 'go' })).json()) as { id: string };
    await ended(run.id);
    const unknown = '00000000-0000-4000-8000-000000000000';
    for (const path of [`/runs/${unknown}`, `/runs/${unknown}/events`, '/runs/not-a-uuid', `/runs/${run.id.toUpperCase()}x`]) {
      const response = await get(path);
      expect([response.status, await response.json()]).toEqual([404, { detail: 'Run not found' }]);
    }
    expect((await get(`/runs/${run.id.toUpperCase()}`)).status).toBe(200);
    for (const path of [`/runs/${run.id}`, `/runs/${run.id}/events`]) {
      const response = await get(path, 'bob');
      expect([response.status, await response.json()]).toEqual([403, { detail: 'Not authorized' }]);
    }
    const cancel = await post(`/runs/${run.id}/cancel`, {}, 'bob');
    expect([cancel.status, await cancel.json()]).toEqual([403, { detail: 'Not authorized' }]);
    const list = (await (await get('/runs', 'bob')).json()) as { runs: unknown[]; total: number };
    expect([list.runs, list.total]).toEqual([[], 0]);
    expect((await fetch(`${address}/runs`)).status).toBe(401);
  });

  it('cancels a running run: model call aborted, status cancelled, last event Run cancelled; a second cancel is 409', async () => {
    model.push(scripted.stall());
    const run = (await (await post('/runs', { agent_type: 'explore', prompt: 'wait' })).json()) as { id: string };
    await until(() => runOf(run.id), (r) => r.status === 'running', 'the run to start');
    await until(async () => model.requests.length, (n) => n === 1, 'the model call');
    const cancel = await post(`/runs/${run.id}/cancel`, {});
    expect(cancel.status).toBe(202);
    expect(await cancel.json()).toMatchObject({ id: run.id, status: 'cancelled', error: 'Run cancelled' });
    const { frames } = await readRunEvents(address, run.id, { headers: as('ann') });
    expect(frames.at(-1)?.data).toBe('{"event":"error","error_message":"Run cancelled"}');
    const again = await post(`/runs/${run.id}/cancel`, {});
    expect([again.status, await again.json()]).toEqual([409, { detail: 'Run already ended' }]);
  });

  it('keeps running when the events stream is closed', async () => {
    const release = deferred();
    model.push(scripted.chunks('before ', scripted.until(release.promise), 'after'));
    const run = (await (await post('/runs', { agent_type: 'plan', prompt: 'go' })).json()) as { id: string };
    const first = await readRunEvents(address, run.id, { headers: as('ann'), maxFrames: 1 });
    expect(first.closedByServer).toBe(false);
    release.resolve();
    expect(await ended(run.id)).toMatchObject({ status: 'succeeded', response: 'before after' });
  });

  it('returns the first run for a retried Idempotency-Key and starts nothing; another body with the key is 422', async () => {
    model.push(scripted.text('once'), scripted.text("bob's"));
    const body = { agent_type: 'plan', prompt: 'only once' };
    const first = await post('/runs', body, 'ann', { 'idempotency-key': 'retry-1' });
    const firstRun = (await first.json()) as { id: string };
    expect(first.status).toBe(202);
    await ended(firstRun.id);
    const again = await post('/runs', body, 'ann', { 'idempotency-key': 'retry-1' });
    expect(again.status).toBe(200);
    expect(((await again.json()) as { id: string }).id).toBe(firstRun.id);
    expect(model.requests).toHaveLength(1);
    const other = await post('/runs', { ...body, prompt: 'something else' }, 'ann', { 'idempotency-key': 'retry-1' });
    expect([other.status, await other.json()]).toEqual([422, { detail: 'Idempotency-Key reused with a different request' }]);
    const bobs = await post('/runs', body, 'bob', { 'idempotency-key': 'retry-1' });
    expect(bobs.status).toBe(202);
    const bobsRun = ((await bobs.json()) as { id: string }).id;
    await until(() => runOf(bobsRun, 'bob'), (r) => r.status === 'succeeded', "bob's run");
    const tooLong = await post('/runs', body, 'ann', { 'idempotency-key': 'k'.repeat(256) });
    expect(tooLong.status).toBe(422);
  });

  it('answers a retried conversation turn with its first run, while it runs and after, storing the message once', async () => {
    const release = deferred();
    model.push(scripted.chunks('first ', scripted.until(release.promise), 'answer'));
    const conversation = (await (await post('/conversations/', { agent_type: 'plan' })).json()) as { id: string };
    const path = `/conversations/${conversation.id}/runs`;
    const retry = { 'idempotency-key': 'turn-1' };
    const first = await post(path, { content: 'only once' }, 'ann', retry);
    const firstRun = (await first.json()) as { id: string };
    expect(first.status).toBe(202);
    // The conversation is busy with this very run: the retry names it instead of answering 409.
    const during = await post(path, { content: 'only once' }, 'ann', retry);
    expect([during.status, ((await during.json()) as { id: string }).id]).toEqual([200, firstRun.id]);
    release.resolve();
    await ended(firstRun.id);
    const after = await post(path, { content: 'only once' }, 'ann', retry);
    expect([after.status, ((await after.json()) as { id: string }).id]).toEqual([200, firstRun.id]);
    const other = await post(path, { content: 'something else' }, 'ann', retry);
    expect([other.status, await other.json()]).toEqual([422, { detail: 'Idempotency-Key reused with a different request' }]);
    const detail = (await (await get(`/conversations/${conversation.id}`)).json()) as { messages: { role: string; content: string }[] };
    expect(detail.messages.map((m) => [m.role, m.content])).toEqual([
      ['user', 'only once'],
      ['assistant', 'first answer'],
    ]);
    expect(model.requests).toHaveLength(1);
  });

  it('answers a retried blocking message with what the first request stored, and runs the agent once', async () => {
    model.push(scripted.text('stored answer'));
    const conversation = (await (await post('/conversations/', { agent_type: 'plan' })).json()) as { id: string };
    const path = `/conversations/${conversation.id}/messages`;
    const retry = { 'idempotency-key': 'message-1' };
    const first = await post(path, { content: 'ask once' }, 'ann', retry);
    expect(first.status).toBe(200);
    const firstBody = (await first.json()) as Record<string, unknown>;
    expect(firstBody).toMatchObject({ assistant_message: { content: 'stored answer' } });
    const again = await post(path, { content: 'ask once' }, 'ann', retry);
    expect([again.status, await again.json()]).toEqual([200, firstBody]);
    expect(again.headers.get('x-run-id')).toBe(first.headers.get('x-run-id'));
    const other = await post(path, { content: 'ask twice' }, 'ann', retry);
    expect([other.status, await other.json()]).toEqual([422, { detail: 'Idempotency-Key reused with a different request' }]);
    const detail = (await (await get(`/conversations/${conversation.id}`)).json()) as { messages: unknown[] };
    expect(detail.messages).toHaveLength(2);
    expect(model.requests).toHaveLength(1);
  });

  it('records the legacy routes as runs, named in X-Run-Id, and lists them newest first', async () => {
    model.push(scripted.text('blocking answer'), scripted.text('streamed answer'));
    const blocking = await post('/agents/run', { agent_type: 'plan', prompt: 'first' });
    expect(await blocking.json()).toMatchObject({ response: 'blocking answer', success: true });
    const streamed = await post('/agents/stream', { agent_type: 'plan', prompt: 'second' });
    await streamed.text();
    const ids = [blocking.headers.get('x-run-id'), streamed.headers.get('x-run-id')];
    expect(ids.every((id) => typeof id === 'string' && id.length === 36)).toBe(true);
    const list = (await (await get('/runs')).json()) as { runs: { id: string; status: string; response: string }[]; total: number };
    expect(list.total).toBe(2);
    expect(list.runs.map((r) => r.id)).toEqual([ids[1], ids[0]]);
    expect(list.runs.map((r) => r.response)).toEqual(['streamed answer', 'blocking answer']);
    const succeeded = (await (await get('/runs?status=succeeded&limit=1')).json()) as { runs: unknown[]; total: number };
    expect([succeeded.runs.length, succeeded.total]).toEqual([1, 2]);
    expect((await get('/runs?status=lost')).status).toBe(422);
    expect((await get('/runs?limit=101')).status).toBe(422);
  });

  it('cancels a legacy stream whose client disconnects', async () => {
    model.push(scripted.stall());
    const controller = new AbortController();
    const response = await fetch(`${address}/agents/stream`, { method: 'POST', headers: as('ann'), body: JSON.stringify({ agent_type: 'plan', prompt: 'x' }), signal: controller.signal });
    const id = response.headers.get('x-run-id') as string;
    await until(async () => model.requests.length, (n) => n === 1, 'the model call');
    controller.abort();
    expect(await ended(id)).toMatchObject({ status: 'cancelled', error: 'Run cancelled' });
  });

  it('runs a conversation turn: the user message is stored before 202, the answer when the run succeeds', async () => {
    const release = deferred();
    model.push(scripted.chunks(scripted.until(release.promise), 'the answer'));
    const conversation = (await (await post('/conversations/', { agent_type: 'plan' })).json()) as { id: string };
    const response = await post(`/conversations/${conversation.id}/runs`, { content: 'a question' });
    expect(response.status).toBe(202);
    const run = (await response.json()) as { id: string; conversation_id: string };
    expect(run.conversation_id).toBe(conversation.id);
    const during = (await (await get(`/conversations/${conversation.id}`)).json()) as { messages: { role: string; content: string }[] };
    expect(during.messages.map((m) => [m.role, m.content])).toEqual([['user', 'a question']]);
    const busy = await post(`/conversations/${conversation.id}/runs`, { content: 'another' });
    expect([busy.status, await busy.json()]).toEqual([409, { detail: 'Conversation is busy' }]);
    release.resolve();
    await ended(run.id);
    const after = (await (await get(`/conversations/${conversation.id}`)).json()) as { messages: { id: string; role: string; content: string }[] };
    expect(after.messages.map((m) => [m.role, m.content])).toEqual([
      ['user', 'a question'],
      ['assistant', 'the answer'],
    ]);
    const { frames } = await readRunEvents(address, run.id, { headers: as('ann') });
    expect(JSON.parse(frames.at(-1)!.data)).toMatchObject({ event: 'done', mode: 'default', user_message_id: after.messages[0]!.id, assistant_message_id: after.messages[1]!.id, summarized: false });
    model.push(scripted.text('yes'));
    const next = await post(`/conversations/${conversation.id}/runs`, { content: 'free again' });
    expect(next.status).toBe(202);
    await ended(((await next.json()) as { id: string }).id);
  });

  it('keeps the user message and frees the conversation when a conversation run is cancelled', async () => {
    model.push(scripted.stall());
    const conversation = (await (await post('/conversations/', { agent_type: 'plan' })).json()) as { id: string };
    const run = (await (await post(`/conversations/${conversation.id}/runs`, { content: 'keep me' })).json()) as { id: string };
    await until(async () => model.requests.length, (n) => n === 1, 'the model call');
    await post(`/runs/${run.id}/cancel`, {});
    await ended(run.id);
    const detail = (await (await get(`/conversations/${conversation.id}`)).json()) as { messages: { content: string }[] };
    expect(detail.messages.map((m) => m.content)).toEqual(['keep me']);
    model.push(scripted.text('ok'));
    expect((await post(`/conversations/${conversation.id}/runs`, { content: 'again' })).status).toBe(202);
  });

  it('holds MAX_CONCURRENT_RUNS and MAX_RUNS_PER_USER under twenty concurrent submissions', async () => {
    await t.close();
    await boot({ MAX_CONCURRENT_RUNS: '3', MAX_RUNS_PER_USER: '2' });
    let active = 0;
    let peak = 0;
    const perUser = new Map<string, number>();
    let peakPerUser = 0;
    for (let i = 0; i < 20; i++) {
      model.push(async (request) => {
        const user = request.messages.find((m) => m.role === 'user')?.content.split(':')[0] ?? '?';
        active += 1;
        perUser.set(user, (perUser.get(user) ?? 0) + 1);
        peak = Math.max(peak, active);
        peakPerUser = Math.max(peakPerUser, perUser.get(user) ?? 0);
        await new Promise((resolve) => setTimeout(resolve, 40));
        active -= 1;
        perUser.set(user, (perUser.get(user) ?? 1) - 1);
        return scripted.text('done');
      });
    }
    const users = ['ann', 'bob'] as const;
    const started = await Promise.all(
      Array.from({ length: 20 }, async (_, i) => {
        const user = users[i % 2]!;
        return ((await (await post('/runs', { agent_type: 'plan', prompt: `${user}: job ${i}` }, user)).json()) as { id: string }).id;
      }),
    );
    const finals = await Promise.all(started.map((id, i) => until(() => runOf(id, users[i % 2]!), (r) => ENDED.has(r.status as string), id)));
    expect(finals.every((r) => r.status === 'succeeded')).toBe(true);
    expect(peak).toBeLessThanOrEqual(3);
    expect(peakPerUser).toBeLessThanOrEqual(2);
    expect(peak).toBeGreaterThan(1);
    const queued = await readRunEvents(address, started.at(-1)!, { headers: as('bob') });
    expect(queued.frames[0]?.data).toMatch(/^\{"event":"thinking","message":"Queued: /);
  });

  describe('queued', () => {
    let release: { promise: Promise<void>; resolve: () => void };
    const start = async (user: keyof typeof KEYS, prompt = 'wait') => post('/runs', { agent_type: 'plan', prompt }, user);
    const idOf = async (response: Response) => ((await response.json()) as { id: string }).id;
    const firstFrame = async (id: string, user: keyof typeof KEYS) => (await readRunEvents(address, id, { headers: as(user), maxFrames: 1 })).frames[0]?.data;

    /** One place in all, taken by a run of Ann's that waits until released. */
    async function oneBusyPlace(env: Record<string, string> = {}): Promise<string> {
      await t.close();
      await boot({ MAX_CONCURRENT_RUNS: '1', ...env });
      release = deferred();
      model.push(scripted.chunks('busy ', scripted.until(release.promise), 'done'));
      const busy = await idOf(await start('ann'));
      await until(() => runOf(busy), (run) => run.status === 'running', 'the first run to start');
      return busy;
    }
    afterEach(() => release.resolve());

    it("runs are told how many of the caller's own runs wait ahead of them, never another user's", async () => {
      await oneBusyPlace();
      for (let i = 0; i < 3; i++) expect((await start('bob')).status).toBe(202);
      const ann1 = await idOf(await start('ann'));
      const ann2 = await idOf(await start('ann'));
      expect(await firstFrame(ann1, 'ann')).toBe('{"event":"thinking","message":"Queued: none of your runs ahead of this one, waiting for a free place"}');
      expect(await firstFrame(ann2, 'ann')).toBe('{"event":"thinking","message":"Queued: 1 of your runs ahead of this one, waiting for a free place"}');
    });

    it('are at most MAX_QUEUED_RUNS_PER_USER of one user: one more gets 429, and other users still queue', async () => {
      await oneBusyPlace({ MAX_QUEUED_RUNS_PER_USER: '2' });
      const queued = [await idOf(await start('ann')), await idOf(await start('ann'))];
      const refused = await start('ann');
      expect(refused.status).toBe(429);
      expect(await refused.json()).toEqual({ detail: 'Too many queued runs (max 2): wait for one to start or cancel one' });
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
      expect((await (await get('/runs?status=queued')).json()) as { total: number }).toMatchObject({ total: 2 });
      // A conversation turn is refused before its message is stored.
      const conversation = (await (await post('/conversations/', { agent_type: 'plan' })).json()) as { id: string };
      expect((await post(`/conversations/${conversation.id}/runs`, { content: 'not stored' })).status).toBe(429);
      expect(((await (await get(`/conversations/${conversation.id}`)).json()) as { messages: unknown[] }).messages).toEqual([]);
      // Bob is not held up by Ann's queue.
      expect((await start('bob')).status).toBe(202);
      // A cancelled run makes room again.
      expect((await post(`/runs/${queued[0]!}/cancel`, {})).ok).toBe(true);
      expect((await start('ann')).status).toBe(202);
    });
  });
});
