import { randomUUID } from 'node:crypto';
import { get, type IncomingMessage } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';
import { parseEventFrames } from '../support/run-events.js';

/**
 * A large event is sent a slice at a time, each once the client took the one before: the stream's
 * keep-alive pings, which go out whenever the stream is idle, must wait until its frame is whole.
 */

const KEY = 'ann-key-0123456789abcdef';
let t: TestApp;
let base: string;
beforeEach(async () => {
  t = await createTestApp({ pingIntervalMs: 2, env: { API_KEYS: `ann:${KEY}`, RATE_LIMIT_PER_MINUTE: '0' } });
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
});
afterEach(async () => t.close());

describe('a large event read by a slow client', () => {
  it('arrives as one whole frame, with pings only between frames', async () => {
    const runs = t.database.repository.runs;
    const now = new Date();
    const { run } = await runs.createRun(
      { id: randomUUID(), userId: 'ann', agentType: 'plan', mode: 'default', prompt: 'p', workingDir: t.workdir, conversationId: null, status: 'running', now, idempotencyKey: null, requestHash: null, leaseOwner: null, leaseUntil: null },
      { idempotentSince: now },
    );
    const events = [JSON.stringify({ event: 'response', data: 'é\n'.repeat(2 * 1024 * 1024) }), '{"event":"done","mode":"default"}'];
    await runs.appendActiveEvent(run.id, events[0]!, now);
    await runs.endRun(run.id, events[1]!, now, { status: 'succeeded', response: null, error: null }, { model_calls: 0, tool_calls: 0, input_tokens: 0, output_tokens: 0 });

    // Node's own client: while the loop below sleeps, the socket is not read, and the service waits.
    const response = await new Promise<IncomingMessage>((resolve, reject) => get(`${base}/runs/${run.id}/events`, { headers: { 'x-api-key': KEY } }, resolve).on('error', reject));
    expect(response.statusCode).toBe(200);
    response.setEncoding('utf8');
    let text = '';
    for await (const chunk of response) {
      text += chunk as string;
      await sleep(1);
    }

    expect(parseEventFrames(text)).toEqual(events.map((data, i) => ({ id: i + 1, data })));
    // Pings went out while the client was slow, each a block of its own.
    const blocks = text.split('\n\n').filter((block) => block !== '');
    expect(blocks.filter((block) => block === ': ping').length).toBeGreaterThan(0);
    expect(blocks.filter((block) => block !== ': ping').map((block) => block.split('\n')[0])).toEqual(['id: 1', 'id: 2']);
  });
});
