import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { scripted, startScriptedModel, type ScriptedModel } from '@mada/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';

let model: ScriptedModel;
let t: TestApp;
let address: string;
beforeEach(async () => {
  model = await startScriptedModel();
  t = await createTestApp({ model: { url: model.url } });
  address = await t.app.listen({ port: 0, host: '127.0.0.1' });
});
afterEach(async () => {
  await t.close();
  await model.close();
});

/** Pids of processes whose command line contains `marker`. */
function processesWith(marker: string): string[] {
  try {
    return execFileSync('pgrep', ['-f', marker], { encoding: 'utf8' }).split('\n').filter(Boolean);
  } catch {
    return [];
  }
}

/** Opens /agents/stream and reads until `until` appears in the body. */
async function openStream(body: object, until: string): Promise<AbortController> {
  const controller = new AbortController();
  const response = await fetch(`${address}/agents/stream`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: controller.signal,
  });
  const reader = response.body!.getReader();
  let text = '';
  while (until !== '' && !text.includes(until)) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`stream ended before ${until}: ${text}`);
    text += new TextDecoder().decode(value);
  }
  return controller;
}

describe('an idle stream', () => {
  it('is kept open with : ping comments while the model thinks', async () => {
    await t.close();
    t = await createTestApp({ model: { url: model.url }, pingIntervalMs: 50 });
    address = await t.app.listen({ port: 0, host: '127.0.0.1' });
    model.push(scripted.delayed(300, scripted.text('late answer')));
    const response = await fetch(`${address}/agents/stream`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ agent_type: 'explore', prompt: 'think' }),
    });
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(response.headers.get('cache-control')).toBe('no-cache');
    const body = await response.text();
    expect(body.startsWith(': ping\n\n')).toBe(true);
    expect(body.endsWith('data: {"event":"done","mode":"default"}\n\n')).toBe(true);
  });
});

describe('a client that goes away', () => {
  it('aborts the model call in progress', async () => {
    model.push(scripted.stall());
    // The stream's headers are out before the model answers.
    const controller = await openStream({ agent_type: 'explore', prompt: 'wait' }, '');
    await expect.poll(() => model.requests.length).toBe(1);
    controller.abort();
    expect(await model.requests[0]!.outcome).toBe('client-closed');
  });

  it('kills the child processes of a running command, leaving none behind', async () => {
    const marker = `mada-cancel-${randomUUID()}`;
    model.push(scripted.toolCalls({ name: 'bash', arguments: { command: `node -e "setTimeout(() => {}, 60000)" ${marker}` } }), scripted.text('done'));
    const controller = await openStream({ agent_type: 'task', prompt: 'run it', mode: 'auto_accept' }, '"tool_start"');
    await expect.poll(() => processesWith(marker).length, { timeout: 5000 }).toBeGreaterThan(0);
    controller.abort();
    await expect.poll(() => processesWith(marker), { timeout: 10_000 }).toEqual([]);
  });
});
