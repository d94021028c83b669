import { randomUUID } from 'node:crypto';
import { scripted, startScriptedModel } from '../packages/testkit/src/index.js';
import { createTestApp, type TestApp } from '../packages/api/test/support/app.js';
import { medianMs, result, type Bench } from './harness.js';

async function conversationWith(t: TestApp, messages: number): Promise<string> {
  const id = (await t.app.inject({ method: 'POST', url: '/conversations/', payload: { agent_type: 'explore' } })).json<{ id: string }>().id;
  for (let i = 0; i < messages; i += 500) {
    const batch = Array.from({ length: Math.min(500, messages - i) }, (_, j) => ({
      id: randomUUID(),
      role: (i + j) % 2 === 0 ? 'user' : 'assistant',
      content: `message ${i + j} about src/app.ts and its tests`,
      tokenCount: 10,
    }));
    await t.database.repository.appendMessages(id, batch, { now: new Date(), titleIfUnset: null });
  }
  return id;
}

/** One turn (store, context, agent, store) on a long conversation vs a short one. */
const bench: Bench = async () => {
  const model = await startScriptedModel({ zeroLatency: true });
  // A window large enough that no turn summarizes: the bench measures the turn itself.
  const t = await createTestApp({ model: { url: model.url }, env: { RATE_LIMIT_PER_MINUTE: '0', MAX_CONTEXT_TOKENS: '100000000', SESSION_TTL_HOURS: '0' } });
  try {
    const short = await conversationWith(t, 10);
    const long = await conversationWith(t, 10_000);
    const turn = (id: string) => async () => {
      model.push(scripted.text('ok'));
      const response = await t.app.inject({ method: 'POST', url: `/conversations/${id}/messages`, payload: { content: 'next step?' } });
      if (response.statusCode !== 200) throw new Error(`turn failed: ${response.statusCode} ${response.body}`);
    };
    const shortMs = await medianMs(turn(short), 60, 10);
    const longMs = await medianMs(turn(long), 60, 10);
    return [result('one turn on a conversation with 10,000 messages (SQLite)', '10 messages', shortMs, longMs, 1.25)];
  } finally {
    await t.close();
    await model.close();
  }
};

export default bench;
