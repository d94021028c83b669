import { scripted, startScriptedModel, type ScriptedModel } from '@mada/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';
import { openSocket } from '../support/raw-http.js';

let model: ScriptedModel;
let t: TestApp;
let base: string;
beforeEach(async () => {
  model = await startScriptedModel();
  t = await createTestApp({ model: { url: model.url }, env: { REQUEST_TIMEOUT_SECONDS: '1' } });
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
});
afterEach(async () => {
  await t.close();
  await model.close();
});

const PIECE = `${'lorem ipsum dolor sit amet '.repeat(2427)}\n`;
const PIECES = 200;

/** Sends a request on a raw socket and stops reading as soon as the response headers are in. */
async function stopReadingAfterHeaders(path: string, body: object): Promise<{ received: () => number; closed: Promise<void>; resume: () => void }> {
  const socket = await openSocket(base);
  const payload = JSON.stringify(body);
  let received = 0;
  const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
  socket.on('error', () => undefined);
  await new Promise<void>((resolve) => {
    socket.on('data', (chunk: Buffer) => {
      received += chunk.length;
      if (chunk.includes('\r\n\r\n')) {
        socket.pause();
        resolve();
      }
    });
    socket.write(`POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(payload)}\r\n\r\n${payload}`);
  });
  return { received: () => received, closed, resume: () => socket.resume() };
}

describe('a legacy stream whose client stops reading', () => {
  it('is closed once it falls 1 MiB behind, which cancels its run', async () => {
    // The model then waits: only the stream being cut (and its run cancelled) ends the call, however
    // fast the service takes in the 13 MB before the backlog check comes round.
    model.push(scripted.chunks(...Array.from({ length: PIECES }, () => PIECE), scripted.until(new Promise(() => undefined))));
    const client = await stopReadingAfterHeaders('/agents/stream', { agent_type: 'explore', prompt: 'write a lot' });
    await expect.poll(() => model.requests.length).toBe(1);
    expect(await model.requests[0]!.outcome).toBe('client-closed');
    // Reading again, the client finds the connection closed before the answer was whole.
    client.resume();
    await client.closed;
    expect(client.received()).toBeLessThan(PIECE.length * PIECES);
  });
});

describe('a stream that outlives REQUEST_TIMEOUT_SECONDS', () => {
  it('is not cut: the timeout covers the request arriving, not the answer', async () => {
    model.push(scripted.delayed(1800, scripted.text('late but whole')));
    const response = await fetch(`${base}/agents/stream`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ agent_type: 'explore', prompt: 'take your time' }),
    });
    expect(await response.text()).toMatch(/"event":"done"/);
  });
});
