import { request as httpRequest } from 'node:http';
import { scripted, startScriptedModel, type ScriptedModel } from '@mada/testkit';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { send } from '../support/raw-http.js';

type Line = Record<string, unknown> & { msg: string; req?: Record<string, unknown>; res?: Record<string, unknown> };

describe('request logs', () => {
  let model: ScriptedModel;
  let t: TestApp;
  let app: Awaited<ReturnType<typeof buildApp>>;
  let base: string;
  let lines: Line[];
  let release: () => void;

  beforeEach(async () => {
    model = await startScriptedModel();
    lines = [];
    const logger = pino({ level: 'info' }, { write: (text: string) => void lines.push(JSON.parse(text) as Line) });
    t = await createTestApp({ model: { url: model.url }, logger });
    app = await buildApp({ ...t, logger });
    base = await app.listen({ port: 0, host: '127.0.0.1' });
    const released = new Promise<void>((resolve) => (release = resolve));
    model.push(scripted.chunks('Waiting ', scripted.until(released), 'done.'));
  });
  afterEach(async () => {
    release();
    await app.close();
    await t.close();
    await model.close();
  });

  const requestLines = (): Line[] => lines.filter((line) => line.req !== undefined || line.msg.startsWith('request') || line.msg === 'incoming request');

  it('give each request one line once it is answered: what was asked, the status and the time taken', async () => {
    const missing = await send(base, { path: '/runs/00000000-0000-4000-8000-000000000000' });
    expect(missing.status).toBe(404);
    const [line, ...more] = requestLines();
    expect(more).toEqual([]);
    expect(line).toMatchObject({
      msg: 'request completed',
      level: 30,
      req: { method: 'GET', url: '/runs/00000000-0000-4000-8000-000000000000', remoteAddress: '127.0.0.1' },
      res: { statusCode: 404 },
    });
    expect(typeof line!.responseTime).toBe('number');
  });

  it('give a line to an event stream followed to its end', async () => {
    release();
    const started = await send(base, { method: 'POST', path: '/runs', body: { agent_type: 'plan', prompt: 'Plan it' } });
    const runId = (started.json() as { id: string }).id;
    const events = await send(base, { path: `/runs/${runId}/events` });
    expect(events.text).toContain('"event":"done"');
    await expect.poll(() => requestLines().map((line) => line.msg)).toEqual(['request completed', 'request completed']);
    const line = requestLines()[1]!;
    expect(line).toMatchObject({ req: { method: 'GET', url: `/runs/${runId}/events` }, res: { statusCode: 200 } });
    expect(line.responseTime).toBeGreaterThan(0);
  });

  it('give a line to an event stream the client left before its end', async () => {
    const started = await send(base, { method: 'POST', path: '/runs', body: { agent_type: 'plan', prompt: 'Plan it' } });
    const runId = (started.json() as { id: string }).id;
    // Follows until the first frame, then hangs up while the run still waits on the model.
    await new Promise<void>((resolve, reject) => {
      const req = httpRequest(`${base}/runs/${runId}/events`, (response) => {
        response.once('data', () => {
          req.destroy();
          resolve();
        });
      });
      req.on('error', () => undefined);
      req.once('response', (response) => response.once('error', reject));
      req.end();
    });
    await expect.poll(() => requestLines().map((line) => line.msg)).toEqual(['request completed', 'request closed before its response ended']);
    expect(requestLines()[1]).toMatchObject({ req: { method: 'GET', url: `/runs/${runId}/events` }, res: { statusCode: 200 } });
  });
});
