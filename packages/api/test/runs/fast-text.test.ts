import { startScriptedModel, type ScriptedModel } from '@mada/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';
import { DIALECTS } from '../support/databases.js';
import { parseFrames } from '../support/sse.js';
import { readRunEvents } from '../support/run-events.js';

describe.each(DIALECTS)('an answer streamed faster than one event per token can be stored, on %s', (dialect) => {
  let model: ScriptedModel;
  let t: TestApp;
  afterEach(async () => {
    await t.close();
    await model.close();
  });

  it('is stored as a few text events that the live stream and every replay deliver exactly', async () => {
    // A runtime with no latency: 20,000 tokens reach the service in a few reads.
    model = await startScriptedModel({ zeroLatency: true });
    t = await createTestApp({ dialect, model: { url: model.url } });
    const base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    const answer = Array.from({ length: 20_000 }, (_, i) => `w${i % 10} `).join('');
    const tokens = answer.match(/.{1,3}/gs)!;
    model.push({ kind: 'text', chunks: tokens });

    const response = await fetch(`${base}/agents/stream`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ agent_type: 'explore', prompt: 'Answer at length', working_dir: t.workdir }),
    });
    const live = parseFrames(await response.text());
    const text = (frames: Record<string, unknown>[]): string => frames.filter((f) => f.event === 'chunk').map((f) => f.data).join('');
    expect(text(live)).toBe(answer);
    expect(live.at(-1)).toEqual({ event: 'done', mode: 'default' });
    // Far fewer events than tokens: the text of one read is stored as one event.
    expect(live.length).toBeLessThan(tokens.length / 20);

    const runId = response.headers.get('x-run-id')!;
    const replay = await readRunEvents(base, runId);
    expect(replay.frames.map((f) => f.id)).toEqual(live.map((_, i) => i + 1));
    expect(replay.frames.map((f) => JSON.parse(f.data) as unknown)).toEqual(live);
    const resumed = await readRunEvents(base, runId, { lastEventId: 1 });
    expect(resumed.frames).toEqual(replay.frames.slice(1));
  });
});
