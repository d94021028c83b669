import { afterEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';
import { sample, scrape } from '../support/metrics.js';
import { startModelProcess, type ModelProcess } from '../support/model-process.js';
import { parseFrames } from '../support/sse.js';

describe('the model runtime process killed mid-stream', () => {
  const runtimes: ModelProcess[] = [];
  let t: TestApp | undefined;
  afterEach(async () => {
    await t?.close();
    await Promise.all(runtimes.splice(0).map((runtime) => runtime.kill()));
  });

  /** Reads SSE frames until `until` is satisfied, then hands back the rest of the body. */
  async function readUntil(body: ReadableStream<Uint8Array>, until: (text: string) => boolean): Promise<{ seen: string; rest: Promise<string> }> {
    const reader = body.getReader();
    const decoder = new TextDecoder();
    let seen = '';
    while (!until(seen)) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`stream ended early: ${seen}`);
      seen += decoder.decode(value, { stream: true });
    }
    const rest = (async () => {
      let text = '';
      for (let part = await reader.read(); !part.done; part = await reader.read()) text += decoder.decode(part.value, { stream: true });
      return text;
    })();
    return { seen, rest };
  }

  it('ends the turn with an error event, keeps the user message, and works once a runtime is back', async () => {
    const first = await startModelProcess('hang');
    runtimes.push(first);
    t = await createTestApp({ model: { url: first.url } });
    const base = await t.app.listen({ host: '127.0.0.1', port: 0 });
    const created = await t.app.inject({ method: 'POST', url: '/conversations/', payload: { agent_type: 'explore' } });
    const id = (created.json() as { id: string }).id;

    const response = await fetch(`${base}/conversations/${id}/stream`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ content: 'What is in here?' }),
    });
    expect(response.status).toBe(200);
    const { seen, rest } = await readUntil(response.body!, (text) => text.includes('Partial'));
    await first.kill();
    const frames = parseFrames(seen + (await rest));
    expect(frames[0]).toEqual({ event: 'chunk', data: 'Partial ' });
    const last = frames.at(-1);
    expect(last).toMatchObject({ event: 'error' });
    expect(String(last?.error_message)).not.toMatch(/\n\s+at /);

    const stored = (await t.app.inject({ method: 'GET', url: `/conversations/${id}` })).json() as { messages: { role: string; content: string }[] };
    expect(stored.messages.map((m) => [m.role, m.content])).toEqual([['user', 'What is in here?']]);
    const metrics = await scrape(t.app);
    expect(sample(metrics, 'mada_agent_runs_total', { agent: 'explore', status: 'failed' })).toBe(1);
    expect(sample(metrics, 'mada_model_calls_total', { kind: 'stream', outcome: 'error' })).toBe(1);

    // The same service, not restarted, answers as soon as a runtime listens where it expects one.
    runtimes.push(await startModelProcess('answer', first.port));
    const turn = await t.app.inject({ method: 'POST', url: `/conversations/${id}/messages`, payload: { content: 'Try again' } });
    expect(turn.statusCode).toBe(200);
    expect(turn.json()).toMatchObject({ assistant_message: { content: 'Recovered answer.' } });
    const after = (await t.app.inject({ method: 'GET', url: `/conversations/${id}` })).json() as { messages: { role: string; content: string }[] };
    expect(after.messages.map((m) => [m.role, m.content])).toEqual([
      ['user', 'What is in here?'],
      ['user', 'Try again'],
      ['assistant', 'Recovered answer.'],
    ]);
  }, 30_000);
});
