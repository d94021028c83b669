import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { scripted, startScriptedModel, type ScriptedModel } from '@mada/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';
import { DIALECTS } from '../support/databases.js';

function processesWith(marker: string): string[] {
  try {
    return execFileSync('pgrep', ['-f', marker], { encoding: 'utf8' }).split('\n').filter(Boolean);
  } catch {
    return [];
  }
}

describe.each(DIALECTS)('deleting a conversation during a turn on %s', (dialect) => {
  let model: ScriptedModel;
  let t: TestApp;
  let base: string;
  beforeEach(async () => {
    model = await startScriptedModel();
    t = await createTestApp({ dialect, model: { url: model.url } });
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterEach(async () => {
    await t.close();
    await model.close();
  });

  const json = { 'content-type': 'application/json' };
  const create = async (): Promise<string> =>
    ((await (await fetch(`${base}/conversations/`, { method: 'POST', headers: json, body: JSON.stringify({ agent_type: 'task', working_dir: t.workdir }) })).json()) as { id: string }).id;
  const remove = (id: string) => fetch(`${base}/conversations/${id}`, { method: 'DELETE' });

  it('aborts the model call, and the turn does not answer 200', async () => {
    model.push(scripted.stall());
    const id = await create();
    const turn = fetch(`${base}/conversations/${id}/messages`, { method: 'POST', headers: json, body: JSON.stringify({ content: 'wait' }) });
    await expect.poll(() => model.requests.length).toBe(1);
    expect((await remove(id)).status).toBe(204);
    expect(await model.requests[0]!.outcome).toBe('client-closed');
    const answer = await turn;
    expect(answer.status).not.toBe(200);
    expect(await answer.json()).toHaveProperty('detail');
    expect((await fetch(`${base}/conversations/${id}`)).status).toBe(404);
  });

  it('ends the child processes of a running command, and a streamed turn ends with an error', async () => {
    const marker = `mada-delete-${randomUUID()}`;
    model.push(scripted.toolCalls({ name: 'bash', arguments: { command: `node -e "setTimeout(() => {}, 60000)" ${marker}` } }), scripted.text('done'));
    const id = await create();
    const stream = await fetch(`${base}/conversations/${id}/stream`, { method: 'POST', headers: json, body: JSON.stringify({ content: 'run it', mode: 'auto_accept' }) });
    await expect.poll(() => processesWith(marker).length, { timeout: 5000 }).toBeGreaterThan(0);
    expect((await remove(id)).status).toBe(204);
    await expect.poll(() => processesWith(marker), { timeout: 10_000 }).toEqual([]);
    expect(await stream.text()).toMatch(/data: \{"event":"error","error_message":"[^"]+"\}\n\n$/);
    expect(model.requests).toHaveLength(1);
  });
});
